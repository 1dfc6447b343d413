package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runOneShot runs task-x run -p with stdin and returns stdout, stderr and
// the exit code.
func runOneShot(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "task-x"), args...)
	cmd.Env = append(os.Environ(), "TASK_X_API_KEY=sk-oneshot-1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestOneShotFormats: task-x run -p in its three output formats, with
// flags after the positional folder.
func TestOneShotFormats(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	_, srv := newScriptedModel(t, "openai", []step{{text: "It says hello."}})
	base := []string{"run", dir, "-p", "what is in a.txt?", "--mode", "ask", "--provider", "openaiCompatible",
		"--base-url", srv.URL + "/v1", "--model", "fake", "--data-dir", t.TempDir()}

	out, errs, code := runOneShot(t, "", base...)
	if code != 0 || !strings.Contains(out, "It says hello.") || !strings.Contains(errs, "completed") {
		t.Errorf("text: code %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if strings.Contains(out, "completed") {
		t.Errorf("text: the summary belongs on stderr, not stdout: %s", out)
	}

	out, errs, code = runOneShot(t, "", append(base, "--output-format", "json")...)
	var sum struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		Text   string `json:"text"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Status != "completed" || sum.Text != "It says hello." || sum.TaskID == "" {
		t.Errorf("json: code %d, summary %+v\nstdout: %s\nstderr: %s", code, sum, out, errs)
	}

	out, errs, code = runOneShot(t, "", append(base, "--output-format", "stream-json")...)
	var types []string
	sc := bufio.NewScanner(strings.NewReader(out))
	last := ""
	for sc.Scan() {
		var line struct {
			Type  string `json:"type"`
			Event struct {
				Type string `json:"type"`
			} `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("stream-json: a line that is not JSON: %q", sc.Text())
		}
		if line.Event.Type != "" {
			types = append(types, line.Event.Type)
		}
		last = line.Type
	}
	joined := strings.Join(types, " ")
	if code != 0 || !strings.Contains(joined, "textDelta") || !strings.HasSuffix(joined, "done") || last != "result" {
		t.Errorf("stream-json: code %d, events %s, last line type %q\nstderr: %s", code, joined, last, errs)
	}
}

// TestOneShotExitCodes: a failed task exits 1, an approval that cannot be
// asked exits 3 with the reason on stderr, bad usage exits 2.
func TestOneShotExitCodes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	// The script is empty: the model answers 500, the task fails.
	_, failing := newScriptedModel(t, "openai", nil)
	_, errs, code := runOneShot(t, "", "run", "-p", "hi", dir, "--provider", "openaiCompatible", "--base-url", failing.URL+"/v1",
		"--model", "fake", "--data-dir", t.TempDir(), "--output-format", "json")
	if code != 1 || !strings.Contains(errs, "failed") {
		t.Errorf("failed task: code %d, stderr %s", code, errs)
	}

	_, edits := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "a.txt", "oldText": "hello", "newText": "bye"}}}},
		{text: "Could not edit."},
	})
	_, errs, code = runOneShot(t, "", "run", "-p", "edit a.txt", dir, "--provider", "openaiCompatible", "--base-url", edits.URL+"/v1",
		"--model", "fake", "--data-dir", t.TempDir(), "--no-sandbox")
	if code != 3 || !strings.Contains(errs, "could not be asked; pass --accept-edits") {
		t.Errorf("unaskable approval: code %d, stderr %s", code, errs)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "hello\n" {
		t.Errorf("the edit ran without approval: %q", data)
	}
	// A command is not covered by --accept-edits: the advice says so (QA: it
	// told a run that had passed --accept-edits to pass it).
	_, cmds := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "echo hi > made.txt"}}}},
		{text: "Could not run it."},
	})
	_, errs, code = runOneShot(t, "", "run", "-p", "make a file", dir, "--provider", "openaiCompatible", "--base-url", cmds.URL+"/v1",
		"--model", "fake", "--data-dir", t.TempDir(), "--no-sandbox", "--accept-edits")
	if code != 3 || !strings.Contains(errs, "--accept-edits does not cover command calls: answer on stdin") {
		t.Errorf("unaskable command approval: code %d, stderr %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Error("the command ran without approval")
	}

	// Provider mistakes are usage errors naming the fix; a missing key
	// names its variable before anything starts (QA D5).
	_, errs, code = runOneShot(t, "", "run", "-p", "hi", dir, "--provider", "bogus", "--model", "x", "--data-dir", t.TempDir())
	if code != 2 || !strings.Contains(errs, "use anthropic, openai, openaiCompatible or ollama") {
		t.Errorf("unknown provider kind: code %d, stderr %s", code, errs)
	}
	_, errs, code = runOneShot(t, "", "run", "-p", "hi", dir, "--provider", "openai", "--data-dir", t.TempDir())
	if code != 2 || !strings.Contains(errs, "no model yet: pass --model MODEL for openai") {
		t.Errorf("no model: code %d, stderr %s", code, errs)
	}
	if os.Getenv("OPENAI_API_KEY") == "" {
		_, errs, code = runOneShot(t, "", "run", "-p", "hi", dir, "--provider", "openai", "--model", "gpt-5", "--data-dir", t.TempDir())
		if code != 1 || !strings.Contains(errs, "no API key for openai: set OPENAI_API_KEY") {
			t.Errorf("no key: code %d, stderr %s", code, errs)
		}
	}

	_, errs, code = runOneShot(t, "", "run", "-p", "x", "--output-format", "yaml", "--data-dir", t.TempDir())
	if code != 2 || !strings.Contains(errs, "--output-format must be") {
		t.Errorf("bad format: code %d, stderr %s", code, errs)
	}
	_, errs, code = runOneShot(t, "", "retrieve", dir)
	if code != 2 || !strings.Contains(errs, "a query is missing") {
		t.Errorf("retrieve without a query: code %d, stderr %s", code, errs)
	}
	out, _, code := runOneShot(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "task-x ") {
		t.Errorf("--version: code %d, %q", code, out)
	}
}

