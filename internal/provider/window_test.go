package provider

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestEstimateWindow(t *testing.T) {
	cases := []struct {
		kind  Kind
		model string
		want  int
	}{
		{Anthropic, "claude-opus-4-6", 1_000_000},
		{Anthropic, "claude-sonnet-4-6-20260101", 1_000_000},
		{Anthropic, "claude-opus-4-6@20260101", 1_000_000},
		{Anthropic, "anthropic.claude-opus-4-6-v1:0", 1_000_000},
		{Anthropic, "claude-opus-4-7", 1_000_000},
		{Anthropic, "claude-4.7-sonnet", 1_000_000},
		{Anthropic, "claude-opus-5", 1_000_000},
		{Anthropic, "claude-haiku-5-1-20270101", 1_000_000},
		{Anthropic, "Claude-Opus-4-6", 1_000_000},
		{Anthropic, "claude-opus-4-5-20251101", 200_000},
		{Anthropic, "claude-sonnet-4-20250514", 200_000},
		{Anthropic, "claude-opus-4-1", 200_000},
		{Anthropic, "claude-3-7-sonnet-20250219", 200_000},
		{Anthropic, "claude-3-5-haiku-latest", 200_000},
		{Anthropic, "claude-2.1", 200_000},
		{Anthropic, "my-proxy-model", 200_000},
		{OpenAI, "gpt-4.1", 1_000_000},
		{OpenAI, "gpt-4.1-mini-2025-04-14", 1_000_000},
		{OpenAI, "gpt-5", 272_000},
		{OpenAI, "gpt-5.1-codex", 272_000},
		{OpenAI, "GPT-5-mini", 272_000},
		{OpenAI, "gpt-4o", 128_000},
		{OpenAI, "o3", 128_000},
		{Ollama, "qwen3:latest", 32_768},
		{OpenAICompatible, "gpt-4.1", 32_768},
		{"other", "x", 0},
	}
	for _, tc := range cases {
		if got := EstimateWindow(tc.kind, tc.model); got != tc.want {
			t.Errorf("EstimateWindow(%s, %q) = %d, want %d", tc.kind, tc.model, got, tc.want)
		}
	}
}

func TestClaudeVersion(t *testing.T) {
	cases := map[string]ModelVersion{
		"claude-opus-4-6":                     {4, 6},
		"claude-sonnet-4-20250514":            {4, 0},
		"claude-3-7-sonnet-20250219":          {3, 7},
		"claude-3-haiku-20240307":             {3, 0},
		"claude-4.7-opus":                     {4, 7},
		"claude-instant-1.2":                  {1, 2},
		"us.anthropic.claude-sonnet-4-6-v1:0": {4, 6},
		"claude-opus-4-6[1m]":                 {4, 6},
	}
	for id, want := range cases {
		if got, ok := ClaudeVersion(id); !ok || got != want {
			t.Errorf("ClaudeVersion(%q) = %v, %v; want %v", id, got, ok, want)
		}
	}
	for _, id := range []string{"gpt-4o", "claude", "claude-latest", "claude-20250514"} {
		if v, ok := ClaudeVersion(id); ok {
			t.Errorf("ClaudeVersion(%q) = %v, want not ok", id, v)
		}
	}
}

func TestFamilyCapabilities(t *testing.T) {
	cases := []struct {
		kind  Kind
		model string
		want  []Capability
	}{
		{Anthropic, "claude-opus-4-6", []Capability{"tools", "vision", "thinking"}},
		{Anthropic, "claude-3-7-sonnet-latest", []Capability{"tools", "vision", "thinking"}},
		{Anthropic, "claude-3-5-sonnet-20241022", []Capability{"tools", "vision"}},
		{Anthropic, "claude-2.1", nil},
		{Anthropic, "unknown", nil},
		{OpenAI, "text-embedding-3-small", []Capability{"embedding"}},
		{OpenAI, "gpt-5-mini", []Capability{"tools", "vision", "thinking"}},
		{OpenAI, "o3", []Capability{"tools", "vision", "thinking"}},
		{OpenAI, "o4-mini", []Capability{"tools", "vision", "thinking"}},
		{OpenAI, "o3-mini", []Capability{"tools", "thinking"}},
		{OpenAI, "o1-mini", []Capability{"thinking"}},
		{OpenAI, "gpt-4o-mini", []Capability{"tools", "vision"}},
		{OpenAI, "gpt-4.1-nano", []Capability{"tools", "vision"}},
		{OpenAI, "gpt-3.5-turbo", []Capability{"tools"}},
		{OpenAI, "omni-moderation-latest", nil},
		{OpenAI, "dall-e-3", nil},
		{Ollama, "llava", nil},
		{OpenAICompatible, "gpt-4o", nil},
	}
	for _, tc := range cases {
		if got := FamilyCapabilities(tc.kind, tc.model); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("FamilyCapabilities(%s, %q) = %v, want %v", tc.kind, tc.model, got, tc.want)
		}
	}
}

