package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.HelperMain() // hooks run under the sandbox helper (re-executed test binary)
	os.Exit(m.Run())
}

func mustParse(t *testing.T, s string) Config {
	t.Helper()
	c, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func runner(t *testing.T, root, cfg string) *Runner {
	t.Helper()
	return NewRunner(Options{User: mustParse(t, cfg), Root: root})
}

func TestParseErrors(t *testing.T) {
	bad := map[string]string{
		"unknown event":  `{"PreToolUze": []}`,
		"type":           `{"PreToolUse": [{"hooks": [{"type": "prompt", "command": "x"}]}]}`,
		"empty command":  `{"Stop": [{"hooks": [{"type": "command", "command": "  "}]}]}`,
		"timeout":        `{"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 601}]}]}`,
		"matcher regexp": `{"PreToolUse": [{"matcher": "run_(", "hooks": [{"type": "command", "command": "x"}]}]}`,
		"not an object":  `[1]`,
		"not a list":     `{"Stop": {"hooks": []}}`,
	}
	for name, s := range bad {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("%s: Parse(%s) = nil error", name, s)
		}
	}
	// The settings-file shape with a "hooks" key is accepted too.
	c := mustParse(t, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}, "other": 1}`)
	if c.Count() != 1 {
		t.Fatalf("Count = %d, want 1", c.Count())
	}
}

func TestMatcher(t *testing.T) {
	c := mustParse(t, `{"PreToolUse": [
		{"matcher": "run_command|replace_text", "hooks": [{"type": "command", "command": "a"}]},
		{"matcher": "", "hooks": [{"type": "command", "command": "b"}]},
		{"matcher": "*", "hooks": [{"type": "command", "command": "c"}]},
		{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "d"}]}]}`)
	cases := map[string]string{
		"run_command":      "abc",
		"replace_text":     "abc",
		"run_command_x":    "bc", // the whole name must match
		"read_file":        "bc",
		"mcp__git__status": "bcd",
	}
	for name, want := range cases {
		got := ""
		for _, g := range c[PreToolUse] {
			if g.matches(PreToolUse, name) {
				got += g.Hooks[0].Command
			}
		}
		if got != want {
			t.Errorf("%s matched %q, want %q", name, got, want)
		}
	}
}

func TestAllowGetsInputOnStdin(t *testing.T) {
	root := t.TempDir()
	r := runner(t, root, `{"PreToolUse": [{"matcher": "run_command", "hooks": [{"type": "command", "command": "cat > got.json; echo note >&2"}]}]}`)
	out := r.Run(context.Background(), Input{TaskID: "task-1", Event: PreToolUse, ToolName: "run_command", ToolInput: json.RawMessage(`{"command":"ls"}`)})
	if out.Blocked || len(out.Reports) != 1 {
		t.Fatalf("outcome = %+v", out)
	}
	rep := out.Reports[0]
	if rep.ExitCode != 0 || rep.Blocked || rep.Output != "note\n" || rep.Matcher != "run_command" || rep.Event != PreToolUse {
		t.Fatalf("report = %+v", rep)
	}
	raw, err := os.ReadFile(filepath.Join(root, "got.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("stdin %q: %v", raw, err)
	}
	if got["hook_event_name"] != PreToolUse || got["tool_name"] != "run_command" || got["session_id"] != "task-1" ||
		got["cwd"] != root || got["tool_input"].(map[string]any)["command"] != "ls" {
		t.Fatalf("stdin = %v", got)
	}
	// A tool the matcher does not match runs nothing.
	if out := r.Run(context.Background(), Input{Event: PreToolUse, ToolName: "read_file"}); len(out.Reports) != 0 {
		t.Fatalf("read_file ran hooks: %+v", out)
	}
}

func TestBlockExit2(t *testing.T) {
	for _, ev := range []string{PreToolUse, PostToolUse, UserPromptSubmit, Stop} {
		r := runner(t, t.TempDir(), `{"`+ev+`": [{"hooks": [{"type": "command", "command": "echo out; echo 'no rm -rf here' >&2; exit 2"}]}]}`)
		out := r.Run(context.Background(), Input{Event: ev, ToolName: "run_command"})
		if !out.Blocked || out.Feedback != "no rm -rf here" || out.Reports[0].ExitCode != 2 || !out.Reports[0].Blocked {
			t.Errorf("%s: outcome = %+v", ev, out)
		}
	}
	// SessionStart cannot block.
	r := runner(t, t.TempDir(), `{"SessionStart": [{"hooks": [{"type": "command", "command": "exit 2"}]}]}`)
	if out := r.Run(context.Background(), Input{Event: SessionStart, Source: "startup"}); out.Blocked || len(out.Reports) != 1 {
		t.Errorf("SessionStart: %+v", out)
	}
}

func TestFailureReportedNotBlocking(t *testing.T) {
	for _, ev := range []string{PreToolUse, PostToolUse, Stop} {
		r := runner(t, t.TempDir(), `{"`+ev+`": [{"hooks": [{"type": "command", "command": "echo broken >&2; exit 1"}]}]}`)
		out := r.Run(context.Background(), Input{Event: ev, ToolName: "x"})
		if out.Blocked || out.Reports[0].ExitCode != 1 || out.Reports[0].Output != "broken\n" {
			t.Errorf("%s: outcome = %+v", ev, out)
		}
	}
}

func TestMissingCommand(t *testing.T) {
	cfg := `{"PreToolUse": [{"hooks": [{"type": "command", "command": "/no/such/hook-script"}]}],
	         "PostToolUse": [{"hooks": [{"type": "command", "command": "/no/such/hook-script"}]}]}`
	r := runner(t, t.TempDir(), cfg)
	pre := r.Run(context.Background(), Input{Event: PreToolUse, ToolName: "x"})
	if !pre.Blocked || pre.Reports[0].ExitCode != 127 || !strings.Contains(pre.Feedback, "hook-script") {
		t.Errorf("PreToolUse with a missing command must block: %+v", pre)
	}
	post := r.Run(context.Background(), Input{Event: PostToolUse, ToolName: "x"})
	if post.Blocked {
		t.Errorf("PostToolUse with a missing command must not block: %+v", post)
	}
	// A command that cannot start at all (Exec fails) blocks PreToolUse.
	failing := NewRunner(Options{User: mustParse(t, cfg), Root: t.TempDir(),
		Exec: func(context.Context, sandbox.Spec) (sandbox.Result, error) {
			return sandbox.Result{}, &sandbox.UnavailableError{Reason: "test"}
		}})
	out := failing.Run(context.Background(), Input{Event: PreToolUse, ToolName: "x"})
	if !out.Blocked || out.Reports[0].ExitCode != -1 || !strings.Contains(out.Feedback, "did not run") {
		t.Errorf("unstartable PreToolUse hook: %+v", out)
	}
	if out := failing.Run(context.Background(), Input{Event: PostToolUse, ToolName: "x"}); out.Blocked {
		t.Errorf("unstartable PostToolUse hook blocked: %+v", out)
	}
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

func TestTimeoutBlocksAndKillsTree(t *testing.T) {
	root := t.TempDir()
	// A child in its own session (setsid) and a grandchild: none may survive.
	cmd := `setsid sleep 300 & echo $! > child.pid; (sleep 300 & echo $! > grand.pid; wait) & sleep 300`
	r := runner(t, root, `{"PreToolUse": [{"hooks": [{"type": "command", "command": "`+strings.ReplaceAll(cmd, `"`, `\"`)+`", "timeout": 1}]}],
		"PostToolUse": [{"hooks": [{"type": "command", "command": "sleep 300", "timeout": 0.5}]}]}`)
	start := time.Now()
	out := r.Run(context.Background(), Input{Event: PreToolUse, ToolName: "x"})
	if !out.Blocked || !strings.Contains(out.Feedback, "timed out") || out.Reports[0].ExitCode != -1 {
		t.Fatalf("outcome = %+v", out)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("took %s", d)
	}
	for _, f := range []string{"child.pid", "grand.pid"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		deadline := time.Now().Add(60 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("%s %d survived the timeout", f, pid)
		}
	}
	// A timeout elsewhere is reported, not blocking.
	if out := r.Run(context.Background(), Input{Event: PostToolUse, ToolName: "x"}); out.Blocked || !strings.Contains(out.Reports[0].Output, "timed out") {
		t.Errorf("PostToolUse timeout: %+v", out)
	}
}

func TestUserThenWorkspaceAndContext(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".task-x"), 0o755)
	os.WriteFile(filepath.Join(root, WorkspaceFile), []byte(`{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from-workspace"}]}]}`), 0o644)
	ws, err := LoadWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{User: mustParse(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from-user"}]}]}`), Workspace: ws, Root: root})
	out := r.Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "hi"})
	if out.Blocked || len(out.Reports) != 2 || out.Context != "from-user\n\nfrom-workspace" {
		t.Fatalf("outcome = %+v", out)
	}
	if empty, err := LoadWorkspace(t.TempDir()); err != nil || empty.Count() != 0 {
		t.Fatalf("missing file: %v %v", empty, err)
	}
	var nilRunner *Runner
	if out := nilRunner.Run(context.Background(), Input{Event: Stop}); out.Blocked || nilRunner.Has(Stop) {
		t.Fatal("nil runner ran hooks")
	}
}

