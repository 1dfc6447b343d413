package ollama

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

func TestStreamTextChunks(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, chunk("The"), chunk(" sky"), chunk(" is blue."), doneLine("stop", 26, 3))
	}))
	evs, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Event{
		{Type: provider.EventTextDelta, Text: "The"},
		{Type: provider.EventTextDelta, Text: " sky"},
		{Type: provider.EventTextDelta, Text: " is blue."},
		{Type: provider.EventUsage, Usage: &provider.Usage{InputTokens: 26, OutputTokens: 3}},
		{Type: provider.EventDone, StopReason: provider.StopEndTurn},
	}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("events = %+v\nwant %+v", evs, want)
	}
	if res.Text != "The sky is blue." || res.StopReason != provider.StopEndTurn ||
		res.Usage != (provider.Usage{InputTokens: 26, OutputTokens: 3}) || res.ToolCalls == nil || len(res.ToolCalls) != 0 {
		t.Fatalf("result = %+v", res)
	}
}

func TestStreamDoneReasons(t *testing.T) {
	for reason, want := range map[string]provider.StopReason{
		"stop": provider.StopEndTurn, "length": provider.StopMaxTokens, "unload": provider.StopUnknown, "": provider.StopUnknown,
	} {
		p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
			writeNDJSON(w, chunk("x"), doneLine(reason, 1, 1))
		}))
		_, res, err := run(t, p, context.Background(), simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != want {
			t.Errorf("done_reason %q → %s, want %s", reason, res.StopReason, want)
		}
	}
}

func TestStreamDoneWithoutCountsHasNoUsage(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, chunk("x"), `{"model":"qwen3:8b","message":{"role":"assistant","content":""},"done_reason":"stop","done":true}`)
	}))
	evs, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Type != provider.EventDone || res.Usage != (provider.Usage{}) {
		t.Fatalf("events %+v result %+v", evs, res)
	}
}

func TestStreamThinkingOnlyChunks(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, thinkingChunk("Let me"), thinkingChunk(" think."), chunk("Answer"), doneLine("stop", 5, 4))
	}))
	evs, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var thinking, text strings.Builder
	for _, e := range evs {
		switch e.Type {
		case provider.EventThinkingDelta:
			thinking.WriteString(e.Text)
		case provider.EventTextDelta:
			text.WriteString(e.Text)
		}
	}
	if thinking.String() != "Let me think." || text.String() != "Answer" {
		t.Fatalf("thinking %q text %q", thinking.String(), text.String())
	}
	if res.Text != "Answer" {
		t.Fatalf("thinking leaked into text: %q", res.Text)
	}
	if evs[0].Type != provider.EventThinkingDelta || len(evs) != 5 {
		t.Fatalf("events = %+v", evs)
	}
}

// toolChunk renders an assistant chunk carrying tool_calls (docs/api.md
// "Chat request (with tools)": no ids, arguments an object).
func toolChunk(done bool, calls ...string) string {
	msg := `{"role":"assistant","content":"","tool_calls":[` + strings.Join(calls, ",") + `]}`
	if done {
		return `{"model":"qwen3:8b","created_at":"2024-07-22T20:33:28.123648Z","message":` + msg +
			`,"done_reason":"stop","done":true,"prompt_eval_count":122,"eval_count":33}`
	}
	return `{"model":"qwen3:8b","created_at":"2024-07-22T20:33:28.123648Z","message":` + msg + `,"done":false}`
}

const weatherCall = `{"function":{"name":"get_current_weather","arguments":{"format":"celsius","location":"Paris, FR"}}}`

