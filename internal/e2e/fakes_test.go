package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// step is one scripted model turn: either tool calls or a final text.
type step struct {
	text string
	// thinking streams first as reasoning (openai's reasoning_content).
	thinking string
	calls    []scriptedCall
	// hang: answer nothing until the request is cancelled (an interrupt).
	hang bool
	// hung, when set, receives a value each time this hang step is reached
	// (the request is then in flight until it is cancelled).
	hung chan struct{}
	// gate, when set, holds the answer until it is closed (or the request
	// is cancelled): a test orders its own request before the model's.
	gate chan struct{}
}

type scriptedCall struct {
	name  string
	input map[string]any
}

// scriptedModel serves one provider wire format and answers turn n with
// script[n], where n is the number of assistant messages in the request.
// Every request body is kept for assertions.
type scriptedModel struct {
	t      testing.TB
	format string // "openai", "anthropic", "ollama"
	script []step

	// pick, when set, chooses the step for a request instead of the
	// count of assistant messages.
	pick func(req map[string]any) int

	// models, when set, is what GET /v1/models lists (openai format).
	models []string

	mu       sync.Mutex
	requests []map[string]any
}

func newScriptedModel(t testing.TB, format string, script []step) (*scriptedModel, *httptest.Server) {
	m := &scriptedModel{t: t, format: format, script: script}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

func (m *scriptedModel) bodies() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.requests...)
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil && r.Method == http.MethodPost {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	if m.format == "openai" && r.URL.Path == "/v1/models" && r.Method == http.MethodGet && m.models != nil {
		var data []map[string]any
		for _, id := range m.models {
			data = append(data, map[string]any{"id": id, "object": "model"})
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, mustJSON(map[string]any{"object": "list", "data": data}))
		return
	}
	switch {
	case m.format == "openai" && r.URL.Path == "/v1/chat/completions",
		m.format == "anthropic" && r.URL.Path == "/v1/messages",
		m.format == "ollama" && r.URL.Path == "/api/chat":
	default:
		http.NotFound(w, r)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	msgs, _ := req["messages"].([]any)
	turn := 0
	for _, x := range msgs {
		if mm, ok := x.(map[string]any); ok && mm["role"] == "assistant" {
			turn++
		}
	}
	if m.pick != nil {
		turn = m.pick(req)
	}
	if turn >= len(m.script) {
		http.Error(w, `{"error":{"message":"script exhausted"}}`, 500)
		return
	}
	st := m.script[turn]
	if st.gate != nil {
		select {
		case <-st.gate:
		case <-r.Context().Done():
			return
		}
	}
	if st.hang {
		if st.hung != nil {
			select {
			case st.hung <- struct{}{}:
			default: // told already
			}
		}
		<-r.Context().Done()
		return
	}
	switch m.format {
	case "openai":
		writeOpenAI(w, turn, st)
	case "anthropic":
		writeAnthropic(w, turn, st)
	case "ollama":
		writeOllama(w, st)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// writeOpenAI replays the Chat Completions streaming format
// (https://platform.openai.com/docs/api-reference/chat-streaming): data:
// lines of chat.completion.chunk objects, arguments split across chunks, a
// usage-only final chunk, then data: [DONE].
func writeOpenAI(w http.ResponseWriter, turn int, st step) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		fmt.Fprintf(w, "data: %s\n\n", mustJSON(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}))
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if st.thinking != "" {
		chunk(map[string]any{"reasoning_content": st.thinking}, nil)
	}
	if st.text != "" {
		for _, part := range splitText(st.text) {
			chunk(map[string]any{"content": part}, nil)
		}
	}
	for i, c := range st.calls {
		args := mustJSON(c.input)
		half := len(args) / 2
		if half > 4<<20 {
			half = 4 << 20 // a stream line stays under the provider's line cap
		}
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", turn, i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": args[:half]}}}}, nil)
		for rest := args[half:]; rest != ""; {
			n := min(len(rest), max(half, 1))
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": rest[:n]}}}}, nil)
			rest = rest[n:]
		}
	}
	finish := "stop"
	if len(st.calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprintf(w, "data: %s\n\n", mustJSON(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100 + turn, "completion_tokens": 10, "total_tokens": 110 + turn}}))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// writeAnthropic replays the Messages streaming format
// (https://docs.anthropic.com/en/api/messages-streaming): message_start,
// content blocks with text_delta / input_json_delta, message_delta with the
// stop_reason and usage, message_stop; a ping in between.
func writeAnthropic(w http.ResponseWriter, turn int, st step) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, data map[string]any) {
		data["type"] = name
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, mustJSON(data))
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "content": []any{},
		"model": "claude-fake", "stop_reason": nil, "usage": map[string]any{"input_tokens": 100 + turn, "output_tokens": 1}}})
	ev("ping", map[string]any{})
	idx := 0
	if st.text != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range splitText(st.text) {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for i, c := range st.calls {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", turn, i), "name": c.name, "input": map[string]any{}}})
		args := mustJSON(c.input)
		half := len(args) / 2
		ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": args[:half]}})
		ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": args[half:]}})
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	reason := "end_turn"
	if len(st.calls) > 0 {
		reason = "tool_use"
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	ev("message_stop", map[string]any{})
}

// writeOllama replays /api/chat streaming NDJSON
// (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion):
// message chunks, tool calls without ids, then a done line with counts.
func writeOllama(w http.ResponseWriter, st step) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	line := func(v map[string]any) { fmt.Fprintln(w, mustJSON(v)) }
	line(map[string]any{"model": "fake", "message": map[string]any{"role": "assistant", "content": "", "thinking": "let me think"}, "done": false})
	for _, part := range splitText(st.text) {
		line(map[string]any{"model": "fake", "message": map[string]any{"role": "assistant", "content": part}, "done": false})
	}
	if len(st.calls) > 0 {
		var calls []any
		for _, c := range st.calls {
			calls = append(calls, map[string]any{"function": map[string]any{"name": c.name, "arguments": c.input}})
		}
		line(map[string]any{"model": "fake", "message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}, "done": false})
	}
	line(map[string]any{"model": "fake", "message": map[string]any{"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
		"prompt_eval_count": 100, "eval_count": 10})
}

func splitText(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	words := strings.SplitAfter(s, " ")
	out = append(out, words...)
	return out
}
