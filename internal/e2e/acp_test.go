package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// acpNPMEnv names the folder .ci/run installs the ACP test client's npm
// packages in (@agentclientprotocol/sdk and ajv, pinned).
const acpNPMEnv = "TASK_X_ACP_NPM"

// acpScenarios are the fake model's scripts, by the marker of the prompt
// that starts them: turn n of a scenario answers the n-th model call
// after that prompt. A scenario's script past its end answers "done.".
var acpScenarios = map[string][]step{
	"scenario:hello": {{text: "Hello from task-x."}},
	"scenario:plan": {
		{thinking: "First a plan.", calls: []scriptedCall{{"update_plan", map[string]any{"plan": []any{
			map[string]any{"step": "Read the code", "status": "completed"},
			map[string]any{"step": "Fix the bug", "status": "inProgress"},
			map[string]any{"step": "Run the tests", "status": "pending"},
		}}}}},
		{text: "Planned."},
	},
	"scenario:ask-user": {
		{calls: []scriptedCall{{"ask_user", map[string]any{"questions": []any{
			map[string]any{"id": "color", "text": "Which color?", "options": []string{"Red", "Blue"}},
			map[string]any{"id": "parts", "text": "Which parts?", "kind": "checkbox", "options": []string{"a", "b", "c"}},
		}}}}},
		{text: "Asked."},
	},
	"scenario:allow-once": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/allow-once.txt", "content": "allowed once\n"}}}},
	},
	"scenario:allow-always": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/allow-always-1.txt", "content": "one\n"}}}},
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/allow-always-2.txt", "content": "two\n"}}}},
	},
	"scenario:allow-always-again": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/allow-always-3.txt", "content": "three\n"}}}},
	},
	"scenario:reject-once": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/reject-once-1.txt", "content": "no\n"}}}},
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/reject-once-2.txt", "content": "no\n"}}}},
	},
	"scenario:reject-always": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/reject-always-1.txt", "content": "no\n"}}}},
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/reject-always-2.txt", "content": "no\n"}}}},
	},
	"scenario:edit": {
		{calls: []scriptedCall{{"read_file", map[string]any{"path": "src/app.txt"}}}},
		{calls: []scriptedCall{{"replace_text", map[string]any{"path": "src/app.txt", "oldText": "hello world", "newText": "goodbye world"}}}},
		{text: "Edited src/app.txt."},
	},
	"scenario:cancel-permission": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "perm/cancelled.txt", "content": "never\n"}}}},
	},
	"scenario:cancel-streaming": {
		{calls: []scriptedCall{{"read_file", map[string]any{"path": "README.md"}}}},
		{hang: true},
	},
	"scenario:buffer": {
		{calls: []scriptedCall{{"read_file", map[string]any{"path": "src/buffer.txt"}}}},
		{calls: []scriptedCall{{"replace_text", map[string]any{"path": "src/buffer.txt", "oldText": "unsaved buffer", "newText": "edited buffer"}}}},
		{text: "Edited the buffer."},
	},
	"scenario:cancel-request": {
		{calls: []scriptedCall{{"read_file", map[string]any{"path": "README.md"}}}},
		{hang: true},
	},
	"scenario:team": {
		{calls: []scriptedCall{{"run_plan", map[string]any{"steps": []any{
			map[string]any{"id": "r", "role": "research", "objective": "scenario:team-research Look around."},
			map[string]any{"id": "i", "role": "implementation", "objective": "scenario:team-implement Write team.txt.", "dependsOn": []string{"r"}},
		}}}}},
		{text: "Team done."},
	},
	"scenario:team-research": {{text: "Nothing special."}},
	"scenario:team-implement": {
		{calls: []scriptedCall{{"write_file", map[string]any{"path": "team.txt", "content": "made by the team\n"}}}},
		{text: "Implemented."},
	},
	"scenario:command": {
		{calls: []scriptedCall{{"run_command", map[string]any{"command": "echo first-line; echo second-line"}}}},
		{text: "Ran."},
	},
	"scenario:ask-mode": {{text: "Asked."}},
	"scenario:continue": {{text: "Continued."}},
}

