package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMentionsFollowReadPolicy: a file the user mentions through the editor
// is attached under read_file's policy decision (addendum §11), not around
// it: a secret-looking file (.env, *.pem) is attached only after an
// agent/requestApproval the user allowed, a file a deny rule refuses is
// never attached and nobody is asked, and allowAll attaches without asking.
// The approvals are reported as events after `started`.
func TestMentionsFollowReadPolicy(t *testing.T) {
	repo := smallRepo(t, "NOTES-DENIED-BY-RULE")
	for name, content := range map[string]string{
		".env":       "API_TOKEN=ENV-SECRET-MUST-NOT-LEAK\n",
		"deploy.pem": "PEM-CONTENT-APPROVED\n",
	} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A link with an innocent name that resolves to .env is .env (QA D1).
	if err := os.Symlink(".env", filepath.Join(repo, "envlink")); err != nil {
		t.Fatal(err)
	}
	model, srv := newScriptedModel(t, "openai", []step{{text: "Seen."}, {text: "Seen again."}})
	p := start(t)
	type asked struct {
		TaskID     string `json:"taskId"`
		CallID     string `json:"callId"`
		Tool       string `json:"tool"`
		Permission string `json:"permission"`
		Input      struct {
			Path string `json:"path"`
		} `json:"input"`
	}
	var requests []asked
	p.onRequest = func(method string, params json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		var a asked
		json.Unmarshal(params, &a)
		requests = append(requests, a)
		if a.Input.Path == "deploy.pem" {
			return map[string]any{"decision": "allow"}
		}
		return map[string]any{"decision": "deny"}
	}
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	prov := openaiProvider(srv.URL, "sk-mentions-key")
	editor := map[string]any{"mentions": []string{".env", "deploy.pem", "envlink", "notes.txt", "README.md"}}
	var sum struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	json.Unmarshal(p.mustCall("agent/run", map[string]any{"prompt": "Check the config", "provider": prov, "chatMode": "ask",
		"editor": editor, "policy": map[string]any{"mode": "default", "deny": []string{"read_file(notes.txt)"}}}), &sum)
	if sum.Status != "completed" {
		t.Fatalf("summary: %+v", sum)
	}
	if len(requests) != 3 || requests[0].Input.Path != ".env" || requests[1].Input.Path != "deploy.pem" || requests[2].Input.Path != "envlink" {
		t.Fatalf("approval requests: %+v; want .env, deploy.pem, envlink", requests)
	}
	for _, r := range requests {
		if r.Tool != "read_file" || r.Permission != "read" || r.TaskID != sum.TaskID || r.CallID == "" {
			t.Errorf("approval request %+v: want tool read_file, permission read, task %s, a call id", r, sum.TaskID)
		}
	}
	body := plainJSON(t, model.bodies()[0])
	for _, want := range []string{"PEM-CONTENT-APPROVED", "The demo project.", `.env\">not attached: `, `envlink\">not attached: `,
		`notes.txt\">not attached: denied by policy: deny rule \"read_file(notes.txt)\"`, "Check the config"} {
		if !strings.Contains(body, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	for _, bad := range []string{"ENV-SECRET-MUST-NOT-LEAK", "NOTES-DENIED-BY-RULE"} {
		if strings.Contains(body, bad) {
			t.Errorf("the model was sent %q", bad)
		}
	}
	if t.Failed() {
		t.Logf("body: %.3000s", body)
	}

	// The approvals are events of the task, after started and before done.
	var types []string
	resolved := map[string]string{}
	for _, n := range p.notifications("agent/event") {
		var ev struct {
			Event struct {
				Type     string `json:"type"`
				CallID   string `json:"callId"`
				Tool     string `json:"tool"`
				Decision string `json:"decision"`
			} `json:"event"`
		}
		json.Unmarshal(n.Params, &ev)
		types = append(types, ev.Event.Type)
		if ev.Event.Type == "approvalResolved" {
			resolved[ev.Event.CallID] = ev.Event.Decision
		}
	}
	if len(types) == 0 || types[0] != "started" || types[len(types)-1] != "done" {
		t.Errorf("events %v: want started first and done last", types)
	}
	if resolved[requests[0].CallID] != "deny" || resolved[requests[1].CallID] != "allow" {
		t.Errorf("approvalResolved events %v; want deny for %s and allow for %s", resolved, requests[0].CallID, requests[1].CallID)
	}

	// allowAll: attached at once, nobody is asked.
	requests = nil
	p.mustCall("agent/run", map[string]any{"prompt": "Again", "provider": prov, "chatMode": "ask",
		"editor": map[string]any{"mentions": []string{".env"}}, "policy": map[string]any{"mode": "default", "allowAll": true}})
	if len(requests) != 0 {
		t.Errorf("allowAll asked %+v", requests)
	}
	if body := plainJSON(t, model.bodies()[1]); !strings.Contains(body, "ENV-SECRET-MUST-NOT-LEAK") {
		t.Errorf("allowAll did not attach .env: %.2000s", body)
	}
}
