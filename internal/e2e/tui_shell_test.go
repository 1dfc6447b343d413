package e2e

import (
	"strings"
	"testing"
)

// TestShellCommand: !command runs in the runtime (tools/call run_command),
// its output is shown in the transcript and goes to the model with the
// next prompt (issue 38, item 14).
func TestShellCommand(t *testing.T) {
	pt, _, got, _ := tuiWithModel(t, []step{{text: "It printed the marker."}})
	pt.send("!echo shell-out-$((40+2)); pwd\r")
	pt.expect("shell-out-42")
	pt.expect("the output goes with your next prompt")
	pt.send("what did it print?\r")
	u := nextPrompt(t, got)
	if !strings.Contains(u, "shell-out-42") || !strings.Contains(u, "what did it print?") || !strings.Contains(u, "exit code 0") {
		t.Fatalf("the model got %s", u)
	}
	pt.expect("It printed the marker.")
	pt.expect("completed")
	pt.quit()
	// The transcript printed at exit is on a terminal out of raw mode:
	// each line starts at the left edge (it was a staircase).
	pt.mu.Lock()
	raw := pt.raw.String()
	pt.mu.Unlock()
	alt := raw[strings.LastIndex(raw, "\x1b[?1049h")+1:]
	tail := alt[strings.Index(alt, "\x1b[?1049l")+1:]
	if strings.Count(tail, "\n") < 3 || strings.Count(tail, "\n") != strings.Count(tail, "\r\n") {
		t.Errorf("the transcript at exit has bare newlines (the terminal was still raw):\n%q", tail)
	}
}
