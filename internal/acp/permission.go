package acp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// The permission options of every request: ACP's four kinds, their ids
// the kinds themselves.
var permissionOptions = []permissionOption{
	{OptionID: "allow_once", Name: "Allow", Kind: "allow_once"},
	{OptionID: "allow_always", Name: "Always allow in this session", Kind: "allow_always"},
	{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
	{OptionID: "reject_always", Name: "Always reject in this session", Kind: "reject_always"},
}

// decisionReply is agent/requestApproval's result.
func decisionReply(d protocol.Decision) (json.RawMessage, error) {
	return json.Marshal(protocol.RequestApprovalResult{Decision: d})
}

// requestPermission answers one of our approvals with
// session/request_permission: allow_once is allow, allow_always
// allowSession (and the tool is allowed for the rest of the ACP session),
// reject_once deny, reject_always deny (and the tool is refused for the
// rest of the session without asking); a cancelled request, an error or
// an unknown option is deny. A cancelled turn cancels ctx: the request is
// withdrawn with $/cancel_request and counts as deny.
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
	s.mu.Lock()
	remembered := s.always[p.Tool]
	s.mu.Unlock()
	switch remembered {
	case "allow":
		return decisionReply(protocol.DecisionAllowSession)
	case "deny":
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
			s.remember(p.Tool, "allow")
		case "reject_always":
			s.remember(p.Tool, "deny")
		}
	}
	return decisionReply(d)
}

func (s *acpSession) remember(tool, decision string) {
	s.mu.Lock()
	s.always[tool] = decision
	s.mu.Unlock()
}
