package ollama

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// FuzzChunk feeds arbitrary NDJSON lines to the fold: it must never panic,
// and every tool call it accepts has a unique id and a JSON object input.
func FuzzChunk(f *testing.F) {
	f.Add([]byte(chunk("hi")))
	f.Add([]byte(thinkingChunk("hmm")))
	f.Add([]byte(doneLine("length", 3, 4)))
	f.Add([]byte(toolChunk(true, weatherCall, `{"function":{"name":"x"}}`)))
	f.Add([]byte(`{"message":{"tool_calls":[{"function":{"name":"x","arguments":"{\"a\":1}"}}]}}`))
	f.Add([]byte(`{"error":"boom"}`))
	f.Add([]byte(`{"error":{"message":"boom"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fl := newFolder(func(provider.Event) {})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			done, err := fl.line(line)
			if err != nil || done {
				break
			}
		}
		ids := map[string]bool{}
		for _, c := range fl.result().ToolCalls {
			if c.ID == "" || ids[c.ID] {
				t.Fatalf("bad or repeated id %q", c.ID)
			}
			ids[c.ID] = true
			var obj map[string]any
			if err := json.Unmarshal(c.Input, &obj); err != nil || obj == nil {
				t.Fatalf("input %q is not an object", c.Input)
			}
		}
	})
}
