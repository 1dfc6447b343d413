package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// Limits on what a server can make the fold allocate (style: provider data
// is untrusted).
const (
	// maxToolCalls caps the calls of one response and the tool-call index.
	maxToolCalls = 1024
	// maxIndexJump caps how far a new index may be beyond the calls so far.
	maxIndexJump = 64
	// maxAccumulated caps the text, thinking and argument bytes of one
	// response.
	maxAccumulated = 64 << 20
)

// Stream runs one chat call: POST /chat/completions with stream true, then
// folds the SSE chunks (https://platform.openai.com/docs/api-reference/chat-streaming)
// into events. Text and thinking deltas are emitted as they arrive; tool
// calls once the stream has ended (in index order, arguments parsed), then
// usage (when reported), then done. emit may be nil. Errors are
// *provider.Error: the HTTP status kind, an error chunk's kind, network for a
// stream cut before [DONE] and before any finish_reason, protocol for a
// malformed chunk or tool call, timeout, cancelled.
func (c *Client) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	body, err := buildChatRequest(c.cfg.Kind, c.cfg.Model, req, true)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindInvalidRequest, Message: "encoding the request: " + err.Error()}
	}
	hreq, err := c.newRequest(ctx, "POST", "/chat/completions", raw)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := c.do(ctx, hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if emit == nil {
		emit = func(provider.Event) {}
	}
	f := &fold{emit: emit}
	run := f.run
	if isJSONResponse(resp) {
		// A server (or proxy) that ignored stream: true.
		run = f.runCompletion
	}
	if err := run(resp.Body); err != nil {
		pe := c.streamError(ctx, err)
		c.log.DebugContext(ctx, "openai stream failed", "kind", pe.Kind)
		return nil, pe
	}
	return f.finish()
}

// streamError classifies an error of reading or folding the stream.
func (c *Client) streamError(ctx context.Context, err error) *provider.Error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		// Copy so that shared sentinels are never modified.
		e := *pe
		e.Message = c.redact(e.Message)
		return &e
	}
	pe = provider.ClassifyTransportError(ctx, err)
	pe.Message = c.redact(pe.Message)
	return pe
}

// chunk is one chat.completion.chunk, with the extensions compatible servers
// add. Fields that servers send in more than one shape are kept raw.
type chunk struct {
	Choices []chunkChoice   `json:"choices"`
	Usage   *chunkUsage     `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"` // DeepSeek, vLLM, llama.cpp
	Reasoning        json.RawMessage `json:"reasoning"`         // OpenRouter, Ollama
	ToolCalls        []toolCallDelta `json:"tool_calls"`
	FunctionCall     *functionDelta  `json:"function_call"` // the deprecated single-call form
}

type toolCallDelta struct {
	Index    *int          `json:"index"`
	ID       string        `json:"id"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type chunkUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// callAcc accumulates one tool call.
type callAcc struct {
	index int // the wire index; noIndex when the server sent none
	order int // position of first appearance
	id    string
	name  string
	args  []byte
}

// noIndex keys calls whose deltas carry no index.
const noIndex = -1

// fold turns chunks into events and a Result.
type fold struct {
	emit         func(provider.Event)
	text         []byte
	size         int
	calls        []*callAcc
	current      map[int]*callAcc // the call each index currently continues
	usage        *chunkUsage
	finishReason string
	choices      []chunkChoice // reused by decodeChunk
}

// run reads the body to its end.
func (f *fold) run(body io.Reader) error {
	sse := newSSEReader(body)
	for {
		ev, err := sse.next()
		if err == io.EOF {
			if f.finishReason == "" {
				return &provider.Error{Kind: provider.KindNetwork, Message: "the stream ended before [DONE] and before a finish_reason"}
			}
			return nil
		}
		if err != nil {
			return err
		}
		data := bytes.TrimSpace(ev.Data)
		if bytes.Equal(data, doneMarker) {
			return nil
		}
		if len(data) == 0 {
			continue
		}
		if err := f.handle(ev.Type, data); err != nil {
			return err
		}
	}
}

// isJSONResponse reports whether resp is a plain JSON body rather than an
// event stream.
func isJSONResponse(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/json"
}

// runCompletion folds a non-streamed chat.completion
// (https://platform.openai.com/docs/api-reference/chat/object): its message
// has the shape of a delta, and its tool calls are complete.
func (f *fold) runCompletion(body io.Reader) error {
	raw, err := io.ReadAll(io.LimitReader(body, maxLine+1))
	if err != nil {
		return err
	}
	if len(raw) > maxLine {
		return errLineTooLong
	}
	if t := bytes.TrimSpace(raw); bytes.HasPrefix(t, []byte("data:")) || bytes.HasPrefix(t, []byte(":")) {
		// An event stream labelled as JSON.
		return f.run(bytes.NewReader(raw))
	}
	var c struct {
		Choices []struct {
			Index        int        `json:"index"`
			Message      chunkDelta `json:"message"`
			FinishReason string     `json:"finish_reason"`
		} `json:"choices"`
		Usage *chunkUsage     `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return &provider.Error{Kind: provider.KindProtocol, Message: "malformed completion: " + err.Error()}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return f.handle("", raw)
	}
	if len(c.Choices) == 0 {
		return &provider.Error{Kind: provider.KindProtocol, Message: "the completion has no choices"}
	}
	f.usage = c.Usage
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		for k := range ch.Message.ToolCalls {
			if ch.Message.ToolCalls[k].Index == nil {
				ch.Message.ToolCalls[k].Index = &k
			}
		}
		if err := f.delta(&ch.Message); err != nil {
			return err
		}
		f.finishReason = ch.FinishReason
	}
	return nil
}

