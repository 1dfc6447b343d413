package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Limits of run_command.
const (
	cmdDefaultTimeout = 120_000 * time.Millisecond
	cmdMinTimeout     = 1_000 * time.Millisecond
	cmdMaxTimeout     = 600_000 * time.Millisecond
	cmdOutputCap      = 30_000          // bytes of output kept: head + tail
	cmdKillGrace      = 2 * time.Second // SIGTERM → SIGKILL
	cmdDrainWait      = 2 * time.Second // wait for the output pipe after exit
)

// providerKeyEnv are the environment variables always removed from a
// command's environment.
var providerKeyEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}

type runCommand struct {
	secrets   []string
	secretEnv map[string]bool
	log       *slog.Logger
}

func newRunCommand(o *Options) *runCommand {
	t := &runCommand{log: o.Logger, secretEnv: map[string]bool{}}
	for _, s := range o.Secrets {
		if s != "" {
			t.secrets = append(t.secrets, s)
		}
	}
	for _, k := range append(append([]string(nil), providerKeyEnv...), o.SecretEnv...) {
		t.secretEnv[k] = true
	}
	return t
}

type runCommandInput struct {
	Command    string `json:"command"`
	Cwd        string `json:"cwd"`
	TimeoutMs  *int64 `json:"timeoutMs"`
	Background bool   `json:"background"`
}

// runCommandData is the structured result of run_command. ExitCode is -1
// when the command was killed by a signal (timeout or cancel included).
type runCommandData struct {
	ExitCode   int    `json:"exitCode"`
	Output     string `json:"output"`
	TimedOut   bool   `json:"timedOut"`
	Cancelled  bool   `json:"cancelled,omitempty"`
	DurationMs int64  `json:"durationMs"`
	Truncated  bool   `json:"truncated"`
}

const runCommandDescription = `
Run a shell command with bash -c in the workspace (cwd is a folder inside the workspace, default the root) and return its combined stdout and stderr with the exit code. Stdin is empty: commands must not wait for input.
The command is stopped after timeoutMs (default {{.Default}}, from {{.Min}} to {{.Max}}); it and every process it started are then killed. Output over {{.Cap}} bytes keeps its beginning and its end. A non-zero exit code is reported, not treated as a failure of the tool.
Use it to build, test and inspect (git status, go test, npm test). Do not use it to edit files: use write_file and replace_text. The runtime's API keys are not in the command's environment.`

var runCommandSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "The shell command line, run with bash -c."},
    "cwd": {"type": "string", "description": "Working folder, relative to the workspace root or absolute inside it. Default: the root."},
    "timeoutMs": {"type": "integer", "minimum": 1000, "maximum": 600000, "description": "Time limit in milliseconds. Default 120000."},
    "background": {"type": "boolean", "description": "Run in the background and report the output when it ends. Not supported yet."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)

func (*runCommand) Spec() tool.Spec {
	return tool.Spec{
		Name: "run_command",
		Description: renderDescription(runCommandDescription, map[string]int64{
			"Default": cmdDefaultTimeout.Milliseconds(), "Min": cmdMinTimeout.Milliseconds(),
			"Max": cmdMaxTimeout.Milliseconds(), "Cap": cmdOutputCap,
		}),
		InputSchema: runCommandSchema,
		Permission:  tool.ClassCommand,
	}
}

// Run runs the command unconfined when env.Sandbox is false, in its own
// process group, and kills the whole group on timeout, cancel, or once the
// shell exits (nothing it started outlives it). With env.Sandbox true it
// fails with ErrSandboxUnavailable: it never runs unconfined silently
// (addendum §6). Descendants that leave the process group (setsid) are not
// reaped yet: that needs a subreaper or a PID namespace (sandbox issue).
func (t *runCommand) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in runCommandInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "command is empty")
	}
	if strings.IndexByte(in.Command, 0) >= 0 {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "command contains a NUL byte")
	}
	if in.Background {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "background commands are not supported yet; run the command without background")
	}
	timeout := cmdDefaultTimeout
	if in.TimeoutMs != nil {
		timeout = min(max(time.Duration(*in.TimeoutMs)*time.Millisecond, cmdMinTimeout), cmdMaxTimeout)
	}
	if err := needRoot(env); err != nil {
		return tool.Result{}, err
	}
	if env.Sandbox {
		return tool.Result{}, tool.Errorf(tool.ErrSandboxUnavailable,
			"the kernel sandbox is not available in this build; run_command needs `sandbox: false` in initialize to run commands unconfined")
	}
	cwd := env.Root
	if in.Cwd != "" {
		p, err := resolvePath(env, in.Cwd)
		if err != nil {
			return tool.Result{}, err
		}
		fi, err := os.Stat(p.Abs)
		if err != nil {
			return tool.Result{}, fsError(p.Rel, err)
		}
		if !fi.IsDir() {
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "cwd %s is not a folder", p.Rel)
		}
		cwd = p.Abs
	}

	d, err := t.exec(ctx, in.Command, cwd, timeout)
	if err != nil {
		return tool.Result{}, err
	}
	t.log.Debug("run_command finished", "exitCode", d.ExitCode, "timedOut", d.TimedOut,
		"cancelled", d.Cancelled, "durationMs", d.DurationMs, "outputBytes", len(d.Output))

	var b strings.Builder
	b.WriteString(d.Output)
	if d.Output != "" && !strings.HasSuffix(d.Output, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case d.TimedOut:
		fmt.Fprintf(&b, "timed out after %d ms", timeout.Milliseconds())
	case d.Cancelled:
		b.WriteString("killed: cancelled")
	case d.ExitCode < 0:
		b.WriteString("killed by a signal")
	default:
		fmt.Fprintf(&b, "exit code %d", d.ExitCode)
	}
	return tool.Result{Content: b.String(), Data: d}, nil
}