// TestOneShotInterrupt: SIGINT during a one-shot run cancels the task in the
// runtime and exits 130 with a summary of the interrupted turn on stderr.
func TestOneShotInterrupt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	hung := make(chan struct{}, 1)
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "a.txt"}}}},
		{hang: true, hung: hung},
	})
	cmd := exec.Command(filepath.Join(binDir, "task-x"), "run", dir, "-p", "read a.txt and think", "--provider", "openaiCompatible",
		"--base-url", srv.URL+"/v1", "--model", "fake", "--data-dir", t.TempDir(), "--no-sandbox")
	cmd.Env = append(os.Environ(), "TASK_X_API_KEY=sk-oneshot-2")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung: // the second model call is in flight
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the model was never asked a second time; stderr: %s", errb.String())
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit after SIGINT: %v, want 130; stderr: %s", err, errb.String())
	}
	errs := errb.String()
	for _, want := range []string{"interrupted after", "1 tool call,", "task-x resume task-"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "context canceled") || strings.Contains(errs, "-32800") {
		t.Errorf("stderr shows protocol internals:\n%s", errs)
	}
}

// TestResumeIsPerFolder: `task-x resume` continues the newest task of the
// current folder, not another folder's newer one, and a task id of another
// folder is refused with the folder to resume it in (QA: resume in an empty
// folder continued another repository's task there).
func TestResumeIsPerFolder(t *testing.T) {
	a, b, data := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "a.txt"), []byte("in a\n"), 0o644)
	os.WriteFile(filepath.Join(b, "b.txt"), []byte("in b\n"), 0o644)
	// Turn n answers with n assistant messages so far: a resumed task's
	// second turn gets the second answer.
	_, srv := newScriptedModel(t, "openai", []step{{text: "first answer"}, {text: "continued"}})
	flags := []string{"--mode", "ask", "--provider", "openaiCompatible", "--base-url", srv.URL + "/v1", "--model", "fake", "--data-dir", data}
	taskIn := func(dir string) string {
		t.Helper()
		out, errs, code := runOneShot(t, "", append([]string{"run", dir, "-p", "hello", "--output-format", "json"}, flags...)...)
		var sum struct {
			TaskID string `json:"taskId"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.TaskID == "" {
			t.Fatalf("run in %s: code %d\n%s\n%s", dir, code, out, errs)
		}
		return sum.TaskID
	}
	idA := taskIn(a)
	idB := taskIn(b) // the newest task overall

	out, errs, code := runOneShot(t, "", append([]string{"resume", "-C", a, "-p", "go on", "--output-format", "json"}, flags...)...)
	var sum struct {
		TaskID string `json:"taskId"`
		Text   string `json:"text"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.TaskID != idA || sum.Text != "continued" {
		t.Fatalf("resume in a: want %s continued, code %d\n%s\n%s", idA, code, out, errs)
	}
	_, errs, code = runOneShot(t, "", append([]string{"resume", idB, "--dir", a, "-p", "go on"}, flags...)...)
	if code == 0 || !strings.Contains(errs, b) {
		t.Fatalf("resume of b's task in a: code %d, stderr %s", code, errs)
	}
	empty := t.TempDir()
	_, errs, code = runOneShot(t, "", append([]string{"resume", "--dir", empty, "-p", "go on"}, flags...)...)
	if code == 0 || !strings.Contains(errs, "no saved task of") {
		t.Fatalf("resume in a folder with no task: code %d, stderr %s", code, errs)
	}
}
