package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// TestGivenToolCallIDsUniqueAcrossSession: Ollama sends tool calls without ids;
// the ids the runtime gives them are unique across responses, tasks and chat/send
// requests (addendum §10), not call_1 again in every response.
func TestGivenToolCallIDsUniqueAcrossSession(t *testing.T) {
	root := t.TempDir()
	listing := scriptedCall{name: "list_files", input: map[string]any{}}
	_, srv := newScriptedModel(t, "ollama", []step{
		{calls: []scriptedCall{listing}},
		{calls: []scriptedCall{listing, listing}},
		{text: "done"},
	})
	prov := map[string]any{"kind": "ollama", "model": "fake", "baseUrl": srv.URL}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	seen := map[string]int{}
	for range 2 {
		res := runDriven(t, p, map[string]any{"prompt": "list", "provider": prov, "chatMode": "agent"},
			func(ev agentEvent) {
				if ev.Event["type"] == "toolStarted" {
					seen[ev.Event["callId"].(string)]++
				}
			}, func(string, *message) {})
		if res.Error != nil {
			t.Fatalf("agent/run: %v", res.Error)
		}
	}
	for range 2 {
		id := p.request("chat/send", map[string]any{"provider": prov, "request": map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}})
		m := p.waitFor(itoa(id), 30*time.Second)
		var res struct {
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"toolCalls"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || len(res.ToolCalls) != 1 {
			t.Fatalf("chat/send: %s", m.raw)
		}
		seen[res.ToolCalls[0].ID]++
	}
	if len(seen) != 8 {
		t.Fatalf("tool-call ids %v; want 8 distinct ids", seen)
	}
}