// shell returns /bin/bash, or /bin/sh where bash is missing.
func shell() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// environ is the runtime's environment without provider keys: the names of
// providerKeyEnv and Options.SecretEnv, and any variable whose value equals a
// secret of Options.Secrets.
func (t *runCommand) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if t.secretEnv[k] {
			continue
		}
		secret := false
		for _, s := range t.secrets {
			if v == s {
				secret = true
				break
			}
		}
		if !secret {
			out = append(out, kv)
		}
	}
	return out
}

// exec runs command and collects its output. A runtime error (the shell
// could not start) is returned as a tool io failure.
func (t *runCommand) exec(ctx context.Context, command, cwd string, timeout time.Duration) (runCommandData, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return runCommandData{}, fmt.Errorf("run_command: pipe: %w", err)
	}
	cmd := exec.Command(shell(), "-c", command)
	cmd.Dir = cwd
	cmd.Env = t.environ()
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return runCommandData{}, tool.Errorf(tool.ErrIO, "cannot start the shell: %v", err)
	}
	pw.Close() // the children hold the write end now
	pgid := cmd.Process.Pid

	out := newHeadTail(cmdOutputCap)
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut, cancelled bool
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer.C:
		timedOut = true
		waitErr = killGroup(pgid, exited)
	case <-ctx.Done():
		cancelled = true
		waitErr = killGroup(pgid, exited)
	}
	// The shell is gone; end what it left in its group (background jobs)
	// so nothing outlives the call and the pipe closes.
	syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-copied:
	case <-time.After(cmdDrainWait):
		// A descendant outside the group still holds the pipe.
		pr.Close()
		<-copied
	}
	pr.Close()

	d := runCommandData{
		ExitCode:   -1,
		TimedOut:   timedOut,
		Cancelled:  cancelled,
		DurationMs: time.Since(start).Milliseconds(),
	}
	d.Output, d.Truncated = out.String()
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		d.ExitCode = 0
	case errors.As(waitErr, &ee):
		d.ExitCode = ee.ExitCode() // -1 when killed by a signal
	default:
		return runCommandData{}, fmt.Errorf("run_command: wait: %w", waitErr)
	}
	return d, nil
}

// killGroup sends SIGTERM to the process group, then SIGKILL after
// cmdKillGrace, and returns the shell's wait result.
func killGroup(pgid int, exited <-chan error) error {
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(cmdKillGrace):
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	return <-exited
}

// headTail is an io.Writer that keeps the first and the last cap/2 bytes of
// what it is given and counts the rest, so output never grows memory without
// bound.
type headTail struct {
	mu      sync.Mutex
	half    int
	head    []byte
	tail    []byte // ring buffer of the last half bytes
	tailPos int
	total   int64
}

func newHeadTail(cap int) *headTail {
	return &headTail{half: cap / 2}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.total += int64(n)
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(h.tail) < h.half {
			k := min(h.half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= h.half {
			copy(h.tail, p[len(p)-h.half:])
			h.tailPos = 0
			break
		}
		k := copy(h.tail[h.tailPos:], p)
		p = p[k:]
		h.tailPos = (h.tailPos + k) % h.half
	}
	return n, nil
}

// String returns the kept output, with "[... N bytes omitted ...]" between
// head and tail when bytes were dropped, and whether any were.
func (h *headTail) String() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := append(append([]byte(nil), h.tail[h.tailPos:]...), h.tail[:h.tailPos]...)
	omitted := h.total - int64(len(h.head)) - int64(len(tail))
	if omitted <= 0 {
		return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD"), false
	}
	return strings.ToValidUTF8(string(h.head), "") +
		fmt.Sprintf("\n[... %d bytes omitted ...]\n", omitted) +
		strings.ToValidUTF8(string(tail), ""), true
}
