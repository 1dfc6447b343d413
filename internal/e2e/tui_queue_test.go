package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueuedWhileRunning: a message typed while a turn runs is shown
// queued, sent with agent/steer, joins the running task before its next
// model call (shown joined) and reaches the model in the same turn (issue
// 38, item 11: Enter during a turn was refused).
func TestQueuedWhileRunning(t *testing.T) {
	gate := make(chan struct{})
	script := []step{
		{gate: gate, calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "README.md"}}}},
		{text: "Checked the tests too."},
	}
	pt, model, got, _ := tuiWithModel(t, script)
	pt.send("start\r")
	nextPrompt(t, got) // the model call is in flight, held by the gate
	pt.send("also check the tests\r")
	pt.expect("also check the tests (queued)")
	close(gate)
	pt.expect("also check the tests (joined)")
	pt.expect("Checked the tests too.")
	pt.expect("completed")
	bodies := model.bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d model calls, want 2 (the queued message joins the running turn)", len(bodies))
	}
	b := mustJSON(bodies[1]["messages"])
	if !strings.Contains(b, "also check the tests") {
		t.Errorf("the second model call lacks the queued message: %s", b)
	}
	pt.quit()
}

// TestApprovalWhileTyping: an approval that opens while the user is typing
// a message holds its keys back for a moment (the "a" of "and" would allow
// for the rest of the task), then answers as usual; the typed text stays.
func TestApprovalWhileTyping(t *testing.T) {
	gate := make(chan struct{})
	script := []step{
		{gate: gate, calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "n\n"}}}},
		{text: "Wrote it."},
	}
	pt, _, got, _ := tuiWithModel(t, script)
	pt.send("start\r")
	nextPrompt(t, got)
	pt.send("check the tests and")
	pt.expect("check the tests and")
	close(gate)
	pt.expect("an approval opened while you typed")
	pt.send("a") // held back: not "allow for the rest of the task"
	pt.expect("the approval takes keys now")
	pt.send("n")
	pt.expect("What should it do instead?")
	pt.mu.Lock()
	screen := pt.plain()
	pt.mu.Unlock()
	if strings.Contains(screen, "allowed for the rest of this task") {
		t.Fatal("a key typed for the prompt answered the approval")
	}
	pt.send("\r")
	pt.expect("completed")
	pt.expect("check the tests and") // still in the prompt
	pt.send("\x03")                  // clears the prompt
	pt.quit()
}

// TestApprovalRightAfterEnter: an approval that opens right after a
// prompt is sent, with the prompt empty, holds its keys back too: a second
// Enter or a letter pressed at once does not answer what nobody has read.
func TestApprovalRightAfterEnter(t *testing.T) {
	script := []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "n\n"}}}},
		{text: "Left it."},
	}
	pt, _, _, repo := tuiWithModel(t, script)
	pt.send("write the notes\r")
	pt.expect("an approval opened: its keys work in a moment")
	pt.send("\ra") // held back: neither "allowed once" nor "for the rest of this task"
	pt.expect("the approval takes keys now")
	pt.send("n")
	pt.expect("What should it do instead?")
	pt.mu.Lock()
	screen := pt.plain()
	pt.mu.Unlock()
	if strings.Contains(screen, "allowed") {
		t.Fatal("a key pressed as the approval opened answered it")
	}
	pt.send("\r")
	pt.expect("completed")
	if _, err := os.Stat(filepath.Join(repo, "NOTES.md")); err == nil {
		t.Error("NOTES.md was written")
	}
	pt.send("\x03") // clears the prompt
	pt.quit()
}
