package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// askUser is the tool.Asker of this session: agent/askUser to the client
// (protocol.md agent/askUser). The tool bounds the wait and treats an
// error or answers: null as dismissed.
func (s *Session) askUser(ctx context.Context, taskID, callID string, questions []tool.Question) (map[string][]string, error) {
	raw, err := s.client.Call(ctx, protocol.MethodAskUser, map[string]any{
		"taskId": taskID, "callId": callID, "questions": questions,
	})
	if err != nil {
		return nil, err
	}
	var reply struct {
		Answers map[string][]string `json:"answers"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, err
	}
	return reply.Answers, nil
}

// approver asks the client with agent/requestApproval, the keys the
// session holds redacted from the input and the preview like from every
// event. No answer, an error or an unknown decision is deny (protocol.md
// agent/requestApproval). A deny's message (the user's reason) is kept,
// cut at protocol.MaxDenyMessage bytes.
func (s *Session) approver() task.Approver {
	deny := task.Answer{Decision: task.DecisionDeny}
	return func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
		raw, err := s.client.Call(ctx, protocol.MethodRequestApproval, protocol.RequestApprovalParams{
			TaskID: req.TaskID, CallID: req.CallID, Tool: req.Tool,
			Permission: req.Permission, Input: s.secrets.RedactJSON(req.Input), Preview: s.secrets.Redact(req.Preview),
		})
		if err != nil {
			return deny, err
		}
		var r protocol.RequestApprovalResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return deny, fmt.Errorf("approval answer: %w", err)
		}
		switch r.Decision {
		case task.DecisionAllow, task.DecisionAllowSession:
			return task.Answer{Decision: r.Decision}, nil
		case task.DecisionDeny:
			// The user's reason goes to the model with the denied call's
			// result: bounded, and never a key the session holds.
			return task.Answer{Decision: r.Decision, Message: s.secrets.Redact(denyMessage(r.Message))}, nil
		}
		return deny, fmt.Errorf("unknown approval decision %q", r.Decision)
	}
}

// Grants remember approval answers with allowSession's scope: a tool for
// any tool but run_command, the programs of the command shown for
// run_command (agent.Grants, docs/events.md). A front end that keeps an
// answer for a session the runtime does not (ACP's reject_always) keeps
// it in one of these so that it covers exactly what was shown.
type Grants = agent.Grants

// NewGrants returns an empty set of answers.
func NewGrants() *Grants { return agent.NewGrants() }

// denyMessage is m trimmed and cut at protocol.MaxDenyMessage bytes on a
// rune boundary.
func denyMessage(m string) string {
	m = strings.TrimSpace(m)
	if len(m) <= protocol.MaxDenyMessage {
		return m
	}
	cut := protocol.MaxDenyMessage
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + "…"
}

// ErrCannotAsk is what a front end's client wraps when it has no way to put
// agent/askUser's questions to its user (tool.ErrCannotAsk): ask_user then
// tells the model the user could not be asked.
var ErrCannotAsk = tool.ErrCannotAsk
