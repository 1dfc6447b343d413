package protocol

import "encoding/json"

// ProviderKind is ProviderConfig.kind.
type ProviderKind string

// The provider kinds (protocol.md ProviderConfig).
const (
	ProviderAnthropic        ProviderKind = "anthropic"
	ProviderOpenAI           ProviderKind = "openai"
	ProviderOpenAICompatible ProviderKind = "openaiCompatible"
	ProviderOllama           ProviderKind = "ollama"
)

// ProviderConfig is protocol.md ProviderConfig: which model to call and how.
// Unknown fields are rejected.
type ProviderConfig struct {
	Kind ProviderKind `json:"kind"`
	// Model is 1 to 256 characters, with no control characters.
	Model string `json:"model"`
	// BaseURL is optional, except for openaiCompatible. It must be http or
	// https and hold no credentials (addendum §10 for the path).
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKey is required for anthropic, openai and openaiCompatible,
	// optional for ollama. Never logged; rejected over plain http unless
	// the host is loopback.
	APIKey string `json:"apiKey,omitempty"`
	// TimeoutMs is the wait for headers and for each idle gap in a stream:
	// default 120000, clamped to 1000..600000.
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// ProviderParams is the params of provider/listModels, provider/models,
// provider/contextWindow and provider/test.
type ProviderParams struct {
	Provider ProviderConfig `json:"provider"`
}

// ListModelsResult is the result of provider/listModels: model ids, sorted,
// at most 500.
type ListModelsResult struct {
	Models []string `json:"models"`
}

// ModelsResult is the result of provider/models, sorted by id, at most 500.
type ModelsResult struct {
	Models []ModelInfo `json:"models"`
}

// ModelCapability is one entry of ModelInfo.capabilities.
type ModelCapability string

// The model capabilities, in the order they are listed.
const (
	CapabilityTools     ModelCapability = "tools"
	CapabilityVision    ModelCapability = "vision"
	CapabilityThinking  ModelCapability = "thinking"
	CapabilityEmbedding ModelCapability = "embedding"
)

// ModelInfo is one model of provider/models.
type ModelInfo struct {
	ID string `json:"id"`
	// ContextWindow is the input window the endpoint reports, else the
	// built-in estimate for Anthropic and OpenAI; absent when unknown.
	ContextWindow int `json:"contextWindow,omitempty"`
	// Capabilities: any of tools, vision, thinking, embedding, in that
	// order; empty when unknown.
	Capabilities []ModelCapability `json:"capabilities"`
	// Details gives the size and quantization of an Ollama model, such as
	// "8.2B · Q4_K_M".
	Details string `json:"details,omitempty"`
}

// ContextWindowResult is the result of provider/contextWindow.
type ContextWindowResult struct {
	// FromProvider is true when the provider said it, false for the
	// built-in estimate (additive).
	FromProvider bool `json:"fromProvider"`
	// Tokens is the context window of provider.model.
	Tokens int `json:"tokens"`
}

// ProviderTestResult is the result of provider/test. Its members come in
// alphabetical order, as the runtime has always sent them.
type ProviderTestResult struct {
	// Capabilities of the configured model (addendum §10).
	Capabilities ModelCapabilityFlags `json:"capabilities"`
	LatencyMs    int64                `json:"latencyMs"`
	// ModelAvailable is null when the endpoint cannot list models.
	ModelAvailable *bool    `json:"modelAvailable"`
	Models         []string `json:"models"`
}

// ModelCapabilityFlags is provider/test's capabilities of one model.
type ModelCapabilityFlags struct {
	Embedding bool `json:"embedding"`
	Thinking  bool `json:"thinking"`
	Tools     bool `json:"tools"`
	Vision    bool `json:"vision"`
}

// ChatSendParams is the params of chat/send.
type ChatSendParams struct {
	Provider ProviderConfig `json:"provider"`
	Request  ChatRequest    `json:"request"`
}

// ChatRequest is protocol.md ChatRequest.
type ChatRequest struct {
	System string `json:"system,omitempty"`
	// Messages is required, not empty; the first role must be user.
	Messages []Message `json:"messages"`
	// Tools: each inputSchema must be a JSON Schema object.
	Tools []ChatTool `json:"tools,omitempty"`
	// MaxTokens defaults to 4096.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Temperature is 0 to 2.
	Temperature *float64 `json:"temperature,omitempty"`
	// ContextWindow becomes Ollama's num_ctx (addendum §10).
	ContextWindow int `json:"contextWindow,omitempty"`
}

// Role is Message.role.
type Role string

// The message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one message of a conversation (protocol.md ChatRequest).
type Message struct {
	Role    Role          `json:"role"`
	Content []ContentPart `json:"content"`
}

// ContentPartType is ContentPart.type.
type ContentPartType string

// The content part types.
const (
	PartText       ContentPartType = "text"
	PartToolUse    ContentPartType = "toolUse"
	PartToolResult ContentPartType = "toolResult"
	PartImage      ContentPartType = "image"
)

// ContentPart is one part of a message: text { text }, toolUse { id, name,
// input }, toolResult { toolUseId, toolName, content, isError } or image
// { mediaType, data }.
type ContentPart struct {
	Type      ContentPartType `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"toolUseId,omitempty"`
	ToolName  string          `json:"toolName,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Data      string          `json:"data,omitempty"`
}

// ChatTool is protocol.md ToolSpec, a tool offered in a ChatRequest.
type ChatTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema object.
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolCall is a complete tool call of the model: its arguments are parsed.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Usage is token counts the provider reported.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// StopReason is why the provider ended a response.
type StopReason string

// The stop reasons (protocol.md chat/send). toolUse whenever the response
// holds a tool call (addendum §10).
const (
	StopEndTurn       StopReason = "endTurn"
	StopMaxTokens     StopReason = "maxTokens"
	StopToolUse       StopReason = "toolUse"
	StopStopSequence  StopReason = "stopSequence"
	StopContentFilter StopReason = "contentFilter"
	StopUnknown       StopReason = "unknown"
)

// ChatResult is the result of chat/send: the fold of its chat/events.
type ChatResult struct {
	Text       string     `json:"text"`
	ToolCalls  []ToolCall `json:"toolCalls"`
	StopReason StopReason `json:"stopReason"`
	// Usage is absent when the provider reported no token counts.
	Usage *Usage `json:"usage,omitempty"`
}

// ChatEventParams is the params of a chat/event notification.
type ChatEventParams struct {
	// RequestID is the id of the chat/send request.
	RequestID ID        `json:"requestId"`
	Event     ChatEvent `json:"event"`
}
