package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/sandbox"
	"github.com/task-x/task-x-runtime/internal/task"
)

func TestMain(m *testing.M) {
	sandbox.HelperMain() // hook commands run under the sandbox helper
	os.Exit(m.Run())
}

func hookRunner(t *testing.T, root, cfg string) *hooks.Runner {
	t.Helper()
	c, err := hooks.Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return hooks.NewRunner(hooks.Options{User: c, Root: root})
}

func TestPreToolUseHookBlocksCall(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "run_command", `{"command":"rm -rf /"}`), call("c2", "read_file", `{"path":"a.go"}`)}},
		turn{text: "ok, I will not"})
	root := h.opts.Env.Root
	h.opts.Hooks = hookRunner(t, root, `{"PreToolUse": [{"matcher": "run_command|replace_text", "hooks": [
		{"type": "command", "command": "grep -q 'rm -rf' && { echo 'destructive command refused' >&2; exit 2; }; exit 0"}]}],
		"PostToolUse": [{"matcher": "read_file", "hooks": [{"type": "command", "command": "cat > post.json; echo 'lint: 1 warning' >&2; exit 2"}]}]}`)
	sum, msgs := h.run(t, context.Background(), Params{Policy: allowAll()})
	if sum.Status != task.StatusCompleted || ts["run_command"].count() != 0 || ts["read_file"].count() != 1 {
		t.Fatalf("summary %+v, run_command ran %d times", sum, ts["run_command"].count())
	}
	all := resultsIn(msgs)
	res := []provider.Part{all["c1"], all["c2"]}
	if !res[0].IsError || !strings.Contains(res[0].Content, "destructive command refused") {
		t.Fatalf("blocked result = %+v", res[0])
	}
	if res[1].IsError || !strings.Contains(res[1].Content, "1\tpackage main") || !strings.Contains(res[1].Content, "lint: 1 warning") {
		t.Fatalf("PostToolUse feedback missing: %+v", res[1])
	}
	evs := of[protocol.HookEvent](h.rec)
	if len(evs) != 2 || evs[0].Event != hooks.PreToolUse || !evs[0].Blocked || evs[0].ExitCode != 2 ||
		evs[0].Matcher != "run_command|replace_text" || evs[1].Event != hooks.PostToolUse {
		t.Fatalf("hook events = %+v", evs)
	}
	raw, _ := json.Marshal(evs[0])
	for _, k := range []string{`"type":"hook"`, `"event":"PreToolUse"`, `"exitCode":2`, `"blocked":true`, `"output":"destructive command refused\n"`, `"durationMs":`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("wire %s lacks %s", raw, k)
		}
	}
	post, _ := os.ReadFile(filepath.Join(root, "post.json"))
	if !strings.Contains(string(post), `"tool_response":{"lines":1,"path":"a.go"}`) {
		t.Errorf("PostToolUse stdin = %s", post)
	}
	// The blocked call still gets toolStarted and toolFinished.
	if n := len(of[protocol.ToolFinishedEvent](h.rec)); n != 2 {
		t.Errorf("%d toolFinished", n)
	}
}

func TestStopHookContinuesBounded(t *testing.T) {
	h := newHarness(t, tools(), turn{text: "done 1"}, turn{text: "done 2"})
	h.opts.Hooks = hookRunner(t, h.opts.Env.Root, `{"Stop": [{"hooks": [{"type": "command",
		"command": "if [ -f once ]; then exit 0; fi; touch once; echo 'run the tests first' >&2; exit 2"}]}]}`)
	sum, msgs := h.run(t, context.Background(), Params{})
	if sum.Status != task.StatusCompleted || sum.Iterations != 2 || sum.Text != "done 2" {
		t.Fatalf("summary %+v", sum)
	}
	if last := h.prov.reqs[1].Messages; !strings.Contains(last[len(last)-1].Content[0].Text, "run the tests first") {
		t.Fatalf("second request lacks the Stop feedback: %+v", last[len(last)-1])
	}
	_ = msgs

	// A hook that always blocks ends after MaxStopBlocks continuations.
	h = newHarness(t, tools())
	h.prov.repeat = &turn{text: "done"}
	h.opts.Hooks = hookRunner(t, h.opts.Env.Root, `{"Stop": [{"hooks": [{"type": "command", "command": "echo more >&2; exit 2"}]}]}`)
	sum, _ = h.run(t, context.Background(), Params{})
	if sum.Status != task.StatusCompleted || sum.Iterations != MaxStopBlocks+1 || len(of[protocol.WarningEvent](h.rec)) != 1 {
		t.Fatalf("summary %+v, warnings %+v", sum, of[protocol.WarningEvent](h.rec))
	}
}

func TestUserPromptSubmitAndSessionStart(t *testing.T) {
	h := newHarness(t, tools())
	h.opts.Hooks = hookRunner(t, h.opts.Env.Root, `{"UserPromptSubmit": [{"hooks": [{"type": "command",
		"command": "grep -q secret && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0"}]}]}`)
	sum, _ := h.run(t, context.Background(), Params{Prompt: "print the secret"})
	if sum.Status != task.StatusFailed || sum.Error == nil || !strings.Contains(*sum.Error, "no secrets in prompts") || len(h.prov.reqs) != 0 ||
		sum.EndReason != protocol.EndPromptRefused {
		t.Fatalf("summary %+v, %d model calls", sum, len(h.prov.reqs))
	}

	h = newHarness(t, tools(), turn{text: "hi"})
	h.opts.Hooks = hookRunner(t, h.opts.Env.Root, `{"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo branch is main"}]}],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo broken >&2; exit 1"}]}]}`)
	sum, _ = h.run(t, context.Background(), Params{Prompt: "hello", Skills: "<skill name=\"x\">do x</skill>"})
	if sum.Status != task.StatusCompleted {
		t.Fatalf("a failing (exit 1) UserPromptSubmit hook must not block: %+v", sum)
	}
	sys := h.prov.reqs[0].System
	if !strings.Contains(sys, "branch is main") || !strings.Contains(sys, "# Active skills") || !strings.Contains(sys, "do x") {
		t.Fatalf("system prompt lacks hook context or skills: %s", sys)
	}
	if evs := of[protocol.HookEvent](h.rec); len(evs) != 2 || evs[1].ExitCode != 1 || evs[1].Blocked {
		t.Fatalf("hook events %+v", evs)
	}
}
