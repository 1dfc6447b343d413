package anthropic

// The fake server replays the documented wire format of the Messages API:
// streaming events per https://docs.anthropic.com/en/api/messages-streaming,
// error bodies per https://docs.anthropic.com/en/api/errors, model pages per
// https://docs.anthropic.com/en/api/models-list.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/provider"
)

const testKey = "sk-ant-api03-TESTSECRETKEY-0123456789abcdef"

// ev is one SSE event for the fake server.
type ev struct{ name, data string }

func sseBody(events ...ev) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.name, e.data)
	}
	return b.String()
}

func msgStart(input int) ev {
	return ev{"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","stop_reason":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, input)}
}
func textStart(i int) ev {
	return ev{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)}
}
func textDelta(i int, s string) ev {
	b, _ := json.Marshal(s)
	return ev{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, b)}
}
func toolStart(i int, id, name string) ev {
	return ev{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name)}
}
func jsonDelta(i int, partial string) ev {
	b, _ := json.Marshal(partial)
	return ev{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, b)}
}
func blockStop(i int) ev {
	return ev{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)}
}
func msgDelta(stop string, output int) ev {
	return ev{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, output)}
}
func msgStop() ev { return ev{"message_stop", `{"type":"message_stop"}`} }

// fake is an httptest server; handle serves /v1/messages and models paths.
type fake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	hdrs   []http.Header
}

func newFake(t testing.TB, handle func(w http.ResponseWriter, r *http.Request)) *fake {
	t.Helper()
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.hdrs = append(f.hdrs, r.Header.Clone())
		f.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// streaming returns a handler writing body as an SSE 200 response.
func streaming(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, body)
	}
}

func (f *fake) client(t testing.TB, timeoutMs int) provider.Provider {
	t.Helper()
	cfg := provider.Config{Kind: provider.Anthropic, Model: "claude-sonnet-4-6", BaseURL: f.srv.URL, APIKey: testKey, TimeoutMs: timeoutMs}
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func userReq(text string) *provider.Request {
	return &provider.Request{MaxTokens: 100, Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: text}}}}}
}

func run(t *testing.T, body string) (*provider.Result, []provider.Event, error) {
	t.Helper()
	f := newFake(t, streaming(body))
	var events []provider.Event
	res, err := f.client(t, 5000).Stream(context.Background(), userReq("hi"), func(e provider.Event) { events = append(events, e) })
	return res, events, err
}

func wantKind(t *testing.T, err error, kind provider.ErrorKind) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want *provider.Error of kind %s", err, err, kind)
	}
	if pe.Kind != kind {
		t.Fatalf("kind = %s (%v), want %s", pe.Kind, pe, kind)
	}
	if strings.Contains(pe.Message, testKey) || strings.Contains(pe.Message, testKey[:12]) {
		t.Fatalf("error message leaks the key: %q", pe.Message)
	}
	return pe
}

func TestStreamText(t *testing.T) {
	res, events, err := run(t, sseBody(msgStart(12), textStart(0), textDelta(0, "Hel"), textDelta(0, "lo"), blockStop(0), msgDelta("end_turn", 3), msgStop()))
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Type: provider.EventTextDelta, Text: "Hel"},
		{Type: provider.EventTextDelta, Text: "lo"},
		{Type: provider.EventUsage, Usage: &provider.Usage{InputTokens: 12, OutputTokens: 3}},
		{Type: provider.EventDone, StopReason: provider.StopEndTurn},
	}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("events = %+v\nwant %+v", events, want)
	}
	if res.Text != "Hello" || res.StopReason != provider.StopEndTurn || res.Usage != (provider.Usage{InputTokens: 12, OutputTokens: 3}) || res.ToolCalls == nil || len(res.ToolCalls) != 0 {
		t.Fatalf("result = %+v", res)
	}
}

func TestStreamHeadersAndPath(t *testing.T) {
	var path, method string
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		path, method = r.URL.Path, r.Method
		streaming(sseBody(msgStart(1), msgDelta("end_turn", 1), msgStop()))(w, r)
	})
	if _, err := f.client(t, 5000).Stream(context.Background(), userReq("hi"), nil); err != nil {
		t.Fatal(err)
	}
	h := f.hdrs[0]
	if method != "POST" || path != "/v1/messages" || h.Get("x-api-key") != testKey || h.Get("anthropic-version") != "2023-06-01" || h.Get("content-type") != "application/json" {
		t.Fatalf("method %s path %s headers %v", method, path, h)
	}
}

