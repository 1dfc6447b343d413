package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Issue 38: task-x as a daily driver, driven in a pseudo-terminal.

// tuiWithModel starts an interactive session in a new folder against a
// scripted model whose every request is also sent on the returned channel
// (its last user message's text).
func tuiWithModel(t testing.TB, script []step, extra ...string) (*ptyTerm, *scriptedModel, chan string, string) {
	return tuiSession(t, t.TempDir(), t.TempDir(), script, nil, extra...)
}

// tuiSession is tuiWithModel in repo with a data folder, whose model
// picks the step with pick when it is not nil.
func tuiSession(t testing.TB, repo, data string, script []step, pick func(req map[string]any) int, extra ...string) (*ptyTerm, *scriptedModel, chan string, string) {
	if _, err := os.Stat(filepath.Join(repo, "README.md")); err != nil {
		os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644)
	}
	model, srv := newScriptedModel(t, "openai", script)
	got := make(chan string, 64)
	model.pick = func(req map[string]any) int {
		select {
		case got <- lastUserText(req):
		default:
		}
		if pick != nil {
			return pick(req)
		}
		turn := 0
		msgs, _ := req["messages"].([]any)
		for _, x := range msgs {
			if mm, ok := x.(map[string]any); ok && mm["role"] == "assistant" {
				turn++
			}
		}
		return min(turn, len(script)-1)
	}
	args := append([]string{"run", "-C", repo, "--provider", "openaiCompatible", "--base-url", srv.URL + "/v1", "--model", "fake", "--no-sandbox",
		"--data-dir", data}, extra...)
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-tui-daily", "TERM=xterm-256color", "NO_COLOR=1"}, args...)
	pt.expect("/help for commands")
	return pt, model, got, repo
}

// bigPaste is a text of about size bytes in lines of 64.
func bigPaste(size int) (string, int) {
	var b strings.Builder
	n := 0
	for b.Len() < size {
		fmt.Fprintf(&b, "line %6d of the pasted log: %s\n", n, strings.Repeat("x", 34))
		n++
	}
	return strings.TrimSuffix(b.String(), "\n"), n
}

// pasteAndSubmit pastes text (bracketed) after a typed prefix, presses
// Enter and waits until the model receives it; it returns what the model got.
func pasteAndSubmit(t testing.TB, pt *ptyTerm, got chan string, text string) string {
	t.Helper()
	pt.send("explain this: ")
	pt.expect("explain this:")
	pt.send("\x1b[200~" + text + "\x1b[201~")
	pt.expect("[pasted ")
	pt.send("\r")
	select {
	case u := <-got:
		return u
	case <-time.After(60 * time.Second):
		t.Fatal("the pasted prompt never reached the model")
		return ""
	}
}

// TestTUIPasteLarge: a 1 MB bracketed paste is shown collapsed and sent
// whole with the text typed before it (issue 38, item 1: it froze the
// session for minutes).
func TestTUIPasteLarge(t *testing.T) {
	pt, _, got, _ := tuiWithModel(t, []step{{text: "It is a log."}})
	text, lines := bigPaste(1 << 20)
	u := pasteAndSubmit(t, pt, got, text)
	if !strings.Contains(u, "explain this: ") || !strings.Contains(u, "line      0 of the pasted log") ||
		!strings.Contains(u, fmt.Sprintf("line %6d of the pasted log", lines-1)) {
		t.Fatalf("the model did not get the whole paste (%d bytes): %.300s", len(u), u)
	}
	pt.expect("It is a log.")
	pt.expect("completed")
	// The transcript shows the prompt with its tag. Not waited for on the
	// screen: the prompt showed the same line before it was sent, and a
	// redraw of it would match. The transcript printed at exit is the
	// transcript alone.
	pt.quit()
	pt.mu.Lock()
	screen := pt.plain()
	pt.mu.Unlock()
	tail := screen[max(0, strings.LastIndex(screen, "› explain this: ")):]
	if want := fmt.Sprintf("› explain this: [pasted %d lines]", lines); !strings.HasPrefix(tail, want) || strings.Contains(tail, "of the pasted log") {
		t.Errorf("the transcript does not show the prompt as %q:\n%.500s", want, tail)
	}
}

