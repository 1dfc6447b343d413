package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAskUser: the model calls ask_user; the runtime asks the client with
// agent/askUser (no approval: class interactive), drops options outside the
// offered list, keeps one answer for a radio question, and gives the model
// { answered, answers: [{question, selected}] }. answers: null is a dismissal.
func TestAskUser(t *testing.T) {
	for _, dismiss := range []bool{false, true} {
		repo := t.TempDir()
		model, srv := newScriptedModel(t, "openai", []step{
			{calls: []scriptedCall{{name: "ask_user", input: map[string]any{"questions": []any{
				map[string]any{"id": "db", "text": "Which database?", "kind": "radio", "options": []string{"sqlite", "postgres"}},
				map[string]any{"text": "Which extras?", "kind": "checkbox", "options": []string{"docs", "tests", "ci"}},
			}}}}},
			{text: "Noted."},
		})
		p := start(t)
		var asked []map[string]any
		p.onRequest = func(method string, params json.RawMessage) any {
			switch method {
			case "agent/askUser":
				var q map[string]any
				json.Unmarshal(params, &q)
				asked = append(asked, q)
				if dismiss {
					return map[string]any{"answers": nil}
				}
				return map[string]any{"answers": map[string]any{"db": []string{"postgres", "sqlite"}, "q2": []string{"tests", "bogus", "ci"}}}
			case "agent/requestApproval":
				t.Errorf("ask_user asked for approval")
				return map[string]any{"decision": "deny"}
			}
			return nil
		}
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": repo})
		res := p.mustCall("agent/run", map[string]any{"prompt": "set up the project", "chatMode": "ask",
			"provider": map[string]any{"kind": "openaiCompatible", "model": "m", "baseUrl": srv.URL + "/v1", "apiKey": "k-ask-1"}})
		if !strings.Contains(string(res), `"status":"completed"`) {
			t.Fatalf("summary: %s", res)
		}
		if len(asked) != 1 || asked[0]["callId"] == "" || asked[0]["taskId"] == "" {
			t.Fatalf("agent/askUser params: %v", asked)
		}
		last := mustJSON(model.bodies()[1])
		if dismiss {
			// The tool result is exactly the JSON, with no prose around it.
			var result any
			for _, m := range model.bodies()[1]["messages"].([]any) {
				if mm := m.(map[string]any); mm["role"] == "tool" {
					result = mm["content"]
				}
			}
			if result != `{"answered":false,"answers":[]}` {
				t.Fatalf("dismissal result %q; want exactly {\"answered\":false,\"answers\":[]}", result)
			}
			continue
		}
		for _, want := range []string{`\"answered\":true`, `\"selected\":[\"postgres\"]`, `\"selected\":[\"tests\",\"ci\"]`} {
			if !strings.Contains(last, want) {
				t.Errorf("model did not get %s: %.1500s", want, last)
			}
		}
		if strings.Contains(last, "bogus") {
			t.Error("an option outside the list reached the model")
		}
	}
}
