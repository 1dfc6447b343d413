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
	t    *testing.T
	f    *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	seen int // plain-text offset already matched by expect
	cond *sync.Cond
	done bool
}

func startPTY(t *testing.T, env []string, args ...string) *ptyTerm {
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
		if i := strings.Index(s[min(pt.seen, len(s)):], want); i >= 0 {
			pt.seen += i + len(want)
			return
		}
		if pt.done {
			rest := s[min(pt.seen, len(s)):]
			pt.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, rest[max(0, len(rest)-1500):])
		}
		pt.cond.Wait()
	}
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

// TestTUISession drives the interactive session in a real pseudo-terminal
// against a scripted model: a prompt whose edit is approved from the real
// coloured diff, an interrupt that keeps the session, a follow-up in the
// same task, /undo restoring the file, and Ctrl-C twice leaving with 130.
func TestTUISession(t *testing.T) {
	repo := t.TempDir()
	readme := filepath.Join(repo, "README.md")
	if err := os.WriteFile(readme, []byte("# demo\n\nsome text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		stepEdit = iota
		stepEdited
		stepHang
		stepFollowUp
	)
	model, srv := newScriptedModel(t, "openai", []step{
		stepEdit:     {calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "README.md", "oldText": "# demo\n", "newText": "# demo, renamed\n"}}}},
		stepEdited:   {text: "Renamed the **heading**."},
		stepHang:     {hang: true},
		stepFollowUp: {text: "I renamed the heading of README.md."},
	})
	model.pick = func(req map[string]any) int {
		u := lastUserText(req)
		switch {
		case u == "":
			return stepEdited
		case strings.Contains(u, "what did you change"):
			return stepFollowUp
		case strings.Contains(u, "think forever"):
			return stepHang
		}
		return stepEdit
	}
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-tui-1", "TERM=xterm-256color", "NO_COLOR="},
		"run", repo, "--provider", "openaiCompatible", "--base-url", srv.URL+"/v1", "--model", "fake", "--no-sandbox",
		"--data-dir", t.TempDir())
	pt.expect("/help for commands")
	pt.expect("› ")
	pt.send("rename the heading\r")
	pt.expect("wants to run replace_text")
	pt.expect("-# demo")
	pt.expect("+# demo, renamed")
	pt.mu.Lock()
	raw := pt.raw.String()
	pt.mu.Unlock()
	if !strings.Contains(raw, "\x1b[") {
		t.Error("the approval's diff is not coloured on a terminal")
	}
	pt.expect("allow? [y] once")
	pt.send("y\r")
	pt.expect("Renamed the heading.")
	pt.expect("completed")
	if data, _ := os.ReadFile(readme); !strings.HasPrefix(string(data), "# demo, renamed\n") {
		t.Fatalf("README.md not edited: %q", data)
	}

	// An interrupt stops the turn and keeps the session.
	pt.expect("› ")
	pt.send("think forever\r")
	pt.expect("working")
	pt.send("\x1b")
	pt.expect("interrupted")
	pt.expect("› ")

	// A follow-up continues the same task: the model sees the first prompt.
	pt.send("what did you change?\r")
	pt.expect("I renamed the heading of README.md.")
	pt.expect("completed")
	bodies := model.bodies()
	last := mustJSON(bodies[len(bodies)-1])
	if !strings.Contains(last, "rename the heading") {
		t.Errorf("the follow-up is not in the same task: %.800s", last)
	}

	pt.expect("› ")
	pt.send("/undo\r")
	pt.expect("restored README.md")
	if data, _ := os.ReadFile(readme); string(data) != "# demo\n\nsome text\n" {
		t.Errorf("/undo did not restore README.md: %q", data)
	}

	pt.expect("› ")
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
