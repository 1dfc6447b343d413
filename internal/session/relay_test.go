package session

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// TestRelayKeepsOrderAndText pushes deltas faster than a slow client reads
// them: the text arrives whole and in order, other events keep their place,
// and deltas merge only with deltas of the same type.
func TestRelayKeepsOrderAndText(t *testing.T) {
	var mu sync.Mutex
	var got []provider.Event
	r := newChatRelay(func(e provider.Event) {
		time.Sleep(200 * time.Microsecond) // a slow client
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	})
	var want strings.Builder
	for i := 0; i < 2000; i++ {
		s := string(rune('a' + i%26))
		want.WriteString(s)
		r.push(provider.Event{Type: provider.EventTextDelta, Text: s})
		if i == 1000 {
			r.push(provider.Event{Type: provider.EventThinkingDelta, Text: "hmm"})
			r.push(provider.Event{Type: provider.EventToolCall, ToolCall: &provider.ToolCall{ID: "c1", Name: "x"}})
		}
	}
	r.push(provider.Event{Type: provider.EventDone, StopReason: provider.StopEndTurn})
	r.close()

	var text strings.Builder
	sawTool, sawThinking := false, false
	for i, e := range got {
		switch e.Type {
		case provider.EventTextDelta:
			text.WriteString(e.Text)
		case provider.EventThinkingDelta:
			if e.Text != "hmm" || text.Len() != 1001 {
				t.Fatalf("thinking at text length %d: %q", text.Len(), e.Text)
			}
			sawThinking = true
		case provider.EventToolCall:
			if !sawThinking || text.Len() != 1001 {
				t.Fatal("tool call out of order")
			}
			sawTool = true
		case provider.EventDone:
			if i != len(got)-1 {
				t.Fatal("done is not last")
			}
		}
	}
	if text.String() != want.String() || !sawTool {
		t.Fatalf("text mismatch or tool call lost (%d events)", len(got))
	}
	if len(got) >= 2000 {
		t.Errorf("no delta was merged behind a slow client: %d events", len(got))
	}
}
