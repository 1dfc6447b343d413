package openai

import (
	"bytes"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// FuzzFold feeds arbitrary bodies through the SSE reader and the fold: it
// must never panic, and every failure is a *provider.Error.
func FuzzFold(f *testing.F) {
	f.Add([]byte(sse(textChunk("a"), finishChunk("stop"), usageChunk)))
	f.Add([]byte(sse(toolChunk(`[{"index":0,"id":"c","function":{"name":"x","arguments":"{\"a\":"}}]`), toolChunk(`[{"index":0,"function":{"arguments":"1}"}}]`), finishChunk("tool_calls"))))
	f.Add([]byte(": ping\nevent: x\ndata: {\"error\":{\"code\":429}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3}]}}]}\ndata: [DONE]"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fl := &fold{emit: func(provider.Event) {}}
		err := fl.run(bytes.NewReader(body))
		if err == nil {
			_, err = fl.finish()
		}
		if err != nil {
			if _, ok := err.(*provider.Error); !ok {
				t.Fatalf("error %T %v is not a *provider.Error", err, err)
			}
		}
	})
}