// TestStreamToolInputSplitEverywhere splits one tool input at every byte,
// including inside the \" and \u00e9 escapes and a multi-byte character.
func TestStreamToolInputSplitEverywhere(t *testing.T) {
	input := `{"path":"a\"b.go","note":"caf\u00e9 ☕","n":[1,2]}`
	var want map[string]any
	if err := json.Unmarshal([]byte(input), &want); err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut <= len(input); cut++ {
		if cut < len(input) && !utf8.RuneStart(input[cut]) {
			// partial_json is a JSON string: it can split an escape but
			// never a UTF-8 sequence (half a code point is not a string).
			continue
		}
		body := sseBody(msgStart(5), toolStart(0, "toolu_1", "read_file"), jsonDelta(0, input[:cut]), jsonDelta(0, input[cut:]), blockStop(0), msgDelta("tool_use", 9), msgStop())
		res, events, err := run(t, body)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if len(res.ToolCalls) != 1 || res.StopReason != provider.StopToolUse {
			t.Fatalf("cut %d: result %+v", cut, res)
		}
		var got map[string]any
		if err := json.Unmarshal(res.ToolCalls[0].Input, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("cut %d: input %s (%v), want %v", cut, res.ToolCalls[0].Input, err, want)
		}
		if events[0].Type != provider.EventToolCall || events[0].ToolCall.ID != "toolu_1" || events[0].ToolCall.Name != "read_file" {
			t.Fatalf("cut %d: first event %+v", cut, events[0])
		}
	}
}

func TestStreamTwoToolsAndText(t *testing.T) {
	res, events, err := run(t, sseBody(msgStart(5),
		textStart(0), textDelta(0, "Reading."), blockStop(0),
		toolStart(1, "toolu_a", "read_file"), jsonDelta(1, `{"path":`), jsonDelta(1, `"a.go"}`), blockStop(1),
		toolStart(2, "toolu_b", "list_files"), jsonDelta(2, `{"path":"src"}`), blockStop(2),
		msgDelta("end_turn", 30), msgStop()))
	if err != nil {
		t.Fatal(err)
	}
	// A response holding tool calls is toolUse whatever stop_reason says.
	if res.StopReason != provider.StopToolUse || res.Text != "Reading." || len(res.ToolCalls) != 2 {
		t.Fatalf("result %+v", res)
	}
	if string(res.ToolCalls[0].Input) != `{"path":"a.go"}` || res.ToolCalls[1].ID != "toolu_b" || string(res.ToolCalls[1].Input) != `{"path":"src"}` {
		t.Fatalf("calls %+v", res.ToolCalls)
	}
	var types []provider.EventType
	for _, e := range events {
		types = append(types, e.Type)
	}
	want := []provider.EventType{provider.EventTextDelta, provider.EventToolCall, provider.EventToolCall, provider.EventUsage, provider.EventDone}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("event types %v, want %v", types, want)
	}
}

