package ollama

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// The fake Ollama below replays the wire format of Ollama's API reference,
// https://github.com/ollama/ollama/blob/main/docs/api.md: "Generate a chat
// completion" (streamed objects {"model","created_at","message":{"role",
// "content"},"done":false} and a final {"done":true,"done_reason",
// "prompt_eval_count","eval_count",...}; tool calls as
// {"function":{"name","arguments":{...}}} without ids; thinking models add
// message.thinking), "List Local Models" and "Show Model Information"
// (details.parameter_size, details.quantization_level, model_info
// "<arch>.context_length", capabilities), and error bodies {"error": "..."}.

// chunk renders one streamed /api/chat line.
func chunk(content string) string {
	b, _ := json.Marshal(map[string]any{
		"model":      "qwen3:8b",
		"created_at": "2025-05-29T09:35:56.012345Z",
		"message":    map[string]any{"role": "assistant", "content": content},
		"done":       false,
	})
	return string(b)
}

// thinkingChunk renders a line of a thinking model: empty content, thinking set.
func thinkingChunk(thinking string) string {
	b, _ := json.Marshal(map[string]any{
		"model":      "qwen3:8b",
		"created_at": "2025-05-29T09:35:56.012345Z",
		"message":    map[string]any{"role": "assistant", "content": "", "thinking": thinking},
		"done":       false,
	})
	return string(b)
}

// doneLine renders the final line with its statistics.
func doneLine(reason string, prompt, eval int) string {
	b, _ := json.Marshal(map[string]any{
		"model":                "qwen3:8b",
		"created_at":           "2025-05-29T09:35:57.012345Z",
		"message":              map[string]any{"role": "assistant", "content": ""},
		"done":                 true,
		"done_reason":          reason,
		"total_duration":       4883583458,
		"load_duration":        1334875,
		"prompt_eval_count":    prompt,
		"prompt_eval_duration": 342546000,
		"eval_count":           eval,
		"eval_duration":        4535599000,
	})
	return string(b)
}

// writeNDJSON writes each line followed by "\n", flushing after each.
func writeNDJSON(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	fl, _ := w.(http.Flusher)
	for _, l := range lines {
		_, _ = w.Write([]byte(l + "\n"))
		if fl != nil {
			fl.Flush()
		}
	}
}

// newFake starts an httptest server and a provider pointed at it.
func newFake(t testing.TB, cfg provider.Config, h http.Handler) provider.Provider {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg.Kind = provider.Ollama
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = "qwen3:8b"
	}
	if cfg.TimeoutMs == 0 {
		cfg.TimeoutMs = 5000
	}
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// chatServer serves /api/chat with handle and fails on any other path.
func chatServer(t testing.TB, handle http.HandlerFunc) http.Handler {
	t.Helper()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" || r.Method != http.MethodPost {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.Error(w, `{"error":"unexpected"}`, http.StatusBadRequest)
			return
		}
		handle(w, r)
	})
}

// simpleRequest is a one-message ChatRequest.
func simpleRequest() *provider.Request {
	return &provider.Request{
		Messages:  []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}},
		MaxTokens: 4096,
	}
}

// run streams req and collects the events.
func run(t testing.TB, p provider.Provider, ctx context.Context, req *provider.Request) ([]provider.Event, *provider.Result, error) {
	t.Helper()
	var evs []provider.Event
	res, err := p.Stream(ctx, req, func(e provider.Event) { evs = append(evs, e) })
	return evs, res, err
}

// wantKind asserts err is a *provider.Error of kind k.
func wantKind(t *testing.T, err error, k provider.ErrorKind) *provider.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want kind %s", k)
	}
	pe, ok := err.(*provider.Error)
	if !ok {
		t.Fatalf("error %T %v is not *provider.Error", err, err)
	}
	if pe.Kind != k {
		t.Fatalf("kind = %s (%v), want %s", pe.Kind, pe, k)
	}
	return pe
}

// waitOrDone blocks for d or until the request's context ends. It drains
// the request body first: only then does net/http watch the connection and
// cancel r.Context() when the client goes away.
func waitOrDone(r *http.Request, d time.Duration) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
}
