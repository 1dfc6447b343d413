package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/sandbox"
	"github.com/task-x/task-x-runtime/internal/tool"
)

func cmdData(t *testing.T, res tool.Result) runCommandData {
	t.Helper()
	return res.Data.(runCommandData)
}

func TestRunCommandExitCodes(t *testing.T) {
	env := workspace(t, map[string]string{"sub/f.txt": "x"})
	res := runOK(t, env, "run_command", map[string]any{"command": "echo out; echo err >&2; pwd"})
	d := cmdData(t, res)
	if d.ExitCode != 0 || d.TimedOut || d.Truncated {
		t.Fatalf("data %+v", d)
	}
	if d.Output != "out\nerr\n"+env.Root+"\n" || !strings.HasSuffix(res.Content, "exit code 0") {
		t.Fatalf("output %q content %q", d.Output, res.Content)
	}
	res = runOK(t, env, "run_command", map[string]any{"command": "exit 3"})
	if d := cmdData(t, res); d.ExitCode != 3 || !strings.Contains(res.Content, "exit code 3") {
		t.Fatalf("exit 3: %+v %q", d, res.Content)
	}
	res = runOK(t, env, "run_command", map[string]any{"command": "pwd; cat f.txt", "cwd": "sub"})
	if d := cmdData(t, res); d.Output != filepath.Join(env.Root, "sub")+"\nx" {
		t.Fatalf("cwd: %q", d.Output)
	}
	// Stdin is empty: cat returns at once.
	res = runOK(t, env, "run_command", map[string]any{"command": "cat; echo done", "timeoutMs": 5000})
	if d := cmdData(t, res); d.Output != "done\n" || d.TimedOut {
		t.Fatalf("stdin: %+v", d)
	}

	_, err := run(t, env, "run_command", map[string]any{"command": "  "})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "run_command", map[string]any{"command": "true", "cwd": "sub/f.txt"})
	wantKind(t, err, tool.ErrInvalidInput, "not a folder")
	_, err = run(t, env, "run_command", map[string]any{"command": "true", "cwd": "nope"})
	wantKind(t, err, tool.ErrNotFound)
	_, err = run(t, env, "run_command", map[string]any{"command": "true", "cwd": "/"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
}

// TestRunCommandSandboxed: with env.Sandbox the command runs confined: an
// in-root write works, a write outside the root (directly or through a
// symlink in the root) fails, and so does a TCP connection.
func TestRunCommandSandboxed(t *testing.T) {
	env := workspace(t, nil)
	env.Sandbox = true
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(env.Root, "out")); err != nil {
		t.Fatal(err)
	}
	cmd := `echo in > in.txt; echo x > out/f; echo x > ` + outside + `/g; exec 3<>/dev/tcp/127.0.0.1/9 && echo reached`
	res, err := run(t, env, "run_command", map[string]any{"command": cmd})
	if err := sandbox.Available(); err != nil {
		// A kernel that cannot sandbox: a refusal naming the reason, and
		// nothing ran.
		wantKind(t, err, tool.ErrSandboxUnavailable, "sandbox: false", err.Error())
		if _, err := os.Stat(filepath.Join(env.Root, "in.txt")); err == nil {
			t.Fatal("the command ran unconfined")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	d := cmdData(t, res)
	if readDisk(t, env, "in.txt") != "in\n" || strings.Contains(d.Output, "reached") {
		t.Fatalf("output %q", d.Output)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the root: %v", ents)
	}
	if strings.Count(d.Output, "Permission denied") < 3 {
		t.Fatalf("expected three denials: %q", d.Output)
	}
}

// TestRunCommandBackground: the call returns at once with { background,
// command, message }, and the job delivers the output and the exit code
// when the command ends.
func TestRunCommandBackground(t *testing.T) {
	env := workspace(t, nil)
	// The command cannot finish before the test creates "go", which it
	// does only after Run returned: Run returning at all proves it did not
	// wait for the command (no wall-clock bound, which load would break).
	cmd := "while [ ! -f go ]; do sleep 0.05; done; echo done; exit 4"
	res := runOK(t, env, "run_command", map[string]any{"command": cmd, "background": true})
	if res.Background == nil {
		t.Fatalf("no background job: %+v", res)
	}
	st, ok := res.Data.(runCommandStarted)
	if !ok || !st.Background || st.Command != cmd || st.Message == "" {
		t.Fatalf("start data %+v", res.Data)
	}
	if err := os.WriteFile(filepath.Join(env.Root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var final tool.Result
	select {
	case final = <-res.Background.Done:
	case <-time.After(60 * time.Second):
		t.Fatal("no final result")
	}
	if _, open := <-res.Background.Done; open {
		t.Fatal("Done not closed after the result")
	}
	d := cmdData(t, final)
	if !d.Background || d.ExitCode != 4 || d.Output != "done\n" || !strings.HasSuffix(final.Content, "exit code 4") {
		t.Fatalf("final %+v %q", d, final.Content)
	}
	res.Background.Cancel() // after the end: harmless
}

// TestRunCommandBackgroundCancel: Cancel ends the whole tree, setsid
// descendants included, even though the call's ctx is long gone.
func TestRunCommandBackgroundCancel(t *testing.T) {
	env := workspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	res := runCtxOK(t, ctx, env, "run_command", map[string]any{
		"command": "setsid sleep 1000 & echo $! > pids; sleep 1000 & echo $! >> pids; wait", "background": true})
	cancel() // the call is over; the job goes on
	var ps []int
	deadline := time.Now().Add(60 * time.Second)
	for len(ps) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no pids")
		}
		time.Sleep(50 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(env.Root, "pids"))
		ps = nil
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				ps = append(ps, n)
			}
		}
	}
	for _, p := range ps {
		if !alive(p) {
			t.Fatalf("%d ended with the call's ctx", p)
		}
	}
	res.Background.Cancel()
	res.Background.Cancel()
	select {
	case final := <-res.Background.Done:
		if d := cmdData(t, final); !d.Cancelled || !strings.HasSuffix(final.Content, "killed: cancelled") {
			t.Fatalf("final %+v", d)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("cancel did not end the job")
	}
	waitGone(t, ps)
}

// TestRunCommandSetsidSurvivesNothing: a descendant that left the process
// group is ended once the shell exits (unsandboxed: the helper is its
// subreaper).
func TestRunCommandSetsidSurvivesNothing(t *testing.T) {
	env := workspace(t, nil)
	res := runOK(t, env, "run_command", map[string]any{"command": "setsid sleep 1000 & echo $!; setsid -f sleep 1000; echo $$"})
	d := cmdData(t, res)
	if d.ExitCode != 0 || d.DurationMs > 5000 {
		t.Fatalf("%+v", d)
	}
	waitGone(t, pids(t, d.Output))
}

func TestRunCommandOutputCap(t *testing.T) {
	env := workspace(t, nil)
	// 100 000 bytes: "HEAD", filler, "TAIL".
	res := runOK(t, env, "run_command", map[string]any{
		"command": `printf HEAD; head -c 99992 /dev/zero | tr '\0' x; printf TAIL`})
	d := cmdData(t, res)
	if !d.Truncated || !strings.HasPrefix(d.Output, "HEAD") || !strings.HasSuffix(d.Output, "TAIL") {
		t.Fatalf("head/tail lost: %q…%q", d.Output[:10], d.Output[len(d.Output)-10:])
	}
	if !strings.Contains(d.Output, "[... 70000 bytes omitted ...]") || len(d.Output) > cmdOutputCap+100 {
		t.Fatalf("marker or size: %d bytes", len(d.Output))
	}
}

// alive reports whether pid is a live process (a zombie counts as gone).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func pids(t *testing.T, out string) []int {
	t.Helper()
	var ps []int
	for _, f := range strings.Fields(out) {
		if n, err := strconv.Atoi(f); err == nil {
			ps = append(ps, n)
		}
	}
	if len(ps) < 2 {
		t.Fatalf("no child pids in %q", out)
	}
	return ps
}