func TestStreamTwoToolCallsInOneChunkWithoutIDs(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, toolChunk(false, weatherCall, `{"function":{"name":"read_file","arguments":{"path":"a.go"}}}`),
			toolChunk(false, `{"function":{"name":"read_file","arguments":{"path":"b.go"}}}`),
			doneLine("stop", 122, 33))
	}))
	evs, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != provider.StopToolUse {
		t.Fatalf("stopReason = %s, want toolUse although done_reason is stop", res.StopReason)
	}
	if len(res.ToolCalls) != 3 {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	seen := map[string]bool{}
	for _, c := range res.ToolCalls {
		if c.ID == "" || seen[c.ID] || !strings.HasPrefix(c.ID, "call_") {
			t.Fatalf("ids not unique call_<n>: %+v", res.ToolCalls)
		}
		seen[c.ID] = true
	}
	if res.ToolCalls[0].Name != "get_current_weather" ||
		!jsonEqual(t, res.ToolCalls[0].Input, `{"format":"celsius","location":"Paris, FR"}`) ||
		!jsonEqual(t, res.ToolCalls[2].Input, `{"path":"b.go"}`) {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	var n int
	for _, e := range evs {
		if e.Type == provider.EventToolCall {
			if e.ToolCall.ID != res.ToolCalls[n].ID {
				t.Fatalf("event %d id %s, result id %s", n, e.ToolCall.ID, res.ToolCalls[n].ID)
			}
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d toolCall events", n)
	}
}

func TestStreamToolCallsInDoneChunk(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, toolChunk(true, weatherCall))
	}))
	evs, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	types := make([]provider.EventType, len(evs))
	for i, e := range evs {
		types[i] = e.Type
	}
	want := []provider.EventType{provider.EventToolCall, provider.EventUsage, provider.EventDone}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if len(res.ToolCalls) != 1 || !strings.HasPrefix(res.ToolCalls[0].ID, "call_") || res.StopReason != provider.StopToolUse ||
		res.Usage != (provider.Usage{InputTokens: 122, OutputTokens: 33}) {
		t.Fatalf("result = %+v", res)
	}
}

func TestStreamKeepsProviderIDsAndReplacesDuplicates(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, toolChunk(true,
			`{"id":"call_1","function":{"name":"a","arguments":{}}}`,
			`{"id":"call_1","function":{"name":"b","arguments":{}}}`,
			`{"function":{"name":"c","arguments":{}}}`))
	}))
	_, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range res.ToolCalls {
		ids = append(ids, c.ID)
	}
	if len(ids) != 3 || ids[0] != "call_1" || ids[1] == ids[0] || ids[2] == ids[1] || ids[2] == ids[0] ||
		!strings.HasPrefix(ids[1], "call_") || !strings.HasPrefix(ids[2], "call_") {
		t.Fatalf("ids = %v", ids)
	}
}

// Ids the runtime gives are unique across responses (addendum §10), not restarted
// at call_1 in each one: a conversation holds every earlier call.
func TestStreamGivenIDsUniqueAcrossResponses(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, toolChunk(true, weatherCall, weatherCall))
	}))
	seen := map[string]bool{}
	for range 3 {
		_, res, err := run(t, p, context.Background(), simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.ToolCalls {
			if seen[c.ID] {
				t.Fatalf("id %s given twice", c.ID)
			}
			seen[c.ID] = true
		}
	}
	if len(seen) != 6 {
		t.Fatalf("ids = %v", seen)
	}
}

