package toolcall

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Results the model or the client sees for the pipeline's refusals.
const (
	// ResultDenied is a call the user denied.
	ResultDenied = "The user denied this tool call."
	// ResultStopped is a call agent/cancelTool stopped (protocol.md
	// agent/cancelTool).
	ResultStopped = "Task has been stopped by user. Continue with the next step…"
)

// DeniedWith is the result of a call the user denied with reason message
// (ResultDenied when there is none): the model reads the reason with the
// denied call's result, in the same turn.
func DeniedWith(message string) string {
	message = strings.TrimSpace(message)
	if message == "" {
		return ResultDenied
	}
	return ResultDenied + " The user said: " + message
}

// Hooks are the PreToolUse and PostToolUse hooks of a task
// (task.Job.PreToolUse and PostToolUse, which report each run as a hook
// event). Either may be nil.
type Hooks struct {
	// Pre reports whether a hook blocked the call, and the call's result
	// when it did.
	Pre func(ctx context.Context, name string, input json.RawMessage) (blocked bool, msg string)
	// Post returns the result content with a blocking hook's feedback,
	// given the tool's structured result as tool_response.
	Post func(ctx context.Context, name string, input json.RawMessage, content string, data any) string
}

// WithHooks runs PreToolUse before the call (a block is a KindBlocked
// error with the hook's message) and PostToolUse after a successful one
// (its feedback joins the result's content, which the model sees; a
// result without Data keeps the tool's own content as its Data).
func WithHooks(h Hooks) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) Outcome {
			if h.Pre != nil {
				if blocked, msg := h.Pre(ctx, c.Name, c.Input); blocked {
					return Outcome{Err: &tool.Error{Kind: KindBlocked, Message: msg}}
				}
			}
			out := next(ctx, c)
			if out.Err != nil || h.Post == nil || out.Result.Background != nil {
				return out
			}
			var data any = out.Result.Content
			if out.Result.Data != nil {
				data = out.Result.Data
			}
			if content := h.Post(ctx, c.Name, c.Input, out.Result.Content, data); content != out.Result.Content {
				out.Result.Data, out.Result.Content = data, content
			}
			return out
		}
	}
}

// Gate is a task's policy and approvals.
type Gate struct {
	// Env is where a Previewer plans a call before its approval (nil: the
	// call's own).
	Env *tool.Env
	// Decide is the policy's decision for the call, with the reason of a
	// deny (policy.Policy.Decide, plus what the caller refuses itself).
	Decide func(c *Call) (policy.Decision, string)
	// Covered reports whether an earlier allowSession answer covers the
	// call (nil: none does).
	Covered func(c *Call) bool
	// Approve asks the user about the call with its preview (already
	// planned, uncut) and reports whether it may run and, when not, the
	// user's reason (may be empty). Nil denies every ask.
	Approve func(ctx context.Context, c *Call, preview string) (ok bool, reason string)
}

// WithGate decides each call: a deny is a KindDenied error "denied by
// policy: <reason>"; an ask not covered by an earlier allowSession is
// planned first when the tool can (its Preview is the preview, a Plan
// error is the call's result and nobody is asked, the approved call
// applies the plan), then asked; a refusal is a KindDenied error
// DeniedWith the user's reason (or the context's error when the task ended meanwhile).
func WithGate(g Gate) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) Outcome {
			decision, reason := g.Decide(c)
			switch decision {
			case policy.Deny:
				return Outcome{Err: &tool.Error{Kind: KindDenied, Message: "denied by policy: " + reason}}
			case policy.Ask:
				if g.Covered != nil && g.Covered(c) {
					break
				}
				env := g.Env
				if env == nil {
					env = c.Env
				}
				plan, err := Plan(ctx, env, c)
				if err != nil {
					return Outcome{Err: err}
				}
				prev := Preview(c.Name, c.Input)
				if plan != nil {
					c.Plan, prev = plan, plan.Preview
				}
				ok, reason := false, ""
				if g.Approve != nil {
					ok, reason = g.Approve(ctx, c, prev)
				}
				if !ok {
					if ctx.Err() != nil {
						return Outcome{Err: ctx.Err()}
					}
					return Outcome{Err: &tool.Error{Kind: KindDenied, Message: DeniedWith(reason)}}
				}
			}
			return next(ctx, c)
		}
	}
}

