package server

import (
	"strings"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/logx"
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

// events returns the events to emit for ev, in order: for a delta, the
// delta with its safe text (none if everything is held back); for any
// other event, the held text of each delta type as a final delta, then ev.
func (d *deltaRedactor) events(ev agent.Event) []agent.Event {
	if ev.Type == "textDelta" || ev.Type == "thinkingDelta" {
		text := d.secrets.Redact(d.held[ev.Type] + ev.Text)
		keep := heldSuffix(text, d.secrets.List())
		d.held[ev.Type] = text[len(text)-keep:]
		if keep == len(text) {
			return nil
		}
		ev.Text = text[:len(text)-keep]
		return []agent.Event{ev}
	}
	var out []agent.Event
	for _, typ := range []string{"thinkingDelta", "textDelta"} {
		if h := d.held[typ]; h != "" {
			out = append(out, agent.Event{Type: typ, Text: h})
			delete(d.held, typ)
		}
	}
	return append(out, ev)
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