func waitGone(t *testing.T, ps []int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range ps {
		for alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("child %d still running", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

const spawnChildren = `sleep 100 & echo $!; sleep 100 & echo $!; wait`

func TestRunCommandTimeoutKillsChildren(t *testing.T) {
	env := workspace(t, nil)
	start := time.Now()
	res := runOK(t, env, "run_command", map[string]any{"command": spawnChildren, "timeoutMs": 1000})
	d := cmdData(t, res)
	if !d.TimedOut || !strings.Contains(res.Content, "timed out after 1000 ms") {
		t.Fatalf("timeout: %+v %q", d, res.Content)
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Fatalf("took %v", el)
	}
	waitGone(t, pids(t, d.Output))
}

func TestRunCommandCancel(t *testing.T) {
	env := workspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res := runCtxOK(t, ctx, env, "run_command", map[string]any{"command": spawnChildren})
	d := cmdData(t, res)
	if !d.Cancelled || d.TimedOut || !strings.Contains(res.Content, "killed: cancelled") {
		t.Fatalf("cancel: %+v %q", d, res.Content)
	}
	waitGone(t, pids(t, d.Output))
}

// TestRunCommandLeftoverChildren: background jobs the shell leaves behind
// are ended when it exits.
func TestRunCommandLeftoverChildren(t *testing.T) {
	env := workspace(t, nil)
	res := runOK(t, env, "run_command", map[string]any{"command": "sleep 100 & echo $!; sleep 100 & echo $!; exit 0"})
	d := cmdData(t, res)
	if d.ExitCode != 0 || d.TimedOut || d.DurationMs > 5000 {
		t.Fatalf("leftover: %+v", d)
	}
	waitGone(t, pids(t, d.Output))
}

func TestRunCommandTimeoutClamp(t *testing.T) {
	env := workspace(t, nil)
	// Under the minimum is raised to 1000 ms: a command that would run 30 s
	// times out, and not before 1000 ms (a bound load cannot break; a 300 ms
	// command finishing in time could take over a second at load 10).
	res := runOK(t, env, "run_command", map[string]any{"command": "sleep 30", "timeoutMs": 1})
	if d := cmdData(t, res); !d.TimedOut || d.DurationMs < 1000 {
		t.Fatalf("clamp: %+v", d)
	}
}

func TestRunCommandEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("OPENAI_API_KEY", "sk-openai-test")
	t.Setenv("OPENROUTER_API_KEY", "sk-or-test")
	t.Setenv("MISTRAL_API_KEY", "mistral-test")
	t.Setenv("MY_TOKEN_COPY", "held-secret-value")
	t.Setenv("TASK_X_HARMLESS", "visible")
	env := workspace(t, nil)
	tl := New(&Options{Secrets: []string{"held-secret-value"}, SecretEnv: []string{"MISTRAL_API_KEY"}})
	var rc tool.Tool
	for _, x := range tl {
		if x.Spec().Name == "run_command" {
			rc = x
		}
	}
	res, err := rc.Run(context.Background(), env, []byte(`{"command":"env"}`))
	if err != nil {
		t.Fatal(err)
	}
	out := cmdData(t, res).Output
	for _, leak := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "MISTRAL_API_KEY",
		"sk-ant-test", "sk-openai-test", "sk-or-test", "mistral-test", "held-secret-value"} {
		if strings.Contains(out, leak) {
			t.Errorf("child environment holds %s", leak)
		}
	}
	if !strings.Contains(out, "TASK_X_HARMLESS=visible") {
		t.Error("ordinary variables dropped")
	}
}

// TestRunCommandLiveSecrets: a key the runtime first learns after the
// registry was built (a later ProviderConfig, env.Secrets) never reaches a
// command's environment. The command prints the variable reversed, which
// output redaction cannot recognise, so only the environment stripping can
// keep it out.
func TestRunCommandLiveSecrets(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	reversed := func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	}
	t.Setenv("TASK_X_TEST_LATE_SETTING", key)
	env := workspace(t, map[string]string{"f.txt": "x"})
	cmd := map[string]any{"command": "printf '%s' \"$TASK_X_TEST_LATE_SETTING\" | rev"}

	// Without the live set the variable is there (so the test can fail).
	res := runOK(t, env, "run_command", cmd)
	if !strings.Contains(cmdData(t, res).Output, reversed(key)) {
		t.Fatalf("control run: the variable is not in the environment: %q", cmdData(t, res).Output)
	}
	var live []string
	env.Secrets = func() []string { return live }
	live = []string{key} // learnt after the tool was built
	res = runOK(t, env, "run_command", cmd)
	if out := cmdData(t, res).Output; strings.Contains(out, reversed(key)) || strings.Contains(out, key) {
		t.Fatalf("a live key reached the command's environment: %q", out)
	}
}
