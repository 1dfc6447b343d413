package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/sandbox"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Limits of run_command.
const (
	cmdDefaultTimeout = 120_000 * time.Millisecond
	cmdMinTimeout     = 1_000 * time.Millisecond
	cmdMaxTimeout     = 600_000 * time.Millisecond
	cmdOutputCap      = sandbox.DefaultOutputCap // bytes of output kept: head + tail
)

type runCommand struct {
	secrets   []string // key values: a variable holding one is dropped
	secretEnv []string // more variable names dropped (Options.SecretEnv)
	log       *slog.Logger
}

func newRunCommand(o *Options) *runCommand {
	t := &runCommand{log: o.Logger, secretEnv: o.SecretEnv}
	for _, s := range o.Secrets {
		if s != "" {
			t.secrets = append(t.secrets, s)
		}
	}
	return t
}

// liveSecrets is the tool's own key values plus the ones the runtime holds
// now (env.Secrets): a key first sent in a ProviderConfig after the
// registry was built is removed from the environment too.
func (t *runCommand) liveSecrets(env *tool.Env) []string {
	out := append([]string(nil), t.secrets...)
	if env.Secrets != nil {
		for _, s := range env.Secrets() {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

type runCommandInput struct {
	Command    string `json:"command" jsonschema:"The shell command line, run with bash -c."`
	Cwd        string `json:"cwd,omitempty" jsonschema:"Working folder, relative to the workspace root or absolute inside it. Default: the root."`
	TimeoutMs  *int64 `json:"timeoutMs,omitempty" jsonschema:"Time limit in milliseconds. Default 120000."`
	Background bool   `json:"background,omitempty" jsonschema:"Return at once and report the output when the command ends."`
}

// runCommandData is the structured result of run_command. ExitCode is -1
// when the command was killed by a signal (timeout or cancel included).
// Background is set on the final result of a background command.
type runCommandData struct {
	Background bool   `json:"background,omitempty"`
	ExitCode   int    `json:"exitCode"`
	Output     string `json:"output"`
	TimedOut   bool   `json:"timedOut"`
	Cancelled  bool   `json:"cancelled,omitempty"`
	DurationMs int64  `json:"durationMs"`
	Truncated  bool   `json:"truncated"`
}

// runCommandStarted is the immediate result of a background command
// (protocol.md agent/event, toolFinished): { background: true, command,
// message }.
type runCommandStarted struct {
	Background bool   `json:"background"`
	Command    string `json:"command"`
	Message    string `json:"message"`
}

const runCommandDescription = `
Run a shell command with bash -c in the workspace (cwd is a folder inside the workspace, default the root) and return its combined stdout and stderr with the exit code. Stdin is empty: commands must not wait for input.
The command is stopped after timeoutMs (default {{.Default}}, from {{.Min}} to {{.Max}}); it and every process it started are then killed. Output over {{.Cap}} bytes keeps its beginning and its end. A non-zero exit code is reported, not treated as a failure of the tool.
With background: true the call returns at once and the output arrives when the command ends (for servers and watchers); the time limit still applies.
Use it to build, test and inspect (git status, go test, npm test). Do not use it to edit files: use write_file and replace_text. The runtime's API keys are not in the command's environment. In the sandbox (the default) the command may write only inside the workspace, its temp folder (TMPDIR) and the build caches, and has no network.`

var runCommandSchema = tool.InputSchema[runCommandInput](tool.Constraints{
	"command":   {MinLength: tool.N(1)},
	"timeoutMs": {Min: tool.N(1000.0), Max: tool.N(600000.0)},
})

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

// Run runs the command with bash -c through internal/sandbox: confined by
// the kernel when env.Sandbox is true (addendum §6; a kernel that cannot
// sandbox gives ErrSandboxUnavailable naming the reason, never an unconfined
// run), otherwise unconfined. Either way the environment has no key the
// runtime holds, and a timeout, a cancel or the end of the shell ends the
// whole process tree, descendants that called setsid included (addendum
// §11). With background: true it returns at once with Result.Background
// set; the job's Cancel ends the tree.
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
	timeout := cmdDefaultTimeout
	if in.TimeoutMs != nil {
		timeout = min(max(time.Duration(*in.TimeoutMs)*time.Millisecond, cmdMinTimeout), cmdMaxTimeout)
	}
	if err := needRoot(env); err != nil {
		return tool.Result{}, err
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

	secrets := t.liveSecrets(env)
	spec := sandbox.Spec{
		Command:      in.Command,
		Dir:          cwd,
		Env:          sandbox.CleanEnv(os.Environ(), secrets, t.secretEnv),
		Secrets:      secrets,
		WritableDirs: []string{env.Root},
		Timeout:      timeout,
		OutputCap:    cmdOutputCap,
		Sandboxed:    env.Sandbox,
	}
	if fn := tool.Output(ctx); fn != nil && !in.Background {
		spec.OnOutput = fn // live output (toolOutput events); the result is unchanged
	}
	runCtx := ctx
	if in.Background {
		// The job outlives this call: only its Cancel, its timeout and
		// sandbox.KillAll end it.
		runCtx = context.WithoutCancel(ctx)
	}
	p, err := sandbox.Start(runCtx, spec)
	var ue *sandbox.UnavailableError
	switch {
	case errors.As(err, &ue):
		return tool.Result{}, tool.Errorf(tool.ErrSandboxUnavailable,
			"%s; run_command needs `sandbox: false` in initialize to run commands unconfined", ue.Error())
	case errors.Is(err, sandbox.ErrClosed):
		return tool.Result{}, tool.Errorf(tool.ErrCancelled, "the runtime is shutting down")
	case err != nil:
		return tool.Result{}, tool.Errorf(tool.ErrIO, "cannot start the command: %v", err)
	}

	if !in.Background {
		return t.finish(p.Wait(), timeout, false), nil
	}
	done := make(chan tool.Result, 1)
	go func() {
		done <- t.finish(p.Wait(), timeout, true)
		close(done)
	}()
	msg := fmt.Sprintf("started in the background; its output arrives when it ends (time limit %d ms)", timeout.Milliseconds())
	return tool.Result{
		Content:    "Command " + msg + ".",
		Data:       runCommandStarted{Background: true, Command: in.Command, Message: msg},
		Background: &tool.BackgroundJob{Done: done, Cancel: p.Stop},
	}, nil
}

// finish turns a sandbox result into the tool result: the output, then a
// last line with the exit code or why the command was stopped.
func (t *runCommand) finish(r sandbox.Result, timeout time.Duration, background bool) tool.Result {
	d := runCommandData{
		Background: background,
		ExitCode:   r.ExitCode,
		Output:     r.Output,
		TimedOut:   r.TimedOut,
		Cancelled:  r.Cancelled && !r.TimedOut,
		DurationMs: r.Duration.Milliseconds(),
		Truncated:  r.Truncated,
	}
	t.log.Debug("run_command finished", "exitCode", d.ExitCode, "timedOut", d.TimedOut,
		"cancelled", d.Cancelled, "durationMs", d.DurationMs, "outputBytes", len(d.Output),
		"confinement", r.Confinement, "background", background)

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
	return tool.Result{Content: b.String(), Data: d}
}
