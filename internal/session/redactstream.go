package session

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// deltaRedactor redacts keys from streamed text (textDelta and
// thinkingDelta events, docs/events.md). A model streams a key in several
// pieces, so redacting each event alone would send every piece of it
// (addendum §11): the tail of the text that could begin a key is held back
// until the next piece shows whether it does. Text is delayed, never lost:
// any other event flushes what is held first. Not safe for concurrent use;
// agent events of one task are emitted one at a time.
type deltaRedactor struct {
	secrets *logx.Secrets
	held    map[string]string // event type → text held back
}

func newDeltaRedactor(secrets *logx.Secrets) *deltaRedactor {
	return &deltaRedactor{secrets: secrets, held: map[string]string{}}
}

// delta takes the next piece of a text stream of type typ and returns the
// text that is safe to send now ("" when all of it is held back).
func (d *deltaRedactor) delta(typ, piece string) string {
	text := d.secrets.Redact(d.held[typ] + piece)
	keep := heldSuffix(text, d.secrets.List())
	d.held[typ] = text[len(text)-keep:]
	return text[:len(text)-keep]
}

// flush calls send with the held text of each delta type (thinking first)
// and forgets it; call it before any other event and at the end.
func (d *deltaRedactor) flush(send func(typ, text string)) {
	for _, typ := range []string{"thinkingDelta", "textDelta"} {
		if h := d.held[typ]; h != "" {
			delete(d.held, typ)
			send(typ, h)
		}
	}
}

// outputKey is the held-text key of one toolOutput stream of one call.
func outputKey(callID, stream string) string {
	return "toolOutput\x00" + callID + "\x00" + stream
}

// flushOutput returns a toolOutput event for each call stream's held text
// (in key order) and forgets it.
func (d *deltaRedactor) flushOutput() []protocol.AgentEvent {
	var keys []string
	for k, h := range d.held {
		if strings.HasPrefix(k, "toolOutput\x00") && h != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []protocol.AgentEvent
	for _, k := range keys {
		parts := strings.SplitN(k, "\x00", 3)
		out = append(out, protocol.ToolOutputEvent{CallID: parts[1], Stream: parts[2], Text: d.held[k]})
		delete(d.held, k)
	}
	return out
}

// events returns the agent events to emit for ev, in order: for a delta
// or a toolOutput (a command's output, whose pieces can split a key just
// the same), the event with its safe text (none if everything is held
// back); for any other event, the held text of each delta type as a final
// delta and of each output stream as a final toolOutput, then ev.
func (d *deltaRedactor) events(ev protocol.AgentEvent) []protocol.AgentEvent {
	var safe protocol.AgentEvent
	switch e := ev.(type) {
	case protocol.TextDeltaEvent:
		e.Text = d.delta(e.EventType(), e.Text)
		safe = e
	case protocol.ThinkingDeltaEvent:
		e.Text = d.delta(e.EventType(), e.Text)
		safe = e
	case protocol.ToolOutputEvent:
		e.Text = d.delta(outputKey(e.CallID, e.Stream), e.Text)
		safe = e
	default:
		var out []protocol.AgentEvent
		d.flush(func(typ, text string) { out = append(out, deltaEvent(typ, text)) })
		out = append(out, d.flushOutput()...)
		return append(out, ev)
	}
	if streamedText(safe) == "" {
		return nil
	}
	return []protocol.AgentEvent{safe}
}

// deltaEvent is the textDelta or thinkingDelta (typ) of text.
func deltaEvent(typ, text string) protocol.AgentEvent {
	if typ == "thinkingDelta" {
		return protocol.ThinkingDeltaEvent{Text: text}
	}
	return protocol.TextDeltaEvent{Text: text}
}

// streamedText is the text of a streamed event.
func streamedText(ev protocol.AgentEvent) string {
	switch e := ev.(type) {
	case protocol.TextDeltaEvent:
		return e.Text
	case protocol.ThinkingDeltaEvent:
		return e.Text
	case protocol.ToolOutputEvent:
		return e.Text
	}
	return ""
}

// encoded is events as the JSON to send, the keys redacted: ev's own
// JSON is raw when the task layer recorded it (redacted already), else it
// is encoded and redacted here; so is each held piece flushed before it.
func (d *deltaRedactor) encoded(ev protocol.AgentEvent, raw json.RawMessage) []json.RawMessage {
	evs := d.events(ev)
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		if i == len(evs)-1 && raw != nil && !isStreamed(ev) {
			out[i] = raw // ev itself, unchanged
			continue
		}
		out[i] = d.secrets.RedactJSON(mustJSON(e))
	}
	return out
}

// isStreamed reports whether ev is a text piece the redactor rewrites.
func isStreamed(ev protocol.AgentEvent) bool {
	switch ev.(type) {
	case protocol.TextDeltaEvent, protocol.ThinkingDeltaEvent, protocol.ToolOutputEvent:
		return true
	}
	return false
}

// chatEvents is events for chat/send's provider events: text and thinking
// deltas are redacted across pieces, a tool call's input and the other
// events pass through secrets.Redact.
func (d *deltaRedactor) chatEvents(ev provider.Event, send func(provider.Event)) {
	if ev.Type == provider.EventTextDelta || ev.Type == provider.EventThinkingDelta {
		if text := d.delta(string(ev.Type), ev.Text); text != "" {
			ev.Text = text
			send(ev)
		}
		return
	}
	d.flush(func(typ, text string) { send(provider.Event{Type: provider.EventType(typ), Text: text}) })
	if ev.ToolCall != nil {
		tc := *ev.ToolCall
		tc.Input = json.RawMessage(d.secrets.Redact(string(tc.Input)))
		ev.ToolCall = &tc
	}
	send(ev)
}

// heldSuffix is the length of the longest tail of text that is a proper
// prefix of one of secrets.
func heldSuffix(text string, secrets []string) int {
	best := 0
	for _, k := range secrets {
		for n := min(len(k)-1, len(text)); n > best; n-- {
			if strings.HasSuffix(text, k[:n]) {
				best = n
				break
			}
		}
	}
	return best
}
