// Package toolcall owns the one tool-call pipeline every caller of a tool
// goes through: the agent loop (agent/run), the Claude Code engine's
// forwarded calls (claude/run), `task-x-runtime --mcp-server` and a
// client's tools/call. Invoke runs one call through middleware, outermost
// first, around the tool itself:
//
//   - Hooks: PreToolUse may block the call, PostToolUse adds its feedback
//     (docs/hooks.md);
//   - Gate: the policy's decision, and for an ask the approval with the
//     real preview (a tool.Previewer plans the change first: its Preview is
//     what the user approves, a Plan error is the call's result and nobody
//     is asked, the approved call applies the plan);
//   - Cancel: the call runs under a context of its own, registered by call
//     id so agent/cancelTool stops only it;
//   - WaitBackground: a background command is waited for (a caller that
//     cannot hand it on);
//   - Changes: the files a call changed are reported (index, events,
//     summary);
//   - the tool: the registry's tool (or the approved plan) with the call
//     id, a panic turned into an error.
//
// A refusal is a *tool.Error whose Message is what the model or the client
// sees (KindDenied, KindBlocked, KindStopped, tool.ErrUnknownTool), so
// every path gives the same decisions and the same results and errors.
package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Kinds of the refusals the pipeline makes (tool.Error.Kind).
const (
	KindDenied  = "denied"  // the policy or the user refused the call
	KindBlocked = "blocked" // a PreToolUse hook blocked it
	KindStopped = "stopped" // agent/cancelTool stopped it
)

// Call is one tool call.
type Call struct {
	// ID is the call id ("" for a client's tools/call): the edit log
	// records it, agent/cancelTool names it.
	ID    string
	Name  string
	Input json.RawMessage
	// Tool is the registry's tool of Name and Env the environment the call
	// runs in (set by Invoke before the middleware runs).
	Tool tool.Tool
	Env  *tool.Env
	// Plan is the change a Gate planned and the user approved; the call
	// applies it instead of running the tool again.
	Plan *tool.Plan
}

// Outcome is a call's end: the tool's Result, or Err (a *tool.Error for
// a tool failure or a refusal, anything else for a runtime failure).
type Outcome struct {
	Result tool.Result
	Err    error
}

// Handler runs a call.
type Handler func(ctx context.Context, c *Call) Outcome

// Middleware wraps a Handler.
type Middleware func(next Handler) Handler

// Pipeline runs the calls of one registry in one Env.
type Pipeline struct {
	Tools *tool.Registry
	Env   *tool.Env
	// Middleware wraps each call, outermost first.
	Middleware []Middleware
}

// Invoke runs one call through the pipeline. An unknown tool is a
// *tool.Error (tool.ErrUnknownTool) before any middleware runs; an absent
// or null input is {}.
func (p *Pipeline) Invoke(ctx context.Context, c Call) Outcome {
	t, ok := p.Tools.Get(c.Name)
	if !ok {
		return Outcome{Err: tool.Errorf(tool.ErrUnknownTool, "unknown tool %q", c.Name)}
	}
	c.Tool, c.Env = t, p.Env
	if len(c.Input) == 0 || string(c.Input) == "null" {
		c.Input = json.RawMessage(`{}`)
	}
	h := p.run
	for i := len(p.Middleware) - 1; i >= 0; i-- {
		h = p.Middleware[i](h)
	}
	return h(ctx, &c)
}

// run is the innermost handler: the tool, or the approved plan, with the
// call id; a panic is a runtime error (a broken tool must not take the
// runtime down).
func (p *Pipeline) run(ctx context.Context, c *Call) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Err: fmt.Errorf("tool panicked: %v", r)}
		}
	}()
	if c.ID != "" {
		ctx = tool.WithCallID(ctx, c.ID)
	}
	var res tool.Result
	var err error
	if c.Plan != nil {
		res, err = c.Plan.Apply(ctx)
	} else {
		res, err = c.Tool.Run(ctx, p.Env, c.Input)
	}
	return Outcome{Result: res, Err: err}
}

// Plan computes a call's change before its approval (tool.Previewer),
// with the call id, turning a panic into a runtime error.
func Plan(ctx context.Context, env *tool.Env, c *Call) (plan *tool.Plan, err error) {
	pv, ok := c.Tool.(tool.Previewer)
	if !ok {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			plan, err = nil, fmt.Errorf("tool panicked: %v", r)
		}
	}()
	if c.ID != "" {
		ctx = tool.WithCallID(ctx, c.ID)
	}
	plan, err = pv.Plan(ctx, env, c.Input)
	if err == nil && (plan == nil || plan.Apply == nil) {
		err = fmt.Errorf("%s planned no change", c.Name)
	}
	return plan, err
}

// Results the model or the client sees for a call that did not end with
// the tool's own result or error.
const (
	// ResultCancelled is a call the task's end (or the client) cut short.
	ResultCancelled = "The task was cancelled before this tool call finished."
	// resultFailed prefixes a runtime failure (not a *tool.Error).
	resultFailed = "The tool failed: "
)

// Text is the outcome as the text a model or a client sees and whether it
// is an error: the result's content; a *tool.Error's message; for a call
// the context's end cut short, ResultCancelled; for any other failure
// "The tool failed: <error>". Every path renders outcomes with it.
func (o Outcome) Text() (string, bool) {
	if o.Err == nil {
		return o.Result.Content, false
	}
	if te, ok := tool.AsError(o.Err); ok {
		return te.Message, true
	}
	if errors.Is(o.Err, context.Canceled) || errors.Is(o.Err, context.DeadlineExceeded) {
		return ResultCancelled, true
	}
	return resultFailed + o.Err.Error(), true
}
