package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// Decision is protocol.md agent/requestApproval result.decision.
type Decision string

const (
	DecisionAllow        Decision = "allow"
	DecisionAllowSession Decision = "allowSession"
	DecisionDeny         Decision = "deny"
)

// ApprovalRequest is the protocol.md agent/requestApproval params { taskId,
// callId, tool, permission, input, preview }.
type ApprovalRequest struct {
	TaskID     string          `json:"taskId"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Permission tool.Class      `json:"permission"`
	Input      json.RawMessage `json:"input"`
	Preview    string          `json:"preview"`
}

// Approver asks the user about one tool call (the server sends
// agent/requestApproval). ctx ends when the task is cancelled or the approval
// timeout passes. An error, the end of ctx, or any answer other than allow or
// allowSession counts as deny.
type Approver func(ctx context.Context, req ApprovalRequest) (Decision, error)

// grants are the allowSession answers of one task (addendum §11): a tool name
// for any tool but run_command; for run_command, program names.
type grants struct {
	tools    map[string]bool
	programs map[string]bool
}

func newGrants() *grants {
	return &grants{tools: map[string]bool{}, programs: map[string]bool{}}
}

// remember records an allowSession answer for the call.
func (g *grants) remember(name string, input json.RawMessage) {
	if name != "run_command" {
		g.tools[name] = true
		return
	}
	progs, ok := policy.CommandPrograms(commandOf(input))
	if !ok {
		return
	}
	for _, p := range progs {
		// A wrapper (sh, env, xargs, sudo, …) would approve anything, so it
		// is never remembered and commands through it always ask.
		if !policy.RunsOtherPrograms(p) {
			g.programs[p] = true
		}
	}
}

// covers reports whether an earlier allowSession answer covers the call: for
// run_command, every program of a simple command was remembered (the
// shell-parser issue replaces policy.CommandPrograms later).
func (g *grants) covers(name string, input json.RawMessage) bool {
	if name != "run_command" {
		return g.tools[name]
	}
	progs, ok := policy.CommandPrograms(commandOf(input))
	if !ok {
		return false
	}
	for _, p := range progs {
		if !g.programs[p] {
			return false
		}
	}
	return true
}

func commandOf(input json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(input, &in)
	return in.Command
}

// Preview is what the user approves of a call to a tool that cannot plan
// it (toolcall.Preview; every engine shows the same previews).
func Preview(name string, input json.RawMessage) string { return toolcall.Preview(name, input) }

// CutPreview cuts a preview as agent/requestApproval carries it
// (toolcall.CutPreview).
func CutPreview(s string) string { return toolcall.CutPreview(s) }

// resultDenied is what the model sees for a call the user denied.
const resultDenied = toolcall.ResultDenied

// normalise maps a client answer to a Decision; anything unknown is deny.
func normalise(d Decision) Decision {
	switch Decision(strings.TrimSpace(string(d))) {
	case DecisionAllow:
		return DecisionAllow
	case DecisionAllowSession:
		return DecisionAllowSession
	}
	return DecisionDeny
}
