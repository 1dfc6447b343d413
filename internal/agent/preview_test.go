package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
)

// builtinHarness is a harness over the real built-in tools in a temp root
// holding files.
func builtinHarness(t *testing.T, files map[string]string, turns ...turn) (*harness, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, nil, turns...)
	h.opts.Tools = builtin.Registry(nil)
	h.opts.Env = tool.NewEnv(root, nil, true, "t1")
	return h, root
}

func readRoot(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const sixLines = "one\ntwo\nthree\nfour\nfive\nsix\n"

// TestEditPlannedBeforeApproval: the approval of an edit shows the file's
// real diff, and an edit that cannot apply fails without asking (no
// approval request, no approvalRequested event); the approved edit is the
// one written.
func TestEditPlannedBeforeApproval(t *testing.T) {
	h, root := builtinHarness(t, map[string]string{"a.txt": sixLines, "dup.txt": "x\nx\n"},
		turn{calls: []provider.ToolCall{
			call("absent", "replace_text", `{"path":"a.txt","oldText":"seven\n","newText":"7\n"}`),
			call("ambiguous", "replace_text", `{"path":"dup.txt","oldText":"x","newText":"y"}`),
			call("outside", "write_file", `{"path":"../evil.txt","content":"x"}`),
			call("badpatch", "apply_patch", `{"patch":"--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-nine\n+9\n"}`),
		}},
		turn{calls: []provider.ToolCall{call("good", "replace_text", `{"path":"a.txt","oldText":"five\n","newText":"FIVE\n"}`)}},
		turn{text: "done"},
	)
	h.appr.answers["good"] = task.DecisionAllow
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: policy.Policy{Mode: policy.ModeDefault}})
	if sum.Status != task.StatusCompleted {
		t.Fatalf("summary %+v", sum)
	}
	if got := h.appr.ids(); !slices.Equal(got, []string{"good"}) {
		t.Fatalf("approvals asked for %v; want only the edit that applies", got)
	}
	var asked []string
	for _, e := range of[protocol.ApprovalRequestedEvent](h.rec) {
		asked = append(asked, e.CallID)
	}
	if !slices.Equal(asked, []string{"good"}) {
		t.Errorf("approvalRequested events for %v", asked)
	}
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -2,5 +2,5 @@\n two\n three\n four\n-five\n+FIVE\n six\n"
	if p := h.appr.asked[0].Preview; p != want {
		t.Errorf("preview %q\nwant    %q", p, want)
	}
	if e := of[protocol.ApprovalRequestedEvent](h.rec)[0]; e.Preview != want {
		t.Errorf("approvalRequested preview %q", e.Preview)
	}
	res := resultsIn(msgs)
	for id, frag := range map[string]string{"absent": "not found", "ambiguous": "matches 2 times", "outside": "outside the workspace", "badpatch": "nothing was written"} {
		if r := res[id]; !r.IsError || !strings.Contains(strings.ToLower(r.Content), strings.ToLower(frag)) {
			t.Errorf("%s: result %+v", id, r)
		}
	}
	for _, e := range of[protocol.ToolFinishedEvent](h.rec) {
		if (e.CallID == "good") != e.OK {
			t.Errorf("toolFinished %s ok=%v", e.CallID, e.OK)
		}
	}
	if got := readRoot(t, root, "a.txt"); got != strings.Replace(sixLines, "five", "FIVE", 1) {
		t.Errorf("a.txt = %q", got)
	}
}

// TestApprovedPlanRechecksTheFile: a file that changes while the user is
// asked is not overwritten by the approved plan: the call fails staleEdit.
func TestApprovedPlanRechecksTheFile(t *testing.T) {
	h, root := builtinHarness(t, map[string]string{"a.txt": sixLines},
		turn{calls: []provider.ToolCall{call("c1", "replace_text", `{"path":"a.txt","oldText":"two\n","newText":"2\n"}`)}},
		turn{text: "done"},
	)
	changed := sixLines + "seven\n"
	h.opts.Approve = func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(changed), 0o644); err != nil {
			t.Error(err)
		}
		return task.Answer{Decision: task.DecisionAllow}, nil
	}
	_, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: policy.Policy{Mode: policy.ModeDefault}})
	if r := resultsIn(msgs)["c1"]; !r.IsError || !strings.Contains(r.Content, "changed on disk") {
		t.Errorf("result %+v", r)
	}
	if got := readRoot(t, root, "a.txt"); got != changed {
		t.Errorf("a.txt = %q; the change made during the approval was overwritten", got)
	}
}
