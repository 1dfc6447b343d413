package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// ReservedServer is the MCP server name the runtime gives its own tools;
// Options.MCPServers may not use it (protocol.md: the name is reserved).
const ReservedServer = "task-x"

// ToolPrefix is how Claude Code names the tools of the task-x server.
const ToolPrefix = "mcp__task-x__"

// ApproveTool is the permission prompt tool Claude Code calls.
const ApproveTool = ToolPrefix + "approve"

// ErrReservedServer is returned when Options.MCPServers names task-x.
var ErrReservedServer = errors.New(`mcpServers: the name "task-x" is reserved for the runtime's own tools`)

// Claude Code's own file tools, denied when the task-x tools stand in for
// them (protocol.md). MultiEdit, Grep, Glob and LS do not exist in 2.1.197;
// their deny rules only print a warning (notes/claude-code.md §7).
var ownFileTools = []string{"Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Grep", "Glob", "LS"}

// shellRewriteRules are the --disallowedTools rules for file-rewriting
// shell commands. The CLI applies them to the start of each simple command
// only; the hook catches the rest (redirections, $(…), sh -c, …).
var shellRewriteRules = []string{"Bash(sed -i:*)", "Bash(perl -i:*)", "Bash(cat >:*)", "Bash(cat <<:*)", "Bash(tee:*)"}

// SystemPrompt is appended to Claude Code's system prompt with the task-x
// tools.
const SystemPrompt = `You work in this repository through the task-x tools (the mcp__task-x__ tools). Read, search, create, edit, move and delete files only with them: they keep the user's edit log, check for stale edits and keep every change reviewable. Never change files with shell commands (no sed -i, perl -i, tee, redirections such as > or >>, or scripts that write files); use the shell only to build, test and inspect.`

// Options configure one Claude Code run.
type Options struct {
	// Bin is the CLI to start: a path, or a name looked up on PATH.
	// Default "claude".
	Bin string
	// Dir is the workspace root: the CLI's working folder and the
	// --mcp-server root.
	Dir string
	// Prompt is the first user message; Images go with it as image blocks.
	Prompt string
	Images []Image
	// Model is --model ("" = the CLI's default).
	Model string
	// PermissionMode is --permission-mode: default, acceptEdits or plan
	// ("" = default). bypassPermissions is refused (it cannot run as
	// root; ApproveAll is the runtime's way).
	PermissionMode string
	// UseTaskTools serves the task-x tools to Claude instead of its own
	// file tools (protocol.md useTaskTools, default true at the wire).
	UseTaskTools bool
	// RuntimeBin is the task-x-runtime executable: it serves the MCP tools
	// (--mcp-server) and is the PreToolUse hook (--hook-shell-edit).
	RuntimeBin string
	// ReadTools, WriteTools and CommandTools are the task-x tool names by
	// class; they make --allowedTools (read tools always, write tools in
	// acceptEdits, command tools when AllowCommands).
	ReadTools, WriteTools, CommandTools []string
	AllowCommands                       bool
	// Disallowed are more tools for --disallowedTools, as Claude Code
	// names them (mcp__task-x__write_file, Bash): those the policy does
	// not offer (readOnly, a deny rule naming the whole tool).
	Disallowed []string
	// MCPServers are more servers in Claude Code's mcpServers format.
	MCPServers map[string]json.RawMessage
	// DataDir is the runtime's data folder: the --mcp-server child opens
	// the edit log there (--data-dir), so its edits land in the log the
	// runtime shares through the checkpoint's file lock. "": the child's
	// log is its own, in memory.
	DataDir string
	// TaskID is the task the child records its edits under (--task-id).
	TaskID string
	// ForwardTools starts the child with --forward: it opens nothing and
	// sends every tool call back to this runtime (Hooks.RunTool), which
	// runs it in the task's environment. DataDir and TaskID are then not
	// passed.
	ForwardTools bool
	// System is more text for --append-system-prompt (the active skills).
	System string
	// Env is the CLI's environment (default: the runtime's own).
	Env []string
}

// Image is one image block of the first message.
type Image struct {
	MediaType string `json:"mediaType"`
	Data      string `json:"data"` // base64
}

