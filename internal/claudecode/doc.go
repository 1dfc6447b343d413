// Package claudecode owns the Claude Code engine of claude/run (protocol.md,
// "Claude Code engine and the task-x tools"; ../shared/notes/claude-code.md):
// the command line and settings the CLI is started with, the stream-json
// protocol on its stdin and stdout mapped to agent events, and the rules of
// the PreToolUse hook `task-x-runtime --hook-shell-edit` that keeps file
// rewrites on the task-x tools.
package claudecode