// handle folds one event's data.
func (f *fold) handle(evType string, data []byte) error {
	var ch chunk
	if err := decodeChunk(data, &ch, &f.choices); err != nil {
		if evType != "" && evType != "message" && evType != "error" {
			return nil // an event type we do not know, with a payload we cannot read
		}
		return &provider.Error{Kind: provider.KindProtocol, Message: "malformed stream chunk: " + err.Error()}
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		eb, _ := parseErrorValue(ch.Error)
		msg := eb.text()
		if msg == "" {
			msg = "the provider reported an error mid-stream"
		}
		return &provider.Error{Kind: kindForStreamError(eb), Message: truncate(msg, maxErrorMessage)}
	}
	if evType == "error" {
		return &provider.Error{Kind: provider.KindServer, Message: "the provider sent an error event"}
	}
	if ch.Usage != nil {
		// Some servers repeat cumulative usage on every chunk: keep the last.
		f.usage = ch.Usage
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // we ask for one choice
		}
		if err := f.delta(&c.Delta); err != nil {
			return err
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			f.finishReason = *c.FinishReason
		}
	}
	return nil
}

func (f *fold) delta(d *chunkDelta) error {
	if s := rawString(d.ReasoningContent); s != "" {
		if err := f.grow(len(s)); err != nil {
			return err
		}
		f.emit(provider.Event{Type: provider.EventThinkingDelta, Text: s})
	} else if s := rawString(d.Reasoning); s != "" {
		if err := f.grow(len(s)); err != nil {
			return err
		}
		f.emit(provider.Event{Type: provider.EventThinkingDelta, Text: s})
	}
	if s := rawString(d.Content); s != "" {
		if err := f.grow(len(s)); err != nil {
			return err
		}
		f.text = append(f.text, s...)
		f.emit(provider.Event{Type: provider.EventTextDelta, Text: s})
	}
	for i := range d.ToolCalls {
		if err := f.toolDelta(&d.ToolCalls[i]); err != nil {
			return err
		}
	}
	if d.FunctionCall != nil {
		zero := 0
		if err := f.toolDelta(&toolCallDelta{Index: &zero, Function: *d.FunctionCall}); err != nil {
			return err
		}
	}
	return nil
}

func (f *fold) grow(n int) error {
	f.size += n
	if f.size > maxAccumulated {
		return &provider.Error{Kind: provider.KindProtocol, Message: "the response exceeds 64 MiB"}
	}
	return nil
}