func TestSecretsNotInEnvironment(t *testing.T) {
	root := t.TempDir()
	r := NewRunner(Options{User: mustParse(t, `{"Stop": [{"hooks": [{"type": "command", "command": "env > env.txt"}]}]}`),
		Root: root, Env: []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-1", "SOME=sk-secret-value"}, Secrets: []string{"sk-secret-value"}})
	r.Run(context.Background(), Input{Event: Stop})
	b, _ := os.ReadFile(filepath.Join(root, "env.txt"))
	if strings.Contains(string(b), "sk-1") || strings.Contains(string(b), "sk-secret") || !strings.Contains(string(b), "CLAUDE_PROJECT_DIR="+root) {
		t.Fatalf("env = %s", b)
	}
}

func TestSandboxedHookCannotWriteOutsideRoot(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skipf("no kernel sandbox here: %v", err)
	}
	root, outside := t.TempDir(), t.TempDir()
	r := NewRunner(Options{User: mustParse(t, `{"Stop": [{"hooks": [{"type": "command", "command": "echo in > in.txt; echo out > `+outside+`/out.txt"}]}]}`),
		Root: root, Sandboxed: true})
	out := r.Run(context.Background(), Input{Event: Stop})
	if _, err := os.Stat(filepath.Join(root, "in.txt")); err != nil {
		t.Errorf("the hook could not write the root: %+v", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Errorf("a sandboxed hook wrote outside the root")
	}
}
