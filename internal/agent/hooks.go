package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
)

// MaxStopBlocks bounds how many times Stop hooks may send the model back
// to work (exit 2) in one task before it ends anyway, so a hook that always
// blocks cannot loop forever.
const MaxStopBlocks = 3

// runHooks runs the hooks of in.Event and emits one `hook` event per run.
func (r *run) runHooks(ctx context.Context, in hooks.Input) hooks.Outcome {
	if !r.opts.Hooks.Has(in.Event) {
		return hooks.Outcome{}
	}
	in.TaskID, in.Cwd = r.p.TaskID, r.env.Root
	out := r.opts.Hooks.Run(ctx, in)
	for _, rep := range out.Reports {
		r.emit(task.HookEvent(rep))
	}
	return out
}

// startHooks runs SessionStart (source "startup", or "resume" for a saved
// conversation) and UserPromptSubmit. It returns the context their stdout
// adds, and false when UserPromptSubmit refused the prompt (the task then
// fails with the hook's stderr).
func (r *run) startHooks(ctx context.Context) (string, bool) {
	source := "startup"
	if len(r.p.History) > 0 {
		source = "resume"
	}
	var extra []string
	if out := r.runHooks(ctx, hooks.Input{Event: hooks.SessionStart, Source: source}); out.Context != "" {
		extra = append(extra, out.Context)
	}
	out := r.runHooks(ctx, hooks.Input{Event: hooks.UserPromptSubmit, Prompt: r.p.Prompt})
	if out.Blocked {
		r.failBecause(protocol.EndPromptRefused, "the prompt was refused by a UserPromptSubmit hook: "+out.Feedback)
		return "", false
	}
	if out.Context != "" {
		extra = append(extra, out.Context)
	}
	return joinNonEmpty(extra), true
}

// preToolUse runs PreToolUse hooks for c; when one blocks, the call does
// not run and the model gets the feedback as the call's error result.
func (r *run) preToolUse(ctx context.Context, c pendingCall) (bool, string) {
	out := r.runHooks(ctx, hooks.Input{Event: hooks.PreToolUse, ToolName: c.Name, ToolInput: c.Input})
	if !out.Blocked {
		return false, ""
	}
	r.log.Info("tool call blocked by a PreToolUse hook", "tool", c.Name)
	return true, hooks.BlockedCall(out.Feedback)
}

// postToolUse runs PostToolUse hooks after a successful call; a blocking
// hook's stderr is appended to the result the model sees.
func (r *run) postToolUse(ctx context.Context, c pendingCall, content string, data any) string {
	resp := data
	if raw, ok := data.(json.RawMessage); ok {
		resp = raw
	}
	out := r.runHooks(ctx, hooks.Input{Event: hooks.PostToolUse, ToolName: c.Name, ToolInput: c.Input, ToolResponse: resp})
	if !out.Blocked {
		return content
	}
	return hooks.WithPostFeedback(content, out.Feedback)
}

// stopHook runs Stop hooks when the model ended its turn and nothing else
// keeps the task going. It reports true when a hook sent the model back to
// work (its stderr joins as a user message), at most MaxStopBlocks times per task.
func (r *run) stopHook(ctx context.Context) bool {
	out := r.runHooks(ctx, hooks.Input{Event: hooks.Stop, StopHookActive: r.stopBlocks > 0})
	if !out.Blocked || ctx.Err() != nil {
		return false
	}
	if r.stopBlocks >= MaxStopBlocks {
		r.emit(protocol.WarningEvent{Message: fmt.Sprintf("a Stop hook blocked the end of the task again; "+
			"the task ends after %d blocks", MaxStopBlocks)})
		return false
	}
	r.stopBlocks++
	r.appendUserText("A Stop hook asks you to continue before you finish:\n" + out.Feedback)
	return true
}

func joinNonEmpty(parts []string) string {
	s := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if s != "" {
			s += "\n\n"
		}
		s += p
	}
	return s
}
