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
// runtime's allowSession (the run itself remembers it with its scope: the
// tool, or for run_command only the programs of the command shown;
// docs/events.md) and, as an editor's "Always allow" promises, it is
// remembered for the rest of the ACP session with that same scope, so a
// later prompt of the session is not asked again either; reject_once is
// deny; reject_always is deny, remembered the same way. Both memories are
// the task's that asked only (a subagent's answer is its own, not its
// lead's). A cancelled request, an error or an unknown option is deny. A
// cancelled turn cancels ctx: the request is withdrawn with
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
	if s.allowed(p.TaskID, p.Tool, p.Input) {
		return decisionReply(protocol.DecisionAllowSession)
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
			s.remember(s.allows, p.TaskID, p.Tool, p.Input)
		case "reject_always":
			s.remember(s.rejects, p.TaskID, p.Tool, p.Input)
		}
	}
	return decisionReply(d)
}

// remember keeps an always answer of task for the session in answers
// (s.allows or s.rejects).
func (s *acpSession) remember(answers map[string]*session.Grants, task, tool string, input json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := answers[task]
	if g == nil {
		g = session.NewGrants()
		answers[task] = g
	}
	g.Remember(tool, input)
}

// covered reports whether an always answer of task in answers covers the
// call.
func (s *acpSession) covered(answers map[string]*session.Grants, task, tool string, input json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := answers[task]
	return g != nil && g.Covers(tool, input)
}

// rejected reports whether a reject_always answer of task covers the call.
func (s *acpSession) rejected(task, tool string, input json.RawMessage) bool {
	return s.covered(s.rejects, task, tool, input)
}

// allowed reports whether an allow_always answer of task covers the call.
func (s *acpSession) allowed(task, tool string, input json.RawMessage) bool {
	return s.covered(s.allows, task, tool, input)
}
