package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// newHangingServer accepts requests and never answers until the test ends.
func newHangingServer(t *testing.T) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

func TestChatSendStreamsEvents(t *testing.T) {
	for _, format := range []string{"openai", "anthropic", "ollama"} {
		t.Run(format, func(t *testing.T) {
			_, srv := newScriptedModel(t, format, []step{{text: "Hello there", calls: []scriptedCall{{name: "lookup", input: map[string]any{"q": "é\"x"}}}}})
			prov := map[string]any{"kind": "openaiCompatible", "model": "m", "baseUrl": srv.URL + "/v1", "apiKey": "k-123456"}
			if format == "anthropic" {
				prov = map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKey": "k-123456"}
			} else if format == "ollama" {
				prov = map[string]any{"kind": "ollama", "model": "m", "baseUrl": srv.URL}
			}
			p := start(t)
			p.initialize(nil)
			res := p.mustCall("chat/send", map[string]any{"provider": prov, "request": map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}},
				"tools":    []any{map[string]any{"name": "lookup", "description": "look up", "inputSchema": map[string]any{"type": "object"}}},
			}})
			var r struct {
				Text      string `json:"text"`
				ToolCalls []struct {
					ID    string         `json:"id"`
					Name  string         `json:"name"`
					Input map[string]any `json:"input"`
				} `json:"toolCalls"`
				StopReason string `json:"stopReason"`
				Usage      struct {
					InputTokens  int `json:"inputTokens"`
					OutputTokens int `json:"outputTokens"`
				} `json:"usage"`
			}
			json.Unmarshal(res, &r)
			if r.Text != "Hello there" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Input["q"] != "é\"x" || r.ToolCalls[0].ID == "" ||
				r.StopReason != "toolUse" || r.Usage.InputTokens == 0 {
				t.Fatalf("result: %s", res)
			}
			var text strings.Builder
			var types []string
			for _, n := range p.notifications("chat/event") {
				var ev struct {
					RequestID json.RawMessage `json:"requestId"`
					Event     struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"event"`
				}
				json.Unmarshal(n.Params, &ev)
				if string(ev.RequestID) != "2" {
					t.Fatalf("requestId %s", ev.RequestID)
				}
				types = append(types, ev.Event.Type)
				if ev.Event.Type == "textDelta" {
					text.WriteString(ev.Event.Text)
				}
			}
			if text.String() != "Hello there" || !contains(types, "toolCall") || !contains(types, "usage") || types[len(types)-1] != "done" {
				t.Fatalf("events %v, text %q", types, text.String())
			}
		})
	}
}

func TestChatSendErrors(t *testing.T) {
	p := start(t)
	p.initialize(nil)
	msg := map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}
	// Local validation: -32602 with {kind, message, field}.
	for _, c := range []struct {
		prov  map[string]any
		field string
	}{
		{map[string]any{"kind": "anthropic", "model": "m", "apiKey": "k", "extra": 1}, ""},
		{map[string]any{"kind": "nope", "model": "m"}, "kind"},
		{map[string]any{"kind": "openai", "model": "", "apiKey": "k"}, "model"},
		{map[string]any{"kind": "openaiCompatible", "model": "m", "apiKey": "secret-key-1", "baseUrl": "http://example.com/v1"}, "apiKey"},
		{map[string]any{"kind": "ollama", "model": "m", "baseUrl": "http://user:pw@127.0.0.1:11434"}, "baseUrl"},
		{map[string]any{"kind": "ollama", "model": "m", "baseUrl": "ftp://127.0.0.1"}, "baseUrl"},
	} {
		_, err := p.call("chat/send", map[string]any{"provider": c.prov, "request": msg})
		if err == nil || err.Code != -32602 || !strings.Contains(string(err.Data), "invalidConfig") {
			t.Errorf("%v: %v", c.prov, err)
		}
		if c.field != "" && !strings.Contains(string(err.Data), `"field":"`+c.field+`"`) {
			t.Errorf("%v: data %s lacks field %s", c.prov, err.Data, c.field)
		}
		if strings.Contains(err.Message+string(err.Data), "secret-key-1") {
			t.Errorf("key in error: %v", err)
		}
	}
	// The provider's own error: -32001 with a ProviderError and retryAfterMs.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(429)
		w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down, key sk-ant-echoed-999"}}`))
	}))
	defer srv.Close()
	_, err := p.call("chat/send", map[string]any{"provider": map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKey": "sk-ant-echoed-999"}, "request": msg})
	if err == nil || err.Code != -32001 {
		t.Fatalf("429: %v", err)
	}
	var pe map[string]any
	json.Unmarshal(err.Data, &pe)
	if pe["kind"] != "rateLimited" || pe["retryable"] != true || pe["status"] != float64(429) || pe["retryAfterMs"] != float64(7000) {
		t.Fatalf("provider error data: %s", err.Data)
	}
	if strings.Contains(string(err.Data)+err.Message, "sk-ant-echoed-999") {
		t.Fatalf("key echoed: %v", err)
	}
}