// Args returns the CLI's arguments for o; approval is the TASK_X_APPROVAL
// value given to the MCP server.
func Args(o *Options, approval string) ([]string, error) {
	switch o.PermissionMode {
	case "", "default", "acceptEdits", "plan":
	default:
		return nil, fmt.Errorf("permission mode %q is not supported (default, acceptEdits or plan)", o.PermissionMode)
	}
	if o.RuntimeBin == "" {
		return nil, errors.New("claudecode: no runtime executable for the MCP server and the hook")
	}
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--replay-user-messages"}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.PermissionMode != "" {
		args = append(args, "--permission-mode", o.PermissionMode)
	}
	mcpArgs := []string{"--mcp-server", "--root", o.Dir}
	switch {
	case o.ForwardTools:
		mcpArgs = append(mcpArgs, "--forward")
	default:
		if o.DataDir != "" {
			mcpArgs = append(mcpArgs, "--data-dir", o.DataDir)
		}
		if o.TaskID != "" {
			mcpArgs = append(mcpArgs, "--task-id", o.TaskID)
		}
	}
	if !o.UseTaskTools {
		mcpArgs = []string{"--mcp-server", "--no-tools"}
	}
	servers := map[string]any{ReservedServer: map[string]any{
		"command": o.RuntimeBin, "args": mcpArgs,
		"env": map[string]string{"TASK_X_APPROVAL": approval},
	}}
	for name, s := range o.MCPServers {
		if strings.EqualFold(name, ReservedServer) {
			return nil, ErrReservedServer
		}
		servers[name] = s
	}
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	args = append(args, "--strict-mcp-config", "--mcp-config", string(mcpConfig),
		"--permission-prompt-tool", ApproveTool)

	hook := shellQuote(o.RuntimeBin) + " --hook-shell-edit"
	if !o.UseTaskTools {
		hook = "TASK_X_HOOK=sandbox " + hook
	}
	settings, _ := json.Marshal(map[string]any{
		// notes/claude-code.md §2, §6: enabled and failIfUnavailable, or
		// the CLI runs commands unsandboxed.
		"sandbox": map[string]any{"enabled": true, "allowUnsandboxedCommands": false, "failIfUnavailable": true},
		"hooks": map[string]any{"PreToolUse": []any{map[string]any{
			"matcher": "Bash",
			"hooks":   []any{map[string]any{"type": "command", "command": hook, "timeout": 30}},
		}}},
	})
	args = append(args, "--settings", string(settings))

	var disallowed []string
	if o.UseTaskTools {
		disallowed = append(append(disallowed, ownFileTools...), shellRewriteRules...)
	}
	hidden := map[string]bool{}
	for _, n := range o.Disallowed {
		if !slices.Contains(disallowed, n) {
			disallowed = append(disallowed, n)
		}
		hidden[n] = true
	}
	if len(disallowed) > 0 {
		args = append(args, "--disallowedTools", strings.Join(disallowed, ","))
	}
	if o.UseTaskTools {
		var allowed []string
		add := func(names []string) {
			for _, n := range names {
				if !hidden[ToolPrefix+n] {
					allowed = append(allowed, ToolPrefix+n)
				}
			}
		}
		add(o.ReadTools)
		if o.PermissionMode == "acceptEdits" {
			add(o.WriteTools)
		}
		if o.AllowCommands {
			add(o.CommandTools)
		}
		sort.Strings(allowed)
		if len(allowed) > 0 {
			args = append(args, "--allowedTools", strings.Join(allowed, ","))
		}
	}
	var sys []string
	if o.UseTaskTools {
		sys = append(sys, SystemPrompt)
	}
	if s := strings.TrimSpace(o.System); s != "" {
		sys = append(sys, s)
	}
	if len(sys) > 0 {
		args = append(args, "--append-system-prompt", strings.Join(sys, "\n\n"))
	}
	return args, nil
}

// shellQuote quotes s for the shell the CLI runs hook commands with.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// userLine is one stream-json user message on the CLI's stdin.
func userLine(text string, images []Image) []byte {
	content := []any{map[string]any{"type": "text", "text": text}}
	for _, im := range images {
		content = append(content, map[string]any{"type": "image", "source": map[string]any{
			"type": "base64", "media_type": im.MediaType, "data": im.Data,
		}})
	}
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content}})
	return append(b, '\n')
}

// PermissionMode is the --permission-mode of a run: the client's
// permissionMode when it gave one, else the one policy.mode asks for
// (acceptEdits; default and readOnly run in Claude Code's default mode,
// the policy refusing what readOnly does not offer).
func PermissionMode(given string, pol policy.Policy) string {
	if given != "" {
		return given
	}
	if pol.Mode == policy.ModeAcceptEdits {
		return "acceptEdits"
	}
	return ""
}

// PolicyFor is the policy of a run whose client gave permissionMode and
// pol: pol, with mode acceptEdits when the client set no mode of its own
// and permissionMode is acceptEdits (so its edits run without asking, as
// before policy reached claude/run).
func PolicyFor(permissionMode string, pol policy.Policy, modeGiven bool) policy.Policy {
	if !modeGiven && permissionMode == "acceptEdits" {
		pol.Mode = policy.ModeAcceptEdits
	}
	return pol
}

// claudeOwnTools are Claude Code's own tools a policy can keep from the
// model, with their task-x permission classes (ClassOf).
var claudeOwnTools = []string{"Bash", "Edit", "Write", "NotebookEdit"}

// Hidden is Options.Disallowed for pol: the task-x tools of reg (by their
// Claude Code names) and Claude Code's own tools that pol does not offer
// in an agent task (policy.OfferedTool): under readOnly every tool but the
// read ones, and any tool a deny rule names without a pattern.
func Hidden(pol policy.Policy, reg *tool.Registry) []string {
	var out []string
	if reg != nil {
		for _, spec := range reg.Specs() {
			switch spec.Permission {
			case tool.ClassInteractive, tool.ClassMCP:
				continue // not served to Claude Code
			}
			if !pol.OfferedTool(spec, policy.ChatAgent) {
				out = append(out, ToolPrefix+spec.Name)
			}
		}
	}
	for _, name := range claudeOwnTools {
		if !pol.OfferedTool(tool.Spec{Name: name, Permission: ClassOf(nil, name)}, policy.ChatAgent) {
			out = append(out, name)
		}
	}
	return out
}
