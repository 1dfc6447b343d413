package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]|\x1b\\][^\x07]*\x07")

// ptyTerm is task-x running on a pseudo-terminal, with everything it drew.
type ptyTerm struct {
	t    testing.TB
	f    *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	seen int // plain-text offset already matched by expect
	cond *sync.Cond
	done bool
}

func startPTY(t testing.TB, env []string, args ...string) *ptyTerm {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "task-x"), args...)
	cmd.Env = append(os.Environ(), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	pt := &ptyTerm{t: t, f: f, cmd: cmd}
	pt.cond = sync.NewCond(&pt.mu)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			pt.mu.Lock()
			pt.raw.Write(buf[:n])
			if err != nil {
				pt.done = true
			}
			pt.cond.Broadcast()
			pt.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		f.Close()
	})
	return pt
}

// plain is the output without escape sequences; pt.mu held.
func (pt *ptyTerm) plain() string { return ansiRE.ReplaceAllString(pt.raw.String(), "") }

// expect waits until want appears in the screen text after the last match.
func (pt *ptyTerm) expect(want string) {
	pt.t.Helper()
	pt.mu.Lock()
	from := pt.seen
	pt.mu.Unlock()
	end, ok := pt.wait(from, want)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if !ok {
		s := pt.plain()
		rest := s[min(from, len(s)):]
		pt.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, rest[max(0, len(rest)-1500):])
	}
	pt.seen = end
}

// quit sends Ctrl-D until task-x exits and returns how it exited. Ctrl-D
// leaves only at an idle, empty prompt; one that arrives while the turn
// still runs is a key for the prompt (an expect for a turn's last line can
// match a redraw of an earlier turn's, which scrolling repaints), and a
// single Ctrl-D then left the test waiting forever (CI: TestPromptHistory
// hung until the package's timeout). The repeat is not a sleep to wait
// for a state: each Ctrl-D either ends the session or does nothing.
func (pt *ptyTerm) quit() error {
	pt.t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- pt.cmd.Wait() }()
	for range 30 {
		io.WriteString(pt.f, "\x04") // fails once the session has gone: the select sees it
		select {
		case err := <-exited:
			return err
		case <-time.After(2 * time.Second):
		}
	}
	pt.cmd.Process.Kill()
	<-exited
	pt.mu.Lock()
	s := pt.plain()
	pt.mu.Unlock()
	pt.t.Fatalf("task-x did not leave on Ctrl-D within a minute; it shows:\n%s", s[max(0, len(s)-1500):])
	return nil
}

// approve answers the approval on screen with key once it takes keys (an
// approval holds keys back for a moment after it opens: approvalGuard).
func (pt *ptyTerm) approve(key string) {
	pt.t.Helper()
	pt.expect("the approval takes keys now")
	pt.send(key)
}

// shownSince reports whether want is drawn after the plain-text offset
// mark (from pt.mark), whatever the order of the frames since: it waits for
// it (a frame may come after the one the last expect matched).
func (pt *ptyTerm) shownSince(mark int, want string) bool {
	_, ok := pt.wait(mark, want)
	return ok
}

// wait waits, up to 60 s or the end of the output, until want appears in
// the screen text after offset from, and returns the offset just past it.
func (pt *ptyTerm) wait(from int, want string) (int, bool) {
	timer := time.AfterFunc(60*time.Second, func() {
		pt.mu.Lock()
		pt.done = true
		pt.cond.Broadcast()
		pt.mu.Unlock()
	})
	defer timer.Stop()
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for {
		s := pt.plain()
		if i := strings.Index(s[min(from, len(s)):], want); i >= 0 {
			return min(from, len(s)) + i + len(want), true
		}
		if pt.done {
			return 0, false
		}
		pt.cond.Wait()
	}
}

// mark is the plain-text offset of the last match.
func (pt *ptyTerm) mark() int {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.seen
}

func (pt *ptyTerm) send(s string) {
	if _, err := io.WriteString(pt.f, s); err != nil {
		pt.t.Fatal(err)
	}
}

