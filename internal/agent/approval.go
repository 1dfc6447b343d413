package agent

import (
	"encoding/json"
	"strings"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// Grants are the allowSession answers of one task (addendum §11): a tool name
// for any tool but run_command; for run_command, program names. A front end
// that remembers another answer for a session (ACP's reject_always) keeps it
// in a Grants of its own (NewGrants) so that it has exactly allowSession's
// scope. Not safe for concurrent use.
type Grants struct {
	tools    map[string]bool
	programs map[string]bool
}

// NewGrants returns an empty set of answers.
func NewGrants() *Grants { return newGrants() }

func newGrants() *Grants {
	return &Grants{tools: map[string]bool{}, programs: map[string]bool{}}
}

// Remember records an answer for the call (allowSession's scope).
func (g *Grants) Remember(name string, input json.RawMessage) { g.remember(name, input) }

// remember records an allowSession answer for the call.
func (g *Grants) remember(name string, input json.RawMessage) {
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

// Covers reports whether a remembered answer covers the call.
func (g *Grants) Covers(name string, input json.RawMessage) bool { return g.covers(name, input) }

// covers reports whether an earlier allowSession answer covers the call: for
// run_command, every program of a simple command was remembered (the
// shell-parser issue replaces policy.CommandPrograms later).
func (g *Grants) covers(name string, input json.RawMessage) bool {
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
func normalise(d task.Decision) task.Decision {
	switch task.Decision(strings.TrimSpace(string(d))) {
	case task.DecisionAllow:
		return task.DecisionAllow
	case task.DecisionAllowSession:
		return task.DecisionAllowSession
	}
	return task.DecisionDeny
}