// Registry is the cancel registry of a task's running calls by call id
// (agent/cancelTool). Safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	calls   map[string]func()
	stopped map[string]bool
}

// Register makes stop what Cancel(callID) calls.
func (r *Registry) Register(callID string, stop func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls, r.stopped = map[string]func(){}, map[string]bool{}
	}
	r.calls[callID] = stop
}

// Unregister forgets callID and reports whether Cancel stopped it.
func (r *Registry) Unregister(callID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.calls, callID)
	s := r.stopped[callID]
	delete(r.stopped, callID)
	return s
}

// Cancel stops the running call callID and reports whether one ran.
func (r *Registry) Cancel(callID string) bool {
	r.mu.Lock()
	stop, ok := r.calls[callID]
	if ok {
		r.stopped[callID] = true
		delete(r.calls, callID)
	}
	r.mu.Unlock()
	if ok {
		stop()
	}
	return ok
}

// WithCancel runs each call with an id under a context of its own,
// registered in reg, so Cancel stops only it: a stopped call is a
// KindStopped error ResultStopped (a background job it started is
// cancelled). The context ends with the call, or with the background job
// a caller took on (keep, then called when the job ends).
func WithCancel(reg *Registry, keep func(c *Call, res tool.Result, release func())) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) Outcome {
			if c.ID == "" {
				return next(ctx, c)
			}
			cctx, stop := context.WithCancel(ctx)
			reg.Register(c.ID, stop)
			out := next(cctx, c)
			if reg.Unregister(c.ID) {
				if out.Result.Background != nil {
					out.Result.Background.Cancel()
				}
				stop()
				return Outcome{Err: &tool.Error{Kind: KindStopped, Message: ResultStopped}}
			}
			if out.Err == nil && out.Result.Background != nil && keep != nil {
				keep(c, out.Result, stop)
				return out
			}
			stop()
			return out
		}
	}
}

// WaitBackground waits for a background command's final result (a caller
// that cannot hand the job on: the MCP server, a forwarded call): its
// content replaces the start's, its changes join. The end of ctx cancels
// the job and is the call's error.
func WaitBackground() Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) Outcome {
			out := next(ctx, c)
			bg := out.Result.Background
			if out.Err != nil || bg == nil {
				return out
			}
			select {
			case final, ok := <-bg.Done:
				if ok {
					out.Result.Content = final.Content
					out.Result.Changes = append(out.Result.Changes, final.Changes...)
				}
				out.Result.Background = nil
			case <-ctx.Done():
				bg.Cancel()
				return Outcome{Err: ctx.Err()}
			}
			return out
		}
	}
}

// WithChanges reports the files a successful call changed (and its
// edit-log operations) to changed, in order, before the middleware outside
// it sees the result.
func WithChanges(changed func(ctx context.Context, c *Call, res tool.Result)) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, c *Call) Outcome {
			out := next(ctx, c)
			if out.Err == nil {
				changed(ctx, c, out.Result)
			}
			return out
		}
	}
}

// Sandboxed runs every call with the sandbox on whatever env says
// (protocol.md: Claude Code's commands never leave it).
func Sandboxed(env *tool.Env) *tool.Env {
	cp := *env
	cp.Sandbox = true
	return &cp
}

// PolicyGate is the Gate of a policy on its own (a front end without the
// agent loop's modes and allowSession grants): the policy's decision for
// the call's tool, a Previewer's plan in the call's Env as the preview,
// approve asked.
func PolicyGate(pol policy.Policy, approve func(ctx context.Context, c *Call, preview string) bool) Middleware {
	return WithGate(Gate{
		Decide:  func(c *Call) (policy.Decision, string) { return pol.Decide(c.Tool.Spec(), c.Input) },
		Approve: NoReason(approve),
	})
}

// NoReason is a Gate.Approve of an approve that gives no reason with a
// denial (nil for nil).
func NoReason(approve func(ctx context.Context, c *Call, preview string) bool) func(ctx context.Context, c *Call, preview string) (bool, string) {
	if approve == nil {
		return nil
	}
	return func(ctx context.Context, c *Call, preview string) (bool, string) { return approve(ctx, c, preview), "" }
}
