package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nextPrompt is the next user text the model receives.
func nextPrompt(t *testing.T, got chan string) string {
	t.Helper()
	for {
		select {
		case u := <-got:
			if u != "" {
				return u
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no prompt reached the model")
		}
	}
}

// TestPromptHistory: the prompts of an earlier session in this folder come
// back with Up / Ctrl-P and Down / Ctrl-N; another folder has its own
// history; Esc Esc picks an earlier message of the session to edit and
// send again (issue 38, item 9).
func TestPromptHistory(t *testing.T) {
	repo, data := t.TempDir(), t.TempDir()
	script := []step{{text: "Noted alpha."}, {text: "Noted bravo."}, {text: "Noted charlie."}, {text: "Noted delta."}, {text: "Noted zz."}, {text: "Noted echo."}}
	// Each prompt has its own answer: "completed" alone can match a repaint
	// of an earlier summary.
	always := byPrompt(map[string]int{"alpha": 0, "bravo": 1, "charlie": 2, "delta": 3, "zz": 4, "echo": 5}, 0)
	pt, _, got, _ := tuiSession(t, repo, data, script, always)
	pt.send("alpha prompt\r")
	pt.expect("Noted alpha.")
	pt.expect("completed")
	pt.send("bravo prompt\r")
	pt.expect("Noted bravo.")
	pt.expect("completed")
	pt.quit()
	for len(got) > 0 {
		<-got
	}

	pt, _, got, _ = tuiSession(t, repo, data, script, always)
	pt.send("\x1b[A") // Up
	pt.expect("› bravo prompt")
	pt.send("\x10") // Ctrl-P
	pt.expect("› alpha prompt")
	pt.send("\x0e") // Ctrl-N
	pt.expect("› bravo prompt")
	pt.send(" charlie\r")
	if u := nextPrompt(t, got); !strings.Contains(u, "bravo prompt charlie") {
		t.Fatalf("the recalled prompt sent is %s", u)
	}
	pt.expect("Noted charlie.")
	pt.expect("completed")

	// Esc Esc: the session's messages, newest first; the one picked is
	// put back in the prompt to edit.
	pt.send("\x1b")
	pt.expect("Esc again to edit")
	pt.send("\x1b")
	pt.expect("Edit and resend an earlier message")
	pt.send("\r")
	pt.expect("edit it and press Enter")
	pt.send(" delta\r")
	if u := nextPrompt(t, got); !strings.Contains(u, "bravo prompt charlie delta") {
		t.Fatalf("the edited message sent is %s", u)
	}
	pt.expect("Noted delta.")
	pt.expect("completed")

	// A large paste recalled with Up in the same session is sent whole
	// again, not as its tag.
	text, lines := bigPaste(4000)
	pt.send("zz log: \x1b[200~" + text + "\x1b[201~")
	pt.expect("[pasted ")
	pt.send("\r")
	if u := nextPrompt(t, got); !strings.Contains(u, fmt.Sprintf("line %6d of the pasted log", lines-1)) {
		t.Fatalf("the paste was not sent: %.200s", u)
	}
	pt.expect("Noted zz.")
	pt.expect("completed")
	pt.send("\x1b[A")
	pt.expect("› zz log: [pasted")
	pt.send(" echo\r")
	if u := nextPrompt(t, got); !strings.Contains(u, fmt.Sprintf("line %6d of the pasted log", lines-1)) {
		t.Fatalf("the recalled paste was sent as its tag: %.200s", u)
	}
	pt.expect("Noted echo.")
	pt.expect("completed")
	pt.quit()

	// Another folder: nothing to recall.
	other, _, got2, _ := tuiSession(t, t.TempDir(), data, script, always)
	other.send("\x1b[A")
	other.send("zz\r")
	if u := nextPrompt(t, got2); u != `"zz"` && !strings.Contains(u, `"text":"zz"`) {
		t.Fatalf("another folder recalled this one's history: %s", u)
	}
	other.expect("completed")
	other.quit()
	files, _ := os.ReadDir(filepath.Join(data, "history"))
	if len(files) != 2 {
		t.Errorf("history files: %d, want one per folder", len(files))
	}
}
