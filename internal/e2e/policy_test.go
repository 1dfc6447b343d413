package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyShellParsing drives run_command policy decisions through the
// binary (issue 4 point 2): an allow rule covers a command only when every
// part the shell parser finds is covered and nothing writes a file; deny
// refuses without asking; allowSession remembers the programs of the
// approved command and covers a later command only when all its parts run
// remembered programs.
func TestPolicyShellParsing(t *testing.T) {
	repo := smallRepo(t, "unused")
	cmd := func(c string) scriptedCall {
		return scriptedCall{name: "run_command", input: map[string]any{"command": c}}
	}
	script := []string{
		"echo covered-by-rule",        // allowed by run_command(echo:*)
		"echo x > out.txt",            // a redirect writes a file: asks (denied)
		"echo a && touch pwned.txt",   // touch is not covered: asks (denied)
		`bash -c "echo from-inner"`,   // the -c string is parsed: allowed
		"FOO=1 echo $(touch sub.txt)", // the substitution is a part: asks (denied)
		"rm -rf pkg",                  // deny rule: refused, no question
		"ls pkg",                      // asks: allowSession
		"ls && ls pkg 2>&1",           // covered by the session grant
		"ls; touch pwned2.txt",        // touch is not granted: asks (denied)
	}
	var steps []step
	for _, c := range script {
		steps = append(steps, step{calls: []scriptedCall{cmd(c)}})
	}
	steps = append(steps, step{text: "Done."})
	model, srv := newScriptedModel(t, "openai", steps)

	p := start(t)
	var asked []string
	p.onRequest = func(method string, params json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		var req struct {
			Input struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		json.Unmarshal(params, &req)
		asked = append(asked, req.Input.Command)
		if req.Input.Command == "ls pkg" {
			return map[string]any{"decision": "allowSession"}
		}
		return map[string]any{"decision": "deny"}
	}
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	res := p.mustCall("agent/run", map[string]any{
		"prompt":   "Run the commands.",
		"provider": openaiProvider(srv.URL, "sk-policy-key"),
		"policy":   map[string]any{"mode": "default", "allow": []string{"run_command(echo:*)"}, "deny": []string{"run_command(rm:*)"}},
	})
	var sum struct {
		Status string `json:"status"`
	}
	json.Unmarshal(res, &sum)
	if sum.Status != "completed" {
		t.Fatalf("summary: %s", res)
	}
	want := []string{"echo x > out.txt", "echo a && touch pwned.txt", "FOO=1 echo $(touch sub.txt)", "ls pkg", "ls; touch pwned2.txt"}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Fatalf("approval requests:\n%s\nwant:\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range []string{"out.txt", "pwned.txt", "pwned2.txt", "sub.txt"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err == nil {
			t.Errorf("%s was created by a command that was not approved", f)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "pkg", "a.go")); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	// The model saw the output of the commands that ran.
	last := mustJSON(model.bodies()[len(model.bodies())-1])
	for _, out := range []string{"covered-by-rule", "from-inner", "a.go"} {
		if !strings.Contains(last, out) {
			t.Errorf("the model never saw %q", out)
		}
	}
}

// TestDenyReasonReachesTheModel: the client's deny with a message (the
// additive RequestApprovalResult.message) reaches the model inside the
// denied call's result, in the very next model request, through the
// binary; a key the session holds is redacted from it and a long reason
// is cut.
func TestDenyReasonReachesTheModel(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "make deploy"}}}},
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "make long"}}}},
		{text: "Understood."},
	})
	p := start(t)
	p.onRequest = func(method string, params json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		if strings.Contains(string(params), "make long") {
			return map[string]any{"decision": "deny", "message": strings.Repeat("é", 10000)}
		}
		return map[string]any{"decision": "deny", "message": "use make check; my key is sk-deny-key-4"}
	}
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	p.mustCall("agent/run", map[string]any{"prompt": "Deploy.", "provider": openaiProvider(srv.URL, "sk-deny-key-4")})
	bodies := model.bodies()
	if len(bodies) != 3 {
		t.Fatalf("%d model requests; want 3", len(bodies))
	}
	second := mustJSON(bodies[1])
	if !strings.Contains(second, "The user denied this tool call. The user said: use make check; my key is") {
		t.Errorf("the request right after the denial lacks the reason: %s", second)
	}
	for i, b := range bodies {
		if strings.Contains(mustJSON(b), "sk-deny-key-4") {
			t.Errorf("request %d carries the key", i)
		}
	}
	third := mustJSON(bodies[2])
	if n := strings.Count(third, "é"); n == 0 || n > 8<<10/2 {
		t.Errorf("the long reason reached the model with %d runes; want it cut at 8 KiB", n)
	}
}