func TestStreamParameterlessCall(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, toolChunk(false,
			`{"function":{"name":"list_files","arguments":{}}}`,
			`{"function":{"name":"git_status"}}`,
			`{"function":{"name":"now","arguments":null}}`),
			doneLine("stop", 1, 1))
	}))
	_, res, err := run(t, p, context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 3 {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
	for _, c := range res.ToolCalls {
		if string(c.Input) != "{}" {
			t.Errorf("%s input = %q, want {}", c.Name, c.Input)
		}
	}
}

func TestStreamBadToolCallIsProtocol(t *testing.T) {
	for name, call := range map[string]string{
		"no name":       `{"function":{"arguments":{}}}`,
		"array args":    `{"function":{"name":"x","arguments":[1]}}`,
		"string no obj": `{"function":{"name":"x","arguments":"nope"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
				writeNDJSON(w, toolChunk(true, call))
			}))
			_, _, err := run(t, p, context.Background(), simpleRequest())
			wantKind(t, err, provider.KindProtocol)
		})
	}
}

func TestStreamErrorLineAfter200(t *testing.T) {
	for text, kind := range map[string]provider.ErrorKind{
		"an error was encountered while running the model: unexpected EOF": provider.KindServer,
		`model "qwen3:8b" not found, try pulling it first`:                 provider.KindNotFound,
	} {
		p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
			b, _ := json.Marshal(map[string]string{"error": text})
			writeNDJSON(w, chunk("partial"), string(b))
		}))
		var texts int
		res, err := p.Stream(context.Background(), simpleRequest(), func(e provider.Event) {
			if e.Type == provider.EventTextDelta {
				texts++
			}
		})
		pe := wantKind(t, err, kind)
		if res != nil || pe.Message != text || texts != 1 {
			t.Fatalf("res %v, message %q, texts %d", res, pe.Message, texts)
		}
	}
}

func TestStreamEOFBeforeDoneIsNetwork(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, chunk("Hel"), chunk("lo"))
	}))
	_, res, err := run(t, p, context.Background(), simpleRequest())
	wantKind(t, err, provider.KindNetwork)
	if res != nil {
		t.Fatalf("got a result %+v with the error", res)
	}
}

func TestStreamMalformedLineIsProtocol(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, chunk("a"), `{"message": {"content": "b"`, doneLine("stop", 1, 1))
	}))
	_, _, err := run(t, p, context.Background(), simpleRequest())
	wantKind(t, err, provider.KindProtocol)
}

func TestStreamLineOverCapIsProtocol(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, `{"message":{"content":"`)
		pad := strings.Repeat("a", 1<<20)
		for i := 0; i <= MaxLineBytes>>20; i++ {
			if _, err := io.WriteString(w, pad); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, "\"}}\n")
	}))
	_, _, err := run(t, p, context.Background(), simpleRequest())
	wantKind(t, err, provider.KindProtocol)
}

func TestStreamHTTPErrors(t *testing.T) {
	cases := []struct {
		name   string
		status int
		header map[string]string
		body   string
		kind   provider.ErrorKind
		msg    string
		retry  time.Duration
	}{
		{"model not found", 404, nil, `{"error":"model \"x\" not found, try pulling it first"}`, provider.KindNotFound, `model "x" not found, try pulling it first`, 0},
		{"server error", 500, nil, `{"error":"llama runner process has terminated: exit status 2"}`, provider.KindServer, "llama runner process has terminated: exit status 2", 0},
		{"overloaded", 503, map[string]string{"Retry-After": "3"}, `{"error":"server busy, please try again.  maximum pending requests exceeded"}`, provider.KindOverloaded, "server busy, please try again.  maximum pending requests exceeded", 3 * time.Second},
		{"rate limited", 429, map[string]string{"Retry-After": "2"}, `{"error":"too many requests"}`, provider.KindRateLimited, "too many requests", 2 * time.Second},
		{"auth echoes key", 401, nil, `{"error":"bad key sk-secret-123"}`, provider.KindAuth, "bad key [redacted]", 0},
		{"bad request", 400, nil, `{"error":"invalid options"}`, provider.KindInvalidRequest, "invalid options", 0},
		{"plain text body", 502, nil, "Bad Gateway", provider.KindServer, "Bad Gateway", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newFake(t, provider.Config{APIKey: "sk-secret-123"}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			_, _, err := run(t, p, context.Background(), simpleRequest())
			pe := wantKind(t, err, tc.kind)
			if pe.Status != tc.status || pe.Message != tc.msg || pe.RetryAfter != tc.retry {
				t.Fatalf("error = %+v", pe)
			}
		})
	}
}

func TestStreamHeaderTimeout(t *testing.T) {
	p := newFake(t, provider.Config{TimeoutMs: 200}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		waitOrDone(r, 3*time.Second)
	}))
	start := time.Now()
	_, _, err := run(t, p, context.Background(), simpleRequest())
	wantKind(t, err, provider.KindTimeout)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestStreamIdleGapTimeout(t *testing.T) {
	p := newFake(t, provider.Config{TimeoutMs: 200}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		// Chunks 100 ms apart stay under the 200 ms gap; then a 3 s gap.
		for _, c := range []string{"a", "b", "c"} {
			writeNDJSON(w, chunk(c))
			waitOrDone(r, 100*time.Millisecond)
		}
		waitOrDone(r, 3*time.Second)
	}))
	var texts int
	_, err := p.Stream(context.Background(), simpleRequest(), func(e provider.Event) {
		if e.Type == provider.EventTextDelta {
			texts++
		}
	})
	wantKind(t, err, provider.KindTimeout)
	if texts != 3 {
		t.Fatalf("%d text events before the gap, want 3", texts)
	}
}

func TestStreamCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeNDJSON(w, chunk("a"))
		waitOrDone(r, 3*time.Second)
	}))
	_, err := p.Stream(ctx, simpleRequest(), func(e provider.Event) {
		if e.Type == provider.EventTextDelta {
			cancel()
		}
	})
	wantKind(t, err, provider.KindCancelled)
}

func TestStreamCancelBeforeHeaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		waitOrDone(r, 3*time.Second)
	}))
	_, _, err := run(t, p, ctx, simpleRequest())
	wantKind(t, err, provider.KindCancelled)
}

func TestStreamRequestBody(t *testing.T) {
	var got map[string]any
	var auth, ctype string
	p := newFake(t, provider.Config{Model: "llava:13b", APIKey: "k-1"}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth, ctype = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode body: %v", err)
		}
		writeNDJSON(w, chunk("ok"), doneLine("stop", 1, 1))
	}))
	temp := 0.0
	req := &provider.Request{
		System: "be brief",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartText, Text: "what is in this image?"},
				{Type: provider.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
				{Type: provider.PartImage, MediaType: "image/jpeg", Data: "/9j/4AAQ"},
			}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: provider.PartText, Text: "Let me look."},
				{Type: provider.PartToolUse, ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
				{Type: provider.PartToolUse, ID: "call_2", Name: "git_status"},
			}},
			{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartToolResult, ToolUseID: "call_1", ToolName: "read_file", Content: "package a"},
				{Type: provider.PartToolResult, ToolUseID: "call_2", ToolName: "git_status", Content: "not a repo", IsError: true},
				{Type: provider.PartText, Text: "go on"},
			}},
		},
		Tools: []provider.ToolSpec{
			{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		},
		MaxTokens:     1024,
		Temperature:   &temp,
		ContextWindow: 32768,
	}
	if _, _, err := run(t, p, context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer k-1" || ctype != "application/json" {
		t.Fatalf("Authorization %q Content-Type %q", auth, ctype)
	}
	var want map[string]any
	wantJSON := `{
		"model": "llava:13b",
		"stream": true,
		"messages": [
			{"role": "system", "content": "be brief"},
			{"role": "user", "content": "what is in this image?", "images": ["iVBORw0KGgo=", "/9j/4AAQ"]},
			{"role": "assistant", "content": "Let me look.", "tool_calls": [
				{"function": {"name": "read_file", "arguments": {"path": "a.go"}}},
				{"function": {"name": "git_status", "arguments": {}}}
			]},
			{"role": "tool", "content": "package a", "tool_name": "read_file"},
			{"role": "tool", "content": "Error: not a repo", "tool_name": "git_status"},
			{"role": "user", "content": "go on"}
		],
		"tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
			"parameters": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}],
		"options": {"num_predict": 1024, "temperature": 0, "num_ctx": 32768}
	}`
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("request body:\n%s", g)
	}
}

func TestStreamRequestOmitsUnsetOptions(t *testing.T) {
	var got map[string]any
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		writeNDJSON(w, doneLine("stop", 1, 1))
	}))
	req := simpleRequest()
	req.Tools = []provider.ToolSpec{{Name: "now"}}
	if _, _, err := run(t, p, context.Background(), req); err != nil {
		t.Fatal(err)
	}
	opts := got["options"].(map[string]any)
	if _, ok := opts["num_ctx"]; ok {
		t.Errorf("num_ctx sent without a context window: %v", opts)
	}
	if _, ok := opts["temperature"]; ok {
		t.Errorf("temperature sent while unset: %v", opts)
	}
	if _, ok := got["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)["parameters"].(map[string]any); !ok {
		t.Errorf("tool without a schema lacks parameters object: %v", got["tools"])
	}
}

func TestStreamInvalidRequestSendsNothing(t *testing.T) {
	p := newFake(t, provider.Config{}, chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Error("request sent")
	}))
	req := simpleRequest()
	req.Messages[0].Content = append(req.Messages[0].Content, provider.Part{Type: "video"})
	_, _, err := run(t, p, context.Background(), req)
	if pe := wantKind(t, err, provider.KindInvalidRequest); pe.Field != "messages[0].content[1].type" {
		t.Fatalf("field = %q", pe.Field)
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("bad JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}
