package server

import (
	"context"
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// askUser is the tool.Asker of this session: agent/askUser to the client
// (protocol.md agent/askUser). The tool bounds the wait and treats an
// error or answers: null as dismissed.
func (s *Server) askUser(ctx context.Context, taskID, callID string, questions []tool.Question) (map[string][]string, error) {
	raw, err := s.conn.Call(ctx, protocol.MethodAskUser, map[string]any{
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
