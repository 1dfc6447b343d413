package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// validate runs the task's checks at the model's final answer (addendum
// §12) and records them in the summary. It reports true when a check failed
// and a fix round remains: the failures then went to the model as a user
// message and the task goes on. Tasks in ask or plan mode, readOnly tasks,
// tasks that changed no file and `enabled: false` run no checks.
func (r *run) validate(ctx context.Context) bool {
	if r.p.ChatMode != policy.ChatAgent && r.p.ChatMode != "team" {
		return false
	}
	if r.p.Policy.Mode == policy.ModeReadOnly || len(r.sum.ChangedFiles) == 0 || !r.p.Validation.On() {
		return false
	}
	if r.checks == nil {
		r.checks = validate.NewSession(r.p.Validation, r.checkGate, r.checkExec, validate.Hooks{
			Started: func(name, command string) {
				r.checkName = name
				r.emit(protocol.ValidationStartedEvent{Name: name, Command: command})
			},
			Finished: func(v validate.Result) {
				r.emit(protocol.ValidationFinishedEvent{Name: v.Name, Command: v.Command, Passed: v.Passed,
					ExitCode: v.ExitCode, TimedOut: v.TimedOut, DurationMs: v.DurationMs})
			},
			Redact: r.opts.Redact,
		})
	}
	out := r.checks.Run(ctx, r.env.Root)
	r.sum.Validations = out.Results
	r.sum.SkippedChecks = out.Skipped
	r.sum.ValidationRan = r.sum.ValidationRan || out.Ran
	failed := out.Failed()
	r.log.Info("validation round", "ran", len(out.Results), "failed", len(failed), "skipped", len(out.Skipped))
	if ctx.Err() != nil || len(failed) == 0 {
		return false
	}
	if r.sum.Iterations >= r.opts.MaxIterations {
		// A fix round would end the task as failed at the turn limit; the
		// failure stays a result of a completed task.
		r.log.Info("no fix round: the task is at its turn limit")
		return false
	}
	if !r.checks.FixRound(out) {
		return false
	}
	r.appendUserText(validate.FixMessage(failed))
	return true
}

// checkGate is the policy and approval of one check command, as a
// run_command call with { command } gets them in the loop (r.gate, the
// same Gate): deny rules refuse it without asking, allowAll, allow rules
// and allowSession grants let it run, anything else asks once (the
// Session remembers the answer).
func (r *run) checkGate(ctx context.Context, command string) (bool, string) {
	t, ok := r.opts.Tools.Get("run_command")
	if !ok {
		return false, "run_command is not available to this task"
	}
	spec := t.Spec()
	input, _ := json.Marshal(map[string]string{"command": command})
	c := pendingCall{ToolCall: provider.ToolCall{Name: spec.Name, Input: input}}
	g := r.gate(c, spec, true)
	call := &toolcall.Call{Name: spec.Name, Input: input, Tool: t, Env: r.env}
	decision, reason := g.Decide(call)
	switch {
	case decision == policy.Deny:
		return false, "refused by the policy: " + reason
	case decision == policy.Allow, g.Covered(call):
		return true, ""
	}
	r.validationAsks++
	c.ID = fmt.Sprintf("validation_%d", r.validationAsks)
	if ok, _ := r.gate(c, spec, true).Approve(ctx, call, toolcall.Preview(spec.Name, input)); !ok {
		return false, validate.ReasonDenied
	}
	return true, ""
}

// commandResult is the Data of a run_command result.
type commandResult struct {
	ExitCode   int    `json:"exitCode"`
	Output     string `json:"output"`
	TimedOut   bool   `json:"timedOut"`
	Cancelled  bool   `json:"cancelled"`
	DurationMs int64  `json:"durationMs"`
}

// checkExec runs a check through the run_command tool itself, so it has the
// same sandbox, environment without keys, output cap and process-tree kill
// on timeout or cancel.
func (r *run) checkExec(ctx context.Context, command string, timeout time.Duration) (validate.ExecResult, error) {
	t, ok := r.opts.Tools.Get("run_command")
	if !ok {
		return validate.ExecResult{}, errors.New("run_command is not available to this task")
	}
	input, _ := json.Marshal(map[string]any{"command": command, "timeoutMs": timeout.Milliseconds()})
	// Through the tool-call pipeline as a run_command call of the task:
	// its PreToolUse and PostToolUse hooks (a blocking hook skips the
	// check with its message), its live output as toolOutput events of
	// validation:<name>. The gate was checkGate's, asked once.
	c := pendingCall{ToolCall: provider.ToolCall{ID: "validation:" + r.checkName, Name: t.Spec().Name, Input: input}}
	p := &toolcall.Pipeline{Tools: r.opts.Tools, Env: r.env, Middleware: []toolcall.Middleware{r.withHooks(c), r.withLiveOutput(c.ID)}}
	out := p.Invoke(ctx, toolcall.Call{Name: c.Name, Input: input})
	res, err := out.Result, out.Err
	if err != nil {
		if te, ok := tool.AsError(err); ok {
			switch te.Kind {
			case tool.ErrSandboxUnavailable:
				return validate.ExecResult{}, fmt.Errorf("%w: %s", validate.ErrNoSandbox, te.Message)
			case tool.ErrCancelled:
				return validate.ExecResult{Cancelled: true, ExitCode: -1}, nil
			}
			return validate.ExecResult{}, errors.New(te.Message)
		}
		return validate.ExecResult{}, err
	}
	var d commandResult
	b, err := json.Marshal(res.Data)
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		return validate.ExecResult{}, fmt.Errorf("run_command gave no result: %v", err)
	}
	return validate.ExecResult{ExitCode: d.ExitCode, TimedOut: d.TimedOut, Cancelled: d.Cancelled,
		Duration: time.Duration(d.DurationMs) * time.Millisecond, Output: d.Output}, nil
}