// BenchmarkTUIPaste1MB: from the start of a 1 MB paste to the model's
// request after Enter (issue 38 asks for under a second). Each round is a
// new session; only the paste and the submit are timed.
func BenchmarkTUIPaste1MB(b *testing.B) {
	text, _ := bigPaste(1 << 20)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pt, _, got, _ := tuiWithModel(b, []step{{text: "It is a log."}})
		b.StartTimer()
		pasteAndSubmit(b, pt, got, text)
		b.StopTimer()
		pt.expect("completed")
		pt.cmd.Process.Kill()
		pt.cmd.Wait()
	}
}

// TestMistypedFolder: a path-like argument that does not exist is exit 2
// naming it, on a terminal and in a script; nothing reaches the model and no
// task is saved (issue 38, item 2: it became a one-shot prompt).
func TestMistypedFolder(t *testing.T) {
	work := t.TempDir()
	os.Mkdir(filepath.Join(work, "workspace"), 0o755)
	os.Mkdir(filepath.Join(work, "here"), 0o755)
	model, srv := newScriptedModel(t, "openai", []step{{text: "I ran."}})
	data := t.TempDir()
	flags := []string{"--provider", "openaiCompatible", "--base-url", srv.URL + "/v1", "--model", "fake", "--no-sandbox", "--data-dir", data}
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"run", "../wrokspace"}, "../wrokspace"},
		{[]string{"run", "src/"}, "src/"},
		{[]string{"run", "./wrokspace", "fix the bug"}, "./wrokspace"},
		{[]string{"run", "-C", "wrokspace"}, "wrokspace"},
		{[]string{"run", "-p", "fix it", "~/nowhere"}, "~/nowhere"},
	} {
		args, name := c.args, c.name
		cmd := exec.Command(filepath.Join(binDir, "task-x"), append(args, flags...)...)
		cmd.Dir = filepath.Join(work, "here")
		cmd.Env = append(os.Environ(), "TASK_X_API_KEY=sk-mistyped")
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(f)
		err = cmd.Wait()
		f.Close()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), name) {
			t.Errorf("task-x %s: %v, want exit 2 naming %s; it printed:\n%s", strings.Join(args, " "), err, name, out)
		}
	}
	if n := len(model.bodies()); n != 0 {
		t.Errorf("the model got %d requests for a mistyped folder", n)
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "tasks")); len(ents) != 0 {
		t.Errorf("tasks were saved: %v", ents)
	}
	// -C names the folder; the prompt is the argument.
	out, errs, code := runOneShot(t, "", append([]string{"run", "-C", filepath.Join(work, "workspace"), "say hi"}, flags...)...)
	if code != 0 || !strings.Contains(out, "I ran.") {
		t.Fatalf("run -C DIR PROMPT: code %d\n%s\n%s", code, out, errs)
	}
	if u := lastUserText(model.bodies()[0]); !strings.Contains(u, "say hi") {
		t.Errorf("the prompt sent is %s", u)
	}
}

// ptyRun runs task-x to its end on a pseudo-terminal and returns what it
// printed and its exit code.
func ptyRun(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "task-x"), args...)
	cmd.Env = append(os.Environ(), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(f)
	err = cmd.Wait()
	f.Close()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ansiRE.ReplaceAllString(string(out), ""), code
}

// TestKeyMessages: a key refused before anything is sent says why (plain
// http to a host that is not loopback), not that the provider refused it;
// a keyless OpenAI-compatible server on loopback works with no key set
// (issue 38, item 3).
func TestKeyMessages(t *testing.T) {
	dir := t.TempDir()
	out, code := ptyRun(t, []string{"TASK_X_API_KEY=sk-lan-1"}, "run", "-C", dir, "-p", "hi", "--provider", "openaiCompatible",
		"--base-url", "http://192.168.1.5:8000/v1", "--model", "m", "--data-dir", t.TempDir(), "--no-sandbox")
	if code != 1 || strings.Contains(out, "refused the API key") || !strings.Contains(out, "https") ||
		!strings.Contains(out, "127.0.0.1") || !strings.Contains(out, "192.168.1.5") {
		t.Errorf("http to a LAN host: exit %d, want 1 and a message naming https, loopback and the host:\n%s", code, out)
	}
	if strings.Contains(out, "sk-lan-1") {
		t.Error("the key was shown")
	}
	model, srv := newScriptedModel(t, "openai", []step{{text: "No key needed."}})
	out, code = ptyRun(t, []string{"TASK_X_API_KEY=", "OPENAI_API_KEY="}, "run", "-C", dir, "-p", "hi", "--provider", "openaiCompatible",
		"--base-url", srv.URL+"/v1", "--model", "m", "--data-dir", t.TempDir(), "--no-sandbox")
	if code != 0 || !strings.Contains(out, "No key needed.") || len(model.bodies()) == 0 {
		t.Errorf("a keyless server on loopback: exit %d\n%s", code, out)
	}
}

