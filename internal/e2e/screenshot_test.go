package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSessionScreenshot runs a real task-x session in tmux against the
// scripted model and writes `tmux capture-pane -e` of it into the folder
// named by TASK_X_SCREENSHOT: approval.ansi while the first approval is
// open, session.ansi at the end (tools/ansipng renders them as
// docs/terminal-*.png; docs/terminal.md). Skipped unless that is set.
func TestSessionScreenshot(t *testing.T) {
	out := os.Getenv("TASK_X_SCREENSHOT")
	if out == "" {
		t.Skip("TASK_X_SCREENSHOT is not set")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n\nA small demo project.\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "README.md", "oldText": "# demo\n", "newText": "# demo: a tiny Go program\n"}}}},
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "for i in 1 2 3 4 5 6 7 8; do echo \"ok  demo/pkg$i  0.0${i}s\"; done"}}}},
		{text: "I renamed the **heading** of `README.md` and ran the checks:\n\n- the heading now says what the project is\n- all 8 packages pass\n\nUse `/undo` to take the edit back."},
	})
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		b, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, b)
		}
		return string(b)
	}
	cmdline := strings.Join([]string{
		"env", "TASK_X_API_KEY=sk-shot", "TERM=xterm-256color", "COLORTERM=", "NO_COLOR=",
		filepath.Join(binDir, "task-x"), "run", repo, "--provider", "openaiCompatible", "--base-url", srv.URL + "/v1",
		"--model", "qwen3-coder", "--no-sandbox", "--data-dir", t.TempDir(),
	}, " ")
	tmux("new-session", "-d", "-x", "110", "-y", "50", "-s", "shot", cmdline)
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	// waitFor polls the pane until it shows want (tmux has no event to wait on).
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			if s := tmux("capture-pane", "-p", "-t", "shot"); strings.Contains(s, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pane never showed %q:\n%s", want, tmux("capture-pane", "-p", "-t", "shot"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("/help for commands")
	tmux("send-keys", "-t", "shot", "-l", "give the README a better heading and run the tests")
	tmux("send-keys", "-t", "shot", "Enter")
	waitFor("Yes, for the rest of this task")
	capture := func(name string) {
		if err := os.WriteFile(filepath.Join(out, name), []byte(tmux("capture-pane", "-e", "-p", "-t", "shot")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	capture("approval.ansi")
	tmux("send-keys", "-t", "shot", "-l", "y")
	waitFor("wants to run a command (run_command)")
	tmux("send-keys", "-t", "shot", "-l", "a")
	waitFor("completed")
	waitFor("Type a prompt")
	capture("session.ansi")
}
