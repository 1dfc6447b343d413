package openai

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

func jsonHandler(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

// A list mixing the shapes of several servers, one context field each.
const mixedList = `{"object":"list","data":[
 {"id":"or/model","context_length":131072,"architecture":{"input_modalities":["text","image"]},"supported_parameters":["tools","tool_choice","reasoning","include_reasoning"],"top_provider":{"context_length":65536}},
 {"id":"or/top-only","top_provider":{"context_length":65536},"supported_parameters":["temperature"]},
 {"id":"lmstudio/qwen","type":"vlm","loaded_context_length":8192,"max_context_length":32768,"capabilities":["tool_use"]},
 {"id":"lmstudio/unloaded","type":"llm","max_context_length":32768},
 {"id":"vllm/llama","object":"model","max_model_len":16384},
 {"id":"x/window","context_window":200000},
 {"id":"x/token-size","max_token_size":"4096"},
 {"id":"nomic-embed-text","type":"embeddings"},
 {"id":"plain","object":"model","owned_by":"me","context_length":null},
 {"id":""}
]}`

func TestListModelsCompatibleContextFields(t *testing.T) {
	f := newFake(t, jsonHandler(200, mixedList))
	cl := newClient(t, provider.OpenAICompatible, f.srv.URL+"/v1", "key-123456", 5000)
	got, err := cl.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.ModelInfo{
		{ID: "or/model", ContextWindow: 131072, Capabilities: []provider.Capability{"tools", "vision", "thinking"}},
		{ID: "or/top-only", ContextWindow: 65536, Capabilities: []provider.Capability{}},
		{ID: "lmstudio/qwen", ContextWindow: 8192, Capabilities: []provider.Capability{"tools", "vision"}},
		{ID: "lmstudio/unloaded", ContextWindow: 32768, Capabilities: []provider.Capability{}},
		{ID: "vllm/llama", ContextWindow: 16384, Capabilities: []provider.Capability{}},
		{ID: "x/window", ContextWindow: 200000, Capabilities: []provider.Capability{}},
		{ID: "x/token-size", ContextWindow: 4096, Capabilities: []provider.Capability{}},
		{ID: "nomic-embed-text", Capabilities: []provider.Capability{"embedding"}},
		{ID: "plain", Capabilities: []provider.Capability{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("models:\n got %+v\nwant %+v", got, want)
	}
	r := f.requests()[0]
	if r.Method != "GET" || r.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer key-123456" {
		t.Errorf("%s %s auth %q", r.Method, r.Path, r.Header.Get("Authorization"))
	}
}

func TestListModelsOfficialUsesEstimatesAndFamilies(t *testing.T) {
	f := newFake(t, jsonHandler(200, `{"object":"list","data":[
	 {"id":"gpt-4.1-mini","object":"model","created":1,"owned_by":"system"},
	 {"id":"gpt-5","object":"model","owned_by":"system"},
	 {"id":"gpt-4o","object":"model","owned_by":"system"},
	 {"id":"text-embedding-3-small","object":"model","owned_by":"system"},
	 {"id":"dall-e-3","object":"model","owned_by":"system"}]}`))
	cl := newClient(t, provider.OpenAI, f.srv.URL+"/v1", "sk-x", 5000)
	got, err := cl.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.ModelInfo{
		{ID: "gpt-4.1-mini", ContextWindow: 1_000_000, Capabilities: []provider.Capability{"tools", "vision"}},
		{ID: "gpt-5", ContextWindow: 272_000, Capabilities: []provider.Capability{"tools", "vision", "thinking"}},
		{ID: "gpt-4o", ContextWindow: 128_000, Capabilities: []provider.Capability{"tools", "vision"}},
		{ID: "text-embedding-3-small", ContextWindow: 128_000, Capabilities: []provider.Capability{"embedding"}},
		{ID: "dall-e-3", ContextWindow: 128_000, Capabilities: []provider.Capability{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("models:\n got %+v\nwant %+v", got, want)
	}
}

func TestListModelsErrors(t *testing.T) {
	for _, status := range []int{404, 405, 501} {
		f := newFake(t, jsonHandler(status, `{"detail":"Not Found"}`))
		_, err := compat(t, f).ListModels(context.Background())
		if !errors.Is(err, provider.ErrCannotList) {
			t.Errorf("compatible %d: err = %v, want ErrCannotList", status, err)
		}
	}
	f := newFake(t, jsonHandler(404, `{"error":{"message":"not here"}}`))
	_, err := newClient(t, provider.OpenAI, f.srv.URL+"/v1", "k", 5000).ListModels(context.Background())
	wantKind(t, err, provider.KindNotFound)

	g := newFake(t, jsonHandler(401, `{"error":{"message":"bad key","type":"invalid_request_error"}}`))
	_, err = compat(t, g).ListModels(context.Background())
	wantKind(t, err, provider.KindAuth)

	h := newFake(t, jsonHandler(200, `{"data":[{"id":`))
	_, err = newClient(t, provider.OpenAI, h.srv.URL+"/v1", "k", 5000).ListModels(context.Background())
	wantKind(t, err, provider.KindProtocol)

	html := newFake(t, jsonHandler(200, `<html>hello</html>`))
	if _, err := compat(t, html).ListModels(context.Background()); !errors.Is(err, provider.ErrCannotList) {
		t.Errorf("HTML answer: err = %v, want ErrCannotList", err)
	}
}

func TestListModelsBareArray(t *testing.T) {
	f := newFake(t, jsonHandler(200, `[{"id":"a","context_length":"2048"}]`))
	got, err := compat(t, f).ListModels(context.Background())
	if err != nil || len(got) != 1 || got[0].ContextWindow != 2048 {
		t.Fatalf("got %+v err %v", got, err)
	}
}

func TestDescribe(t *testing.T) {
	f := newFake(t, jsonHandler(200, `{"data":[{"id":"other","max_model_len":1},{"id":"test-model","max_model_len":40960}]}`))
	info, err := compat(t, f).Describe(context.Background())
	if err != nil || info.ID != "test-model" || info.ContextWindow != 40960 {
		t.Fatalf("info %+v err %v", info, err)
	}

	g := newFake(t, jsonHandler(200, `{"data":[{"id":"other"}]}`))
	_, err = compat(t, g).Describe(context.Background())
	wantKind(t, err, provider.KindNotFound)

	h := newFake(t, jsonHandler(404, ``))
	if _, err := compat(t, h).Describe(context.Background()); !errors.Is(err, provider.ErrCannotList) {
		t.Fatalf("err = %v, want ErrCannotList", err)
	}
}