// toolDelta folds one tool_calls entry. A delta continues the call its index
// currently names unless it carries a different non-empty id, which starts a
// new call (servers that say index 0, or nothing, for every call). Empty ids
// and names never overwrite.
func (f *fold) toolDelta(d *toolCallDelta) error {
	idx := noIndex
	if d.Index != nil {
		idx = *d.Index
		if idx < 0 || idx >= maxToolCalls {
			return &provider.Error{Kind: provider.KindProtocol, Message: fmt.Sprintf("tool call index %d is out of range", idx)}
		}
		if idx > len(f.calls)+maxIndexJump {
			return &provider.Error{Kind: provider.KindProtocol, Message: fmt.Sprintf("tool call index %d jumps past the %d calls so far", idx, len(f.calls))}
		}
	}
	if f.current == nil {
		f.current = make(map[int]*callAcc)
	}
	acc := f.current[idx]
	if acc == nil || (d.ID != "" && acc.id != "" && d.ID != acc.id) {
		if len(f.calls) >= maxToolCalls {
			return &provider.Error{Kind: provider.KindProtocol, Message: fmt.Sprintf("more than %d tool calls", maxToolCalls)}
		}
		acc = &callAcc{index: idx, order: len(f.calls)}
		f.calls = append(f.calls, acc)
		f.current[idx] = acc
	}
	if d.ID != "" && acc.id == "" {
		acc.id = d.ID
	}
	if d.Function.Name != "" && acc.name == "" {
		acc.name = d.Function.Name
	}
	args := bytes.TrimSpace(d.Function.Arguments)
	switch {
	case len(args) == 0 || bytes.Equal(args, []byte("null")):
	case args[0] == '"':
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return &provider.Error{Kind: provider.KindProtocol, Message: "malformed tool call arguments: " + err.Error()}
		}
		if err := f.grow(len(s)); err != nil {
			return err
		}
		acc.args = append(acc.args, s...)
	default:
		// Some servers send the arguments as a JSON object rather than a
		// string; that is the whole input.
		if err := f.grow(len(args)); err != nil {
			return err
		}
		acc.args = append(acc.args[:0], args...)
	}
	return nil
}

// rawString is the value of a JSON string; "" for null, absent or non-string.
func rawString(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	// Fast path: no escapes.
	if bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 && raw[len(raw)-1] == '"' {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// finish validates the tool calls and emits toolCall, usage and done.
func (f *fold) finish() (*provider.Result, error) {
	res := &provider.Result{Text: string(f.text), ToolCalls: []provider.ToolCall{}}
	sort.SliceStable(f.calls, func(i, j int) bool {
		a, b := f.calls[i], f.calls[j]
		if (a.index == noIndex) != (b.index == noIndex) {
			return b.index == noIndex
		}
		if a.index != b.index {
			return a.index < b.index
		}
		return a.order < b.order
	})
	seen := make(map[string]bool, len(f.calls))
	for _, a := range f.calls {
		if a.id != "" {
			seen[a.id] = true
		}
	}
	for _, a := range f.calls {
		if a.name == "" {
			return nil, &provider.Error{Kind: provider.KindProtocol, Message: "a tool call has no function name"}
		}
		input, err := toolInput(a.args)
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindProtocol, Message: fmt.Sprintf("tool call %q: %v", a.name, err)}
		}
		id := a.id
		if id == "" || (seen[id] && idTaken(res.ToolCalls, id)) {
			for {
				id = provider.NewCallID()
				if !seen[id] {
					break
				}
			}
			seen[id] = true
		}
		res.ToolCalls = append(res.ToolCalls, provider.ToolCall{ID: id, Name: a.name, Input: input})
	}
	for i := range res.ToolCalls {
		tc := res.ToolCalls[i]
		f.emit(provider.Event{Type: provider.EventToolCall, ToolCall: &tc})
	}
	if f.usage != nil {
		res.Usage = provider.Usage{InputTokens: f.usage.PromptTokens, OutputTokens: f.usage.CompletionTokens}
		res.UsageReported = true
		u := res.Usage
		f.emit(provider.Event{Type: provider.EventUsage, Usage: &u})
	}
	res.StopReason = stopReason(f.finishReason)
	if len(res.ToolCalls) > 0 {
		res.StopReason = provider.StopToolUse
	}
	f.emit(provider.Event{Type: provider.EventDone, StopReason: res.StopReason})
	return res, nil
}

func idTaken(calls []provider.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// toolInput validates accumulated arguments: empty (or null) is "{}", else
// they must be one JSON object.
func toolInput(args []byte) (json.RawMessage, error) {
	a := bytes.TrimSpace(args)
	if len(a) == 0 || bytes.Equal(a, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(a) {
		return nil, errors.New("arguments are not valid JSON")
	}
	if a[0] != '{' {
		return nil, errors.New("arguments are not a JSON object")
	}
	return json.RawMessage(bytes.Clone(a)), nil
}

// stopReason maps finish_reason (protocol.md chat/send stopReason).
func stopReason(s string) provider.StopReason {
	switch s {
	case "stop":
		return provider.StopEndTurn
	case "length":
		return provider.StopMaxTokens
	case "tool_calls", "function_call":
		return provider.StopToolUse
	case "content_filter":
		return provider.StopContentFilter
	}
	return provider.StopUnknown
}
