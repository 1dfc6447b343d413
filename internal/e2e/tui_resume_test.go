package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeTranscript: task-x resume shows the task's earlier transcript
// (agent/replay) and its id before the follow-up; /resume picks a task of
// this folder in a running session and shows its transcript too (issue 38,
// item 12).
func TestResumeTranscript(t *testing.T) {
	repo, data := t.TempDir(), t.TempDir()
	script := []step{{text: "The answer is 42."}}
	always := func(map[string]any) int { return 0 }
	model, srv := newScriptedModel(t, "openai", script)
	model.pick = always
	at := func(args ...string) *ptyTerm {
		pt := startPTY(t, []string{"TASK_X_API_KEY=sk-tui-daily", "TERM=xterm-256color", "NO_COLOR=1"}, append(args, "-C", repo,
			"--provider", "openaiCompatible", "--base-url", srv.URL+"/v1", "--model", "fake", "--no-sandbox", "--data-dir", data)...)
		pt.expect("/help for commands")
		return pt
	}
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644)
	pt := at("run")
	pt.send("first question\r")
	pt.expect("completed")
	pt.quit()

	pt = at("resume")
	pt.expect("the earlier transcript of task-")
	pt.expect("› first question")
	pt.expect("The answer is 42.")
	pt.expect("resumed task-")
	pt.send("a follow-up\r")
	pt.expect("out tokens, ") // a live turn's summary: a replayed one has no time
	last := model.bodies()[len(model.bodies())-1]
	if b := mustJSON(last["messages"]); !strings.Contains(b, "first question") || !strings.Contains(b, "a follow-up") {
		t.Errorf("the follow-up is not in the resumed task: %s", b)
	}
	pt.quit()

	// /resume in a new session.
	n := len(model.bodies())
	pt = at("run")
	pt.send("/resume\r")
	pt.expect("Resume a task of this folder")
	pt.send("\r")
	pt.expect("the earlier transcript of task-")
	pt.expect("› a follow-up")
	pt.expect("resumed task-")
	pt.send("third\r")
	pt.expect("out tokens, ")
	if b := mustJSON(model.bodies()[n]["messages"]); !strings.Contains(b, "first question") || !strings.Contains(b, "third") {
		t.Errorf("/resume did not continue the task: %s", b)
	}
	pt.quit()
}
