// Package logx owns the runtime's logging conventions: the TASK_X_LOG level
// names (error, warn, info, debug, trace; trace sits below slog's debug), and a
// slog.Handler that redacts every secret the runtime holds (API keys) from
// messages and attribute values before they reach stderr.
//
// Source: ../shared/spec/protocol.md (Framing: diagnostics on stderr) and
// addendum §9 and §11 (keys are redacted from everything the runtime emits).
package logx

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// LevelTrace is below slog.LevelDebug, for TASK_X_LOG=trace.
const LevelTrace = slog.Level(-8)

// ParseLevel maps a TASK_X_LOG value to a level. Empty means warn. An unknown
// value is an error (the caller falls back to warn and says so).
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	case "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "trace":
		return LevelTrace, nil
	}
	return slog.LevelWarn, fmt.Errorf("unknown TASK_X_LOG level %q (want error, warn, info, debug or trace)", s)
}

// Secrets is a set of strings that must never be emitted. It is safe for
// concurrent use. Only strings shaped like a credential are kept
// (CredentialShaped): a placeholder key such as "test", "ollama",
// "lm-studio" or "EMPTY", which local servers accept, is an ordinary word,
// and redacting it would mangle every answer, diff and file the runtime
// shows, and what the model reads back ("npm [redacted]").
type Secrets struct {
	mu   sync.RWMutex
	list []string
}

// Add remembers s as a secret.
func (s *Secrets) Add(secret string) {
	if !CredentialShaped(secret) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.list {
		if x == secret {
			return
		}
	}
	s.list = append(s.list, secret)
}

// CredentialShaped reports whether s looks like a key a provider or a
// server owner issues rather than a word: at least 12 bytes, or at least 8
// that mix letters and digits. Real provider keys are 40 bytes or more;
// placeholders ("test", "ollama", "lm-studio", "not-needed") are words.
func CredentialShaped(s string) bool {
	if len(s) >= 12 {
		return true
	}
	if len(s) < 8 {
		return false
	}
	letter := strings.ContainsFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
	digit := strings.ContainsFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	return letter && digit
}

// List returns a copy of the secrets.
func (s *Secrets) List() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]string(nil), s.list...)
}

// Placeholder replaces a key in everything the runtime emits.
const Placeholder = "[redacted]"

// Redact replaces every known secret in text with Placeholder.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, x := range s.list {
		if strings.Contains(text, x) {
			text = strings.ReplaceAll(text, x, Placeholder)
		}
	}
	return text
}

// NewRedactingHandler wraps h so that the message and every string-valued
// attribute (groups included) pass through secrets.Redact.
func NewRedactingHandler(h slog.Handler, secrets *Secrets) slog.Handler {
	return &redactingHandler{h: h, secrets: secrets}
}

type redactingHandler struct {
	h       slog.Handler
	secrets *Secrets
}

func (r *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return r.h.Enabled(ctx, l)
}

func (r *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.secrets.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.secrets.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, 0, len(g))
		for _, x := range g {
			out = append(out, r.attr(x))
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, r.secrets.Redact(err.Error()))
		}
		return slog.String(a.Key, r.secrets.Redact(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (r *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = r.attr(a)
	}
	return &redactingHandler{h: r.h.WithAttrs(red), secrets: r.secrets}
}

func (r *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h: r.h.WithGroup(name), secrets: r.secrets}
}

// LevelName renders levels with TASK_X_LOG names (TRACE for LevelTrace) in a
// slog.HandlerOptions.ReplaceAttr.
func LevelName(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey && len(groups) == 0 {
		if l, ok := a.Value.Any().(slog.Level); ok && l <= LevelTrace {
			return slog.String(slog.LevelKey, "TRACE")
		}
	}
	return a
}
