package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// Stream bounds on provider data (style: provider data is untrusted).
const (
	// maxBlocks bounds content block indexes; an index at or above it is a
	// protocol error.
	maxBlocks = 1024
	// maxIndexJump bounds how far a new block index may skip past the
	// highest index seen so far (Anthropic numbers blocks 0, 1, 2, ...).
	maxIndexJump = 16
	// maxToolInputBytes bounds the partial JSON of one call's input.
	maxToolInputBytes = 16 << 20
)

// --- request encoding (https://docs.anthropic.com/en/api/messages) ---

type apiRequest struct {
	Model       string       `json:"model"`
	MaxTokens   int          `json:"max_tokens"`
	System      string       `json:"system,omitempty"`
	Messages    []apiMessage `json:"messages"`
	Tools       []apiTool    `json:"tools,omitempty"`
	Temperature *float64     `json:"temperature,omitempty"`
	Stream      bool         `json:"stream"`
}

type apiMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type apiText struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type apiToolUse struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type apiToolResult struct {
	Type      string `json:"type"` // "tool_result"
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

type apiImage struct {
	Type   string         `json:"type"` // "image"
	Source apiImageSource `json:"source"`
}

type apiImageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type apiTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// encodeRequest builds the Messages API body for req with stream: true.
// Empty text parts are dropped (the API rejects empty text blocks) unless
// that would leave a message with no content.
func encodeRequest(model string, req *provider.Request) ([]byte, error) {
	if req == nil || len(req.Messages) == 0 {
		return nil, &provider.Error{Kind: provider.KindInvalidRequest, Field: "messages", Message: "messages is required and must not be empty"}
	}
	body := apiRequest{
		Model:       model,
		MaxTokens:   req.MaxTokens,
		System:      req.System,
		Temperature: req.Temperature,
		Stream:      true,
		Messages:    make([]apiMessage, 0, len(req.Messages)),
	}
	if body.MaxTokens <= 0 {
		body.MaxTokens = provider.DefaultMaxTokens
	}
	for i, m := range req.Messages {
		am := apiMessage{Role: string(m.Role), Content: make([]any, 0, len(m.Content))}
		for j, p := range m.Content {
			switch p.Type {
			case provider.PartText:
				if p.Text == "" {
					continue
				}
				am.Content = append(am.Content, apiText{Type: "text", Text: p.Text})
			case provider.PartToolUse:
				input := p.Input
				if len(bytes.TrimSpace(input)) == 0 {
					input = json.RawMessage("{}")
				}
				am.Content = append(am.Content, apiToolUse{Type: "tool_use", ID: p.ID, Name: p.Name, Input: input})
			case provider.PartToolResult:
				am.Content = append(am.Content, apiToolResult{Type: "tool_result", ToolUseID: p.ToolUseID, Content: p.Content, IsError: p.IsError})
			case provider.PartImage:
				am.Content = append(am.Content, apiImage{Type: "image", Source: apiImageSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}})
			default:
				return nil, &provider.Error{Kind: provider.KindInvalidRequest, Field: fmt.Sprintf("messages[%d].content[%d].type", i, j), Message: fmt.Sprintf("unknown part type %q", p.Type)}
			}
		}
		if len(am.Content) == 0 {
			am.Content = append(am.Content, apiText{Type: "text", Text: ""})
		}
		body.Messages = append(body.Messages, am)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, apiTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindInvalidRequest, Message: "cannot encode the request: " + err.Error()}
	}
	return b, nil
}

// --- stream events (https://docs.anthropic.com/en/api/messages-streaming) ---

type apiUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

type streamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage apiUsage `json:"usage"`
	} `json:"message"`
	Index        *int `json:"index"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Text  string          `json:"text"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *streamDelta `json:"delta"`
	Usage *apiUsage    `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// streamDelta is the delta of content_block_delta and message_delta.
type streamDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	StopReason  string `json:"stop_reason"`
}

type blockKind int

const (
	blockOther blockKind = iota // server tools, redacted thinking, future types
	blockText
	blockToolUse
	blockThinking
)

type block struct {
	kind    blockKind
	id      string
	name    string
	initial json.RawMessage // content_block.input of a tool_use start
	input   []byte          // concatenated partial_json
	stopped bool
}

// fold accumulates one response's events into provider events and a Result.
type fold struct {
	emit      func(provider.Event)
	text      strings.Builder
	calls     []provider.ToolCall
	blocks    map[int]*block
	maxIndex  int
	stop      string
	input     int
	output    int
	haveUsage bool
	done      bool
	scratch   eventScratch // reused by decodeEvent
}

func protocolErr(format string, args ...any) *provider.Error {
	return &provider.Error{Kind: provider.KindProtocol, Message: "anthropic stream: " + fmt.Sprintf(format, args...)}
}

// inputTotal counts every prompt token: uncached input plus cache writes and
// reads (Anthropic reports them apart; the context estimate needs the sum).
func inputTotal(u apiUsage) (int, bool) {
	if u.InputTokens == nil && u.CacheCreationInputTokens == nil && u.CacheReadInputTokens == nil {
		return 0, false
	}
	n := 0
	for _, p := range []*int{u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens} {
		if p != nil && *p > 0 {
			n += *p
		}
	}
	return n, true
}

// handle folds one SSE event. It returns a *provider.Error for an error
// event or a malformed one.
func (f *fold) handle(ev sseEvent) *provider.Error {
	switch ev.Name {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop", "error":
	default:
		return nil // ping and unknown event types are skipped
	}
	var e streamEvent
	if err := decodeEvent(ev.Data, &e, &f.scratch); err != nil {
		return protocolErr("malformed %s event", ev.Name)
	}
	switch ev.Name {
	case "message_start":
		if e.Message == nil {
			return protocolErr("message_start without message")
		}
		if n, ok := inputTotal(e.Message.Usage); ok {
			f.input, f.haveUsage = n, true
		}
		if p := e.Message.Usage.OutputTokens; p != nil && *p > 0 {
			f.output, f.haveUsage = *p, true
		}
	case "content_block_start":
		return f.start(e)
	case "content_block_delta":
		return f.delta(e)
	case "content_block_stop":
		return f.stopBlock(e)
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			f.stop = e.Delta.StopReason
		}
		if e.Usage != nil {
			// message_delta counts are cumulative: they replace, never add.
			if n, ok := inputTotal(*e.Usage); ok && n > 0 {
				f.input, f.haveUsage = n, true
			}
			if p := e.Usage.OutputTokens; p != nil {
				f.output, f.haveUsage = *p, true
			}
		}
	case "message_stop":
		for i, b := range f.blocks {
			if b.kind == blockToolUse && !b.stopped {
				return protocolErr("message_stop with tool_use block %d still open", i)
			}
		}
		f.done = true
	case "error":
		if e.Error == nil {
			return protocolErr("error event without error")
		}
		msg := e.Error.Message
		if msg == "" {
			msg = "error event in the stream"
		}
		return &provider.Error{Kind: kindFor(0, e.Error.Type), Message: fmt.Sprintf("anthropic %s: %s", e.Error.Type, msg)}
	}
	return nil
}

func (f *fold) blockAt(e streamEvent) (int, *block, *provider.Error) {
	if e.Index == nil {
		return 0, nil, protocolErr("event without index")
	}
	i := *e.Index
	b := f.blocks[i]
	if b == nil {
		return i, nil, protocolErr("event for block %d that was never started", i)
	}
	if b.stopped {
		return i, nil, protocolErr("event for block %d after it stopped", i)
	}
	return i, b, nil
}

func (f *fold) start(e streamEvent) *provider.Error {
	if e.Index == nil || e.ContentBlock == nil {
		return protocolErr("content_block_start without index or content_block")
	}
	i := *e.Index
	if i < 0 || i >= maxBlocks || i > f.maxIndex+maxIndexJump {
		return protocolErr("content block index %d out of range", i)
	}
	if f.blocks[i] != nil {
		return protocolErr("content block %d started twice", i)
	}
	if f.blocks == nil {
		f.blocks = make(map[int]*block)
	}
	if i > f.maxIndex {
		f.maxIndex = i
	}
	b := &block{}
	switch e.ContentBlock.Type {
	case "text":
		b.kind = blockText
		if e.ContentBlock.Text != "" {
			f.textDelta(e.ContentBlock.Text)
		}
	case "tool_use":
		b.kind, b.id, b.name, b.initial = blockToolUse, e.ContentBlock.ID, e.ContentBlock.Name, e.ContentBlock.Input
		if b.name == "" {
			return protocolErr("tool_use block %d without a name", i)
		}
	case "thinking":
		b.kind = blockThinking
	}
	f.blocks[i] = b
	return nil
}

func (f *fold) textDelta(s string) {
	f.text.WriteString(s)
	f.emit(provider.Event{Type: provider.EventTextDelta, Text: s})
}

func (f *fold) delta(e streamEvent) *provider.Error {
	i, b, err := f.blockAt(e)
	if err != nil {
		return err
	}
	if e.Delta == nil {
		return protocolErr("content_block_delta without delta")
	}
	switch e.Delta.Type {
	case "text_delta":
		if b.kind != blockText {
			return protocolErr("text_delta for non-text block %d", i)
		}
		if e.Delta.Text != "" {
			f.textDelta(e.Delta.Text)
		}
	case "input_json_delta":
		if b.kind == blockOther {
			return nil // server tool input: not ours to run
		}
		if b.kind != blockToolUse {
			return protocolErr("input_json_delta for non-tool block %d", i)
		}
		if len(b.input)+len(e.Delta.PartialJSON) > maxToolInputBytes {
			return protocolErr("tool input of block %d exceeds %d bytes", i, maxToolInputBytes)
		}
		b.input = append(b.input, e.Delta.PartialJSON...)
	case "thinking_delta":
		if b.kind != blockThinking {
			return protocolErr("thinking_delta for non-thinking block %d", i)
		}
		if e.Delta.Thinking != "" {
			f.emit(provider.Event{Type: provider.EventThinkingDelta, Text: e.Delta.Thinking})
		}
	}
	// signature_delta, citations_delta and unknown delta types are skipped.
	return nil
}

func (f *fold) stopBlock(e streamEvent) *provider.Error {
	i, b, err := f.blockAt(e)
	if err != nil {
		return err
	}
	b.stopped = true
	if b.kind != blockToolUse {
		return nil
	}
	raw := bytes.TrimSpace(b.input)
	if len(raw) == 0 {
		raw = bytes.TrimSpace(b.initial)
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
	}
	var compact bytes.Buffer
	if raw[0] != '{' || json.Compact(&compact, raw) != nil {
		return protocolErr("tool_use block %d input is not a JSON object", i)
	}
	id := b.id
	if id == "" {
		id = provider.NewCallID()
	}
	call := provider.ToolCall{ID: id, Name: b.name, Input: compact.Bytes()}
	f.calls = append(f.calls, call)
	b.input = nil
	f.emit(provider.Event{Type: provider.EventToolCall, ToolCall: &call})
	return nil
}

// stopReason maps stop_reason (https://docs.anthropic.com/en/api/messages):
// a response holding a tool call is toolUse whatever the reason (addendum §10).
func (f *fold) stopReason() provider.StopReason {
	if len(f.calls) > 0 {
		return provider.StopToolUse
	}
	switch f.stop {
	case "end_turn":
		return provider.StopEndTurn
	case "max_tokens":
		return provider.StopMaxTokens
	case "tool_use":
		return provider.StopToolUse
	case "stop_sequence":
		return provider.StopStopSequence
	case "refusal":
		return provider.StopContentFilter
	}
	return provider.StopUnknown
}

// Stream sends req to POST /v1/messages with stream: true and folds the
// server-sent events into emit and the returned Result: textDelta,
// thinkingDelta (never part of Result.Text), toolCall at each tool_use
// content_block_stop (input parsed; an empty input is {}), then one usage
// event when the API reported counts and one done event.
//
// Errors are *provider.Error: an HTTP error by status and error type with
// RetryAfter; an `error` event inside the 200 stream by its type (e.g.
// overloaded_error → overloaded); a stream that ends before message_stop →
// network; a malformed event or out-of-range block index → protocol; the
// idle-gap limit → timeout; ctx cancellation → cancelled. Messages never
// contain the API key. Stream never retries.
func (c *Client) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	if emit == nil {
		emit = func(provider.Event) {}
	}
	body, err := encodeRequest(c.cfg.Model, req)
	if err != nil {
		return nil, err
	}
	hreq, err := c.newRequest(ctx, http.MethodPost, "/v1/messages", body)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("accept", "text/event-stream")
	start := time.Now()
	resp, err := c.do(ctx, hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("content-type"); !isEventStream(ct) {
		return nil, protocolErr("expected a text/event-stream response, got %q", ct)
	}

	res, err := c.consume(ctx, resp.Body, emit)
	if err != nil {
		return nil, err
	}
	c.log.DebugContext(ctx, "anthropic stream done", "model", c.cfg.Model, "inputTokens", res.Usage.InputTokens,
		"outputTokens", res.Usage.OutputTokens, "stopReason", res.StopReason, "toolCalls", len(res.ToolCalls), "elapsed", time.Since(start))
	return res, nil
}

// consume folds the event stream in body until message_stop, then emits the
// usage and done events.
func (c *Client) consume(ctx context.Context, body io.Reader, emit func(provider.Event)) (*provider.Result, error) {
	f := &fold{emit: emit}
	sse := newSSEReader(body)
	for !f.done {
		ev, err := sse.Next()
		if err != nil {
			return nil, c.streamReadError(ctx, err)
		}
		if perr := f.handle(ev); perr != nil {
			return nil, c.redactErr(perr)
		}
	}
	res := &provider.Result{
		Text:          f.text.String(),
		ToolCalls:     f.calls,
		StopReason:    f.stopReason(),
		Usage:         provider.Usage{InputTokens: f.input, OutputTokens: f.output},
		UsageReported: f.haveUsage,
	}
	if res.ToolCalls == nil {
		res.ToolCalls = []provider.ToolCall{}
	}
	if f.haveUsage {
		u := res.Usage
		emit(provider.Event{Type: provider.EventUsage, Usage: &u})
	}
	emit(provider.Event{Type: provider.EventDone, StopReason: res.StopReason})
	return res, nil
}

// streamReadError classifies a failure to read the next event.
func (c *Client) streamReadError(ctx context.Context, err error) *provider.Error {
	switch {
	case errors.Is(err, io.EOF):
		if ctx.Err() != nil {
			return &provider.Error{Kind: provider.KindCancelled, Message: "request cancelled"}
		}
		return &provider.Error{Kind: provider.KindNetwork, Message: "anthropic stream ended before message_stop"}
	case errors.Is(err, errSSETooLarge):
		return protocolErr("%v", err)
	}
	return c.redactErr(provider.ClassifyTransportError(ctx, err))
}
