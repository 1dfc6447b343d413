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
