package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// fakeModels serves /api/tags and /api/show for n models named m000..m<n-1>
// (docs/api.md "List Local Models", "Show Model Information"). Model i has
// parameter_size "<i>B"; its show reply has capabilities in Ollama's order
// (completion first) and "llama.context_length" 8192+i. Names listed in fail
// answer /api/show with 500. It measures the /api/show concurrency.
type fakeModels struct {
	n        int
	fail     map[string]bool
	delay    time.Duration
	inFlight atomic.Int32
	peak     atomic.Int32
	mu       sync.Mutex
	asked    map[string]int
}

// askedCounts copies how often each model was asked about.
func (f *fakeModels) askedCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.asked))
	for k, v := range f.asked {
		out[k] = v
	}
	return out
}

func (f *fakeModels) name(i int) string { return fmt.Sprintf("m%03d:latest", i) }

func (f *fakeModels) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/tags":
		var models []map[string]any
		for i := range f.n {
			models = append(models, map[string]any{
				"name": f.name(i), "model": f.name(i),
				"modified_at": "2025-05-04T17:37:44.706015396-07:00", "size": 2019393189,
				"digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
				"details": map[string]any{"format": "gguf", "family": "llama", "families": []string{"llama"},
					"parameter_size": fmt.Sprintf("%dB", i), "quantization_level": "Q4_0"},
			})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"models": models})
	case r.Method == http.MethodPost && r.URL.Path == "/api/show":
		var req struct {
			Model string `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
			return
		}
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			p := f.peak.Load()
			if n <= p || f.peak.CompareAndSwap(p, n) {
				break
			}
		}
		f.mu.Lock()
		if f.asked == nil {
			f.asked = map[string]int{}
		}
		f.asked[req.Model]++
		f.mu.Unlock()
		time.Sleep(f.delay)
		if f.fail[req.Model] {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":"failed to load model"}`)
			return
		}
		var i int
		if _, err := fmt.Sscanf(req.Model, "m%03d:latest", &i); err != nil {
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, `{"error":"model '%s' not found"}`, req.Model)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"modelfile":  "FROM /models/blobs/sha256-x",
			"parameters": "num_keep 24",
			"template":   "{{ .Prompt }}",
			"details": map[string]any{"parent_model": "", "format": "gguf", "family": "llama",
				"parameter_size": fmt.Sprintf("%d.5B", i), "quantization_level": "Q4_K_M"},
			"model_info": map[string]any{
				"general.architecture":    "llama",
				"general.parameter_count": 8030261248,
				"llama.context_length":    8192 + i,
				"llama.embedding_length":  4096,
				"tokenizer.ggml.tokens":   []string{},
			},
			"capabilities":   []string{"completion", "thinking", "vision", "tools"},
			"modified_at":    "2025-05-04T17:37:44.706015396-07:00",
			"license":        "MIT",
			"projector_info": map[string]any{},
		})
	default:
		http.Error(w, `{"error":"unexpected"}`, http.StatusNotFound)
	}
}

func TestListModelsFanOut(t *testing.T) {
	f := &fakeModels{n: 130, delay: 15 * time.Millisecond}
	p := newFake(t, provider.Config{}, f)
	models, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 130 {
		t.Fatalf("%d models, want 130", len(models))
	}
	if peak := f.peak.Load(); peak > showParallel || peak < 2 {
		t.Fatalf("peak /api/show concurrency %d, want 2..%d", peak, showParallel)
	}
	asked := f.askedCounts()
	if len(asked) != showLimit {
		t.Fatalf("/api/show asked about %d models, want %d", len(asked), showLimit)
	}
	for i := range showLimit {
		if asked[f.name(i)] != 1 {
			t.Fatalf("model %s asked %d times", f.name(i), asked[f.name(i)])
		}
	}
	first := models[7]
	want := provider.ModelInfo{ID: "m007:latest", ContextWindow: 8199,
		Capabilities: []provider.Capability{"tools", "vision", "thinking"}, Details: "7.5B · Q4_K_M"}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("model 7 = %+v, want %+v", first, want)
	}
	late := models[120]
	wantLate := provider.ModelInfo{ID: "m120:latest", Capabilities: []provider.Capability{}, Details: "120B · Q4_0"}
	if !reflect.DeepEqual(late, wantLate) {
		t.Fatalf("model 120 = %+v, want %+v (tags details only)", late, wantLate)
	}
}

func TestListModelsFailingShow(t *testing.T) {
	f := &fakeModels{n: 3, fail: map[string]bool{"m001:latest": true}}
	p := newFake(t, provider.Config{}, f)
	models, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatalf("a failed show failed the list: %v", err)
	}
	want := []provider.ModelInfo{
		{ID: "m000:latest", ContextWindow: 8192, Capabilities: []provider.Capability{"tools", "vision", "thinking"}, Details: "0.5B · Q4_K_M"},
		{ID: "m001:latest", Capabilities: []provider.Capability{}, Details: "1B · Q4_0"},
		{ID: "m002:latest", ContextWindow: 8194, Capabilities: []provider.Capability{"tools", "vision", "thinking"}, Details: "2.5B · Q4_K_M"},
	}
	if !reflect.DeepEqual(models, want) {
		t.Fatalf("models = %+v\nwant %+v", models, want)
	}
}

