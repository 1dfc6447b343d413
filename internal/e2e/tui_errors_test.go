package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProviderErrors: a failed model call is one sentence naming the fix,
// shown once, without the Go error text; a 404 names --model (/model in
// the session); --verbose
// adds the provider's details (issue 38, item 6: `Post "http://…": dial
// tcp …` was printed raw, in the error line and again in the summary).
func TestProviderErrors(t *testing.T) {
	_, srv := newScriptedModel(t, "openai", []step{{text: "unused"}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	dir := t.TempDir()
	run := func(base string, extra ...string) (string, int) {
		return ptyRun(t, []string{"TASK_X_API_KEY=sk-provider-errors"}, append([]string{"run", "-C", dir, "-p", "hi",
			"--provider", "openaiCompatible", "--base-url", base, "--model", "no-such-model", "--data-dir", t.TempDir(), "--no-sandbox"}, extra...)...)
	}
	out, code := run(closed)
	if code != 1 || strings.Contains(out, "dial tcp") || strings.Contains(out, `Post "`) ||
		!strings.Contains(out, "--base-url") || !strings.Contains(out, "nothing is listening") || strings.Count(out, "error:") != 1 {
		t.Errorf("a closed port: exit %d, want 1 and one sentence naming --base-url, no Go error text:\n%s", code, out)
	}
	out, code = run(srv.URL + "/wrong/v1")
	if code != 1 || !strings.Contains(out, "--model") || !strings.Contains(out, "404") || !strings.Contains(out, `"no-such-model"`) ||
		strings.Count(out, "error:") != 1 || strings.Contains(out, "notFound") {
		t.Errorf("a 404: exit %d, want 1 and one sentence naming the model and --model:\n%s", code, out)
	}
	out, _ = run(srv.URL+"/wrong/v1", "--verbose")
	if !strings.Contains(out, "notFound, HTTP 404") {
		t.Errorf("--verbose does not show the details:\n%s", out)
	}

	// The session shows the same sentence once, and keeps going.
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-provider-errors", "TERM=xterm-256color", "NO_COLOR=1"}, "run", "-C", dir,
		"--provider", "openaiCompatible", "--base-url", srv.URL+"/wrong/v1", "--model", "no-such-model", "--data-dir", t.TempDir(), "--no-sandbox")
	pt.expect("/help for commands")
	pt.send("hi\r")
	// In the session the fix is the session's command, not a flag.
	pt.expect("/model (it lists the provider's models)")
	pt.expect("failed")
	pt.quit()
	pt.mu.Lock()
	screen := pt.plain()
	pt.mu.Unlock()
	// The transcript printed at exit holds each line once.
	tail := screen[strings.LastIndex(screen, "› hi"):]
	if n := strings.Count(tail, "error:"); n != 1 {
		t.Errorf("the transcript shows %d error lines, want 1:\n%s", n, tail)
	}
	if strings.Contains(tail, "--model") || strings.Contains(tail, "--base-url") {
		t.Errorf("the session names a flag:\n%s", tail)
	}
}

// TestSessionSmallFixes: an approval says what the agent wants to do and
// offers "for the rest of this task" in the session and in one-shot mode;
// a note longer than the screen wraps instead of being cut; /revert lists
// the files and asks first, says "1 file", and /diff with nothing pending
// says so (issue 38, item 8).
func TestSessionSmallFixes(t *testing.T) {
	long := strings.Repeat("deeply-nested-folder/", 6) + "zz-tail-marker.md"
	script := []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "notes\n"}}}},
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": long, "content": "deep\n"}}}},
		{text: "Done."},
	}
	pt, _, _, repo := tuiWithModel(t, script)
	pt.send("write the notes\r")
	pt.expect("the agent wants to edit NOTES.md (write_file)")
	pt.expect("Yes, for the rest of this task (a)")
	pt.approve("y")
	pt.expect("the agent wants to edit " + long[:40])
	pt.approve("y")
	pt.expect("completed")
	pt.expect("zz-tail-marker.md") // the changed-files line wraps
	pt.send("/revert\r")
	pt.expect("revert 2 files")
	pt.expect("y reverts, any other key keeps")
	pt.send("n")
	pt.expect("kept: nothing reverted")
	if _, err := os.Stat(filepath.Join(repo, "NOTES.md")); err != nil {
		t.Fatal("NOTES.md went although the revert was declined")
	}
	pt.send("/revert\r")
	// The status line's hint, not the note: a redraw of the first /revert's
	// note would match before this one asks (and y went to the prompt).
	pt.expect("y to revert, any other key to keep")
	pt.send("y")
	pt.expect("reverted 2 files")
	if _, err := os.Stat(filepath.Join(repo, "NOTES.md")); err == nil {
		t.Error("NOTES.md is still there after /revert y")
	}
	pt.send("/diff\r")
	pt.expect("no pending changes")
	pt.send("/revert\r")
	pt.expect("nothing to revert")
	pt.quit()

	// One-shot approvals use the same words.
	_, srv := newScriptedModel(t, "openai", script[:1:1])
	dir := t.TempDir()
	_, errs, _ := runOneShot(t, "y\n", "run", "-C", dir, "-p", "write the notes", "--provider", "openaiCompatible",
		"--base-url", srv.URL+"/v1", "--model", "fake", "--no-sandbox", "--data-dir", t.TempDir())
	if !strings.Contains(errs, "the agent wants to edit NOTES.md (write_file)") || !strings.Contains(errs, "[a] for the rest of this task") {
		t.Errorf("the one-shot approval reads:\n%s", errs)
	}
}

// TestPipedStdin: `cat log | task-x run -p "explain"` sends the text with
// the prompt; piped text with no prompt is the prompt; approval answers on
// stdin still answer (issue 38, item 13).
func TestPipedStdin(t *testing.T) {
	model, srv := newScriptedModel(t, "openai", []step{{text: "It ran out of disk."}})
	dir := t.TempDir()
	flags := []string{"--provider", "openaiCompatible", "--base-url", srv.URL + "/v1", "--model", "fake", "--no-sandbox", "--data-dir", t.TempDir()}
	out, errs, code := runOneShot(t, "ERROR: disk full at line 42\nretrying\n", append([]string{"run", "-C", dir, "-p", "explain this log"}, flags...)...)
	if code != 0 || !strings.Contains(out, "It ran out of disk.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	u := lastUserText(model.bodies()[0])
	if !strings.Contains(u, "explain this log") || !strings.Contains(u, "ERROR: disk full at line 42") || !strings.Contains(u, "retrying") {
		t.Errorf("the model got %s", u)
	}
	_, errs, code = runOneShot(t, "say hi from stdin\n", append([]string{"run", "-C", dir}, flags...)...)
	if code != 0 || !strings.Contains(lastUserText(model.bodies()[1]), "say hi from stdin") {
		t.Errorf("stdin as the prompt: exit %d\n%s", code, errs)
	}
	// A stdin whose first line reads as an answer (seq 1 5) answers
	// approvals: the user is told it was not sent, never left guessing.
	_, errs, code = runOneShot(t, "1\n2\n3\n", append([]string{"run", "-C", dir, "-p", "what are these"}, flags...)...)
	if code != 0 || !strings.Contains(errs, `stdin starts with "1", an approval answer`) {
		t.Errorf("answer-like stdin: exit %d\n%s", code, errs)
	}
}
