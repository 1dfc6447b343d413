package e2e

import (
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
	pt.send("\x04")
	pt.cmd.Wait()
}
