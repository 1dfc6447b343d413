package logx

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelWarn, "error": slog.LevelError, "INFO": slog.LevelInfo, "debug": slog.LevelDebug, "trace": LevelTrace} {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseLevel("loud"); err == nil {
		t.Error("ParseLevel(loud) succeeded")
	}
}

func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	var s Secrets
	s.Add("sk-secret-123")
	s.Add("ab") // too short, ignored
	log := slog.New(NewRedactingHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: LevelTrace, ReplaceAttr: LevelName}), &s))
	log = log.With("k", "prefix sk-secret-123")
	log.Log(t.Context(), LevelTrace, "msg sk-secret-123", "err", errors.New("body echoed sk-secret-123"),
		slog.Group("g", slog.String("x", "sk-secret-123")), "ab", "ab")
	out := buf.String()
	if strings.Contains(out, "sk-secret-123") {
		t.Fatalf("secret leaked: %s", out)
	}
	if !strings.Contains(out, "level=TRACE") || strings.Count(out, "[redacted]") != 4 {
		t.Fatalf("unexpected output: %s", out)
	}
}

// TestPlaceholderKeysAreNotSecrets: a local server's placeholder key is a
// word and is not redacted (QA: with the key "test" the chat showed "Run npm
// [redacted] to [redacted] it", and the model read that back); a key shaped
// like a credential is.
func TestPlaceholderKeysAreNotSecrets(t *testing.T) {
	var s Secrets
	for _, k := range []string{"test", "ollama", "lm-studio", "not-needed", "EMPTY", "12345678"} {
		s.Add(k)
	}
	for _, k := range []string{"sk-ant-api03-abcdefghijklmnop", "hunter2hunter", "passw0rd", "sk-no-key-required"} {
		s.Add(k)
	}
	text := "Run npm test with ollama on lm-studio, not-needed EMPTY 12345678; keys sk-ant-api03-abcdefghijklmnop hunter2hunter passw0rd sk-no-key-required"
	want := "Run npm test with ollama on lm-studio, not-needed EMPTY 12345678; keys [redacted] [redacted] [redacted] [redacted]"
	if got := s.Redact(text); got != want {
		t.Errorf("Redact:\n got %s\nwant %s", got, want)
	}
}