func TestStreamParameterlessTool(t *testing.T) {
	res, _, err := run(t, sseBody(msgStart(5), toolStart(0, "toolu_1", "get_time"), jsonDelta(0, ""), blockStop(0), msgDelta("tool_use", 2), msgStop()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || string(res.ToolCalls[0].Input) != "{}" {
		t.Fatalf("calls %+v", res.ToolCalls)
	}
}

func TestStreamThinking(t *testing.T) {
	res, events, err := run(t, sseBody(msgStart(5),
		ev{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`},
		ev{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`},
		ev{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCg=="}}`},
		blockStop(0),
		textStart(1), textDelta(1, "Answer"), blockStop(1),
		msgDelta("end_turn", 7), msgStop()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Answer" {
		t.Fatalf("text %q: thinking must never be in text", res.Text)
	}
	if events[0].Type != provider.EventThinkingDelta || events[0].Text != "Let me think." || events[1].Type != provider.EventTextDelta {
		t.Fatalf("events %+v", events)
	}
}

func TestStreamSkipsPingUnknownAndComments(t *testing.T) {
	body := ": keep-alive comment\n\n" +
		sseBody(msgStart(5), ev{"ping", `{"type":"ping"}`}, textStart(0)) +
		":another comment\r\n" +
		"event: future_event_type\r\ndata: {\"type\":\"future_event_type\",\"x\":1}\r\n\r\n" +
		"event: content_block_delta\r\nid: 7\r\nretry: 100\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\r\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\r\n\r\n" +
		sseBody(ev{"ping", `{"type":"ping"}`}, blockStop(0), msgDelta("end_turn", 1), msgStop())
	res, events, err := run(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "ok" || len(events) != 3 {
		t.Fatalf("result %+v events %+v", res, events)
	}
}

func TestStreamErrorEventAfter200(t *testing.T) {
	_, events, err := run(t, sseBody(msgStart(5), textStart(0), textDelta(0, "par"),
		ev{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}))
	pe := wantKind(t, err, provider.KindOverloaded)
	if !pe.Retryable() || !strings.Contains(pe.Message, "Overloaded") {
		t.Fatalf("error %+v", pe)
	}
	for _, e := range events {
		if e.Type == provider.EventDone {
			t.Fatal("done emitted for a failed stream")
		}
	}
}

func TestStreamEndsWithoutMessageStop(t *testing.T) {
	_, events, err := run(t, sseBody(msgStart(5), textStart(0), textDelta(0, "partial")))
	wantKind(t, err, provider.KindNetwork)
	if len(events) != 1 {
		t.Fatalf("events %+v", events)
	}
}

func TestStreamConnectionDropped(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, sseBody(msgStart(5), textStart(0), textDelta(0, "partial")))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // no terminating chunk: an abrupt drop
		}
	})
	_, err := f.client(t, 5000).Stream(context.Background(), userReq("hi"), nil)
	wantKind(t, err, provider.KindNetwork)
}

func TestStreamProtocolErrors(t *testing.T) {
	cases := map[string]string{
		"malformed json":       sseBody(msgStart(5), ev{"content_block_delta", `{"type":"content_block_delta","index":0,`}),
		"index too large":      sseBody(msgStart(5), textStart(5000)),
		"index jumps ahead":    sseBody(msgStart(5), textStart(0), blockStop(0), textStart(40)),
		"negative index":       sseBody(msgStart(5), textStart(-1)),
		"delta before start":   sseBody(msgStart(5), textDelta(3, "x")),
		"delta after stop":     sseBody(msgStart(5), textStart(0), blockStop(0), textDelta(0, "x")),
		"started twice":        sseBody(msgStart(5), textStart(0), textStart(0)),
		"invalid tool json":    sseBody(msgStart(5), toolStart(0, "t", "x"), jsonDelta(0, `{"a":`), blockStop(0)),
		"tool input not obj":   sseBody(msgStart(5), toolStart(0, "t", "x"), jsonDelta(0, `[1]`), blockStop(0)),
		"text delta on tool":   sseBody(msgStart(5), toolStart(0, "t", "x"), textDelta(0, "x")),
		"tool open at stop":    sseBody(msgStart(5), toolStart(0, "t", "x"), msgStop()),
		"message_start no msg": sseBody(ev{"message_start", `{"type":"message_start"}`}),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, body)
			wantKind(t, err, provider.KindProtocol)
		})
	}
}

func TestStreamNotEventStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message"}`)
	})
	_, err := f.client(t, 5000).Stream(context.Background(), userReq("hi"), nil)
	wantKind(t, err, provider.KindProtocol)
}

func TestStopReasons(t *testing.T) {
	for reason, want := range map[string]provider.StopReason{
		"end_turn": provider.StopEndTurn, "max_tokens": provider.StopMaxTokens, "tool_use": provider.StopToolUse,
		"stop_sequence": provider.StopStopSequence, "refusal": provider.StopContentFilter, "pause_turn": provider.StopUnknown,
	} {
		res, _, err := run(t, sseBody(msgStart(1), msgDelta(reason, 1), msgStop()))
		if err != nil || res.StopReason != want {
			t.Errorf("%s: got %v, %v; want %s", reason, res, err, want)
		}
	}
}

