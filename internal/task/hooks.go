package task

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/task-x/task-x-runtime/internal/hooks"
)

// HookConfig is a front end's hooks configuration (config/hooks): the
// user's hooks and whether the workspace's own .task-x/hooks.json may load.
type HookConfig struct {
	User             hooks.Config
	WorkspaceTrusted bool
}

// HookOptions are what a task's hooks run with besides the configuration.
type HookOptions struct {
	// Root is the task's folder: the hooks' working folder and, when
	// trusted, where .task-x/hooks.json is read (again for every task).
	Root string
	// Sandboxed confines the hooks (addendum §6).
	Sandboxed bool
	// Secrets are the keys no hook's environment may hold.
	Secrets []string
	Logger  *slog.Logger
}

// NewHooks builds the hooks of one task: the user's, then the workspace's
// when trusted (docs/hooks.md). It is nil when none is configured. A
// malformed workspace file is skipped and returned as the error, the user's
// hooks still run.
func NewHooks(c HookConfig, o HookOptions) (*hooks.Runner, error) {
	ws := hooks.Config{}
	var werr error
	if c.WorkspaceTrusted && o.Root != "" {
		if loaded, err := hooks.LoadWorkspace(o.Root); err != nil {
			werr = err
		} else {
			ws = loaded
		}
	}
	if c.User.Count()+ws.Count() == 0 {
		return nil, werr
	}
	return hooks.NewRunner(hooks.Options{User: c.User, Workspace: ws, Root: o.Root, Sandboxed: o.Sandboxed,
		Secrets: o.Secrets, Logger: o.Logger}), werr
}

// PreToolUse runs the job's PreToolUse hooks for a call an engine is about
// to run from job.Tools (the agent loop runs its own at the same point);
// each run is a hook event. When a hook blocks, the call must not run and
// msg is its error result.
func (j *Job) PreToolUse(ctx context.Context, name string, input json.RawMessage) (blocked bool, msg string) {
	out := j.runHooks(ctx, hooks.Input{Event: hooks.PreToolUse, ToolName: name, ToolInput: input})
	if !out.Blocked {
		return false, ""
	}
	return true, hooks.BlockedCall(out.Feedback)
}

// PostToolUse runs the job's PostToolUse hooks after a call succeeded, with
// the tool's structured result (data) as tool_response, and returns the
// result the model gets (content, with a blocking hook's feedback).
func (j *Job) PostToolUse(ctx context.Context, name string, input json.RawMessage, content string, data any) string {
	out := j.runHooks(ctx, hooks.Input{Event: hooks.PostToolUse, ToolName: name, ToolInput: input, ToolResponse: data})
	if !out.Blocked {
		return content
	}
	return hooks.WithPostFeedback(content, out.Feedback)
}

func (j *Job) runHooks(ctx context.Context, in hooks.Input) hooks.Outcome {
	if !j.Hooks.Has(in.Event) {
		return hooks.Outcome{}
	}
	in.TaskID = j.TaskID
	if j.Env != nil {
		in.Cwd = j.Env.Root
	}
	out := j.Hooks.Run(ctx, in)
	for _, rep := range out.Reports {
		j.Emit(HookEvent(rep))
	}
	return out
}
