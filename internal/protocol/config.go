package protocol

// HooksConfig is Claude Code's hooks settings (addendum §8): hook groups by
// event (PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart).
type HooksConfig map[string][]HookGroup

// HookGroup is the hooks of one matcher.
type HookGroup struct {
	// Matcher is a regular expression over tool names ("" for all).
	Matcher string        `json:"matcher"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookCommand is one hook.
type HookCommand struct {
	// Type is "command".
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in seconds (default 60).
	Timeout float64 `json:"timeout,omitempty"`
}

// ConfigHooksParams is the params of config/hooks.
type ConfigHooksParams struct {
	// Hooks replace the earlier user hooks; a malformed object is -32602.
	Hooks HooksConfig `json:"hooks"`
	// WorkspaceTrusted lets the workspace's .task-x/hooks.json load.
	WorkspaceTrusted bool `json:"workspaceTrusted"`
}

// ConfigHooksResult is the result of config/hooks, in alphabetical order as
// the runtime has always sent it.
type ConfigHooksResult struct {
	Hooks HooksConfig `json:"hooks"`
	// WorkspaceError says why the workspace's hooks file was not used
	// (additive).
	WorkspaceError string `json:"workspaceError,omitempty"`
	// WorkspaceHooks is the open workspace's .task-x/hooks.json when
	// trusted ({} otherwise).
	WorkspaceHooks HooksConfig `json:"workspaceHooks"`
}

// MCPServerConfig is one MCP server of mcp/configure, in Claude Code's or
// VS Code's shape; unknown fields are ignored.
type MCPServerConfig struct {
	// Type is stdio, http or sse.
	Type      string            `json:"type,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	TimeoutMs int               `json:"timeoutMs,omitempty"`
	Disabled  bool              `json:"disabled,omitempty"`
}

// MCPConfigureParams is the params of mcp/configure.
type MCPConfigureParams struct {
	Servers map[string]MCPServerConfig `json:"servers"`
	// WorkspaceTrusted lets the workspace's .mcp.json and .vscode/mcp.json
	// servers start.
	WorkspaceTrusted bool `json:"workspaceTrusted"`
}

// MCPStatus is the result of mcp/configure and mcp/status.
type MCPStatus struct {
	Servers []MCPServerStatus `json:"servers"`
}

// MCPServerStatus is one server of MCPStatus.
type MCPServerStatus struct {
	Name string `json:"name"`
	// Command is the URL for a remote server.
	Command  string   `json:"command"`
	Disabled bool     `json:"disabled"`
	Running  bool     `json:"running"`
	Tools    []string `json:"tools"`
	Error    *string  `json:"error"`
	// Type, State and Workspace are additive.
	Type      string `json:"type"`
	State     string `json:"state"`
	Workspace bool   `json:"workspace"`
}

// SkillsListResult is the result of skills/list, in alphabetical order as
// the runtime has always sent it.
type SkillsListResult struct {
	// Errors are the skill files that did not load.
	Errors []SkillError `json:"errors"`
	Skills []Skill      `json:"skills"`
}

// Skill is one skill found (addendum §8).
type Skill struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Source      string       `json:"source"`
	Path        string       `json:"path"`
	Triggers    []string     `json:"triggers"`
	Paths       []string     `json:"paths"`
	Params      []SkillParam `json:"params"`
}

// SkillParam is one {{param}} of a skill.
type SkillParam struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     string `json:"default"`
}

// SkillError is a skill file that did not load.
type SkillError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// SkillsResolveParams is the params of skills/resolve.
type SkillsResolveParams struct {
	Prompt string   `json:"prompt"`
	Paths  []string `json:"paths,omitempty"`
}

// SkillsResolveResult is the result of skills/resolve.
type SkillsResolveResult struct {
	Active []ActiveSkill `json:"active"`
}

// ActiveSkill is a skill that applies, with its {{param}} values filled in.
type ActiveSkill struct {
	Name string `json:"name"`
	// Reason is a leading /name, a trigger word, or a file pattern.
	Reason string `json:"reason"`
	Source string `json:"source"`
	Text   string `json:"text"`
}
