// Package provider owns the model-provider abstraction of task-x-runtime: the
// validated ProviderConfig, the chat request and message types, the streamed
// events and the folded result of one model call, the typed ProviderError, the
// model descriptions (ModelInfo) and the context-window lookup.
//
// Adapters for each wire format live in the subpackages anthropic, openai
// (the official API and every OpenAI-compatible server) and ollama; they never
// import each other. Package all builds a Provider from a Config.
//
// Source: ../shared/spec/protocol.md (ProviderConfig, ChatRequest, chat/send,
// Errors) and addendum §10.
package provider

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Kind is the provider kind of protocol.md ProviderConfig.kind.
type Kind string

const (
	Anthropic        Kind = "anthropic"
	OpenAI           Kind = "openai"
	OpenAICompatible Kind = "openaiCompatible"
	Ollama           Kind = "ollama"
)

// Kinds lists every provider kind in the order initialize reports them.
var Kinds = []Kind{Anthropic, OpenAI, OpenAICompatible, Ollama}

// Role is a message role: "user" or "assistant".
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Part types of protocol.md ContentPart.
const (
	PartText       = "text"
	PartToolUse    = "toolUse"
	PartToolResult = "toolResult"
	PartImage      = "image"
)

// Part is one protocol.md ContentPart. Which fields are set depends on Type:
// text {Text}; toolUse {ID, Name, Input}; toolResult {ToolUseID, ToolName,
// Content, IsError}; image {MediaType, Data (base64, no data: prefix)}.
type Part struct {
	Type      string          `json:"type"`
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

// Message is a protocol.md Message.
type Message struct {
	Role    Role   `json:"role"`
	Content []Part `json:"content"`
}

// ToolSpec is a tool offered to the model; InputSchema is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Request is a validated protocol.md ChatRequest. MaxTokens is already
// defaulted (4096). Temperature is nil when unset. ContextWindow, when > 0, is
// passed to APIs that take one (Ollama num_ctx).
type Request struct {
	System        string     `json:"system,omitempty"`
	Messages      []Message  `json:"messages"`
	Tools         []ToolSpec `json:"tools,omitempty"`
	MaxTokens     int        `json:"maxTokens,omitempty"`
	Temperature   *float64   `json:"temperature,omitempty"`
	ContextWindow int        `json:"contextWindow,omitempty"`
}

// StopReason is protocol.md chat/send stopReason.
type StopReason = protocol.StopReason

// The stop reasons.
const (
	StopEndTurn       = protocol.StopEndTurn
	StopMaxTokens     = protocol.StopMaxTokens
	StopToolUse       = protocol.StopToolUse
	StopStopSequence  = protocol.StopStopSequence
	StopContentFilter = protocol.StopContentFilter
	StopUnknown       = protocol.StopUnknown
)

// Usage is token counts of one model call.
type Usage = protocol.Usage

// ToolCall is one complete tool call; Input is a JSON object (never empty:
// a parameterless call has "{}").
type ToolCall = protocol.ToolCall

// EventType names a streamed event (protocol.md chat/event types, plus the
// additive thinkingDelta of addendum §10).
type EventType string

const (
	EventTextDelta     EventType = "textDelta"
	EventThinkingDelta EventType = "thinkingDelta"
	EventToolCall      EventType = "toolCall"
	EventUsage         EventType = "usage"
	EventDone          EventType = "done"
)

// Event is one streamed event. Text is set for textDelta and thinkingDelta,
// ToolCall for toolCall, Usage for usage, StopReason for done.
type Event struct {
	Type       EventType
	Text       string
	ToolCall   *ToolCall
	Usage      *Usage
	StopReason StopReason
}

// Result is the fold of every event of one call (chat/send answers it as
// protocol.ChatResult).
//
// UsageReported says the provider reported token counts; without them Usage
// is {0, 0}, which is no measurement (ReportedUsage is nil, and chat/send
// leaves usage out).
type Result struct {
	Text          string
	ToolCalls     []ToolCall
	StopReason    StopReason
	Usage         Usage
	UsageReported bool
}

// ReportedUsage returns r's usage, or nil when the provider reported none.
func (r *Result) ReportedUsage() *Usage {
	if r == nil || !r.UsageReported {
		return nil
	}
	u := r.Usage
	return &u
}

// ModelInfo is protocol.md ModelInfo. ContextWindow is 0 when unknown.
// Capabilities holds any of "tools", "vision", "thinking", "embedding", in
// that order. Details is an Ollama "8.2B · Q4_K_M" string.
type ModelInfo = protocol.ModelInfo

// Capabilities describe what a provider kind supports (initialize providers[].capabilities).
type Capabilities struct {
	Streaming     bool `json:"streaming"`
	Tools         bool `json:"tools"`
	Vision        bool `json:"vision"`
	Thinking      bool `json:"thinking"`
	ListModels    bool `json:"listModels"`
	ModelInfo     bool `json:"modelInfo"`
	ContextWindow bool `json:"contextWindow"`
}

// ErrCannotList is returned by ListModels when the endpoint has no model list
// (for example an OpenAI-compatible server without /models).
var ErrCannotList = errors.New("provider: endpoint cannot list models")

// Provider is one configured model endpoint. Implementations are safe for
// concurrent use.
type Provider interface {
	// Config returns the validated configuration.
	Config() Config
	// Stream runs one chat call. emit receives each event in order from the
	// calling goroutine's point of view (never concurrently); the returned
	// Result is the fold of those events. Errors are *Error. Stream never
	// retries.
	Stream(ctx context.Context, req *Request, emit func(Event)) (*Result, error)
	// ListModels lists the endpoint's models, unsorted and uncapped; callers
	// sort and cap. Errors are *Error or ErrCannotList.
	ListModels(ctx context.Context) ([]ModelInfo, error)
	// Describe returns what the endpoint reports about the configured model
	// (ContextWindow 0 when it does not say). Errors are *Error or ErrCannotList.
	Describe(ctx context.Context) (ModelInfo, error)
}
