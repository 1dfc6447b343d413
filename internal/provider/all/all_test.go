package all

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

func TestNewDispatches(t *testing.T) {
	cases := map[string]string{
		`{"kind":"anthropic","model":"claude-opus-4-6","apiKey":"k"}`:                            "*anthropic.Client",
		`{"kind":"openai","model":"gpt-5","apiKey":"k"}`:                                         "openai.",
		`{"kind":"openaiCompatible","model":"m","apiKey":"k","baseUrl":"http://127.0.0.1:8000"}`: "openai.",
		`{"kind":"ollama","model":"qwen3"}`:                                                      "ollama.",
	}
	for in, wantType := range cases {
		cfg, err := provider.ParseConfig(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(cfg, nil)
		if err != nil {
			t.Fatalf("New(%s): %v", in, err)
		}
		if got := fmt.Sprintf("%T", p); !strings.Contains(got, wantType) {
			t.Errorf("New(%s) = %s, want %s", in, got, wantType)
		}
		if p.Config().Kind != cfg.Kind || p.Config().Model != cfg.Model {
			t.Errorf("Config() = %v, want %v", p.Config(), cfg)
		}
	}
}

func TestNewUnknownKind(t *testing.T) {
	_, err := New(provider.Config{Kind: "gemini", Model: "m"}, nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidConfig || pe.Field != "kind" {
		t.Fatalf("err = %v", err)
	}
}

// TestNewPassesHTTPClient checks that Options reach the adapter: a request
// through an all-built anthropic provider uses the given client.
func TestNewPassesHTTPClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[{"id":"claude-opus-4-6"}],"has_more":false}`)
	}))
	defer srv.Close()
	used := false
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, err := New(provider.Config{Kind: provider.Anthropic, Model: "m", APIKey: "k", BaseURL: srv.URL}, &Options{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	models, err := p.ListModels(context.Background())
	if err != nil || len(models) != 1 || !used {
		t.Fatalf("models %v err %v used %v", models, err, used)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCapabilitiesAndKeys(t *testing.T) {
	for _, k := range provider.Kinds {
		c := Capabilities(k)
		if !c.Streaming || !c.Tools || !c.ListModels {
			t.Errorf("Capabilities(%s) = %+v", k, c)
		}
	}
	if Capabilities(provider.OpenAI).ContextWindow || !Capabilities(provider.Ollama).ContextWindow {
		t.Error("context window reporting: official OpenAI estimates, Ollama reports")
	}
	if Capabilities("x") != (provider.Capabilities{}) {
		t.Error("unknown kind has capabilities")
	}
	if !RequiresAPIKey(provider.Anthropic) || !RequiresAPIKey(provider.OpenAICompatible) || RequiresAPIKey(provider.Ollama) {
		t.Error("RequiresAPIKey")
	}
}
