package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusAndCommands: the status line and the summary show the cost
// and the context use; /init asks for AGENTS.md; /compact carries the
// task's summary into a new task; /clear starts a new task; a skill is a
// slash command, completed by Tab (issue 38, item 15).
func TestStatusAndCommands(t *testing.T) {
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, ".task-x", "skills", "review"), 0o755)
	os.WriteFile(filepath.Join(repo, ".task-x", "skills", "review", "SKILL.md"),
		[]byte("---\nname: review\ndescription: review a file\n---\nSKILL-BODY-MARKER: review {{args}} carefully.\n"), 0o644)
	model, srv := newScriptedModel(t, "anthropic", []step{
		{text: "Hello."},
		{text: "Wrote AGENTS.md."},
		{text: "SUMMARY-MARKER: said hello, wrote AGENTS.md."},
		{text: "Next step done."},
		{text: "Reviewed main.go."},
	})
	model.pick = byPrompt(map[string]int{"Write AGENTS.md": 1, "Summarize this task so far": 2, "go on with it": 3, "SKILL-BODY-MARKER": 4, "main.go": 4}, 0)
	pt := startPTY(t, []string{"ANTHROPIC_API_KEY=sk-ant-commands-1", "TERM=xterm-256color", "NO_COLOR=1"}, "run", "-C", repo,
		"--provider", "anthropic", "--base-url", srv.URL, "--model", "claude-sonnet-4-5", "--no-sandbox", "--data-dir", t.TempDir())
	pt.expect("/help for commands")

	pt.send("hi\r")
	pt.expect("completed")
	pt.expect(", $0.0") // the summary's cost
	pt.expect("context ")
	pt.expect("% of ")

	pt.send("/init\r")
	pt.expect("Wrote AGENTS.md.")
	pt.expect("completed")
	bodies := model.bodies()
	if u := lastUserText(bodies[len(bodies)-1]); !strings.Contains(u, "Write AGENTS.md") {
		t.Errorf("/init sent %s", u)
	}

	pt.send("/compact\r")
	pt.expect("compacted task-")
	pt.send("go on with it\r")
	pt.expect("Next step done.") // unique: "completed" alone can match a repaint of an earlier summary
	pt.expect("completed")
	bodies = model.bodies()
	msgs := mustJSON(bodies[len(bodies)-1]["messages"])
	if !strings.Contains(msgs, "SUMMARY-MARKER") || !strings.Contains(msgs, "go on with it") || strings.Contains(msgs, `"hi"`) {
		t.Errorf("the task after /compact got %s", msgs)
	}

	pt.send("/clear\r")
	pt.expect("cleared: the next prompt starts a new task")

	pt.send("/revi\t")
	pt.expect("› /review")
	pt.send("main.go\r")
	pt.expect("Reviewed main.go.")
	pt.expect("completed")
	bodies = model.bodies()
	if b := mustJSON(bodies[len(bodies)-1]); !strings.Contains(b, "SKILL-BODY-MARKER: review main.go carefully.") {
		t.Errorf("the skill was not applied: %.3000s", b)
	}
	pt.quit()
}