// lastUserText is the text of the request's last message when it is the
// user's, "" when the last message is a tool result.
func lastUserText(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	if m["role"] != "user" {
		return ""
	}
	b, _ := json.Marshal(m["content"])
	return string(b)
}

// TestTUISession drives the interactive session (a bubbletea program) in a
// real pseudo-terminal against a scripted model: a prompt whose edit is
// approved from the real coloured diff, a denied command with what to do
// instead (in the answer, to the model), a command whose collapsed output is
// expanded in place, an interrupt that keeps the session with a summary of
// the turn, a follow-up in the same task, /undo restoring the file, and
// Ctrl-C twice leaving with 130.
func TestTUISession(t *testing.T) {
	repo := t.TempDir()
	readme := filepath.Join(repo, "README.md")
	if err := os.WriteFile(readme, []byte("# demo\n\nsome text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		stepEdit = iota
		stepEdited
		stepDelete
		stepDenied
		stepCommand
		stepCommandDone
		stepHang
		stepFollowUp
	)
	model, srv := newScriptedModel(t, "openai", []step{
		stepEdit:        {calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "README.md", "oldText": "# demo\n", "newText": "# demo, renamed\n"}}}},
		stepEdited:      {text: "Renamed the **heading**."},
		stepDelete:      {calls: []scriptedCall{{name: "delete_path", input: map[string]any{"path": "README.md"}}}},
		stepDenied:      {text: "Kept README.md as it is."},
		stepCommand:     {calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "seq 1 12"}}}},
		stepCommandDone: {text: "The command counted to twelve."},
		stepHang:        {hang: true},
		stepFollowUp:    {text: "I renamed the heading of README.md."},
	})
	var mu sync.Mutex
	prompt := ""
	model.pick = func(req map[string]any) int {
		u := lastUserText(req)
		mu.Lock()
		defer mu.Unlock()
		if u != "" && !strings.Contains(u, "keep the file") {
			prompt = u
		}
		switch {
		case strings.Contains(prompt, "delete the readme"):
			if u == "" || strings.Contains(u, "keep the file") {
				return stepDenied
			}
			return stepDelete
		case strings.Contains(prompt, "count"):
			if u == "" {
				return stepCommandDone
			}
			return stepCommand
		case strings.Contains(prompt, "what did you change"):
			return stepFollowUp
		case strings.Contains(prompt, "think forever"):
			return stepHang
		case u == "":
			return stepEdited
		}
		return stepEdit
	}
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-tui-1", "TERM=xterm-256color", "NO_COLOR="},
		"run", repo, "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1", "--model", "fake", "--no-sandbox",
		"--data-dir", t.TempDir())
	pt.expect("/help for commands")
	pt.send("rename the heading\r")
	pt.expect("wants to edit README.md (replace_text)")
	pt.expect("-# demo")
	pt.expect("+# demo, renamed")
	pt.mu.Lock()
	raw := pt.raw.String()
	pt.mu.Unlock()
	if !strings.Contains(raw, "\x1b[32m+# demo, renamed") {
		t.Error("the approval's diff is not coloured on a terminal")
	}
	pt.expect("Yes, for the rest of this task (a)")
	pt.approve("y")
	pt.expect("allowed once")
	pt.expect("Renamed the heading.")
	pt.expect("completed")
	if data, _ := os.ReadFile(readme); !strings.HasPrefix(string(data), "# demo, renamed\n") {
		t.Fatalf("README.md not edited: %q", data)
	}

	// Deny, and tell the model what to do instead: it reads the message.
	pt.send("delete the readme\r")
	pt.expect("wants to use delete_path")
	pt.expect("No, and tell it what to do instead (n)")
	pt.approve("n")
	pt.expect("What should it do instead?")
	pt.send("keep the file\r")
	pt.expect("denied; told it: keep the file")
	pt.expect("Kept README.md as it is.")
	pt.expect("completed")
	if _, err := os.Stat(readme); err != nil {
		t.Fatalf("README.md was deleted after the denial: %v", err)
	}
	steered := false
	for _, b := range model.bodies() {
		steered = steered || strings.Contains(mustJSON(b), "keep the file")
	}
	if !steered {
		t.Error("the message for the model after the denial never reached it")
	}

	// A command's output is collapsed to its last lines; Ctrl-O expands it
	// in place.
	pt.send("count to twelve\r")
	pt.expect("wants to run a command (run_command)")
	pt.approve("a")
	pt.expect("allowed for the rest of this task")
	pt.expect("… 7 earlier lines (ctrl+o expands)")
	pt.expect("The command counted to twelve.")
	pt.expect("completed")
	pt.send("\x0f")
	pt.expect("(ctrl+o collapses)")

	// An interrupt stops the turn and keeps the session.
	pt.send("think forever\r")
	pt.expect("working")
	pt.send("\x1b")
	pt.expect("interrupted after")
	pt.expect("the task is kept")

	// A follow-up continues the same task: the model sees the first prompt.
	pt.send("what did you change?\r")
	pt.expect("I renamed the heading of README.md.")
	pt.expect("completed")
	bodies := model.bodies()
	last := mustJSON(bodies[len(bodies)-1])
	if !strings.Contains(last, "rename the heading") {
		t.Errorf("the follow-up is not in the same task: %.800s", last)
	}

	pt.send("/undo\r")
	pt.expect("restored README.md")
	if data, _ := os.ReadFile(readme); string(data) != "# demo\n\nsome text\n" {
		t.Errorf("/undo did not restore README.md: %q", data)
	}

	pt.send("\x03")
	pt.expect("Ctrl-C again to leave")
	pt.send("\x03")
	err := pt.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit after Ctrl-C twice: %v, want code 130", err)
	}
	pt.mu.Lock()
	shown := pt.plain()
	pt.mu.Unlock()
	if strings.Contains(shown, "sk-tui-1") {
		t.Error("the key was shown")
	}
}

