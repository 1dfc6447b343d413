package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// FuzzStreamFold feeds arbitrary bodies to the SSE decoder and fold: it must
// never panic, a success must end in exactly one done event whose reason
// matches the result, and every tool call input must be a JSON object.
func FuzzStreamFold(f *testing.F) {
	f.Add(sseBody(msgStart(3), textStart(0), textDelta(0, "hi"), blockStop(0), msgDelta("end_turn", 1), msgStop()))
	f.Add(sseBody(msgStart(3), toolStart(0, "t", "n"), jsonDelta(0, `{"a":`), jsonDelta(0, `1}`), blockStop(0), msgStop()))
	f.Add(sseBody(msgStart(3), ev{"error", `{"type":"error","error":{"type":"overloaded_error","message":"x"}}`}))
	f.Add(": c\r\nevent: ping\r\ndata: {}\r\n\r\n")
	c := &Client{cfg: provider.Config{Kind: provider.Anthropic, APIKey: testKey}}
	c.log = newDiscardLogger()
	f.Fuzz(func(t *testing.T, body string) {
		var events []provider.Event
		res, err := c.consume(context.Background(), strings.NewReader(body), func(e provider.Event) { events = append(events, e) })
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not *provider.Error", err)
			}
			return
		}
		last := events[len(events)-1]
		if last.Type != provider.EventDone || last.StopReason != res.StopReason {
			t.Fatalf("last event %+v, result %+v", last, res)
		}
		for _, call := range res.ToolCalls {
			var m map[string]any
			if json.Unmarshal(call.Input, &m) != nil {
				t.Fatalf("tool input %s is not an object", call.Input)
			}
		}
	})
}
