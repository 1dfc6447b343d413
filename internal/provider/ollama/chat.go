package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// Wire shapes of POST /api/chat (docs/api.md "Generate a chat completion").

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools,omitempty"`
	Stream   bool          `json:"stream"`
	Options  chatOptions   `json:"options"`
}

type chatOptions struct {
	NumPredict  int      `json:"num_predict,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	NumCtx      int      `json:"num_ctx,omitempty"`
}

type chatMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	Images    []string       `json:"images,omitempty"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	ToolName  string         `json:"tool_name,omitempty"`
}

type chatToolCall struct {
	ID       string           `json:"id,omitempty"`
	Function chatToolFunction `json:"function"`
}

type chatToolFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatToolSpec `json:"function"`
}

type chatToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// chatChunk is one NDJSON line of the streamed reply. Error is set on an
// error line ({"error": "..."}) that Ollama may send after HTTP 200.
type chatChunk struct {
	Message         *chatChunkMessage `json:"message"`
	Done            bool              `json:"done"`
	DoneReason      string            `json:"done_reason"`
	PromptEvalCount *int              `json:"prompt_eval_count"`
	EvalCount       *int              `json:"eval_count"`
	Error           json.RawMessage   `json:"error"`
}

// chatChunkMessage is the message of a chatChunk.
type chatChunkMessage struct {
	Content   string         `json:"content"`
	Thinking  string         `json:"thinking"`
	ToolCalls []chatToolCall `json:"tool_calls"`
}

var emptyObject = json.RawMessage(`{}`)

// buildChatRequest maps a provider.Request to the /api/chat body: the system
// prompt first; user text with the message's images list (base64); assistant
// text with tool_calls (arguments as an object); every toolResult part as a
// role "tool" message with content and tool_name, placed before the rest of
// its message so it directly follows the assistant turn that asked for it.
// Errors are *provider.Error of kind invalidRequest.
func buildChatRequest(model string, req *provider.Request) (*chatRequest, error) {
	out := &chatRequest{Model: model, Stream: true}
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for i, m := range req.Messages {
		if m.Role != provider.RoleUser && m.Role != provider.RoleAssistant {
			return nil, invalidRequest(fmt.Sprintf("messages[%d].role", i), "role must be user or assistant")
		}
		msg := chatMessage{Role: string(m.Role)}
		var text []string
		for j, p := range m.Content {
			field := fmt.Sprintf("messages[%d].content[%d]", i, j)
			switch p.Type {
			case provider.PartText:
				text = append(text, p.Text)
			case provider.PartImage:
				if p.Data == "" {
					return nil, invalidRequest(field+".data", "image without data")
				}
				msg.Images = append(msg.Images, p.Data)
			case provider.PartToolUse:
				if p.Name == "" {
					return nil, invalidRequest(field+".name", "toolUse without a name")
				}
				args, err := objectArguments(p.Input)
				if err != nil {
					return nil, invalidRequest(field+".input", err.Error())
				}
				msg.ToolCalls = append(msg.ToolCalls, chatToolCall{
					Function: chatToolFunction{Name: p.Name, Arguments: args},
				})
			case provider.PartToolResult:
				content := p.Content
				if p.IsError {
					content = "Error: " + content
				}
				out.Messages = append(out.Messages, chatMessage{Role: "tool", Content: content, ToolName: p.ToolName})
			default:
				return nil, invalidRequest(field+".type", fmt.Sprintf("unknown content part type %q", p.Type))
			}
		}
		msg.Content = strings.Join(text, "\n")
		if msg.Content != "" || len(msg.Images) > 0 || len(msg.ToolCalls) > 0 {
			out.Messages = append(out.Messages, msg)
		}
	}
	for i, t := range req.Tools {
		if t.Name == "" {
			return nil, invalidRequest(fmt.Sprintf("tools[%d].name", i), "tool without a name")
		}
		params := t.InputSchema
		if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, chatTool{Type: "function",
			Function: chatToolSpec{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if req.MaxTokens > 0 {
		out.Options.NumPredict = req.MaxTokens
	}
	out.Options.Temperature = req.Temperature
	if req.ContextWindow > 0 {
		out.Options.NumCtx = req.ContextWindow
	}
	return out, nil
}

func invalidRequest(field, msg string) *provider.Error {
	return &provider.Error{Kind: provider.KindInvalidRequest, Field: field, Message: msg}
}

// objectArguments returns raw as a JSON object: empty or null becomes {}, a
// JSON string holding an object (as some servers send) is unwrapped, and
// anything else is an error.
func objectArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return emptyObject, nil
	}
	switch raw[0] {
	case '{':
		if !json.Valid(raw) {
			return nil, errors.New("arguments are not valid JSON")
		}
		return raw, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("arguments are not valid JSON")
		}
		return objectArguments(json.RawMessage(s))
	}
	return nil, errors.New("arguments are not a JSON object")
}

