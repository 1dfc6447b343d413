package e2e

import (
	"strings"
	"testing"
)

// TestRefineEmptyAnswer: a model that answers only with reasoning must not
// make prompt/refine hand the client an empty prompt: it is an error, and a
// whitespace prompt is -32602.
func TestRefineEmptyAnswer(t *testing.T) {
	_, srv := newScriptedModel(t, "openai", []step{{text: "<think>I wonder what to write"}})
	p := start(t)
	p.initialize(nil)
	prov := map[string]any{"kind": "openaiCompatible", "model": "m", "baseUrl": srv.URL + "/v1", "apiKey": "k-refine-1"}
	_, err := p.call("prompt/refine", map[string]any{"prompt": "add a flag", "provider": prov})
	if err == nil || err.Code != -32001 || !strings.Contains(err.Message, "no rewritten prompt") {
		t.Fatalf("empty refine: %v", err)
	}
	_, err = p.call("prompt/refine", map[string]any{"prompt": "   ", "provider": prov})
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "empty") {
		t.Fatalf("whitespace prompt: %v", err)
	}
}
