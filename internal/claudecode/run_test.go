package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

func classOf(name string) tool.Class {
	switch name {
	case "read_file", "list_files", "search":
		return tool.ClassRead
	case "replace_text", "write_file":
		return tool.ClassEdit
	}
	return tool.ClassCommand
}

// A scripted model reads a file and edits it through the mcp__task-x__
// tools; the edit asks for approval, which the user gives.
func TestRunReadEditApproved(t *testing.T) {
	h := newHarness(t, []turn{
		{text: "Reading.", calls: []call{{"mcp__task-x__read_file", map[string]any{"path": "a.txt"}}}},
		{calls: []call{{"mcp__task-x__replace_text", map[string]any{"path": "a.txt", "oldText": "hello", "newText": "goodbye"}}}},
		{text: "Edited a.txt."},
	})
	if err := os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srvURL := h.modelURL()
	var asked []task.ApprovalRequest
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h.start(ctx, srvURL, h.options(srvURL), Hooks{TaskID: "t1", ClassOf: classOf,
		Approve: func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
			asked = append(asked, req)
			return task.Answer{Decision: task.DecisionAllow}, nil
		}})
	sum, err := h.run.Wait()
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, h.run.stderrBuf.String())
	}
	b, _ := os.ReadFile(filepath.Join(h.dir, "a.txt"))
	if string(b) != "goodbye world\n" {
		t.Errorf("a.txt = %q, want the edit", b)
	}
	if len(asked) != 1 || asked[0].Tool != "replace_text" || asked[0].Permission != tool.ClassEdit || asked[0].CallID != "toolu_1_0" {
		t.Errorf("approvals asked: %+v, want one for replace_text (read_file is allowed)", asked)
	}
	if sum.Text != "Edited a.txt." || sum.Status != "completed" || sum.ToolCalls != 2 || sum.Iterations != 3 {
		t.Errorf("summary: %+v", sum)
	}
	if sum.Usage.InputTokens != 300 || sum.Usage.OutputTokens != 30 {
		t.Errorf("usage %+v, want 300/30", sum.Usage)
	}
	if len(sum.ChangedFiles) != 1 || sum.ChangedFiles[0].Path != "a.txt" {
		t.Errorf("changed files %+v", sum.ChangedFiles)
	}
	var types []string
	var finished []protocol.ToolFinishedEvent
	for _, e := range h.all() {
		types = append(types, e.EventType())
		if e, ok := e.(protocol.ToolFinishedEvent); ok {
			finished = append(finished, e)
		}
	}
	joined := strings.Join(types, ",")
	for _, want := range []string{"model", "textDelta", "toolStarted", "approvalRequested", "approvalResolved", "toolFinished", "usage", "done"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s event in %s", want, joined)
		}
	}
	if len(finished) != 2 || !finished[0].OK || !finished[1].OK || !strings.Contains(finished[0].Result.(string), "hello world") {
		t.Errorf("toolFinished events: %+v", finished)
	}
	// The model saw the task-x tools, not Claude's own file tools.
	reqs := h.model.requests()
	names := toolNames(reqs[0])
	if !names["mcp__task-x__read_file"] || names["Read"] || names["Write"] || names["Edit"] || names["mcp__task-x__approve"] {
		t.Errorf("tools offered: %v", names)
	}
}

func toolNames(req map[string]any) map[string]bool {
	out := map[string]bool{}
	tools, _ := req["tools"].([]any)
	for _, x := range tools {
		if m, ok := x.(map[string]any); ok {
			n, _ := m["name"].(string)
			out[n] = true
		}
	}
	return out
}