// Stream implements provider.Provider: one /api/chat call with stream true.
// It emits textDelta for message.content, thinkingDelta for message.thinking
// (never folded into Result.Text), toolCall for each entry of
// message.tool_calls (ids assigned as call_<n> when absent or repeated),
// then usage (when prompt_eval_count or eval_count is present) and done
// from the final done line. stopReason is toolUse when a
// tool call arrived, else done_reason stop → endTurn, length → maxTokens,
// anything else → unknown.
//
// Errors are *provider.Error: an HTTP status via KindForStatus; an error line
// after HTTP 200 (server unless its text says otherwise); the stream ending
// before done true → network; a malformed line or one over MaxLineBytes →
// protocol; the idle-gap timeout → timeout; ctx done → cancelled.
func (c *client) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	if req == nil {
		return nil, invalidRequest("request", "missing request")
	}
	if emit == nil {
		emit = func(provider.Event) {}
	}
	body, err := buildChatRequest(c.cfg.Model, req)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, http.MethodPost, "/api/chat", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()

	f := newFolder(emit)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		done, err := f.line(line)
		if err != nil {
			err.Message = c.redact(err.Message)
			return nil, err
		}
		if done {
			return f.result(), nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, provider.Errorf(provider.KindProtocol, "stream line over %d bytes", MaxLineBytes)
		}
		pe := provider.ClassifyTransportError(ctx, err)
		pe.Message = c.redact(pe.Message)
		return nil, pe
	}
	if ctx.Err() != nil {
		return nil, provider.ClassifyTransportError(ctx, ctx.Err())
	}
	return nil, provider.Errorf(provider.KindNetwork, "stream ended before the final done line")
}

// folder turns chat chunks into events and keeps their fold.
type folder struct {
	emit  func(provider.Event)
	text  strings.Builder
	calls []provider.ToolCall
	ids   map[string]bool
	res   provider.Result
	chunk chatChunk
}

func newFolder(emit func(provider.Event)) *folder {
	return &folder{emit: emit, calls: []provider.ToolCall{}}
}

// line handles one non-empty NDJSON line and reports whether it was the
// final done line.
func (f *folder) line(line []byte) (bool, *provider.Error) {
	f.chunk = chatChunk{}
	ch := &f.chunk
	if err := decodeChunk(line, ch); err != nil {
		return false, provider.Errorf(provider.KindProtocol, "malformed stream line: %v", err)
	}
	if len(ch.Error) > 0 && !bytes.Equal(ch.Error, []byte("null")) {
		msg := errorText(append([]byte(`{"error":`), append(ch.Error, '}')...))
		return false, &provider.Error{Kind: kindForErrorText(msg), Message: msg}
	}
	if m := ch.Message; m != nil {
		if m.Thinking != "" {
			f.emit(provider.Event{Type: provider.EventThinkingDelta, Text: m.Thinking})
		}
		if m.Content != "" {
			f.text.WriteString(m.Content)
			f.emit(provider.Event{Type: provider.EventTextDelta, Text: m.Content})
		}
		for _, tc := range m.ToolCalls {
			call, err := f.toolCall(tc)
			if err != nil {
				return false, err
			}
			f.calls = append(f.calls, call)
			f.emit(provider.Event{Type: provider.EventToolCall, ToolCall: &call})
		}
	}
	if !ch.Done {
		return false, nil
	}
	if ch.PromptEvalCount != nil || ch.EvalCount != nil {
		if ch.PromptEvalCount != nil {
			f.res.Usage.InputTokens = max(*ch.PromptEvalCount, 0)
		}
		if ch.EvalCount != nil {
			f.res.Usage.OutputTokens = max(*ch.EvalCount, 0)
		}
		u := f.res.Usage
		f.res.UsageReported = true
		f.emit(provider.Event{Type: provider.EventUsage, Usage: &u})
	}
	switch {
	case len(f.calls) > 0:
		f.res.StopReason = provider.StopToolUse
	case ch.DoneReason == "stop":
		f.res.StopReason = provider.StopEndTurn
	case ch.DoneReason == "length":
		f.res.StopReason = provider.StopMaxTokens
	default:
		f.res.StopReason = provider.StopUnknown
	}
	f.emit(provider.Event{Type: provider.EventDone, StopReason: f.res.StopReason})
	return true, nil
}

// toolCall validates one streamed tool call and gives it a unique id.
func (f *folder) toolCall(tc chatToolCall) (provider.ToolCall, *provider.Error) {
	if len(f.calls) >= maxToolCalls {
		return provider.ToolCall{}, provider.Errorf(provider.KindProtocol, "more than %d tool calls in one response", maxToolCalls)
	}
	if tc.Function.Name == "" {
		return provider.ToolCall{}, provider.Errorf(provider.KindProtocol, "tool call without a function name")
	}
	args, err := objectArguments(tc.Function.Arguments)
	if err != nil {
		return provider.ToolCall{}, provider.Errorf(provider.KindProtocol, "tool call %q: %v", tc.Function.Name, err)
	}
	if f.ids == nil {
		f.ids = make(map[string]bool)
	}
	id := tc.ID
	if id == "" || f.ids[id] {
		for id = provider.NewCallID(); f.ids[id]; id = provider.NewCallID() {
		}
	}
	f.ids[id] = true
	return provider.ToolCall{ID: id, Name: tc.Function.Name, Input: args}, nil
}

func (f *folder) result() *provider.Result {
	r := f.res
	r.Text = f.text.String()
	r.ToolCalls = f.calls
	return &r
}

// kindForErrorText classifies the text of an error line sent after HTTP 200:
// kind server unless the text names another cause.
func kindForErrorText(msg string) provider.ErrorKind {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "not found"):
		return provider.KindNotFound
	case strings.Contains(m, "unauthorized"), strings.Contains(m, "invalid api key"):
		return provider.KindAuth
	case strings.Contains(m, "forbidden"):
		return provider.KindPermissionDenied
	case strings.Contains(m, "rate limit"), strings.Contains(m, "too many requests"):
		return provider.KindRateLimited
	case strings.Contains(m, "overloaded"), strings.Contains(m, "server busy"):
		return provider.KindOverloaded
	case strings.Contains(m, "timed out"), strings.Contains(m, "timeout"):
		return provider.KindTimeout
	case strings.Contains(m, "context length"), strings.Contains(m, "exceeds the context"):
		return provider.KindInvalidRequest
	}
	return provider.KindServer
}
