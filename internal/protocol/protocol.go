// Package protocol owns the wire vocabulary of ../shared/spec/protocol.md that
// is not a domain type: method names, the protocol version, the shapes of
// initialize, chat/event and error data, and the additive fields this runtime
// documents in docs/. Domain packages (provider, agent, workspace, tool) keep
// their own types; only the server maps them to these.
package protocol

import "encoding/json"

// Version is the protocolVersion this runtime speaks (protocol.md initialize).
const Version = 1

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

// InitializeParams is the initialize request. ProtocolVersion is a pointer so
// a missing version is told apart from 0.
type InitializeParams struct {
	ProtocolVersion *int            `json:"protocolVersion"`
	ClientInfo      json.RawMessage `json:"clientInfo,omitempty"`
	DataDir         string          `json:"dataDir,omitempty"`
	Sandbox         *bool           `json:"sandbox,omitempty"`
}

// ServerInfo is initialize.serverInfo.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ProviderInfo is one entry of initialize.providers and provider/capabilities.
type ProviderInfo struct {
	Kind           string `json:"kind"`
	Capabilities   any    `json:"capabilities"`
	RequiresAPIKey bool   `json:"requiresApiKey"`
}

// InitializeResult is the initialize result. DataDir and Sandbox echo the
// settings in force (additive fields).
type InitializeResult struct {
	ProtocolVersion int            `json:"protocolVersion"`
	ServerInfo      ServerInfo     `json:"serverInfo"`
	Providers       []ProviderInfo `json:"providers"`
	DataDir         *string        `json:"dataDir"`
	Sandbox         bool           `json:"sandbox"`
}

// ChatEventParams is the params of a chat/event notification.
type ChatEventParams struct {
	RequestID any `json:"requestId"`
	Event     any `json:"event"`
}

// AgentEventParams is the params of an agent/event notification.
type AgentEventParams struct {
	TaskID string `json:"taskId"`
	Event  any    `json:"event"`
	// Replay marks an event agent/replay sent again (additive; absent on
	// live events).
	Replay bool `json:"replay,omitempty"`
}

// ProviderError is protocol.md ProviderError, the data of a -32001 error.
// RetryAfterMs is the additive field for a provider's Retry-After. Field is
// set for local validation failures (addendum §10).
type ProviderError struct {
	Kind         string `json:"kind"`
	Message      string `json:"message"`
	Status       *int   `json:"status,omitempty"`
	Retryable    bool   `json:"retryable"`
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
	Field        string `json:"field,omitempty"`
}

// ToolErrorData is the data of a -32005 tools/call error.
type ToolErrorData struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}
