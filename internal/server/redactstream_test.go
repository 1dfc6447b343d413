package server

import (
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/logx"
)

// A model streams a key in pieces; no emitted delta may hold a piece that,
// joined with its neighbours, rebuilds it, and no text may be lost.
func TestDeltaRedactorKeySplitAcrossDeltas(t *testing.T) {
	const key = "sk-qa4-fake-KEY-99887766"
	secrets := &logx.Secrets{}
	secrets.Add(key)
	want := func(pieces []string) string { return secrets.Redact(strings.Join(pieces, "")) }
	for _, pieces := range [][]string{
		{"The key is sk-qa4-", "fake-KEY-", "99887766 ok"},
		{"The key is ", "s", "k", "-qa4-fake-KEY-9988776", "6", " ok"},
		{"The key is " + key + " ok"},
		{"The key is sk-qa4-fake-KEY-9988 no wait", " ok"},
	} {
		d := newDeltaRedactor(secrets)
		var emitted []string
		var joined strings.Builder
		for _, p := range pieces {
			for _, ev := range d.events(agent.Event{Type: "textDelta", Text: p}) {
				emitted = append(emitted, ev.Text)
				joined.WriteString(ev.Text)
			}
		}
		for _, ev := range d.events(agent.Event{Type: "assistantMessage"}) {
			if ev.Type == "textDelta" {
				emitted = append(emitted, ev.Text)
				joined.WriteString(ev.Text)
			}
		}
		for _, e := range emitted {
			if !strings.Contains(want(pieces), "no wait") && strings.Contains(e, "fake-KEY") || strings.Contains(e, "99887766") {
				t.Errorf("%q: a delta holds a piece of the key: %q", pieces, e)
			}
		}
		if w := want(pieces); strings.Contains(w, "no wait") {
			// a key prefix that never completes is not a key: kept whole
			if joined.String() != w {
				t.Errorf("%q: joined %q, want %q", pieces, joined.String(), w)
			}
		} else if joined.String() != "The key is [redacted] ok" {
			t.Errorf("%q: joined %q", pieces, joined.String())
		}
	}
}
