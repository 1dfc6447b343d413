package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
)

// hookInput is the part of Claude Code's PreToolUse hook stdin the hook
// reads (notes/claude-code.md §4).
type hookInput struct {
	HookEventName string `json:"hook_event_name"`
	ToolName      string `json:"tool_name"`
	ToolInput     struct {
		Command                   string `json:"command"`
		DangerouslyDisableSandbox bool   `json:"dangerouslyDisableSandbox"`
	} `json:"tool_input"`
}

// DisableSandboxReason is what the model is told when a Bash call asks to
// leave the sandbox (protocol.md: denied at once, without asking).
const DisableSandboxReason = "dangerouslyDisableSandbox is not allowed: every command runs in the sandbox. Run the command without it."

// maxHookInput bounds the hook's stdin.
const maxHookInput = 8 << 20

// Hook is `task-x-runtime --hook-shell-edit`: it reads one PreToolUse event
// from in and decides on it. A Bash call that asks for
// dangerouslyDisableSandbox, or whose command rewrites files
// (ShellEditReason), is denied with a permissionDecision on out (the model
// gets the reason). Other calls pass with no output. Input that cannot be
// read blocks the call (exit code 2, the reason on errOut): the hook fails
// closed. With sandboxOnly (useTaskTools false) only
// dangerouslyDisableSandbox is checked. It returns the process exit code.
func Hook(in io.Reader, out, errOut io.Writer, sandboxOnly bool) int {
	raw, err := io.ReadAll(io.LimitReader(in, maxHookInput+1))
	if err != nil || len(raw) > maxHookInput {
		fmt.Fprintln(errOut, "task-x hook: the hook input could not be read")
		return 2
	}
	var ev hookInput
	if err := json.Unmarshal(raw, &ev); err != nil {
		fmt.Fprintln(errOut, "task-x hook: the hook input is not JSON")
		return 2
	}
	if ev.ToolName != "Bash" {
		return 0
	}
	reason := ""
	if ev.ToolInput.DangerouslyDisableSandbox {
		reason = DisableSandboxReason
	} else if !sandboxOnly {
		reason = ShellEditReason(ev.ToolInput.Command)
	}
	if reason == "" {
		return 0
	}
	ans, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}})
	if _, err := fmt.Fprintln(out, string(ans)); err != nil {
		fmt.Fprintln(errOut, reason)
		return 2
	}
	return 0
}
