package acp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/session"
)

// The permission options of every request: ACP's four kinds, their ids
// the kinds themselves.
var permissionOptions = []permissionOption{
	{OptionID: "allow_once", Name: "Allow", Kind: "allow_once"},
	{OptionID: "allow_always", Name: "Always allow (for a command: its programs)", Kind: "allow_always"},
	{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
	{OptionID: "reject_always", Name: "Always reject in this session (for a command: its programs)", Kind: "reject_always"},
}

// decisionReply is agent/requestApproval's result.
func decisionReply(d protocol.Decision) (json.RawMessage, error) {
	return json.Marshal(protocol.RequestApprovalResult{Decision: d})
}

// requestPermission answers one of our approvals with
// session/request_permission: allow_once is allow; allow_always is the
// runtime's allowSession, which the task itself remembers with its own
// scope (the tool, or for run_command only the programs of the command
// shown; docs/events.md) and checks before it asks again, so the front
// end keeps no allow of its own; reject_once is deny; reject_always is
// deny and is remembered for the rest of the ACP session with that same
// scope, for the task that asked only (a subagent's answer is its own,
// not its lead's). A cancelled request, an error or an unknown option is
// deny. A cancelled turn cancels ctx: the request is withdrawn with
// $/cancel_request and counts as deny.
func (a *Agent) requestPermission(ctx context.Context, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var p protocol.RequestApprovalParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	s := a.sessionOfTask(p.TaskID)
	if s == nil {
		return nil, errors.New("acp: an approval of a task without a session")
	}
	if s.rejected(p.TaskID, p.Tool, p.Input) {
		return decisionReply(protocol.DecisionDeny)
	}
	// The request carries what the approval does, keys redacted like every
	// event.
	tc := s.updates.permissionCall(p.TaskID, p.CallID, p.Tool, p.Permission, a.secrets.RedactJSON(p.Input), a.secrets.Redact(p.Preview))
	res, err := a.conn.Call(ctx, methodRequestPermission, permissionParams{SessionID: s.id, ToolCall: tc, Options: permissionOptions})
	if err != nil {
		return nil, err
	}
	var r permissionResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	d := protocol.DecisionDeny
	if r.Outcome.Outcome == "selected" {
		switch r.Outcome.OptionID {
		case "allow_once":
			d = protocol.DecisionAllow
		case "allow_always":
			d = protocol.DecisionAllowSession
		case "reject_always":
			s.reject(p.TaskID, p.Tool, p.Input)
		}
	}
	return decisionReply(d)
}

// reject remembers a reject_always answer of task for the session.
func (s *acpSession) reject(task, tool string, input json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.rejects[task]
	if g == nil {
		g = session.NewGrants()
		s.rejects[task] = g
	}
	g.Remember(tool, input)
}

// rejected reports whether a reject_always answer of task covers the call.
func (s *acpSession) rejected(task, tool string, input json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.rejects[task]
	return g != nil && g.Covers(tool, input)
}
