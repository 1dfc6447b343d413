package acp

import "encoding/json"

// The Agent Client Protocol v1 shapes this front end reads and writes
// (schema/v1/schema.json of @agentclientprotocol/sdk 2.4.0). They are
// ACP's, not ours: internal/protocol keeps the task-x protocol's.

// ProtocolVersion is the ACP version this agent speaks.
const ProtocolVersion = 1

// ACP methods.
const (
	methodInitialize        = "initialize"
	methodAuthenticate      = "authenticate"
	methodSessionNew        = "session/new"
	methodSessionLoad       = "session/load"
	methodSessionList       = "session/list"
	methodSessionPrompt     = "session/prompt"
	methodSessionCancel     = "session/cancel"
	methodSessionSetMode    = "session/set_mode"
	methodSessionUpdate     = "session/update"
	methodRequestPermission = "session/request_permission"
	methodReadTextFile      = "fs/read_text_file"
	methodWriteTextFile     = "fs/write_text_file"
	methodCreateElicitation = "elicitation/create"
	cancelRequestMethod     = "$/cancel_request"
)

// ACP error codes besides JSON-RPC's.
const (
	codeAuthRequired     = -32000
	codeResourceNotFound = -32002
)

type initializeParams struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities clientCapabilities `json:"clientCapabilities"`
}

type clientCapabilities struct {
	FS struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
	Terminal bool `json:"terminal"`
	// Elicitation's form is non-nil when the client shows forms
	// (elicitation/create, mode form): {} advertises it.
	Elicitation struct {
		Form *json.RawMessage `json:"form"`
	} `json:"elicitation"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []authMethod      `json:"authMethods"`
	AgentInfo         implementation    `json:"agentInfo"`
}

type agentCapabilities struct {
	LoadSession        bool `json:"loadSession"`
	PromptCapabilities struct {
		Image           bool `json:"image"`
		Audio           bool `json:"audio"`
		EmbeddedContext bool `json:"embeddedContext"`
	} `json:"promptCapabilities"`
	MCPCapabilities struct {
		HTTP bool `json:"http"`
		SSE  bool `json:"sse"`
	} `json:"mcpCapabilities"`
	SessionCapabilities struct {
		List struct{} `json:"list"`
	} `json:"sessionCapabilities"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type authMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type authenticateParams struct {
	MethodID string `json:"methodId"`
}

// mcpServer is one ACP McpServer: stdio (no type) or http/sse.
type mcpServer struct {
	Type    string    `json:"type"`
	Name    string    `json:"name"`
	Command string    `json:"command"`
	Args    []string  `json:"args"`
	Env     []nameVal `json:"env"`
	URL     string    `json:"url"`
	Headers []nameVal `json:"headers"`
}

type nameVal struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type newSessionParams struct {
	Cwd        string      `json:"cwd"`
	MCPServers []mcpServer `json:"mcpServers"`
}

type loadSessionParams struct {
	SessionID  string      `json:"sessionId"`
	Cwd        string      `json:"cwd"`
	MCPServers []mcpServer `json:"mcpServers"`
}

type sessionResult struct {
	SessionID string    `json:"sessionId,omitempty"`
	Modes     modeState `json:"modes"`
}

type modeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []sessionMode `json:"availableModes"`
}

type sessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type listSessionsParams struct {
	Cwd    *string `json:"cwd"`
	Cursor *string `json:"cursor"`
}

type listSessionsResult struct {
	Sessions []sessionInfo `json:"sessions"`
	// NextCursor is set when more sessions follow: the next page's cursor.
	NextCursor string `json:"nextCursor,omitempty"`
}

type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

type promptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
}

// contentBlock is an ACP ContentBlock (text, image, audio, resource_link,
// resource).
type contentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`
	MimeType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	Resource *embeddedResource `json:"resource,omitempty"`
}

type embeddedResource struct {
	URI      string  `json:"uri"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
	MimeType string  `json:"mimeType"`
}

func textBlock(s string) contentBlock { return contentBlock{Type: "text", Text: s} }

type promptResult struct {
	StopReason string `json:"stopReason"`
}

type sessionIDParams struct {
	SessionID string `json:"sessionId"`
}

type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// sessionNotification is session/update's params.
type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

type contentChunk struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       contentBlock `json:"content"`
}

// toolCall is ACP's ToolCall (sessionUpdate "tool_call") and, with
// SessionUpdate "tool_call_update" or none, its ToolCallUpdate.
type toolCall struct {
	SessionUpdate string            `json:"sessionUpdate,omitempty"`
	ToolCallID    string            `json:"toolCallId"`
	Title         string            `json:"title,omitempty"`
	Kind          string            `json:"kind,omitempty"`
	Status        string            `json:"status,omitempty"`
	Content       []toolCallContent `json:"content,omitempty"`
	Locations     []location        `json:"locations,omitempty"`
	RawInput      json.RawMessage   `json:"rawInput,omitempty"`
	RawOutput     any               `json:"rawOutput,omitempty"`
}

// toolCallContent is content {content}, or diff {path, oldText, newText}.
type toolCallContent struct {
	Type    string        `json:"type"`
	Content *contentBlock `json:"content,omitempty"`
	Path    string        `json:"path,omitempty"`
	OldText *string       `json:"oldText,omitempty"`
	NewText *string       `json:"newText,omitempty"`
}

type location struct {
	Path string `json:"path"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type commandsUpdate struct {
	SessionUpdate     string    `json:"sessionUpdate"`
	AvailableCommands []command `json:"availableCommands"`
}

type command struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

type modeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int    `json:"used"`
	Size          int    `json:"size"`
	Cost          *cost  `json:"cost,omitempty"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type permissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  toolCall           `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}
