package e2e

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Validations (addendum §12) through the binary, on projects the tests make.

const (
	calcGo     = "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"
	calcTestGo = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, text := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// goModule is a small Go module whose test passes.
func goModule(t *testing.T) string {
	return writeFiles(t, map[string]string{"go.mod": "module calc\n\ngo 1.22\n", "calc.go": calcGo, "calc_test.go": calcTestGo})
}

// validationSummary is an agent/run summary.
type validationSummary struct{ protocol.AgentSummary }

func (s validationSummary) outcome() string {
	var parts []string
	for _, v := range s.Validations {
		parts = append(parts, fmt.Sprintf("%s=%v", v.Name, v.Passed))
	}
	for _, k := range s.SkippedChecks {
		parts = append(parts, fmt.Sprintf("%s:skipped(%s)", k.Name, k.Reason))
	}
	return strings.Join(parts, " ")
}

// validationRun runs one agent task, answering approvals with decide (nil:
// allow), and returns the summary, the approvals asked and the events.
func validationRun(t *testing.T, p *proc, params map[string]any, decide func(command string) string) (validationSummary, []string, []map[string]any) {
	t.Helper()
	var asked []string
	p.onRequest = func(method string, raw json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		var req struct {
			Tool  string `json:"tool"`
			Input struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		json.Unmarshal(raw, &req)
		if req.Tool != "run_command" {
			return map[string]any{"decision": "allow"}
		}
		asked = append(asked, req.Input.Command)
		if decide == nil {
			return map[string]any{"decision": "allow"}
		}
		return map[string]any{"decision": decide(req.Input.Command)}
	}
	var events []map[string]any
	res := runDriven(t, p, params, func(ev agentEvent) {
		switch ev.Event["type"] {
		case "validationStarted", "validationFinished":
			events = append(events, ev.Event)
		}
	}, func(string, *message) {})
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	var sum validationSummary
	if err := json.Unmarshal(res.Result, &sum); err != nil {
		t.Fatal(err)
	}
	return sum, asked, events
}

func checksProvider(url string) map[string]any {
	return map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": url + "/v1", "apiKey": "sk-e2e-validate-31415"}
}

func edit(path, oldText, newText string) step {
	return step{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": path, "oldText": oldText, "newText": newText}}}}
}

// TestValidationGoFixRound: a Go module; the model breaks Add, says done, the
// failing `go test ./...` output reaches it as a user message, it fixes the
// bug, and the checks run again and pass. Each distinct command is approved
// once over both rounds. With fixRounds 0 the failure is reported and the
// task still completes.
func TestValidationGoFixRound(t *testing.T) {
	const broken = "func Add(a, b int) int { return a - b }"
	const fixed = "func Add(a, b int) int { return a + b }"
	t.Run("fix-round", func(t *testing.T) {
		t.Parallel()
		root := goModule(t)
		model, srv := newScriptedModel(t, "openai", []step{
			edit("calc.go", fixed, broken),
			{text: "Done."},
			edit("calc.go", broken, fixed),
			{text: "Fixed the sign."},
		})
		p := start(t)
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": root})
		sum, asked, events := validationRun(t, p, map[string]any{"prompt": "change Add", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy": map[string]any{"mode": "acceptEdits"}}, nil)
		if sum.Status != "completed" || !sum.ValidationRan || len(sum.SkippedChecks) != 0 {
			t.Fatalf("summary: %+v", sum)
		}
		want := []string{"lint:go vet ./...", "build:go build -o /dev/null ./...", "test:go test ./..."}
		if len(sum.Validations) != 3 {
			t.Fatalf("validations: %s", sum.outcome())
		}
		for i, v := range sum.Validations {
			if v.Name+":"+v.Command != want[i] || !v.Passed || v.ExitCode != 0 {
				t.Errorf("validation %d: %+v, want %s passed", i, v, want[i])
			}
		}
		// Both rounds asked nothing twice.
		if strings.Join(asked, "|") != "go vet ./...|go build -o /dev/null ./...|go test ./..." {
			t.Errorf("approvals asked: %q", asked)
		}
		// Two rounds: 6 started and 6 finished events; round one's test failed.
		if len(events) != 12 {
			t.Fatalf("validation events: %v", events)
		}
		if events[5]["type"] != "validationFinished" || events[5]["name"] != "test" || events[5]["passed"] != false {
			t.Errorf("first round's test: %v", events[5])
		}
		if events[11]["name"] != "test" || events[11]["passed"] != true {
			t.Errorf("second round's test: %v", events[11])
		}
		bodies := model.bodies()
		if len(bodies) != 4 {
			t.Fatalf("model requests: %d", len(bodies))
		}
		third := mustJSON(bodies[2]["messages"])
		if !strings.Contains(third, "go test ./...") || !strings.Contains(third, "Add(2, 3) != 5") {
			t.Errorf("the failure did not reach the model: %.3000s", third)
		}
		if data, _ := os.ReadFile(filepath.Join(root, "calc.go")); !strings.Contains(string(data), fixed) {
			t.Errorf("calc.go: %s", data)
		}
	})
	t.Run("fixRounds-0", func(t *testing.T) {
		t.Parallel()
		root := goModule(t)
		model, srv := newScriptedModel(t, "openai", []step{
			edit("calc.go", fixed, broken),
			{text: "Done."},
		})
		p := start(t)
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": root})
		sum, _, _ := validationRun(t, p, map[string]any{"prompt": "change Add", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy": map[string]any{"mode": "acceptEdits", "allowAll": true}, "validation": map[string]any{"fixRounds": 0}}, nil)
		if sum.Status != "completed" || sum.Error != nil || !sum.ValidationRan {
			t.Fatalf("summary: %+v", sum)
		}
		if len(sum.Validations) != 3 || !sum.Validations[1].Passed || sum.Validations[2].Passed || sum.Validations[2].ExitCode == 0 ||
			!strings.Contains(sum.Validations[2].Output, "Add(2, 3) != 5") {
			t.Errorf("validations: %s %+v", sum.outcome(), sum.Validations)
		}
		if n := len(model.bodies()); n != 2 {
			t.Errorf("model requests: %d, want 2 (no fix round)", n)
		}
	})
	t.Run("timeout-and-redaction", func(t *testing.T) {
		t.Parallel()
		root := goModule(t)
		pidFile := filepath.Join(root, "pid")
		_, srv := newScriptedModel(t, "openai", []step{
			edit("calc.go", "// Add adds.", "// Add adds two ints."),
			{text: "Done."},
		})
		p := start(t)
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": root})
		checks := []any{
			map[string]any{"name": "key", "command": "echo the key is sk-e2e-validate-31415; exit 3"},
			map[string]any{"name": "slow", "command": "sleep 300 & echo $! > " + pidFile + "; wait"},
		}
		sum, _, _ := validationRun(t, p, map[string]any{"prompt": "document Add", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy":     map[string]any{"mode": "acceptEdits", "allowAll": true},
			"validation": map[string]any{"checks": checks, "fixRounds": 0, "timeoutMs": 1000}}, nil)
		if sum.outcome() != "key=false slow=false" || sum.Status != "completed" {
			t.Fatalf("outcome %s %+v", sum.outcome(), sum)
		}
		k, slow := sum.Validations[0], sum.Validations[1]
		if k.ExitCode != 3 || strings.Contains(k.Output, "sk-e2e-validate-31415") || !strings.Contains(k.Output, "the key is [redacted]") {
			t.Errorf("key check: %+v", k)
		}
		if !slow.TimedOut || slow.ExitCode != -1 {
			t.Errorf("slow check: %+v", slow)
		}
		pids := readPIDs(t, pidFile)
		if len(pids) != 1 {
			t.Fatalf("pid file: %v", pids)
		}
		end := time.Now().Add(60 * time.Second)
		for alive(pids[0]) && time.Now().Before(end) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pids[0]) {
			t.Errorf("the timed-out check's child %d survived", pids[0])
			syscall.Kill(pids[0], syscall.SIGKILL)
		}
	})
	t.Run("build-failed-skips-test", func(t *testing.T) {
		t.Parallel()
		root := goModule(t)
		_, srv := newScriptedModel(t, "openai", []step{
			edit("calc.go", fixed, "func Add(a, b int) int { return a + }"),
			{text: "Done."},
		})
		p := start(t)
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": root})
		sum, _, _ := validationRun(t, p, map[string]any{"prompt": "change Add", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy": map[string]any{"mode": "acceptEdits", "allowAll": true}, "validation": map[string]any{"fixRounds": 0}}, nil)
		if sum.outcome() != "lint=false build=false test:skipped(build failed)" || sum.Status != "completed" {
			t.Errorf("summary: %s %+v", sum.outcome(), sum)
		}
	})
}

// nodeProject is a Node project whose `npm test` runs node --test.
func nodeProject(t *testing.T) string {
	return writeFiles(t, map[string]string{
		"package.json":       `{"name":"greet","version":"1.0.0","scripts":{"test":"node --test"}}`,
		"greet.js":           "exports.greet = (n) => 'hello ' + n;\n",
		"test/greet.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../greet.js');\ntest('greet', () => assert.strictEqual(greet('x'), 'hello x'));\n",
		"lint.js":            "process.exit(0)\n",
	})
}

// TestValidationNodeChecks: a Node project (npm test from package.json): a
// correct change passes; validation.checks replace the defaults; a deny rule
// skips its check without asking; a denied approval skips its check;
// enabled: false runs nothing; fixRounds out of range is -32602.
func TestValidationNodeChecks(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed")
	}
	change := edit("greet.js", "'hello '", "'hello' + ' '")
	t.Run("defaults-pass", func(t *testing.T) {
		t.Parallel()
		root := nodeProject(t)
		_, srv := newScriptedModel(t, "openai", []step{change, {text: "Done."}})
		p := start(t)
		p.initialize(nil) // sandboxed: npm writes only its cache (~/.npm) and the workspace
		p.mustCall("workspace/open", map[string]any{"root": root})
		sum, asked, _ := validationRun(t, p, map[string]any{"prompt": "tidy greet", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy": map[string]any{"mode": "acceptEdits"}}, nil)
		for _, s := range sum.SkippedChecks {
			if s.Reason == "no sandbox" {
				t.Skip("no kernel sandbox here")
			}
		}
		if got := sum.outcome(); got != "test=true lint:skipped(no such command for this project) build:skipped(no such command for this project)" {
			t.Errorf("outcome %s", got)
		}
		if len(sum.Validations) == 1 && (sum.Validations[0].Command != "npm test" || !strings.Contains(sum.Validations[0].Output, "pass 1")) {
			t.Errorf("npm test: %+v", sum.Validations[0])
		}
		if strings.Join(asked, "|") != "npm test" {
			t.Errorf("asked %q", asked)
		}
	})
	t.Run("checks-policy-denial", func(t *testing.T) {
		t.Parallel()
		root := nodeProject(t)
		_, srv := newScriptedModel(t, "openai", []step{change, {text: "Done."}})
		p := start(t)
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": root})
		checks := []any{
			map[string]any{"name": "unit", "command": "node --test"},
			map[string]any{"name": "style", "command": "node lint.js"},
			map[string]any{"name": "secret", "command": "rm -rf node_modules"},
			map[string]any{"name": "again", "command": "node --test"},
		}
		sum, asked, events := validationRun(t, p, map[string]any{"prompt": "tidy greet", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy":     map[string]any{"mode": "acceptEdits", "deny": []string{"run_command(rm:*)"}},
			"validation": map[string]any{"checks": checks}},
			func(cmd string) string {
				if cmd == "node lint.js" {
					return "deny"
				}
				return "allow"
			})
		got := sum.outcome()
		if !strings.HasPrefix(got, "unit=true again=true style:skipped(denied by the user) secret:skipped(refused by the policy") {
			t.Errorf("outcome %s", got)
		}
		// The deny rule never asked; node --test was asked once for two checks.
		if strings.Join(asked, "|") != "node --test|node lint.js" {
			t.Errorf("asked %q", asked)
		}
		if len(events) != 4 {
			t.Errorf("events %v", events)
		}
	})
	t.Run("disabled-and-ask", func(t *testing.T) {
		t.Parallel()
		root := nodeProject(t)
		_, srv := newScriptedModel(t, "openai", []step{change, {text: "Done."}})
		p := start(t)
		p.initialize(map[string]any{"sandbox": false})
		p.mustCall("workspace/open", map[string]any{"root": root})
		sum, asked, events := validationRun(t, p, map[string]any{"prompt": "tidy greet", "provider": checksProvider(srv.URL), "chatMode": "agent",
			"policy": map[string]any{"mode": "acceptEdits"}, "validation": map[string]any{"enabled": false}}, nil)
		if sum.ValidationRan || len(sum.Validations) != 0 || len(sum.SkippedChecks) != 0 || len(asked) != 0 || len(events) != 0 {
			t.Errorf("enabled false: %+v asked %q events %v", sum, asked, events)
		}
		if _, err := p.call("agent/run", map[string]any{"prompt": "x", "provider": checksProvider(srv.URL), "validation": map[string]any{"fixRounds": 4}}); err == nil || err.Code != -32602 {
			t.Errorf("fixRounds 4: %v", err)
		}
	})
}

// TestValidationSandbox: sandboxed checks use the Go build cache (go build
// and go test write to GOCACHE) yet cannot write outside the workspace.
func TestValidationSandbox(t *testing.T) {
	root := goModule(t)
	outside := t.TempDir()
	_, srv := newScriptedModel(t, "openai", []step{
		edit("calc.go", "// Add adds.", "// Add adds two ints."),
		{text: "Done."},
	})
	p := start(t)
	p.initialize(nil) // sandbox: true
	p.mustCall("workspace/open", map[string]any{"root": root})
	checks := []any{
		map[string]any{"name": "build", "command": "go build ./..."},
		map[string]any{"name": "test", "command": "go test -count=1 ./..."},
		map[string]any{"name": "escape", "command": "echo x > " + filepath.Join(outside, "escaped")},
	}
	sum, _, _ := validationRun(t, p, map[string]any{"prompt": "document Add", "provider": checksProvider(srv.URL), "chatMode": "agent",
		"policy": map[string]any{"mode": "acceptEdits", "allowAll": true}, "validation": map[string]any{"checks": checks, "fixRounds": 0}}, nil)
	for _, s := range sum.SkippedChecks {
		if s.Reason == "no sandbox" || strings.Contains(s.Reason, "sandbox") {
			t.Skipf("no kernel sandbox here: %s", s.Reason)
		}
	}
	if sum.outcome() != "build=true test=true escape=false" {
		t.Fatalf("outcome %s: %+v", sum.outcome(), sum.Validations)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("a check wrote outside the workspace: %v", ents)
	}
}

// TestValidationCancel: cancelling the task during a check ends the check's
// process tree at once; the summary says which checks were cancelled.
func TestValidationCancel(t *testing.T) {
	root := goModule(t)
	pidFile := filepath.Join(root, "pids")
	_, srv := newScriptedModel(t, "openai", []step{
		edit("calc.go", "// Add adds.", "// Add adds two ints."),
		{text: "Done."},
	})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	checks := []any{
		map[string]any{"name": "slow", "command": fmt.Sprintf("sleep 300 & echo $! > %s; (sleep 301 & echo $! >> %s; wait) & sleep 302", pidFile, pidFile)},
		map[string]any{"name": "after", "command": "true"},
	}
	params := map[string]any{"prompt": "document Add", "provider": checksProvider(srv.URL), "chatMode": "agent",
		"policy": map[string]any{"mode": "acceptEdits", "allowAll": true}, "validation": map[string]any{"checks": checks}}
	id := p.request("agent/run", params)
	var pids []int
	var sum validationSummary
	var finished []map[string]any
	var taskID string
	deadline := time.Now().Add(90 * time.Second)
	for answered := false; !answered; {
		m := p.next(time.Until(deadline))
		switch {
		case m.Method == "agent/event":
			var ev agentEvent
			json.Unmarshal(m.Params, &ev)
			switch ev.Event["type"] {
			case "started":
				taskID = ev.TaskID
			case "validationStarted":
				for len(pids) < 2 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					pids = readPIDs(t, pidFile)
				}
				p.notify("$/cancelRequest", map[string]any{"id": id})
			case "validationFinished":
				finished = append(finished, ev.Event)
			}
		case m.Method != "":
		case string(m.ID) == fmt.Sprint(id):
			// The cancelled request is answered -32800; the saved task
			// keeps the summary.
			if m.Error == nil || m.Error.Code != -32800 {
				t.Fatalf("agent/run: %s", m.raw)
			}
			answered = true
		}
	}
	for sum.Status == "" || sum.Status == "running" {
		var task struct {
			Status  string          `json:"status"`
			Summary json.RawMessage `json:"summary"`
		}
		json.Unmarshal(p.mustCall("agent/task", map[string]any{"taskId": taskID}), &task)
		if task.Status != "running" && len(task.Summary) > 0 {
			json.Unmarshal(task.Summary, &sum)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not end: %+v", task)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sum.Status != "cancelled" || sum.outcome() != "slow:skipped(cancelled) after:skipped(cancelled)" {
		t.Errorf("summary %s %+v", sum.outcome(), sum)
	}
	if len(finished) != 1 || finished[0]["exitCode"] != float64(-1) || finished[0]["passed"] != false {
		t.Errorf("validationFinished %v", finished)
	}
	if len(pids) < 2 {
		t.Fatalf("the check did not record its children: %v", pids)
	}
	end := time.Now().Add(60 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(end) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("child %d survived the cancel", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestCLIRunShowsChecks: task-x run prints each check as it runs and its
// outcome, and lists them after the summary.
func TestCLIRunShowsChecks(t *testing.T) {
	root := goModule(t)
	_, srv := newScriptedModel(t, "openai", []step{
		edit("calc.go", "// Add adds.", "// Add adds two ints."),
		{text: "Documented Add."},
	})
	cmd := exec.Command(filepath.Join(binDir, "task-x"), "run", "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1",
		"--model", "fake", "--no-sandbox", "--accept-edits", root, "document Add")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-cli-key-999", "TASK_X_API_KEY=")
	cmd.Stdin = strings.NewReader("y\ny\ny\n")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("task-x run: %v\n%s", err, errb.String())
	}
	e := errb.String()
	for _, want := range []string{"● check lint: go vet ./...", "check lint passed", "● check test: go test ./...", "check test passed", "checks:\n  passed lint\n  passed build\n  passed test"} {
		if !strings.Contains(e, want) {
			t.Errorf("stderr lacks %q:\n%s", want, e)
		}
	}
}