var colourRE = regexp.MustCompile("\x1b\\[[0-9;]*(?:3[0-7]|9[0-7]|38;5;[0-9]+|38;2;[0-9;]+)m")

// TestTUINoColor: with NO_COLOR the session draws no colours (the diff of
// an approval included); /help lists the commands, /mode and /model change
// the footer; Ctrl-D leaves with 0.
func TestTUINoColor(t *testing.T) {
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644)
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "notes\n"}}}},
		{text: "Wrote the notes."},
	})
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-tui-2", "TERM=xterm-256color", "NO_COLOR=1"},
		"run", repo, "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1", "--model", "fake", "--no-sandbox",
		"--data-dir", t.TempDir())
	pt.expect("/help for commands")
	pt.send("write notes\r")
	pt.expect("wants to edit NOTES.md (write_file)")
	pt.expect("+notes")
	pt.approve("y")
	pt.expect("Wrote the notes.")
	pt.expect("completed")
	pt.send("/help\r")
	pt.expect("/undo")
	pt.expect("/revert")
	// The footer may be drawn in the frame before the command's output or
	// in the same one: look for it anywhere since the command was sent.
	mark := pt.mark()
	pt.send("/mode ask\r")
	pt.expect("mode: ask")
	if !pt.shownSince(mark, "ask mode ·") {
		t.Error("the footer does not show the new mode")
	}
	mark = pt.mark()
	pt.send("/model other-model\r")
	pt.expect("model: openaiCompatible/other-model")
	if !pt.shownSince(mark, "ask mode · openaiCompatible/other-model") {
		t.Error("the footer does not show the new model")
	}
	if err := pt.quit(); err != nil {
		t.Fatalf("exit after Ctrl-D: %v, want 0", err)
	}
	pt.mu.Lock()
	raw := pt.raw.String()
	pt.mu.Unlock()
	if m := colourRE.FindString(raw); m != "" {
		t.Errorf("a colour was drawn with NO_COLOR: %q", m)
	}
}
