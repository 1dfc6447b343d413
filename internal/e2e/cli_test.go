package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIOpen runs the README's main command: task-x open on a copy of this
// repository prints the workspace summary.
func TestCLIOpen(t *testing.T) {
	repo := copyRepo(t)
	cmd := exec.Command(filepath.Join(binDir, "task-x"), "open", repo)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("task-x open: %v\n%s", err, errb.String())
	}
	s := out.String()
	for _, want := range []string{"task-x-runtime", "kinds:      go", "go test ./...", "indexed of"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// A folder that does not exist is a clear error naming it, bad usage
	// (exit 2), not a crash.
	cmd = exec.Command(filepath.Join(binDir, "task-x"), "open", filepath.Join(repo, "missing"))
	msg, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(msg), "task-x open: the folder "+filepath.Join(repo, "missing")+" does not exist; pass an existing folder") {
		t.Fatalf("open of a missing folder: %v %s", err, msg)
	}
}

// TestCLIRun drives a whole task from the terminal client: the answer
// streams to stdout, approvals are asked on the terminal (answered on
// stdin), and the changed files are listed at the end. The key comes from
// the environment.
func TestCLIRun(t *testing.T) {
	repo := copyRepo(t)
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "README.md", "oldText": "# task-x-runtime\n", "newText": "# task-x-runtime, by task-x\n"}}}},
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "head -n 1 README.md"}}}},
		{text: "Renamed the heading."},
	})
	cmd := exec.Command(filepath.Join(binDir, "task-x"), "run", "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1",
		"--model", "fake", "--no-sandbox", "--no-validate", repo, "rename the heading")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-cli-key-777", "TASK_X_API_KEY=")
	cmd.Stdin = strings.NewReader("y\nn\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("task-x run: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "Renamed the heading.") {
		t.Errorf("stdout: %s", out.String())
	}
	e := errb.String()
	for _, want := range []string{"wants to edit README.md (replace_text)", "wants to run a command (run_command)", "changed files:", "README.md (+1 -1)", "completed"} {
		if !strings.Contains(e, want) {
			t.Errorf("stderr lacks %q:\n%s", want, e)
		}
	}
	if strings.Contains(e+out.String(), "sk-cli-key-777") {
		t.Error("the key was printed")
	}
	data, _ := os.ReadFile(filepath.Join(repo, "README.md"))
	if !strings.HasPrefix(string(data), "# task-x-runtime, by task-x\n") {
		t.Errorf("README.md not edited: %q", firstLine(string(data)))
	}
	// The command was denied on the terminal: the model saw the denial.
	bodies := model.bodies()
	if last := mustJSON(bodies[len(bodies)-1]); !strings.Contains(last, "denied") {
		t.Errorf("the model was not told about the denial: %.1500s", last)
	}
}

// TestCLIRunAnswerBeforeSummary: the agent/run response can arrive while the
// task's last agent/event notifications are still queued in the client; the
// final answer must still be printed in full, on its own line, before the
// summary. Several runs, because the order used to depend on timing.
func TestCLIRunAnswerBeforeSummary(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, srv := newScriptedModel(t, "openai", []step{{text: "The final answer."}})
	for i := 0; i < 12; i++ {
		cmd := exec.Command(filepath.Join(binDir, "task-x"), "run", "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1",
			"--model", "fake", "--mode", "ask", dir, "what is in a.txt?")
		// Runtime log lines (a warning about the fake's token counts) go to
		// the same stream; this test is about the answer's order only.
		cmd.Env = append(os.Environ(), "TASK_X_API_KEY=sk-cli-key-888", "TASK_X_LOG=error")
		cmd.Stdin = strings.NewReader("")
		var both bytes.Buffer
		cmd.Stdout, cmd.Stderr = &both, &both
		if err := cmd.Run(); err != nil {
			t.Fatalf("task-x run: %v\n%s", err, both.String())
		}
		s := both.String()
		answer, summary := strings.Index(s, "The final answer.\n"), strings.Index(s, ": completed,")
		if answer < 0 || summary < 0 || answer > summary {
			t.Fatalf("run %d: the answer is not printed in full before the summary:\n%s", i, s)
		}
	}
}

// TestCLIAskUser: task-x run asks the model's ask_user questions on the
// terminal and sends the chosen option back.
func TestCLIAskUser(t *testing.T) {
	repo := t.TempDir()
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "ask_user", input: map[string]any{"questions": []any{
			map[string]any{"text": "Which license?", "options": []string{"MIT", "Apache-2.0"}}}}}}},
		{text: "Using the chosen license."},
	})
	cmd := exec.Command(filepath.Join(binDir, "task-x"), "run", "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1",
		"--model", "fake", "--mode", "ask", repo, "add a license")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-cli-ask-1", "TASK_X_API_KEY=")
	cmd.Stdin = strings.NewReader("2\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("task-x run: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "Which license?") || !strings.Contains(errb.String(), "2) Apache-2.0") {
		t.Errorf("the question was not shown:\n%s", errb.String())
	}
	if last := mustJSON(model.bodies()[1]); !strings.Contains(last, `\"selected\":[\"Apache-2.0\"]`) {
		t.Errorf("the answer did not reach the model: %.1500s", last)
	}
}