func TestUsageCountedOnce(t *testing.T) {
	body := sseBody(
		ev{"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}`},
		textStart(0), textDelta(0, "x"), blockStop(0),
		ev{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":4}}`},
		ev{"message_delta", `{"type":"message_delta","delta":{},"usage":{"output_tokens":5}}`},
		msgStop())
	res, events, err := run(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != (provider.Usage{InputTokens: 100, OutputTokens: 5}) {
		t.Fatalf("usage %+v", res.Usage)
	}
	n := 0
	for _, e := range events {
		if e.Type == provider.EventUsage {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d usage events", n)
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       provider.ErrorKind
		retryAfter time.Duration
	}{
		{"rate limited", 429, map[string]string{"Retry-After": "7"}, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, provider.KindRateLimited, 7 * time.Second},
		{"overloaded 529", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, provider.KindOverloaded, 0},
		{"auth echoing the key", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`, provider.KindAuth, 0},
		{"partial key echo", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"key ` + testKey[:14] + `... rejected"}}`, provider.KindAuth, 0},
		{"not json 500", 500, nil, `<html>oops</html>`, provider.KindServer, 0},
		{"unknown type uses status", 403, nil, `{"type":"error","error":{"type":"brand_new_error","message":"no"}}`, provider.KindPermissionDenied, 0},
		{"invalid request", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: field required"}}`, provider.KindInvalidRequest, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, err := f.client(t, 5000).Stream(context.Background(), userReq("hi"), nil)
			pe := wantKind(t, err, tc.kind)
			if pe.Status != tc.status || pe.RetryAfter != tc.retryAfter {
				t.Fatalf("status %d retryAfter %v", pe.Status, pe.RetryAfter)
			}
			if strings.Contains(pe.Error(), testKey[:12]) {
				t.Fatalf("Error() leaks the key: %s", pe.Error())
			}
		})
	}
}

func TestHeaderTimeout(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	start := time.Now()
	_, err := f.client(t, 200).Stream(context.Background(), userReq("hi"), nil)
	wantKind(t, err, provider.KindTimeout)
	if time.Since(start) > 3*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
}

func TestIdleGapTimeout(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		// Data keeps arriving for longer than the timeout, then stops.
		for i := 0; i < 4; i++ {
			io.WriteString(w, sseBody(ev{"ping", `{"type":"ping"}`}))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	start := time.Now()
	_, err := f.client(t, 200).Stream(context.Background(), userReq("hi"), nil)
	wantKind(t, err, provider.KindTimeout)
	if d := time.Since(start); d < 400*time.Millisecond || d > 3*time.Second {
		t.Fatalf("took %v: the gap, not the total, must be timed", d)
	}
}

func TestCancel(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, sseBody(msgStart(5), textStart(0), textDelta(0, "a")))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := f.client(t, 5000).Stream(ctx, userReq("hi"), func(e provider.Event) {
		if e.Type == provider.EventTextDelta {
			cancel()
		}
	})
	wantKind(t, err, provider.KindCancelled)
}

func TestRequestBodyShape(t *testing.T) {
	f := newFake(t, streaming(sseBody(msgStart(1), msgDelta("end_turn", 1), msgStop())))
	temp := 0.5
	req := &provider.Request{
		System:      "be brief",
		MaxTokens:   512,
		Temperature: &temp,
		Tools:       []provider.ToolSpec{{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}},
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "look"}, {Type: provider.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="}}},
			{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: ""}, {Type: provider.PartToolUse, ID: "toolu_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)}}},
			{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, ToolUseID: "toolu_1", ToolName: "read_file", Content: "no such file", IsError: true}}},
		},
	}
	if _, err := f.client(t, 5000).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := `{
	  "model": "claude-sonnet-4-6", "max_tokens": 512, "system": "be brief", "temperature": 0.5, "stream": true,
	  "tools": [{"name": "read_file", "description": "Read a file",
	             "input_schema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}],
	  "messages": [
	    {"role": "user", "content": [{"type": "text", "text": "look"},
	      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
	    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.go"}}]},
	    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "no such file", "is_error": true}]}
	  ]}`
	var got, exp any
	if err := json.Unmarshal(f.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("body\n%s\nwant\n%s", f.bodies[0], want)
	}
}

func TestListModelsPaging(t *testing.T) {
	var queries []string
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("x-api-key") != testKey {
			http.Error(w, "bad", 400)
			return
		}
		queries = append(queries, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("after_id") == "" {
			io.WriteString(w, `{"data":[{"type":"model","id":"claude-opus-4-6","display_name":"Claude Opus 4.6","created_at":"2026-01-01T00:00:00Z","max_input_tokens":1000000,
			  "capabilities":{"image_input":{"supported":true},"thinking":{"supported":true,"types":{}}}}],"has_more":true,"first_id":"claude-opus-4-6","last_id":"claude-opus-4-6"}`)
			return
		}
		io.WriteString(w, `{"data":[{"type":"model","id":"claude-3-5-haiku-20241022","display_name":"Claude Haiku 3.5","created_at":"2024-10-22T00:00:00Z"}],"has_more":false,"first_id":"claude-3-5-haiku-20241022","last_id":"claude-3-5-haiku-20241022"}`)
	})
	models, err := f.client(t, 5000).ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.ModelInfo{
		{ID: "claude-opus-4-6", ContextWindow: 1_000_000, Capabilities: []provider.Capability{"tools", "vision", "thinking"}},
		{ID: "claude-3-5-haiku-20241022", ContextWindow: 200_000, Capabilities: []provider.Capability{"tools", "vision"}},
	}
	if !reflect.DeepEqual(models, want) {
		t.Fatalf("models %+v", models)
	}
	if !reflect.DeepEqual(queries, []string{"limit=1000", "after_id=claude-opus-4-6&limit=1000"}) {
		t.Fatalf("queries %v", queries)
	}
}

