// Package hooks owns the user's hooks (addendum §8): parsing Claude Code's
// settings format, matching a hook event (and a tool name) to the commands
// configured for it, running each command with the event as JSON on stdin
// (through internal/sandbox, confined when the runtime's sandbox is on), and
// turning exit codes into decisions: exit 0 allows, exit 2 blocks with stderr
// fed back to the model, other exits are reported and do not block, except
// for PreToolUse, where a hook that cannot run or times out blocks (fail
// closed). Every run gives a Report for the `hook` agent event.
//
// Source: ../shared/spec/addendum.md §6, §8; protocol.md config/hooks and
// agent/event; Claude Code's hooks reference for the settings shape and the
// stdin fields. docs/hooks.md records the decisions.
package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Hook event names (addendum §8).
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SessionStart     = "SessionStart"
)

// Events lists the supported hook events in the order they happen.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// Limits of a hook command.
const (
	// DefaultTimeoutSec is a hook's timeout when "timeout" is absent.
	DefaultTimeoutSec = 60
	// MaxTimeoutSec is the largest "timeout" accepted (10 minutes).
	MaxTimeoutSec = 600
)

// WorkspaceFile is the workspace hooks file, relative to the root.
const WorkspaceFile = ".task-x/hooks.json"

// Command is one hook: {"type": "command", "command": "...", "timeout": 60}.
// Timeout is in seconds (0 means DefaultTimeoutSec).
type Command struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"`
}

// Group is one entry of an event's list: the commands run when Matcher
// matches. Matcher is a regular expression matched against the whole tool
// name (PreToolUse, PostToolUse) or SessionStart's source ("startup",
// "resume"); "" and "*" match everything. Other events ignore it.
type Group struct {
	Matcher string    `json:"matcher"`
	Hooks   []Command `json:"hooks"`

	re *regexp.Regexp
}

// Config maps an event name to its groups, as in Claude Code's settings
// "hooks" object.
type Config map[string][]Group

// Parse reads a hooks configuration: either the hooks object itself
// (`{"PreToolUse": [...]}`) or a settings file holding it under "hooks"
// (`{"hooks": {"PreToolUse": [...]}}`). null and {} give an empty Config.
// Errors name the offending entry: an unknown event, a type other than
// "command", an empty command, a timeout outside 0..600 s, a matcher that
// is not a valid regular expression.
func Parse(raw []byte) (Config, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("hooks: not a JSON object: %v", err)
	}
	if inner, ok := top["hooks"]; ok {
		top = nil
		if err := json.Unmarshal(inner, &top); err != nil {
			return nil, fmt.Errorf("hooks: \"hooks\" is not a JSON object: %v", err)
		}
	}
	cfg := Config{}
	for event, body := range top {
		if !isEvent(event) {
			return nil, fmt.Errorf("hooks: unknown event %q (want one of %s)", event, strings.Join(Events, ", "))
		}
		var groups []Group
		if err := json.Unmarshal(body, &groups); err != nil {
			return nil, fmt.Errorf("hooks: %s: want a list of {matcher, hooks}: %v", event, err)
		}
		for i := range groups {
			g := &groups[i]
			m := strings.TrimSpace(g.Matcher)
			if m != "" && m != "*" {
				re, err := regexp.Compile("^(?:" + m + ")$")
				if err != nil {
					return nil, fmt.Errorf("hooks: %s[%d].matcher %q is not a valid regular expression: %v", event, i, g.Matcher, err)
				}
				g.re = re
			}
			for j, h := range g.Hooks {
				where := fmt.Sprintf("%s[%d].hooks[%d]", event, i, j)
				if h.Type != "command" {
					return nil, fmt.Errorf("hooks: %s.type must be \"command\", got %q", where, h.Type)
				}
				if strings.TrimSpace(h.Command) == "" || strings.IndexByte(h.Command, 0) >= 0 {
					return nil, fmt.Errorf("hooks: %s.command must be a non-empty command line", where)
				}
				if h.Timeout < 0 || h.Timeout > MaxTimeoutSec {
					return nil, fmt.Errorf("hooks: %s.timeout must be between 0 and %d seconds, got %v", where, MaxTimeoutSec, h.Timeout)
				}
			}
		}
		if len(groups) > 0 {
			cfg[event] = groups
		}
	}
	return cfg, nil
}

// LoadWorkspace reads root/.task-x/hooks.json. A missing file is an empty
// Config and no error.
func LoadWorkspace(root string) (Config, error) {
	raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(WorkspaceFile)))
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hooks: reading %s: %v", WorkspaceFile, err)
	}
	cfg, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", WorkspaceFile, err)
	}
	return cfg, nil
}

func isEvent(name string) bool {
	for _, e := range Events {
		if e == name {
			return true
		}
	}
	return false
}

// matches reports whether the group applies to target (a tool name or a
// SessionStart source); events without a matcher target always match.
func (g *Group) matches(event, target string) bool {
	switch event {
	case PreToolUse, PostToolUse, SessionStart:
		return g.re == nil || g.re.MatchString(target)
	}
	return true
}

// Count is the number of commands in the Config.
func (c Config) Count() int {
	n := 0
	for _, gs := range c {
		for _, g := range gs {
			n += len(g.Hooks)
		}
	}
	return n
}
