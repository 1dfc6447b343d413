package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
)

// An mcp__task-x__ edit is planned before the user is asked, as in the
// agent loop: one whose oldText is absent is denied with the tool's error
// and nobody is asked; one that applies is asked about with the file's
// real diff (agent/requestApproval and approvalRequested).
func TestRunEditPlannedBeforeApproval(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{{"mcp__task-x__replace_text", map[string]any{"path": "a.txt", "oldText": "absent", "newText": "x"}}}},
		{calls: []call{{"mcp__task-x__replace_text", map[string]any{"path": "a.txt", "oldText": "four", "newText": "FOUR"}}}},
		{text: "Edited a.txt."},
	})
	if err := os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	job := &task.Job{Tools: builtin.Registry(nil), Env: tool.NewEnv(root, nil, false, "t1")}
	var mu sync.Mutex
	var asked []task.ApprovalRequest
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srvURL := h.modelURL()
	h.start(ctx, srvURL, h.options(srvURL), Hooks{TaskID: "t1", ClassOf: classOf, Plan: planner(job),
		Approve: func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			return task.Answer{Decision: task.DecisionAllow}, nil
		}})
	if _, err := h.run.Wait(); err != nil {
		t.Fatalf("run: %v (stderr %s)", err, h.run.stderrBuf.String())
	}
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -1,7 +1,7 @@\n one\n two\n three\n-four\n+FOUR\n five\n six\n seven\n"
	if len(asked) != 1 || asked[0].CallID != "toolu_1_0" || asked[0].Preview != want {
		t.Fatalf("approvals asked: %+v; want one for toolu_1_0 with preview %q", asked, want)
	}
	var requested []string
	for _, e := range allOf[protocol.ApprovalRequestedEvent](h) {
		requested = append(requested, e.CallID)
		if e.Preview != want {
			t.Errorf("approvalRequested preview %q", e.Preview)
		}
	}
	if len(requested) != 1 || requested[0] != "toolu_1_0" {
		t.Errorf("approvalRequested for %v", requested)
	}
	// The model was told why the first edit failed.
	reqs := h.model.requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	b, _ := json.Marshal(reqs[1])
	if !strings.Contains(string(b), "oldText was not found in a.txt") {
		t.Errorf("second model request lacks the tool's error: %.1500s", b)
	}
	if got, _ := os.ReadFile(filepath.Join(h.dir, "a.txt")); !strings.Contains(string(got), "FOUR") {
		t.Errorf("a.txt = %q", got)
	}
}