// byPrompt picks the step of the newest prompt the model was sent: the
// first of steps whose key it contains, then done after a tool result.
func byPrompt(steps map[string]int, done int) func(req map[string]any) int {
	return func(req map[string]any) int {
		if lastUserText(req) == "" {
			return done
		}
		u := lastUserText(req)
		best, at := done, -1
		for k, i := range steps {
			if j := strings.LastIndex(u, k); j > at {
				best, at = i, j
			}
		}
		return best
	}
}

// newestPrompt is the text of the request's newest user message (the
// prompt of the turn, also after tool results).
func newestPrompt(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			return mustJSON(m["content"])
		}
	}
	return ""
}

// TestUndoSession: /undo undoes this task's operations, newest first; one
// whose file changed since says so and the next /undo moves on to the
// older one; an older task's operation is never picked (issue 38, item 4:
// /undo stuck on an old conflicting operation, printing "restored" with
// nothing listed).
func TestUndoSession(t *testing.T) {
	repo, data := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644)
	script := []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "OLD.md", "content": "old\n"}}}},
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "notes\n"}}}},
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "README.md", "oldText": "# demo\n", "newText": "# demo, renamed\n"}}}},
		{text: "Done."},
		{text: "Wrote the notes."},
		{text: "Renamed the heading."},
	}
	// Each turn ends with its own answer: "completed" alone can match a
	// redraw of the summary of the turn before.
	first := byPrompt(map[string]int{"older task": 0, "write notes": 1, "rename the heading": 2}, 3)
	pick := func(req map[string]any) int {
		if lastUserText(req) != "" {
			return first(req)
		}
		switch p := newestPrompt(req); {
		case strings.Contains(p, "write notes"):
			return 4
		case strings.Contains(p, "rename the heading"):
			return 5
		}
		return 3
	}
	// An older task writes OLD.md, which is changed afterwards.
	older, _, _, _ := tuiSession(t, repo, data, script, pick, "--accept-edits")
	older.send("older task\r")
	older.expect("completed")
	older.quit()
	os.WriteFile(filepath.Join(repo, "OLD.md"), []byte("changed by hand\n"), 0o644)

	pt, _, _, _ := tuiSession(t, repo, data, script, pick, "--accept-edits")
	pt.send("write notes\r")
	pt.expect("Wrote the notes.")
	pt.expect("completed")
	pt.send("rename the heading\r")
	pt.expect("Renamed the heading.")
	pt.expect("completed")
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo, renamed by hand\n"), 0o644)

	pt.send("/undo\r")
	pt.expect("README.md changed since")
	pt.send("/undo\r")
	pt.expect("restored NOTES.md")
	if _, err := os.Stat(filepath.Join(repo, "NOTES.md")); err == nil {
		t.Error("NOTES.md is still there after its /undo")
	}
	pt.send("/undo\r")
	pt.expect("nothing left to undo in this task")
	if b, _ := os.ReadFile(filepath.Join(repo, "OLD.md")); string(b) != "changed by hand\n" {
		t.Errorf("the older task's file was touched: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "README.md")); string(b) != "# demo, renamed by hand\n" {
		t.Errorf("README.md, changed by hand, was overwritten: %q", b)
	}
	pt.quit()
}

// TestUsageExit2: bad flag values are usage errors, exit 2, naming the
// choices; team is among the modes --help lists (issue 38, item 7).
func TestUsageExit2(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "-C", dir, "-p", "hi", "--mode", "yolo", "--provider", "ollama", "--model", "m", "--data-dir", t.TempDir()},
		{"graph", "--level", "nope", dir},
	} {
		_, errs, code := runOneShot(t, "", args...)
		if code != 2 || !strings.Contains(errs, "must be") {
			t.Errorf("task-x %s: exit %d, want 2 with the choices; stderr: %s", strings.Join(args, " "), code, errs)
		}
	}
	out, _, code := runOneShot(t, "", "run", "--help")
	if code != 0 || !strings.Contains(out, "team") {
		t.Errorf("run --help does not list team: %s", out)
	}
}