func TestListModelsTagsErrors(t *testing.T) {
	p := newFake(t, provider.Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"boom"}`)
	}))
	_, err := p.ListModels(context.Background())
	if pe := wantKind(t, err, provider.KindServer); pe.Message != "boom" {
		t.Fatalf("message %q", pe.Message)
	}

	p = newFake(t, provider.Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"models": "nope"}`)
	}))
	_, err = p.ListModels(context.Background())
	wantKind(t, err, provider.KindProtocol)
}

func TestListModelsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeModels{n: 20, delay: 50 * time.Millisecond}
	p := newFake(t, provider.Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/show" {
			cancel()
		}
		f.ServeHTTP(w, r)
	}))
	_, err := p.ListModels(ctx)
	wantKind(t, err, provider.KindCancelled)
}

func TestDescribe(t *testing.T) {
	f := &fakeModels{n: 5}
	p := newFake(t, provider.Config{Model: "m004:latest"}, f)
	info, err := p.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ModelInfo{ID: "m004:latest", ContextWindow: 8196,
		Capabilities: []provider.Capability{"tools", "vision", "thinking"}, Details: "4.5B · Q4_K_M"}
	if !reflect.DeepEqual(info, want) {
		t.Fatalf("info = %+v", info)
	}

	p = newFake(t, provider.Config{Model: "ghost"}, f)
	_, err = p.Describe(context.Background())
	if pe := wantKind(t, err, provider.KindNotFound); !strings.Contains(pe.Message, "not found") || pe.Status != 404 {
		t.Fatalf("error %+v", pe)
	}
}

func TestContextLength(t *testing.T) {
	cases := []struct {
		info string
		want int
	}{
		{`{"general.architecture":"qwen3","qwen3.context_length":40960,"clip.context_length":77}`, 40960},
		{`{"gemma3.context_length":131072}`, 131072},
		{`{"general.architecture":"llama","llama.context_length":"8192"}`, 0},
		{`{"llama.context_length":-1}`, 0},
		{`{"llama.context_length":1e6}`, 1000000},
		{`{"llama.embedding_length":4096}`, 0},
		{`{}`, 0},
	}
	for _, tc := range cases {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.info), &m); err != nil {
			t.Fatal(err)
		}
		if got := contextLength(m); got != tc.want {
			t.Errorf("contextLength(%s) = %d, want %d", tc.info, got, tc.want)
		}
	}
}

func TestCapabilitiesAndDetails(t *testing.T) {
	if got := mapCapabilities([]string{"embedding", "completion", "thinking", "insert", "tools"}); !reflect.DeepEqual(got, []provider.Capability{"tools", "thinking", "embedding"}) {
		t.Errorf("capabilities = %v", got)
	}
	if got := mapCapabilities(nil); got == nil || len(got) != 0 {
		t.Errorf("nil capabilities = %#v, want empty", got)
	}
	for d, want := range map[modelDetails]string{
		{ParameterSize: "8.2B", QuantizationLevel: "Q4_K_M"}: "8.2B · Q4_K_M",
		{ParameterSize: "8.2B"}:                              "8.2B",
		{QuantizationLevel: "F16"}:                           "F16",
		{}:                                                   "",
	} {
		if got := formatDetails(d); got != want {
			t.Errorf("formatDetails(%+v) = %q, want %q", d, got, want)
		}
	}
}

func TestNewConfig(t *testing.T) {
	for name, cfg := range map[string]provider.Config{
		"wrong kind":  {Kind: provider.Anthropic, BaseURL: "http://127.0.0.1:11434"},
		"bad scheme":  {BaseURL: "ftp://127.0.0.1:11434"},
		"no host":     {BaseURL: "http://"},
		"credentials": {BaseURL: "http://u:p@127.0.0.1:11434"},
	} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("%s: no error", name)
		} else if pe, ok := err.(*provider.Error); !ok || pe.Kind != provider.KindInvalidConfig {
			t.Errorf("%s: error %v", name, err)
		}
	}
	p, err := New(provider.Config{Model: "qwen3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Config(); got.BaseURL != DefaultBaseURL || got.Kind != provider.Ollama {
		t.Fatalf("config = %+v", got)
	}
}

func TestBaseURLPathPrefix(t *testing.T) {
	var path string
	srv := newFake(t, provider.Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		_, _ = io.WriteString(w, `{"models":[]}`)
	}))
	cfg := srv.Config()
	cfg.BaseURL += "/ollama/"
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	models, err := p.ListModels(context.Background())
	if err != nil || len(models) != 0 || models == nil {
		t.Fatalf("models %v err %v", models, err)
	}
	if path != "/ollama/api/tags" {
		t.Fatalf("path = %q", path)
	}
}