func TestListModelsStopsOnRepeatedCursor(t *testing.T) {
	calls := 0
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		io.WriteString(w, `{"data":[{"id":"claude-x"}],"has_more":true,"last_id":"same"}`)
	})
	if _, err := f.client(t, 5000).ListModels(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("%d calls", calls)
	}
}

func TestDescribe(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models/claude-sonnet-4-6" {
			io.WriteString(w, `{"type":"model","id":"claude-sonnet-4-6","max_input_tokens":900000}`)
			return
		}
		w.WriteHeader(404)
		io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}`)
	})
	info, err := f.client(t, 5000).Describe(context.Background())
	if err != nil || info.ContextWindow != 900_000 || info.ID != "claude-sonnet-4-6" {
		t.Fatalf("info %+v err %v", info, err)
	}
	cfg := f.client(t, 5000).Config()
	cfg.Model = "nope"
	c, _ := New(cfg, nil)
	_, err = c.Describe(context.Background())
	wantKind(t, err, provider.KindNotFound)
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []provider.Config{
		{Kind: provider.OpenAI, Model: "m", APIKey: "k"},
		{Kind: provider.Anthropic, Model: "m"},
		{Kind: provider.Anthropic, APIKey: "k"},
	} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("New(%v) succeeded", cfg)
		}
	}
}

// BenchmarkStream compares 10 000 text deltas through Stream with reading
// and decoding the same body directly (one json.Unmarshal per data line).
func BenchmarkStream(b *testing.B) {
	events := []ev{msgStart(10), textStart(0)}
	for i := 0; i < 10000; i++ {
		events = append(events, textDelta(0, "token "))
	}
	events = append(events, blockStop(0), msgDelta("end_turn", 10000), msgStop())
	body := sseBody(events...)
	f := newFake(b, streaming(body))
	b.Run("adapter", func(b *testing.B) {
		c := f.client(b, 5000)
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := c.Stream(context.Background(), userReq("hi"), func(provider.Event) {}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			resp, err := http.Post(f.srv.URL+"/v1/messages", "application/json", strings.NewReader("{}"))
			if err != nil {
				b.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			var text strings.Builder
			for _, line := range strings.Split(string(data), "\n") {
				if rest, ok := strings.CutPrefix(line, "data: "); ok {
					var e struct {
						Delta struct{ Text string } `json:"delta"`
					}
					if err := json.Unmarshal([]byte(rest), &e); err != nil {
						b.Fatal(err)
					}
					text.WriteString(e.Delta.Text)
				}
			}
		}
	})
}

func newDiscardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestRedirectNotFollowed(t *testing.T) {
	var leaked bool
	other := newFake(t, func(w http.ResponseWriter, r *http.Request) { leaked = r.Header.Get("x-api-key") != "" })
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.srv.URL+"/v1/messages", http.StatusTemporaryRedirect)
	})
	_, err := f.client(t, 5000).Stream(context.Background(), userReq("hi"), nil)
	if err == nil || leaked {
		t.Fatalf("err %v, key sent to the redirect target: %v", err, leaked)
	}
}
