package claudecode

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// Permissions is the policy and the approvals of one claude/run, judged
// in two places with one state: Claude Code's permission prompts (the
// approve tool: Run.approve) and the task-x calls it forwards back, whose
// gate is a middleware of their tool-call pipeline (ForwardGate, in
// NewForwarded) like the agent loop's (issue 34): the hooks run first, then
// the policy (a deny rule or a refused class fails the call without
// asking, an allowed call runs), then an allowSession grant, a call the
// permission prompt allowed already, ApproveAll or AllowCommands, else
// the user is asked with the real preview (a task-x edit planned first).
// Safe for concurrent use.
type Permissions struct {
	h Hooks // Policy, ApproveAll, AllowCommands, ClassOf, Approve, TaskID, Plan, Event

	mu       sync.Mutex
	session  map[string]bool // tools allowed for the run (allowSession)
	approved map[string]bool // tool_use ids the permission prompt allowed, not yet forwarded
	emit     func(protocol.AgentEvent)
}

// NewPermissions is the Permissions of a run with h's Policy, ApproveAll,
// AllowCommands, ClassOf, Approve, TaskID and Plan; its approval events go
// to h.Event until Start binds them to the run's serialised events.
func NewPermissions(h Hooks) *Permissions {
	emit := h.Event
	if emit == nil {
		emit = func(protocol.AgentEvent) {}
	}
	return &Permissions{h: h, session: map[string]bool{}, approved: map[string]bool{}, emit: emit}
}

// bind sends the approval events through the run's emit (one at a time
// with the run's other events).
func (p *Permissions) bind(emit func(protocol.AgentEvent)) {
	p.mu.Lock()
	p.emit = emit
	p.mu.Unlock()
}

func (p *Permissions) event(e protocol.AgentEvent) {
	p.mu.Lock()
	emit := p.emit
	p.mu.Unlock()
	emit(e)
}

func (p *Permissions) classOf(name string) tool.Class {
	if p.h.ClassOf != nil {
		return p.h.ClassOf(name)
	}
	return tool.ClassCommand
}

// judge is the decision without asking: Deny (with the policy's reason),
// Allow (the policy, ApproveAll, a call the permission prompt allowed, a
// task-x command with AllowCommands) or Ask.
func (p *Permissions) judge(name, callID string, input json.RawMessage, taskX bool) (policy.Decision, string) {
	class := p.classOf(name)
	d, reason := p.h.Policy.Decide(tool.Spec{Name: name, Permission: class}, input)
	if d == policy.Deny {
		return policy.Deny, reason
	}
	p.mu.Lock()
	before := callID != "" && p.approved[callID]
	p.mu.Unlock()
	if d == policy.Allow || p.h.ApproveAll || before || p.h.AllowCommands && taskX && class == tool.ClassCommand {
		return policy.Allow, ""
	}
	return policy.Ask, ""
}

func (p *Permissions) granted(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.session[name]
}

// allowed remembers that callID may run (its forwarded call is not asked
// again) and returns d.
func (p *Permissions) allowed(callID string, d task.Decision) task.Decision {
	if callID != "" {
		p.mu.Lock()
		p.approved[callID] = true
		p.mu.Unlock()
	}
	return d
}

// ask asks the user about one call with preview (cut here), reporting
// approvalRequested and approvalResolved (approvalWithdrawn when the run
// ended or the 10 minutes passed first), and remembers an allowSession.
// A deny comes with the user's reason when the answer gave one.
func (p *Permissions) ask(ctx context.Context, name, callID string, input json.RawMessage, preview string) (dec task.Decision, reason string) {
	class := p.classOf(name)
	preview = toolcall.CutPreview(preview)
	p.event(protocol.ApprovalRequestedEvent{CallID: callID, Tool: name, Permission: class, Input: input, Preview: preview})
	dec = task.DecisionDeny
	if p.h.Approve != nil {
		actx, cancel := context.WithTimeout(ctx, task.ApprovalTimeout)
		d, err := p.h.Approve(actx, task.ApprovalRequest{TaskID: p.h.TaskID, CallID: callID, Tool: name, Permission: class, Input: input, Preview: preview})
		if actx.Err() != nil {
			// The run ended or the wait timed out with the request still
			// open: the client closes its dialog (deny).
			p.event(protocol.ApprovalWithdrawnEvent{CallID: callID})
		} else if err == nil && (d.Decision == task.DecisionAllow || d.Decision == task.DecisionAllowSession) {
			dec = d.Decision
		} else if err == nil {
			reason = d.Message
		}
		cancel()
	}
	p.event(protocol.ApprovalResolvedEvent{CallID: callID, Tool: name, Decision: protocol.Decision(dec)})
	if dec == task.DecisionAllowSession {
		p.mu.Lock()
		p.session[name] = true
		p.mu.Unlock()
	}
	return dec, reason
}

// decide judges one permission prompt of the CLI for name (a task-x tool
// without its prefix when taskX); the message is what the model reads of
// a denial. An allowed callID is remembered, so the forwarded call is not
// asked again.
func (p *Permissions) decide(ctx context.Context, name, callID string, input json.RawMessage, taskX bool) (task.Decision, string) {
	d, reason := p.judge(name, callID, input, taskX)
	switch {
	case d == policy.Deny:
		return task.DecisionDeny, "denied by policy: " + reason
	case p.granted(name):
		return p.allowed(callID, task.DecisionAllowSession), ""
	case d == policy.Allow:
		return p.allowed(callID, task.DecisionAllow), ""
	}
	// An edit that cannot apply fails here, before anyone is asked (as in
	// the agent loop); one that can is shown as the change it makes.
	preview := toolcall.Preview(name, input)
	if p.h.Plan != nil && taskX {
		pv, err := p.h.Plan(ctx, name, input)
		if err != nil {
			return task.DecisionDeny, err.Error()
		}
		if pv != "" {
			preview = pv
		}
	}
	dec, why := p.ask(ctx, name, callID, input, preview)
	if dec != task.DecisionDeny {
		return p.allowed(callID, dec), ""
	}
	return task.DecisionDeny, toolcall.DeniedWith(why)
}

// ForwardGate is the gate of the forwarded task-x calls in their
// tool-call pipeline (toolcall.WithGate): the same decisions as the
// permission prompts, a call the prompt allowed not asked again (and
// forgotten once forwarded), the preview a Previewer's plan in the call's
// Env.
func (p *Permissions) ForwardGate() toolcall.Middleware {
	return toolcall.WithGate(toolcall.Gate{
		Decide: func(c *toolcall.Call) (policy.Decision, string) {
			d, reason := p.judge(c.Name, c.ID, c.Input, true)
			if c.ID != "" {
				p.mu.Lock()
				delete(p.approved, c.ID)
				p.mu.Unlock()
			}
			return d, reason
		},
		Covered: func(c *toolcall.Call) bool { return p.granted(c.Name) },
		Approve: func(ctx context.Context, c *toolcall.Call, preview string) (bool, string) {
			dec, why := p.ask(ctx, c.Name, c.ID, c.Input, preview)
			return dec != task.DecisionDeny, why
		},
	})
}
