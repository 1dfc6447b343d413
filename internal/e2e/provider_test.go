package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
)

// TestProviderMethods checks provider/listModels, provider/models,
// provider/contextWindow and provider/test through the binary against fakes
// of each endpoint kind.
func TestProviderMethods(t *testing.T) {
	// An OpenAI-compatible server with 600 models (vLLM's /v1/models shape,
	// https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html).
	many := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		var data []any
		for i := 599; i >= 0; i-- {
			data = append(data, map[string]any{"id": fmt.Sprintf("model-%03d", i), "object": "model", "max_model_len": 4096 + i})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	defer many.Close()
	// A compatible server without /models whose chat answers (llama.cpp-like).
	chatOnly, chatSrv := newScriptedModel(t, "openai", []step{{text: "pong"}})
	// An Anthropic endpoint reporting max_input_tokens
	// (https://docs.anthropic.com/en/api/models).
	anth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models/claude-sonnet-4-5":
			json.NewEncoder(w).Encode(map[string]any{"id": "claude-sonnet-4-5", "type": "model", "max_input_tokens": 123456})
		case "/v1/models":
			json.NewEncoder(w).Encode(map[string]any{"data": []any{
				map[string]any{"id": "claude-sonnet-4-5", "type": "model", "max_input_tokens": 123456},
				map[string]any{"id": "claude-haiku-4-5", "type": "model"},
			}, "has_more": false})
		default:
			w.WriteHeader(404)
			w.Write([]byte(`{"type":"error","error":{"type":"not_found_error","message":"no"}}`))
		}
	}))
	defer anth.Close()

	p := start(t)
	p.initialize(nil)
	compat := map[string]any{"kind": "openaiCompatible", "model": "model-010", "baseUrl": many.URL, "apiKey": "k-1234"}

	var lm struct{ Models []string }
	json.Unmarshal(p.mustCall("provider/listModels", map[string]any{"provider": compat}), &lm)
	if len(lm.Models) != 500 || !sort.StringsAreSorted(lm.Models) || lm.Models[0] != "model-000" {
		t.Fatalf("listModels: %d models, first %v", len(lm.Models), lm.Models[:3])
	}
	var mi struct {
		Models []struct {
			ID            string   `json:"id"`
			ContextWindow int      `json:"contextWindow"`
			Capabilities  []string `json:"capabilities"`
		}
	}
	json.Unmarshal(p.mustCall("provider/models", map[string]any{"provider": compat}), &mi)
	if len(mi.Models) != 500 || mi.Models[1].ID != "model-001" || mi.Models[1].ContextWindow != 4097 || mi.Models[1].Capabilities == nil {
		t.Fatalf("models: %+v", mi.Models[:2])
	}
	var tr struct {
		LatencyMs      *int64          `json:"latencyMs"`
		Models         []string        `json:"models"`
		ModelAvailable *bool           `json:"modelAvailable"`
		Capabilities   map[string]bool `json:"capabilities"`
	}
	json.Unmarshal(p.mustCall("provider/test", map[string]any{"provider": compat}), &tr)
	if tr.LatencyMs == nil || tr.ModelAvailable == nil || !*tr.ModelAvailable || len(tr.Capabilities) != 4 {
		t.Fatalf("provider/test: %+v", tr)
	}

	// Without /models: modelAvailable is null and a one-token chat checks the endpoint.
	raw := p.mustCall("provider/test", map[string]any{"provider": map[string]any{"kind": "openaiCompatible", "model": "local", "baseUrl": chatSrv.URL + "/v1", "apiKey": "k-local"}})
	if !strings.Contains(string(raw), `"modelAvailable":null`) || len(chatOnly.bodies()) != 1 {
		t.Fatalf("provider/test without /models: %s (%d chats)", raw, len(chatOnly.bodies()))
	}
	if _, err := p.call("provider/listModels", map[string]any{"provider": map[string]any{"kind": "openaiCompatible", "model": "local", "baseUrl": chatSrv.URL + "/v1", "apiKey": "k-local"}}); err == nil || err.Code != -32001 {
		t.Fatalf("listModels without /models: %v", err)
	}

	// Context windows: reported by the endpoint, else the built-in estimate.
	var cw struct{ Tokens int }
	json.Unmarshal(p.mustCall("provider/contextWindow", map[string]any{"provider": map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": anth.URL, "apiKey": "k-5678"}}), &cw)
	if cw.Tokens != 123456 {
		t.Fatalf("anthropic window %d", cw.Tokens)
	}
	json.Unmarshal(p.mustCall("provider/contextWindow", map[string]any{"provider": map[string]any{"kind": "anthropic", "model": "claude-opus-4-6", "baseUrl": anth.URL, "apiKey": "k-5678"}}), &cw)
	if cw.Tokens != 1000000 {
		t.Fatalf("claude 4.6 estimate %d", cw.Tokens)
	}
	json.Unmarshal(p.mustCall("provider/contextWindow", map[string]any{"provider": map[string]any{"kind": "ollama", "model": "x", "baseUrl": "http://127.0.0.1:1"}}), &cw)
	if cw.Tokens != 32768 {
		t.Fatalf("ollama estimate %d", cw.Tokens)
	}
	// An unreachable endpoint: provider/test fails with -32001 kind network.
	_, err := p.call("provider/test", map[string]any{"provider": map[string]any{"kind": "ollama", "model": "x", "baseUrl": "http://127.0.0.1:1"}})
	if err == nil || err.Code != -32001 || !strings.Contains(string(err.Data), `"kind":"network"`) {
		t.Fatalf("unreachable: %v", err)
	}
}
