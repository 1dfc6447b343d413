package session

import (
	"context"
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// Tools is the registry's tool specs (tools/list).
func (s *Session) Tools() []tool.Spec { return s.tools.Specs() }

// ToolResult is tools/call's result: { content, data, changes } (fields
// in the key order the wire has always had).
type ToolResult struct {
	Changes []tool.FileChange `json:"changes"`
	Content string            `json:"content"`
	Data    any               `json:"data"`
}

// CallTool runs one tool directly for the client in the open workspace,
// through the tool-call pipeline with the session's hooks (config/hooks,
// and the workspace's when trusted: a PreToolUse hook that blocks is a
// *tool.Error of kind denied with the hook's message) and no approval (the user asked for it;
// Options.ToolMiddleware adds a front end's own). A tool failure is a
// *tool.Error (the protocol's -32005). The result comes back with every
// key the session holds redacted (a tool can read or print one: a file,
// a command's output), as JSON.
func (s *Session) CallTool(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error) {
	if name == "" {
		return nil, Invalid("name is required")
	}
	proj, err := s.project()
	if err != nil {
		if _, ok := s.tools.Get(name); !ok {
			return nil, tool.Errorf(tool.ErrUnknownTool, "unknown tool %q", name)
		}
		return nil, err
	}
	s.mu.Lock()
	env := s.direct
	s.mu.Unlock()
	mw := []toolcall.Middleware{s.toolHooks(proj, "")}
	mw = append(mw, s.opts.ToolMiddleware...)
	mw = append(mw, toolcall.WithChanges(func(ctx context.Context, _ *toolcall.Call, res tool.Result) {
		s.changed(ctx, tool.ChangedPaths(res.Changes))
	}))
	p := &toolcall.Pipeline{Tools: s.tools, Env: env, Middleware: mw}
	out := p.Invoke(ctx, toolcall.Call{Name: name, Input: input})
	if out.Err != nil {
		if te, ok := tool.AsError(out.Err); ok && te.Kind == toolcall.KindBlocked {
			// A hook's refusal is the documented kind denied on the wire
			// (docs/tools.md: the kinds are a closed set), its message
			// the hook's.
			return nil, &tool.Error{Kind: tool.ErrDenied, Message: te.Message}
		}
		return nil, out.Err
	}
	res := out.Result
	changes := res.Changes
	if changes == nil {
		changes = []tool.FileChange{}
	}
	return s.secrets.RedactJSON(mustJSON(ToolResult{Content: res.Content, Data: res.Data, Changes: changes})), nil
}

// Served is what `task-x-runtime --mcp-server` serves over the open
// project (ServedTools).
type Served struct {
	// Tools is the registry.
	Tools *tool.Registry
	// Env is the Env every call runs in: the open project's, recorded
	// under the task id, commands in the sandbox whatever the setting,
	// the live key set, no asker (interactive tools are not served).
	Env *tool.Env
	// OnChanges tells the index about the files a call changed.
	OnChanges func(context.Context, []tool.FileChange)
	// Middleware is the session's hooks (ConfigureHooks) and, when a
	// policy was given, its gate: a deny rule or a refused class fails
	// the call, an allowed one runs, and one the policy would ask about
	// is asked with the real preview (toolcall.WithGate), or without an
	// approver refused (an MCP server has nobody to ask: its client asks
	// its own user before it calls).
	Middleware []toolcall.Middleware
}

// NoApprover is the reason a call the policy would ask about is refused
// when the served tools have nobody to ask.
const NoApprover = "the call needs the user's approval and this MCP server has nobody to ask (the MCP client asks its own user)"

// ServedTools is what `task-x-runtime --mcp-server` serves over the open
// project, under taskID, with the policy pol (nil: none; the MCP client
// decides) and approve, who is asked about a call the policy asks about
// (nil: nobody, the call is refused with NoApprover).
func (s *Session) ServedTools(taskID string, pol *policy.Policy, approve func(ctx context.Context, c *toolcall.Call, preview string) bool) (*Served, error) {
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	env := proj.Env(true, taskID)
	env.Secrets = s.secrets.List
	sv := &Served{Tools: s.tools, Env: env, OnChanges: func(ctx context.Context, changes []tool.FileChange) {
		proj.Changed(ctx, tool.ChangedPaths(changes))
	}}
	sv.Middleware = []toolcall.Middleware{s.toolHooks(proj, taskID)}
	if pol != nil {
		p := pol.WithRoot(proj.Root())
		sv.Middleware = append(sv.Middleware, toolcall.WithGate(toolcall.Gate{
			Decide: func(c *toolcall.Call) (policy.Decision, string) {
				d, reason := p.Decide(c.Tool.Spec(), c.Input)
				if d == policy.Ask && approve == nil {
					return policy.Deny, NoApprover
				}
				return d, reason
			},
			Approve: toolcall.NoReason(approve),
		}))
	}
	return sv, nil
}

// toolHooks is the PreToolUse/PostToolUse middleware of the session's
// hooks for a call outside a task run (tools/call, --mcp-server), read
// when it is made: the user's hooks of config/hooks and, when trusted,
// the workspace's .task-x/hooks.json. With no task to send a hook event
// to, each run is logged (event, exit code, blocked; never its command
// or output).
func (s *Session) toolHooks(proj *project.Project, taskID string) toolcall.Middleware {
	job := &task.Job{TaskID: taskID, Hooks: s.hookRunner(proj.Root(), s.sandboxOn()), Env: &tool.Env{Root: proj.Root()},
		Emit: func(ev protocol.AgentEvent) {
			if h, ok := ev.(protocol.HookEvent); ok {
				s.log.Info("hook ran outside a task", "event", h.Event, "exitCode", h.ExitCode, "blocked", h.Blocked, "durationMs", h.DurationMs)
			}
		}}
	return toolcall.WithHooks(toolcall.Hooks{Pre: job.PreToolUse, Post: job.PostToolUse})
}