// fakeProvider answers Describe with window or err and counts calls.
type fakeProvider struct {
	cfg    Config
	mu     sync.Mutex
	window int
	err    error
	calls  int
}

func (f *fakeProvider) Config() Config { return f.cfg }
func (f *fakeProvider) Stream(context.Context, *Request, func(Event)) (*Result, error) {
	return nil, errors.New("not used")
}
func (f *fakeProvider) ListModels(context.Context) ([]ModelInfo, error) { return nil, ErrCannotList }
func (f *fakeProvider) Describe(ctx context.Context) (ModelInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return ModelInfo{}, f.err
	}
	if err := ctx.Err(); err != nil {
		return ModelInfo{}, err
	}
	return ModelInfo{ID: f.cfg.Model, ContextWindow: f.window}, nil
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestWindowCacheTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	cache := NewWindowCache(clock.Now)
	p := &fakeProvider{cfg: Config{Kind: Ollama, Model: "qwen3", BaseURL: "http://127.0.0.1:11434"}, window: 40960}
	ctx := context.Background()

	if n, from := cache.Lookup(ctx, p); n != 40960 || !from {
		t.Fatalf("first lookup %d %v", n, from)
	}
	p.window = 8192
	clock.Advance(WindowTTL - time.Second)
	if n, _ := cache.Lookup(ctx, p); n != 40960 || p.calls != 1 {
		t.Fatalf("within TTL: %d after %d calls", n, p.calls)
	}
	clock.Advance(2 * time.Second)
	if n, from := cache.Lookup(ctx, p); n != 8192 || !from || p.calls != 2 {
		t.Fatalf("after TTL: %d %v after %d calls", n, from, p.calls)
	}

	// Another model on the same endpoint is another key.
	q := &fakeProvider{cfg: Config{Kind: Ollama, Model: "llama3", BaseURL: "http://127.0.0.1:11434"}}
	if n, from := cache.Lookup(ctx, q); n != 32768 || from {
		t.Fatalf("unreported window: %d %v (want the estimate)", n, from)
	}
	clock.Advance(WindowTTL - time.Second)
	cache.Lookup(ctx, q)
	if q.calls != 1 {
		t.Fatalf("an unreported window is a provider answer, cached 5 minutes; calls %d", q.calls)
	}
}

func TestWindowCacheFailures(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	cache := NewWindowCache(clock.Now)
	p := &fakeProvider{cfg: Config{Kind: Anthropic, Model: "claude-opus-4-6", BaseURL: "https://api.anthropic.com"}, err: &Error{Kind: KindNetwork, Message: "down"}}
	ctx := context.Background()
	if n, from := cache.Lookup(ctx, p); n != 1_000_000 || from {
		t.Fatalf("failure: %d %v (want the estimate)", n, from)
	}
	clock.Advance(WindowFailureTTL - time.Second)
	cache.Lookup(ctx, p)
	if p.calls != 1 {
		t.Fatalf("failure not cached briefly: %d calls", p.calls)
	}
	p.err, p.window = nil, 500_000
	clock.Advance(2 * time.Second)
	if n, from := cache.Lookup(ctx, p); n != 500_000 || !from || p.calls != 2 {
		t.Fatalf("after failure TTL: %d %v, %d calls", n, from, p.calls)
	}

	// A cancelled lookup is not cached.
	r := &fakeProvider{cfg: Config{Kind: OpenAI, Model: "gpt-5", BaseURL: "https://api.openai.com/v1"}, window: 400_000}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if n, from := cache.Lookup(cctx, r); n != 272_000 || from {
		t.Fatalf("cancelled: %d %v", n, from)
	}
	if n, from := cache.Lookup(ctx, r); n != 400_000 || !from || r.calls != 2 {
		t.Fatalf("after cancel: %d %v, %d calls", n, from, r.calls)
	}
}

func TestWindowCacheConcurrentAndBounded(t *testing.T) {
	cache := NewWindowCache(nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				p := &fakeProvider{cfg: Config{Kind: Ollama, Model: string(rune('a'+i)) + string(rune('a'+j%26)) + string(rune('a'+j/26)), BaseURL: "u"}, window: 100}
				if n, _ := cache.Lookup(context.Background(), p); n != 100 {
					t.Errorf("got %d", n)
				}
			}
		}(i)
	}
	wg.Wait()
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if len(cache.entries) > maxWindowEntries {
		t.Fatalf("%d entries", len(cache.entries))
	}
}
