// Package protocol owns the wire vocabulary of ../shared/spec/protocol.md and
// addendum.md: every method name, the params and result of every request,
// the params of every notification, every agent/event and chat/event type,
// the error codes and error data. Each type is declared here once, with the
// JSON names of the spec; the JSON Schema (schema/protocol.schema.json) and
// the TypeScript declarations (schema/protocol.d.ts) are generated from
// these declarations and their doc comments (internal/protocol/schema), and a
// test fails when the committed files drift from them.
//
// The package uses the standard library only and imports nothing of this
// module, so any layer may name its types: the front ends and the clients in
// this repository (cmd/task-x, the end-to-end tests) speak them, the engines
// and the task layer emit its events (AgentEvent), and a part whose result
// is a wire shape as it is names the type here instead of declaring a twin
// (workspace.Summary is WorkspaceSummary, graph.ProjectResult is
// GraphProjectResult; internal/archtest lists who may).
package protocol

import "embed"

// Version is the protocolVersion this runtime speaks (protocol.md initialize).
const Version = 1

// Source holds this package's Go files, so that the schema generator reads
// the doc comments and enum constants of the types it describes, also in a
// built binary (task-x-runtime --print-schema).
//
//go:embed *.go
var Source embed.FS

// Method names (protocol.md Methods).
const (
	MethodInitialize          = "initialize"
	MethodShutdown            = "shutdown"
	MethodExit                = "exit"
	MethodCancelRequest       = "$/cancelRequest"
	MethodProviderCaps        = "provider/capabilities"
	MethodListModels          = "provider/listModels"
	MethodModels              = "provider/models"
	MethodContextWindow       = "provider/contextWindow"
	MethodProviderTest        = "provider/test"
	MethodChatSend            = "chat/send"
	MethodChatEvent           = "chat/event"
	MethodWorkspaceOpen       = "workspace/open"
	MethodWorkspaceProg       = "workspace/progress"
	MethodContextInspect      = "context/inspect"
	MethodAgentRun            = "agent/run"
	MethodClaudeRun           = "claude/run"
	MethodAgentEvent          = "agent/event"
	MethodRequestApproval     = "agent/requestApproval"
	MethodAgentTasks          = "agent/tasks"
	MethodAgentTask           = "agent/task"
	MethodAgentDeleteTask     = "agent/deleteTask"
	MethodAgentReplay         = "agent/replay" // additive: docs/tasklog.md
	MethodToolsList           = "tools/list"
	MethodToolsCall           = "tools/call"
	MethodAgentSteer          = "agent/steer"
	MethodAgentCancelTool     = "agent/cancelTool"
	MethodAgentCancelSubagent = "agent/cancelSubagent"
	MethodEditsList           = "edits/list"
	MethodEditsPending        = "edits/pending"
	MethodEditsKeep           = "edits/keep"
	MethodEditsRevert         = "edits/revert"
	MethodEditsUndo           = "edits/undo"
	MethodGraphProject        = "graph/project"
	MethodGraphFile           = "graph/file"
	MethodWorkspaceRefresh    = "workspace/refresh"
	MethodFilesChanged        = "workspace/filesChanged"
	MethodMCPConfigure        = "mcp/configure"
	MethodMCPStatus           = "mcp/status"
	MethodSkillsList          = "skills/list"
	MethodSkillsResolve       = "skills/resolve"
	MethodAskUser             = "agent/askUser"
	MethodConfigHooks         = "config/hooks"
	MethodPromptRefine        = "prompt/refine"
	MethodContextRetrieve     = "context/retrieve"
	MethodAgentBestOf         = "agent/bestOf"
	MethodWorktreesApply      = "worktrees/apply"
	MethodWorktreesDiscard    = "worktrees/discard"
	MethodWorktreesList       = "worktrees/list"
)
