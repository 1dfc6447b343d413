package e2e

import (
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
	script := []step{{text: "Noted."}}
	always := func(map[string]any) int { return 0 }
	pt, _, got, _ := tuiSession(t, repo, data, script, always)
	pt.send("first prompt\r")
	pt.expect("completed")
	pt.send("second prompt\r")
	pt.expect("completed")
	pt.send("\x04")
	pt.cmd.Wait()
	for len(got) > 0 {
		<-got
	}

	pt, _, got, _ = tuiSession(t, repo, data, script, always)
	pt.send("\x1b[A") // Up
	pt.expect("› second prompt")
	pt.send("\x10") // Ctrl-P
	pt.expect("› first prompt")
	pt.send("\x0e") // Ctrl-N
	pt.expect("› second prompt")
	pt.send(" again\r")
	if u := nextPrompt(t, got); !strings.Contains(u, "second prompt again") {
		t.Fatalf("the recalled prompt sent is %s", u)
	}
	pt.expect("completed")

	// Esc Esc: the session's messages, newest first; the one picked is
	// put back in the prompt to edit.
	pt.send("\x1b")
	pt.expect("Esc again to edit")
	pt.send("\x1b")
	pt.expect("Edit and resend an earlier message")
	pt.send("\r")
	pt.expect("edit it and press Enter")
	pt.send(", edited\r")
	if u := nextPrompt(t, got); !strings.Contains(u, "second prompt again, edited") {
		t.Fatalf("the edited message sent is %s", u)
	}
	pt.expect("completed")
	pt.send("\x04")
	pt.cmd.Wait()

	// Another folder: nothing to recall.
	other, _, got2, _ := tuiSession(t, t.TempDir(), data, script, always)
	other.send("\x1b[A")
	other.send("zz\r")
	if u := nextPrompt(t, got2); u != `"zz"` && !strings.Contains(u, `"text":"zz"`) {
		t.Fatalf("another folder recalled this one's history: %s", u)
	}
	other.expect("completed")
	other.send("\x04")
	other.cmd.Wait()
	files, _ := os.ReadDir(filepath.Join(data, "history"))
	if len(files) != 2 {
		t.Errorf("history files: %d, want one per folder", len(files))
	}
}
