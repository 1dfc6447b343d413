package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/protocol"
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

// approver asks the client with agent/requestApproval. No answer, an error
// or an unknown decision is deny (protocol.md agent/requestApproval).
func (s *Session) approver() agent.Approver {
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
		raw, err := s.client.Call(ctx, protocol.MethodRequestApproval, map[string]any{
			"taskId": req.TaskID, "callId": req.CallID, "tool": req.Tool,
			"permission": req.Permission, "input": req.Input, "preview": req.Preview,
		})
		if err != nil {
			return "deny", err
		}
		var r struct {
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return "deny", fmt.Errorf("approval answer: %w", err)
		}
		switch r.Decision {
		case "allow", "allowSession", "deny":
			return agent.Decision(r.Decision), nil
		}
		return "deny", fmt.Errorf("unknown approval decision %q", r.Decision)
	}
}