// acpPick finds the scenario of a request (the marker in its last user
// message) and the model calls since: the index into script.
func acpPick(offsets map[string]int, lens map[string]int) func(req map[string]any) int {
	return func(req map[string]any) int {
		msgs, _ := req["messages"].([]any)
		last, n := "", 0
		for _, x := range msgs {
			m, _ := x.(map[string]any)
			switch m["role"] {
			case "user":
				last, n = mustJSON(m["content"]), 0
			case "assistant":
				n++
			}
		}
		best := ""
		for marker := range offsets {
			if strings.Contains(last, marker) && len(marker) > len(best) {
				best = marker // the longest: allow-always-again over allow-always
			}
		}
		if best == "" || n >= lens[best] {
			return 0 // "done."
		}
		return offsets[best] + n
	}
}

// TestACPClient drives `task-x-runtime --acp` with the official ACP SDK
// client from npm (testdata/acp/client.mjs) against the scripted fake
// model on a git repository: initialize, new session, a streamed answer,
// thinking and update_plan, a command with its output as it comes,
// a permission request answered each of the four ways, an edit with its
// diff, cancel mid-turn (an open permission request and a model call;
// session/cancel and the SDK's $/cancel_request),
// the client's fs methods (an unsaved buffer edited, the result written
// back), team mode (its plan and subagents as plan and tool call
// updates, a subagent's permission request), ask_user as an elicitation
// form, set mode, then a second runtime loads the saved session and continues
// it. The client validates every message both ways against the SDK's
// schema/v1/schema.json with ajv. Skips only when TASK_X_ACP_NPM is unset.
func TestACPClient(t *testing.T) {
	npm := os.Getenv(acpNPMEnv)
	if npm == "" {
		t.Skip("TASK_X_ACP_NPM is unset: .ci/run installs the ACP SDK client")
	}
	for _, p := range []string{"@agentclientprotocol/sdk/schema/v1/schema.json", "ajv/dist/2020.js"} {
		if _, err := os.Stat(filepath.Join(npm, "node_modules", p)); err != nil {
			t.Fatalf("TASK_X_ACP_NPM is set but %s is missing: run .ci/run", p)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("TASK_X_ACP_NPM is set but node is not on PATH")
	}
	script := []step{{text: "done."}}
	offsets, lens := map[string]int{}, map[string]int{}
	for marker, steps := range acpScenarios {
		offsets[marker], lens[marker] = len(script), len(steps)
		script = append(script, steps...)
	}
	model, srv := newScriptedModel(t, "openai", script)
	model.pick = acpPick(offsets, lens)

	repo := gitRepo(t, map[string]string{
		"README.md":      "# demo\n\nA repository for the ACP test.\n",
		"src/app.txt":    "hello world\nsecond line\n",
		"src/buffer.txt": "saved text\n",
		"main.go":        "package main\n\nfunc main() {}\n",
	})
	home := t.TempDir()
	// The config file (docs/acp.md): commands run unsandboxed here, as in
	// the other e2e tests that run commands.
	os.MkdirAll(filepath.Join(home, ".task-x"), 0o755)
	if err := os.WriteFile(filepath.Join(home, ".task-x", "acp.json"), []byte(`{"sandbox": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "acp", "client.mjs"))
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"ACP_AGENT="+filepath.Join(binDir, "task-x-runtime"),
		"ACP_CWD="+repo,
		"TASK_X_PROVIDER=openaiCompatible",
		"TASK_X_MODEL=fake-model",
		"TASK_X_BASE_URL="+srv.URL+"/v1",
		"TASK_X_API_KEY=sk-acp-e2e-key-4242",
		"TASK_X_ACP_CONFIG=",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the ACP client failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), tailText(stderr.String(), 8000))
	}
	var report struct {
		Validated int            `json:"validated"`
		Methods   map[string]int `json:"methods"`
		Updates   map[string]int `json:"updates"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	t.Logf("validated %d messages; methods %v; updates %v", report.Validated, report.Methods, report.Updates)
	for _, m := range []string{"initialize", "session/new", "session/prompt", "session/request_permission", "session/cancel",
		"session/set_mode", "session/list", "session/load", "session/update", "fs/read_text_file", "fs/write_text_file",
		"$/cancel_request", "elicitation/create"} {
		if report.Methods[m] == 0 {
			t.Errorf("no %s message was validated", m)
		}
	}
	for _, u := range []string{"agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update",
		"plan", "usage_update", "current_mode_update", "available_commands_update"} {
		if report.Updates[u] == 0 {
			t.Errorf("no %s update was validated", u)
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), "sk-acp-e2e-key-4242") {
		t.Error("the API key was written out")
	}

	// What the runtime did to the repository.
	for rel, want := range map[string]string{
		"perm/allow-once.txt": "allowed once\n", "perm/allow-always-1.txt": "one\n", "perm/allow-always-2.txt": "two\n",
		"perm/allow-always-3.txt": "three\n", "src/app.txt": "goodbye world\nsecond line\n",
		"src/buffer.txt": "edited buffer text\n", "team.txt": "made by the team\n",
	} {
		if b, err := os.ReadFile(filepath.Join(repo, rel)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	for _, rel := range []string{"perm/reject-once-1.txt", "perm/reject-once-2.txt", "perm/reject-always-1.txt", "perm/reject-always-2.txt", "perm/cancelled.txt"} {
		if _, err := os.Stat(filepath.Join(repo, rel)); err == nil {
			t.Errorf("%s was written", rel)
		}
	}
	// What the model saw: ask mode offers no write tool; the loaded
	// session continued its conversation.
	var askTools, continued string
	for _, body := range model.bodies() {
		b := mustJSON(body)
		switch {
		case strings.Contains(b, "scenario:ask-mode") && !strings.Contains(b, "scenario:continue"):
			askTools = mustJSON(body["tools"])
		case strings.Contains(b, "scenario:continue"):
			continued = b
		}
	}
	if askTools == "" || strings.Contains(askTools, `"write_file"`) || !strings.Contains(askTools, `"read_file"`) {
		t.Errorf("ask mode's tools: %s", askTools)
	}
	// ask_user went to the editor as an elicitation form; the model got
	// its answers.
	answered := false
	for _, body := range model.bodies() {
		if b := mustJSON(body); strings.Contains(b, "scenario:ask-user") && strings.Contains(b, `\"selected\":[\"Blue\"]`) &&
			strings.Contains(b, `\"selected\":[\"a\",\"c\"]`) {
			answered = true
		}
	}
	if !answered {
		t.Error("the model did not get the answers of the elicitation form")
	}
	if !strings.Contains(continued, "Hello from task-x.") || !strings.Contains(continued, "scenario:hello") {
		t.Errorf("the loaded session did not continue its conversation: %s", tailText(continued, 2000))
	}
}

func tailText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// A configuration error (a missing $TASK_X_ACP_CONFIG file, bad JSON)
// does not end the runtime before it reads stdin: initialize answers it
// with -32602 naming the file, and the runtime ends normally when stdin
// closes.
func TestACPConfigErrorAtInitialize(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"provider": `), 0o600)
	for _, path := range []string{filepath.Join(dir, "missing.json"), bad} {
		cmd := exec.Command(filepath.Join(binDir, "task-x-runtime"), "--acp")
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TASK_X_ACP_CONFIG="+path)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"))
		sc := bufio.NewScanner(stdout)
		var reply struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if !sc.Scan() {
			cmd.Wait()
			t.Fatalf("%s: no reply to initialize; stderr:\n%s", path, stderr.String())
		}
		json.Unmarshal(sc.Bytes(), &reply)
		stdin.Close()
		err := cmd.Wait()
		if reply.Error == nil || reply.Error.Code != -32602 || !strings.Contains(reply.Error.Message, path) {
			t.Fatalf("%s: initialize answered %s", path, sc.Text())
		}
		if err != nil {
			t.Fatalf("%s: the runtime ended with %v; stderr:\n%s", path, err, stderr.String())
		}
	}
}
