package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// chatRequest is the body of POST /chat/completions
// (https://platform.openai.com/docs/api-reference/chat/create).
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Tools               []wireTool     `json:"tools,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage is one chat message. Content is a string, a []wirePart, or nil
// (JSON null, for an assistant message holding only tool calls).
type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is the parameters of a tool declared without an input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildChatRequest maps a provider.Request to the wire body. The system
// prompt comes first; each toolResult part becomes a role "tool" message
// placed before the rest of its user message (the API wants tool messages
// right after the assistant message that called them); images become
// image_url parts with data URLs (protocol.md Images). Kind openai gets
// max_completion_tokens (newer models reject max_tokens), compatible
// servers max_tokens. Errors are *provider.Error of kind invalidRequest.
func buildChatRequest(kind provider.Kind, model string, req *provider.Request, stream bool) (*chatRequest, error) {
	if req == nil {
		return nil, &provider.Error{Kind: provider.KindInvalidRequest, Field: "request", Message: "request is required"}
	}
	out := &chatRequest{Model: model, Temperature: req.Temperature, Stream: stream}
	if stream {
		out.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.MaxTokens > 0 {
		if kind == provider.OpenAI {
			out.MaxCompletionTokens = req.MaxTokens
		} else {
			out.MaxTokens = req.MaxTokens
		}
	}
	if req.System != "" {
		out.Messages = append(out.Messages, wireMessage{Role: "system", Content: req.System})
	}
	for i, m := range req.Messages {
		var err error
		switch m.Role {
		case provider.RoleUser:
			out.Messages, err = appendUser(out.Messages, m.Content)
		case provider.RoleAssistant:
			out.Messages, err = appendAssistant(out.Messages, m.Content)
		default:
			err = fmt.Errorf("role %q is not user or assistant", m.Role)
		}
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindInvalidRequest, Field: fmt.Sprintf("messages[%d]", i), Message: err.Error()}
		}
	}
	for i, t := range req.Tools {
		if t.Name == "" {
			return nil, &provider.Error{Kind: provider.KindInvalidRequest, Field: fmt.Sprintf("tools[%d].name", i), Message: "tool name is required"}
		}
		params := t.InputSchema
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = emptySchema
		}
		out.Tools = append(out.Tools, wireTool{Type: "function", Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, nil
}

func appendUser(msgs []wireMessage, parts []provider.Part) ([]wireMessage, error) {
	var content []wirePart
	hasImage := false
	for _, p := range parts {
		switch p.Type {
		case provider.PartToolResult:
			if p.ToolUseID == "" {
				return nil, fmt.Errorf("toolResult without toolUseId")
			}
			text := p.Content
			if p.IsError {
				text = "Error: " + text
			}
			msgs = append(msgs, wireMessage{Role: "tool", ToolCallID: p.ToolUseID, Content: text})
		case provider.PartText:
			content = append(content, wirePart{Type: "text", Text: p.Text})
		case provider.PartImage:
			if p.MediaType == "" || p.Data == "" {
				return nil, fmt.Errorf("image without mediaType or data")
			}
			hasImage = true
			content = append(content, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: "data:" + p.MediaType + ";base64," + p.Data}})
		default:
			return nil, fmt.Errorf("part type %q is not allowed in a user message", p.Type)
		}
	}
	switch {
	case len(content) == 0:
		return msgs, nil
	case hasImage:
		return append(msgs, wireMessage{Role: "user", Content: content}), nil
	}
	// Text only: a plain string, which every compatible server accepts.
	return append(msgs, wireMessage{Role: "user", Content: joinText(content)}), nil
}

func appendAssistant(msgs []wireMessage, parts []provider.Part) ([]wireMessage, error) {
	var texts []wirePart
	var calls []wireToolCall
	for _, p := range parts {
		switch p.Type {
		case provider.PartText:
			texts = append(texts, wirePart{Type: "text", Text: p.Text})
		case provider.PartToolUse:
			if p.ID == "" || p.Name == "" {
				return nil, fmt.Errorf("toolUse without id or name")
			}
			args := string(bytes.TrimSpace(p.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			calls = append(calls, wireToolCall{ID: p.ID, Type: "function", Function: wireFunction{Name: p.Name, Arguments: args}})
		default:
			return nil, fmt.Errorf("part type %q is not allowed in an assistant message", p.Type)
		}
	}
	if len(texts) == 0 && len(calls) == 0 {
		return msgs, nil
	}
	m := wireMessage{Role: "assistant", ToolCalls: calls}
	if len(texts) > 0 {
		m.Content = joinText(texts)
	}
	return append(msgs, m), nil
}

func joinText(parts []wirePart) string {
	if len(parts) == 1 {
		return parts[0].Text
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}
