package openai

// The fake server below replays the wire format documented at
// https://platform.openai.com/docs/api-reference/chat-streaming (chunks as
// "data: {json}\n\n", a final usage chunk with empty choices when
// stream_options.include_usage is set, "data: [DONE]"), and the model lists
// of https://platform.openai.com/docs/api-reference/models/list, vLLM
// (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html:
// max_model_len), OpenRouter (https://openrouter.ai/docs/api-reference/list-available-models:
// context_length, top_provider, supported_parameters, architecture) and
// LM Studio (https://lmstudio.ai/docs/app/api/endpoints/rest:
// loaded_context_length, max_context_length, type, capabilities). The
// compatible-server shapes (reasoning_content, missing indexes, repeated
// empty ids) are those vLLM, llama.cpp, Ollama and OpenRouter send.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// captured is one request the fake received.
type captured struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// fake is an httptest server whose handler the test sets.
type fake struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []captured
	handler http.HandlerFunc
}

func newFake(t testing.TB, h http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{handler: h}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, captured{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.handler(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.reqs...)
}

// replay answers with a text/event-stream body written verbatim.
func replay(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

// sse builds a stream of data events from chunk JSONs, ending with [DONE].
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// textChunk is a chunk with one content delta.
func textChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func finishChunk(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const usageChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`

// toolChunk is a chunk with the given tool_calls array JSON.
func toolChunk(calls string) string {
	return `{"choices":[{"index":0,"delta":{"tool_calls":` + calls + `},"finish_reason":null}]}`
}

func newClient(t testing.TB, kind provider.Kind, baseURL, key string, timeoutMs int) *Client {
	t.Helper()
	p, err := New(provider.Config{Kind: kind, Model: "test-model", BaseURL: baseURL, APIKey: key, TimeoutMs: timeoutMs}, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*Client)
}

// compat is a compatible client on f.
func compat(t testing.TB, f *fake) *Client {
	return newClient(t, provider.OpenAICompatible, f.srv.URL+"/v1", "", 5000)
}

func userText(s string) *provider.Request {
	return &provider.Request{
		Messages:  []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: s}}}},
		MaxTokens: 100,
	}
}

// run streams a "hi" request against body and returns the events and result.
func run(t *testing.T, body string) ([]provider.Event, *provider.Result, error) {
	t.Helper()
	f := newFake(t, replay(body))
	var evs []provider.Event
	res, err := compat(t, f).Stream(context.Background(), userText("hi"), func(e provider.Event) { evs = append(evs, e) })
	return evs, res, err
}

// mustRun is run that fails the test on error.
func mustRun(t *testing.T, body string) ([]provider.Event, *provider.Result) {
	t.Helper()
	evs, res, err := run(t, body)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return evs, res
}

// wantKind checks that err is a *provider.Error of kind k.
func wantKind(t *testing.T, err error, k provider.ErrorKind) *provider.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want kind %s", k)
	}
	pe, ok := err.(*provider.Error)
	if !ok {
		t.Fatalf("err = %T %v, want *provider.Error", err, err)
	}
	if pe.Kind != k {
		t.Fatalf("kind = %s (%v), want %s", pe.Kind, pe, k)
	}
	return pe
}

// eventTypes lists the types of evs.
func eventTypes(evs []provider.Event) []provider.EventType {
	out := make([]provider.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("unmarshal %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
