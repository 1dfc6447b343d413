package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
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
			for _, ev := range d.events(protocol.TextDeltaEvent{Text: p}) {
				emitted = append(emitted, ev.(protocol.TextDeltaEvent).Text)
				joined.WriteString(ev.(protocol.TextDeltaEvent).Text)
			}
		}
		for _, ev := range d.events(protocol.AssistantMessageEvent{}) {
			if ev, ok := ev.(protocol.TextDeltaEvent); ok {
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

// chat/send's events get the same protection: a key split across text
// deltas never goes out, the text is otherwise whole and in order, and a
// tool call's input is redacted too.
func TestDeltaRedactorChatEvents(t *testing.T) {
	const key = "sk-chat-fake-KEY-1234567"
	secrets := &logx.Secrets{}
	secrets.Add(key)
	d := newDeltaRedactor(secrets)
	var got []provider.Event
	send := func(ev provider.Event) { got = append(got, ev) }
	for _, p := range []string{"use sk-chat-", "fake-KEY-", "1234567 now"} {
		d.chatEvents(provider.Event{Type: provider.EventTextDelta, Text: p}, send)
	}
	d.chatEvents(provider.Event{Type: provider.EventToolCall, ToolCall: &provider.ToolCall{ID: "c", Name: "x", Input: json.RawMessage(`{"k":"` + key + `"}`)}}, send)
	d.chatEvents(provider.Event{Type: provider.EventDone, StopReason: provider.StopToolUse}, send)
	var text strings.Builder
	for _, ev := range got {
		if strings.Contains(ev.Text, "fake-KEY") || ev.ToolCall != nil && strings.Contains(string(ev.ToolCall.Input), key) {
			t.Fatalf("key piece sent: %+v", ev)
		}
		text.WriteString(ev.Text)
	}
	if text.String() != "use [redacted] now" || got[len(got)-1].Type != provider.EventDone || got[len(got)-2].Type != provider.EventToolCall {
		t.Fatalf("events %+v, text %q", got, text.String())
	}
}

// A command prints a key that reaches the runtime in two reads: no
// toolOutput holds a piece of it, and the output of each stream is whole,
// in order, before the toolFinished.
func TestDeltaRedactorToolOutput(t *testing.T) {
	const key = "sk-out-fake-KEY-55443322"
	secrets := &logx.Secrets{}
	secrets.Add(key)
	d := newDeltaRedactor(secrets)
	var got []protocol.AgentEvent
	for _, ev := range []protocol.AgentEvent{
		protocol.ToolOutputEvent{CallID: "c1", Stream: "stdout", Text: "token=sk-out-fa"},
		protocol.ToolOutputEvent{CallID: "c1", Stream: "stderr", Text: "warn sk-out"},
		protocol.ToolOutputEvent{CallID: "c1", Stream: "stdout", Text: "ke-KEY-55443322\nnext\n"},
		protocol.ToolOutputEvent{CallID: "c1", Stream: "stderr", Text: "-fake-KEY-5544"},
		protocol.ToolFinishedEvent{CallID: "c1"},
	} {
		got = append(got, d.events(ev)...)
	}
	streams := map[string]string{}
	for i, ev := range got {
		out, ok := ev.(protocol.ToolOutputEvent)
		if out.Stream == "stdout" && (strings.Contains(out.Text, "sk-out-fa") || strings.Contains(out.Text, "55443322")) {
			t.Fatalf("a piece of the key went out: %+v", ev)
		}
		if ok {
			streams[out.Stream] += out.Text
		} else if _, fin := ev.(protocol.ToolFinishedEvent); !fin || i != len(got)-1 {
			t.Fatalf("events %+v", got)
		}
	}
	// stderr's never completes: a key prefix only, kept whole.
	if streams["stdout"] != "token=[redacted]\nnext\n" || streams["stderr"] != "warn sk-out-fake-KEY-5544" {
		t.Fatalf("streams %q", streams)
	}
}

// TestEncodedSendsRecordedJSON: an event the task layer recorded goes out
// as its recorded (redacted) bytes, not encoded again; held delta text is
// flushed before it, encoded and redacted; a delta is never taken from raw.
func TestEncodedSendsRecordedJSON(t *testing.T) {
	const key = "sk-enc-fake-KEY-12345678"
	secrets := &logx.Secrets{}
	secrets.Add(key)
	d := newDeltaRedactor(secrets)
	if out := d.encoded(protocol.TextDeltaEvent{Text: "key sk-enc-"}, json.RawMessage(`"not used"`)); len(out) != 1 ||
		strings.Contains(string(out[0]), "sk-enc") || string(out[0]) == `"not used"` {
		t.Fatalf("delta: %s", out)
	}
	raw := json.RawMessage(`{"type":"assistantMessage","recorded":true}`)
	out := d.encoded(protocol.AssistantMessageEvent{}, raw)
	if len(out) != 2 || !strings.Contains(string(out[0]), `"textDelta"`) || string(out[1]) != string(raw) {
		t.Fatalf("flush then the recorded bytes: %s", out)
	}
	out = d.encoded(protocol.WarningEvent{Message: "about " + key}, nil)
	if len(out) != 1 || strings.Contains(string(out[0]), key) || !strings.Contains(string(out[0]), "[redacted]") {
		t.Fatalf("unrecorded event: %s", out)
	}
}
