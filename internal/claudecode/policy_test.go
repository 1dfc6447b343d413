package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

func mustPolicy(t *testing.T, raw string) policy.Policy {
	t.Helper()
	p, err := policy.Parse(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// permissionMode follows policy.mode when the client gives none, and a
// permissionMode acceptEdits without a policy mode makes the policy's mode
// acceptEdits (its edits ran without asking before policy reached
// claude/run).
func TestPolicyModes(t *testing.T) {
	for _, c := range []struct {
		perm, policy, wantPerm string
		wantMode               policy.Mode
	}{
		{"", `{"mode":"acceptEdits"}`, "acceptEdits", policy.ModeAcceptEdits},
		{"", `{"mode":"readOnly"}`, "", policy.ModeReadOnly},
		{"", `{"mode":"default"}`, "", policy.ModeDefault},
		{"", ``, "", policy.ModeDefault},
		{"acceptEdits", ``, "acceptEdits", policy.ModeAcceptEdits},
		{"acceptEdits", `{"deny":["delete_path"]}`, "acceptEdits", policy.ModeAcceptEdits},
		{"acceptEdits", `{"mode":"default"}`, "acceptEdits", policy.ModeDefault},
		{"plan", `{"mode":"acceptEdits"}`, "plan", policy.ModeAcceptEdits},
	} {
		pol := mustPolicy(t, c.policy)
		var given struct{ Mode string }
		json.Unmarshal([]byte(c.policy), &given)
		pol = PolicyFor(c.perm, pol, given.Mode != "")
		if got := PermissionMode(c.perm, pol); got != c.wantPerm || pol.Mode != c.wantMode {
			t.Errorf("permissionMode %q, policy %s: --permission-mode %q, policy mode %q; want %q, %q", c.perm, c.policy, got, pol.Mode, c.wantPerm, c.wantMode)
		}
	}
}

// What a policy does not offer is kept from the model: readOnly hides the
// task-x tools but the read ones and Claude Code's Bash, Edit, Write; a
// deny rule without a pattern hides its tool; a rule with one hides
// nothing (it is judged call by call).
func TestPolicyHiddenTools(t *testing.T) {
	reg := builtin.Registry(nil)
	hidden := Hidden(mustPolicy(t, `{"mode":"readOnly"}`), reg)
	for _, want := range []string{"mcp__task-x__write_file", "mcp__task-x__replace_text", "mcp__task-x__run_command", "mcp__task-x__delete_path", "Bash", "Edit", "Write"} {
		if !slices.Contains(hidden, want) {
			t.Errorf("readOnly does not hide %s: %v", want, hidden)
		}
	}
	for _, keep := range []string{"mcp__task-x__read_file", "mcp__task-x__search_text", "mcp__task-x__ask_user"} {
		if slices.Contains(hidden, keep) {
			t.Errorf("readOnly hides %s", keep)
		}
	}
	hidden = Hidden(mustPolicy(t, `{"deny":["delete_path","replace_text(secret/**)","Bash"]}`), reg)
	if !slices.Equal(hidden, []string{"mcp__task-x__delete_path", "Bash"}) {
		t.Errorf("deny rules hide %v, want delete_path and Bash", hidden)
	}
	if h := Hidden(policy.Policy{}, reg); len(h) != 0 {
		t.Errorf("no policy hides %v", h)
	}
	// Args: the hidden tools join --disallowedTools and leave --allowedTools.
	o := &Options{Dir: "/w", RuntimeBin: "rt", UseTaskTools: true, ReadTools: []string{"read_file"}, CommandTools: []string{"run_command"},
		AllowCommands: true, Disallowed: []string{"mcp__task-x__run_command", "Bash", "Edit"}}
	args, err := Args(o, "a b")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(args, "\x00")
	if !strings.Contains(s, "--disallowedTools\x00Read,Edit,MultiEdit,Write,NotebookEdit,Grep,Glob,LS,Bash(sed -i:*),Bash(perl -i:*),Bash(cat >:*),Bash(cat <<:*),Bash(tee:*),mcp__task-x__run_command,Bash\x00") ||
		!strings.Contains(s, "--allowedTools\x00mcp__task-x__read_file\x00") {
		t.Errorf("args: %q", args)
	}
	o.UseTaskTools = false
	args, _ = Args(o, "a b")
	if s := strings.Join(args, "\x00"); !strings.HasSuffix(s, "--disallowedTools\x00mcp__task-x__run_command,Bash,Edit") {
		t.Errorf("useTaskTools false: %q", args)
	}
}

// TestRunPolicyOnForwardedCalls: against the real CLI, with the task-x
// calls forwarded back (as the engine runs them), agent/run's policy
// judges every call: under acceptEdits with a deny rule on b.txt, the edit
// of a.txt runs without asking, the edit of b.txt is refused without
// asking and never runs, and a read of .env (read_file is in
// --allowedTools, so Claude Code asks nothing) is asked about where the
// call is forwarded, and runs once allowed.
func TestRunPolicyOnForwardedCalls(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{
			{"mcp__task-x__replace_text", map[string]any{"path": "a.txt", "oldText": "a", "newText": "A"}},
			{"mcp__task-x__replace_text", map[string]any{"path": "b.txt", "oldText": "b", "newText": "B"}},
			{"mcp__task-x__read_file", map[string]any{"path": ".env"}},
		}},
		{text: "Done."},
	})
	for name, text := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".env": "KEY=1\n"} {
		os.WriteFile(filepath.Join(h.dir, name), []byte(text), 0o644)
	}
	var mu sync.Mutex
	var ran []string
	var asked []task.ApprovalRequest
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := h.options(h.modelURL())
	o.ForwardTools = true
	pol := mustPolicy(t, `{"mode":"acceptEdits","deny":["replace_text(b.txt)"]}`).WithRoot(h.dir)
	o.PermissionMode = PermissionMode("", pol)
	hooks := Hooks{TaskID: "t1", ClassOf: classOf, Policy: pol,
		Approve: func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			return task.Answer{Decision: task.DecisionAllow}, nil
		}}
	// As the engine runs them: the forwarded call's pipeline holds the
	// run's gate (Permissions.ForwardGate), the tool is a recorder.
	hooks.Perms = NewPermissions(hooks)
	gated := hooks.Perms.ForwardGate()(func(ctx context.Context, c *toolcall.Call) toolcall.Outcome {
		mu.Lock()
		ran = append(ran, c.Name+" "+string(c.Input))
		mu.Unlock()
		return toolcall.Outcome{Result: tool.Result{Content: "ran " + c.Name}}
	})
	hooks.RunTool = func(ctx context.Context, c mcp.ToolCall) mcp.ToolAnswer {
		text, isErr := gated(ctx, &toolcall.Call{ID: c.CallID, Name: c.Name, Input: c.Input}).Text()
		return mcp.ToolAnswer{Content: text, IsError: isErr}
	}
	h.start(ctx, h.modelURL(), o, hooks)
	if _, err := h.run.Wait(); err != nil {
		t.Fatalf("run: %v (stderr %s)", err, h.run.stderrBuf.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 2 || !strings.Contains(ran[0]+ran[1], `"path":"a.txt"`) || !strings.Contains(ran[0]+ran[1], `"path":".env"`) {
		t.Errorf("calls run: %q, want the edit of a.txt and the read of .env", ran)
	}
	if len(asked) != 1 || asked[0].Tool != "read_file" || asked[0].Permission != tool.ClassRead || asked[0].CallID != "toolu_0_2" {
		t.Errorf("approvals asked: %+v, want one, for the read of .env", asked)
	}
	results := toolResults(h.model.requests()[1])
	if !strings.HasPrefix(results["toolu_0_1"], `denied by policy: deny rule "replace_text(b.txt)"`) ||
		results["toolu_0_0"] != "ran replace_text" || results["toolu_0_2"] != "ran read_file" {
		t.Errorf("tool results the model saw: %q", results)
	}
	for _, e := range allOf[protocol.ToolFinishedEvent](h) {
		if e.CallID == "toolu_0_1" && (e.OK || e.Error == nil || !strings.Contains(*e.Error, "denied by policy")) {
			t.Errorf("toolFinished of the denied call: %+v", e)
		}
	}
}
