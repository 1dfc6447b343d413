package team

import (
	"fmt"
	"strings"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Role is one of the five subagent roles of protocol.md "Team mode".
type Role string

// The five roles.
const (
	Research       Role = "research"
	Implementation Role = "implementation"
	Testing        Role = "testing"
	Review         Role = "review"
	Documentation  Role = "documentation"
)

// Roles lists the five roles in protocol.md's order.
func Roles() []Role { return []Role{Research, Implementation, Testing, Review, Documentation} }

// aliases are the names a model writes for each role (lower case).
var aliases = map[string]Role{
	"research": Research, "researcher": Research, "explore": Research, "explorer": Research,
	"investigate": Research, "investigation": Research, "analysis": Research, "analyst": Research,
	"implementation": Implementation, "implement": Implementation, "implementer": Implementation,
	"implementor": Implementation, "code": Implementation, "coder": Implementation, "coding": Implementation,
	"developer": Implementation, "dev": Implementation, "engineer": Implementation, "build": Implementation,
	"fix":     Implementation,
	"testing": Testing, "test": Testing, "tests": Testing, "tester": Testing, "qa": Testing,
	"verify": Testing, "verification": Testing,
	"review": Review, "reviewer": Review, "code-review": Review, "code review": Review, "codereview": Review,
	"critic": Review, "audit": Review,
	"documentation": Documentation, "docs": Documentation, "doc": Documentation, "document": Documentation,
	"documenter": Documentation, "writer": Documentation, "technical writer": Documentation,
}

// RoleError is ParseRole's error: it names the five roles.
type RoleError struct{ Given string }

func (e *RoleError) Error() string {
	names := make([]string, 0, 5)
	for _, r := range Roles() {
		names = append(names, string(r))
	}
	return fmt.Sprintf("unknown role %q: the roles are %s", e.Given, strings.Join(names, ", "))
}

// ParseRole matches a role name case-insensitively, with the common
// aliases (Research, code, docs, qa, reviewer, ...). Anything else is a
// *RoleError naming the five roles.
func ParseRole(s string) (Role, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	k = strings.ReplaceAll(k, "_", "-")
	if r, ok := aliases[k]; ok {
		return r, nil
	}
	if r, ok := aliases[strings.ReplaceAll(k, "-", " ")]; ok {
		return r, nil
	}
	return "", &RoleError{Given: s}
}

// Writes reports whether the role changes files: implementation, testing
// and documentation work in their own worktree; research and review read
// the main tree.
func (r Role) Writes() bool {
	return r == Implementation || r == Testing || r == Documentation
}

// teamTools are the team layer's own tools: never given to a subagent.
var teamTools = map[string]bool{"run_subagent": true, "run_plan": true, "worktree_apply": true, "worktree_discard": true}

// Tools returns the role's tool set out of all (the front end's
// registry): read tools for every role; for writing roles also the edit
// tools and run_command (rooted in their worktree by the task's Env).
// ask_user (top-level tasks only), MCP tools and the team tools are never
// in it.
func (r Role) Tools(all *tool.Registry) *tool.Registry {
	out := tool.NewRegistry()
	for _, s := range all.Specs() {
		if teamTools[s.Name] || strings.HasPrefix(s.Name, "mcp__") {
			continue
		}
		ok := false
		switch s.Permission {
		case tool.ClassRead:
			ok = true
		case tool.ClassEdit, tool.ClassDestructive, tool.ClassCommand:
			ok = r.Writes()
		}
		if t, found := all.Get(s.Name); ok && found {
			out.Add(t)
		}
	}
	return out
}

// FindingsFence is the language of the fenced block a review answer ends
// with (protocol.md "Review findings").
const FindingsFence = "task-x-findings"

// SystemPrompt is the role's instructions, put before the project context
// of the subagent's system prompt.
func (r Role) SystemPrompt() string {
	const common = "You are a subagent of a lead agent that split a larger task. Do only your objective; the lead combines the results. " +
		"Your final answer is your report to the lead: say what you found or did, which files matter, and anything left open. Keep it short and concrete."
	switch r {
	case Research:
		return common + "\n\nRole: research. Read the code (read_file, search_text, find_symbols, get_dependencies, retrieve_context) " +
			"to answer the objective. You cannot change files or run commands. Report facts with file paths and line numbers."
	case Implementation:
		return common + "\n\nRole: implementation. You work in your own git worktree, a copy of the repository: make the change with the edit tools " +
			"and check it with run_command (build, tests). Your changes are committed and merged by the lead; do not commit yourself."
	case Testing:
		return common + "\n\nRole: testing. You work in your own git worktree: write or extend tests for the objective with the edit tools, " +
			"run them with run_command, and report what passes and what fails. Change production code only when the objective asks for it."
	case Review:
		return common + "\n\nRole: review. Read the code and the change described in your objective; you cannot change files or run commands. " +
			"Report problems by severity. End your answer with a fenced code block whose language is " + FindingsFence +
			": a JSON array of {\"path\", \"line\", \"severity\": \"error\"|\"warning\"|\"info\", \"message\"}, one entry per finding " +
			"(path relative to the workspace root, line 1-based); an empty array when you found nothing."
	case Documentation:
		return common + "\n\nRole: documentation. You work in your own git worktree: update the documentation (README, docs, doc comments) " +
			"for the objective with the edit tools. Keep to the project's style."
	}
	return common
}
