package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

func TestStreamTextUsageDone(t *testing.T) {
	evs, res := mustRun(t, sse(
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		textChunk("Hel"), textChunk("lo"), finishChunk("stop"), usageChunk))
	want := []provider.EventType{provider.EventTextDelta, provider.EventTextDelta, provider.EventUsage, provider.EventDone}
	if got := eventTypes(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if evs[0].Text != "Hel" || evs[1].Text != "lo" {
		t.Errorf("deltas = %q %q", evs[0].Text, evs[1].Text)
	}
	if *evs[2].Usage != (provider.Usage{InputTokens: 12, OutputTokens: 3}) {
		t.Errorf("usage event = %+v", *evs[2].Usage)
	}
	if res.Text != "Hello" || res.StopReason != provider.StopEndTurn || res.Usage != (provider.Usage{InputTokens: 12, OutputTokens: 3}) {
		t.Errorf("result = %+v", res)
	}
	if res.ToolCalls == nil || len(res.ToolCalls) != 0 {
		t.Errorf("ToolCalls = %#v, want empty non-nil", res.ToolCalls)
	}
}

func TestStreamReasoningIsThinking(t *testing.T) {
	evs, res := mustRun(t, sse(
		`{"choices":[{"index":0,"delta":{"reasoning_content":"Let me "},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"think.","content":null},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Answer","reasoning_content":null},"finish_reason":"stop"}]}`))
	var thinking, text string
	for _, e := range evs {
		switch e.Type {
		case provider.EventThinkingDelta:
			thinking += e.Text
		case provider.EventTextDelta:
			text += e.Text
		}
	}
	if thinking != "Let me think." || text != "Answer" || res.Text != "Answer" {
		t.Fatalf("thinking %q text %q result %q", thinking, text, res.Text)
	}
}

// argsText holds the escapes a split must survive: \" and \u00e9.
const argsText = `{"path":"a\"b.go","note":"caf\u00e9","n":[1,2]}`

func TestStreamToolArgumentsSplitAtEveryByte(t *testing.T) {
	for i := 0; i <= len(argsText); i++ {
		for _, j := range []int{i, (i + len(argsText)) / 2} {
			if j < i {
				continue
			}
			parts := []string{argsText[:i], argsText[i:j], argsText[j:]}
			var chunks []string
			for k, p := range parts {
				enc, _ := json.Marshal(p)
				if k == 0 {
					chunks = append(chunks, toolChunk(`[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":`+string(enc)+`}}]`))
				} else {
					chunks = append(chunks, toolChunk(`[{"index":0,"function":{"arguments":`+string(enc)+`}}]`))
				}
			}
			chunks = append(chunks, finishChunk("tool_calls"))
			_, res := mustRun(t, sse(chunks...))
			if len(res.ToolCalls) != 1 {
				t.Fatalf("split %d/%d: %d calls", i, j, len(res.ToolCalls))
			}
			if !jsonEqual(t, res.ToolCalls[0].Input, []byte(argsText)) {
				t.Fatalf("split %d/%d: input %s", i, j, res.ToolCalls[0].Input)
			}
			var in struct{ Path, Note string }
			json.Unmarshal(res.ToolCalls[0].Input, &in)
			if in.Path != `a"b.go` || in.Note != "café" {
				t.Fatalf("split %d/%d: decoded %+v", i, j, in)
			}
		}
	}
}

func TestStreamToolIDAndNameNotOverwrittenByEmptyStrings(t *testing.T) {
	evs, res := mustRun(t, sse(
		toolChunk(`[{"index":0,"id":"call_1","type":"function","function":{"name":"list_files","arguments":""}}]`),
		toolChunk(`[{"index":0,"id":"","type":"function","function":{"name":"","arguments":"{\"pa"}}]`),
		toolChunk(`[{"index":0,"id":"","function":{"name":"","arguments":"th\":\".\"}"}}]`),
		finishChunk("tool_calls"), usageChunk))
	want := []provider.ToolCall{{ID: "call_1", Name: "list_files", Input: json.RawMessage(`{"path":"."}`)}}
	if !reflect.DeepEqual(res.ToolCalls, want) {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
	wantTypes := []provider.EventType{provider.EventToolCall, provider.EventUsage, provider.EventDone}
	if got := eventTypes(evs); !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("events = %v, want %v", got, wantTypes)
	}
	if res.StopReason != provider.StopToolUse {
		t.Errorf("stop = %s", res.StopReason)
	}
}

func TestStreamInterleavedIndexes(t *testing.T) {
	_, res := mustRun(t, sse(
		toolChunk(`[{"index":1,"id":"call_b","function":{"name":"b","arguments":"{\"x\":"}}]`),
		toolChunk(`[{"index":0,"id":"call_a","function":{"name":"a","arguments":"{\"y\""}}]`),
		toolChunk(`[{"index":1,"function":{"arguments":"2}"}},{"index":0,"function":{"arguments":":1}"}}]`),
		finishChunk("tool_calls")))
	want := []provider.ToolCall{
		{ID: "call_a", Name: "a", Input: json.RawMessage(`{"y":1}`)},
		{ID: "call_b", Name: "b", Input: json.RawMessage(`{"x":2}`)},
	}
	if !reflect.DeepEqual(res.ToolCalls, want) {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
}

func TestStreamSameIndexNewIDsAreSeparateCalls(t *testing.T) {
	for name, idx := range map[string]string{"index 0": `"index":0,`, "no index": ``} {
		t.Run(name, func(t *testing.T) {
			_, res := mustRun(t, sse(
				toolChunk(`[{`+idx+`"id":"call_1","function":{"name":"read_file","arguments":"{\"path\":"}}]`),
				toolChunk(`[{`+idx+`"function":{"arguments":"\"a\"}"}}]`),
				toolChunk(`[{`+idx+`"id":"call_2","function":{"name":"read_file","arguments":"{\"path\":\"b\"}"}}]`),
				toolChunk(`[{`+idx+`"id":"call_3","function":{"name":"list_files"}}]`),
				finishChunk("stop")))
			want := []provider.ToolCall{
				{ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)},
				{ID: "call_2", Name: "read_file", Input: json.RawMessage(`{"path":"b"}`)},
				{ID: "call_3", Name: "list_files", Input: json.RawMessage(`{}`)},
			}
			if !reflect.DeepEqual(res.ToolCalls, want) {
				t.Fatalf("calls = %+v", res.ToolCalls)
			}
			if res.StopReason != provider.StopToolUse {
				t.Errorf("stop = %s, want toolUse although the server said stop", res.StopReason)
			}
		})
	}
}

func TestStreamParameterlessCall(t *testing.T) {
	for name, fn := range map[string]string{
		"absent":      `{"name":"now"}`,
		"empty":       `{"name":"now","arguments":""}`,
		"null":        `{"name":"now","arguments":null}`,
		"object form": `{"name":"now","arguments":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, res := mustRun(t, sse(toolChunk(`[{"index":0,"id":"c1","type":"function","function":`+fn+`}]`), finishChunk("tool_calls")))
			if len(res.ToolCalls) != 1 || string(res.ToolCalls[0].Input) != "{}" {
				t.Fatalf("calls = %+v", res.ToolCalls)
			}
		})
	}
}

func TestStreamInvalidArgumentsIsProtocolError(t *testing.T) {
	for name, args := range map[string]string{"truncated": `{\"path\":`, "not an object": `[1]`} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, sse(toolChunk(`[{"index":0,"id":"c1","function":{"name":"x","arguments":"`+args+`"}}]`), finishChunk("tool_calls")))
			wantKind(t, err, provider.KindProtocol)
		})
	}
}

func TestStreamToolCallWithoutNameIsProtocolError(t *testing.T) {
	_, _, err := run(t, sse(toolChunk(`[{"index":0,"id":"c1","function":{"arguments":"{}"}}]`), finishChunk("tool_calls")))
	wantKind(t, err, provider.KindProtocol)
}

func TestStreamCumulativeUsageCountedOnce(t *testing.T) {
	_, res := mustRun(t, sse(
		`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":10,"completion_tokens":1}}`,
		`{"choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"prompt_tokens":10,"completion_tokens":2}}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3}}`))
	if res.Usage != (provider.Usage{InputTokens: 10, OutputTokens: 3}) {
		t.Fatalf("usage = %+v, want the last report", res.Usage)
	}
}

func TestStreamNoUsageNoUsageEvent(t *testing.T) {
	evs, _ := mustRun(t, sse(textChunk("x"), finishChunk("stop")))
	for _, e := range evs {
		if e.Type == provider.EventUsage {
			t.Fatal("usage event without usage from the server")
		}
	}
}

func TestStreamMissingIDsGetUniqueIDs(t *testing.T) {
	_, res := mustRun(t, sse(
		toolChunk(`[{"index":0,"function":{"name":"a","arguments":"{}"}},{"index":1,"function":{"name":"b","arguments":"{}"}}]`),
		finishChunk("tool_calls")))
	_, res2 := mustRun(t, sse(toolChunk(`[{"index":0,"function":{"name":"a","arguments":"{}"}}]`), finishChunk("tool_calls")))
	ids := map[string]bool{}
	for _, c := range append(res.ToolCalls, res2.ToolCalls...) {
		if !strings.HasPrefix(c.ID, "call_") || ids[c.ID] {
			t.Fatalf("id %q is not a fresh call_<n>", c.ID)
		}
		ids[c.ID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("ids = %v", ids)
	}
}

func TestStreamFinishReasons(t *testing.T) {
	for reason, want := range map[string]provider.StopReason{
		"stop": provider.StopEndTurn, "length": provider.StopMaxTokens, "tool_calls": provider.StopToolUse,
		"function_call": provider.StopToolUse, "content_filter": provider.StopContentFilter, "eos_token": provider.StopUnknown,
	} {
		evs, res := mustRun(t, sse(textChunk("x"), finishChunk(reason)))
		if res.StopReason != want || evs[len(evs)-1].StopReason != want {
			t.Errorf("%s → %s, want %s", reason, res.StopReason, want)
		}
	}
}

func TestStreamLegacyFunctionCall(t *testing.T) {
	_, res := mustRun(t, sse(
		`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{\"a\":"}}}]}`,
		`{"choices":[{"index":0,"delta":{"function_call":{"arguments":"1}"}}}]}`,
		finishChunk("function_call")))
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "f" || string(res.ToolCalls[0].Input) != `{"a":1}` {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
}

func TestStreamSkipsCommentsEventsAndBlankLines(t *testing.T) {
	body := ": keep-alive\n\n" +
		"event: ping\ndata: {\"type\":\"ping\"}\n\n" +
		"event: heartbeat\ndata: not json\n\n" +
		"\n\n\r\n" +
		": OPENROUTER PROCESSING\n" +
		"data: " + textChunk("ok") + "\r\n\r\n" +
		"retry: 1000\n" +
		"data: " + finishChunk("stop") + "\n\n" +
		"data: [DONE]\n\n" +
		"data: " + textChunk("after done") + "\n\n"
	_, res := mustRun(t, body)
	if res.Text != "ok" || res.StopReason != provider.StopEndTurn {
		t.Fatalf("result = %+v", res)
	}
}

func TestStreamDataLinesWithoutBlankSeparators(t *testing.T) {
	body := "data: " + textChunk("a") + "\n" + "data: " + textChunk("b") + "\n" + "data: " + finishChunk("stop") + "\ndata: [DONE]\n"
	_, res := mustRun(t, body)
	if res.Text != "ab" {
		t.Fatalf("text = %q", res.Text)
	}
}

func TestStreamMalformedChunkIsProtocolError(t *testing.T) {
	_, _, err := run(t, sse(textChunk("a"), `{"choices":[`))
	wantKind(t, err, provider.KindProtocol)
}

func TestStreamErrorChunkAfter200(t *testing.T) {
	cases := []struct {
		chunk string
		kind  provider.ErrorKind
	}{
		{`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, provider.KindRateLimited},
		{`{"error":{"message":"The server had an error","type":"server_error","code":null}}`, provider.KindServer},
		{`{"error":{"message":"Provider returned error","code":429}}`, provider.KindRateLimited},
		{`{"error":{"message":"busy","code":503}}`, provider.KindOverloaded},
		{`{"error":"something broke"}`, provider.KindServer},
	}
	for _, c := range cases {
		_, _, err := run(t, sse(textChunk("partial"), c.chunk))
		pe := wantKind(t, err, c.kind)
		if pe.Message == "" {
			t.Errorf("%s: empty message", c.chunk)
		}
	}
}

func TestStreamDroppedConnection(t *testing.T) {
	t.Run("no finish reason", func(t *testing.T) {
		_, _, err := run(t, "data: "+textChunk("partial")+"\n\n")
		wantKind(t, err, provider.KindNetwork)
	})
	t.Run("empty body", func(t *testing.T) {
		_, _, err := run(t, "")
		wantKind(t, err, provider.KindNetwork)
	})
	t.Run("finish reason without DONE is accepted", func(t *testing.T) {
		_, res := mustRun(t, "data: "+textChunk("all")+"\n\ndata: "+finishChunk("stop")+"\n\n")
		if res.Text != "all" || res.StopReason != provider.StopEndTurn {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("connection reset", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: " + textChunk("partial") + "\n\n"))
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		})
		_, err := compat(t, f).Stream(context.Background(), userText("hi"), nil)
		wantKind(t, err, provider.KindNetwork)
	})
}

func TestStreamBoundsToolIndexes(t *testing.T) {
	for name, idx := range map[string]string{"huge": "5000", "jump": "200", "negative": "-1"} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, sse(toolChunk(`[{"index":`+idx+`,"id":"c","function":{"name":"x","arguments":"{}"}}]`), finishChunk("tool_calls")))
			wantKind(t, err, provider.KindProtocol)
		})
	}
	// Many calls each with a new id on index 0 are capped too.
	var chunks []string
	for i := 0; i <= maxToolCalls; i++ {
		chunks = append(chunks, toolChunk(fmt.Sprintf(`[{"index":0,"id":"c%d","function":{"name":"x"}}]`, i)))
	}
	_, _, err := run(t, sse(chunks...))
	wantKind(t, err, provider.KindProtocol)
}

func TestStreamLineCap(t *testing.T) {
	big := strings.Repeat("a", maxLine+1)
	_, _, err := run(t, "data: "+big+"\n\n")
	wantKind(t, err, provider.KindProtocol)
}

func TestStreamHTTPErrors(t *testing.T) {
	const key = "sk-test-0123456789abcdefghijklmnop"
	cases := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		kind    provider.ErrorKind
		inMsg   string
		retryIn time.Duration
	}{
		{"429 retry-after", 429, map[string]string{"Retry-After": "3"}, `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}`, provider.KindRateLimited, "Rate limit reached", 3 * time.Second},
		{"500", 500, nil, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`, provider.KindServer, "server had an error", 0},
		{"401 echoes key", 401, nil, `{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error","code":"invalid_api_key"}}`, provider.KindAuth, "Incorrect API key", 0},
		{"vllm flat", 400, nil, `{"object":"error","message":"maximum context length is 4096","type":"BadRequestError","code":400}`, provider.KindInvalidRequest, "maximum context length", 0},
		{"plain text", 502, nil, strings.Repeat("bad gateway ", 500), provider.KindServer, "bad gateway", 0},
		{"503", 503, map[string]string{"Retry-After-Ms": "1500"}, ``, provider.KindOverloaded, "Service Unavailable", 1500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			})
			cl := newClient(t, provider.OpenAICompatible, f.srv.URL+"/v1", key, 5000)
			_, err := cl.Stream(context.Background(), userText("hi"), nil)
			pe := wantKind(t, err, c.kind)
			if pe.Status != c.status || pe.RetryAfter != c.retryIn {
				t.Errorf("status %d retryAfter %v", pe.Status, pe.RetryAfter)
			}
			if !strings.Contains(pe.Message, c.inMsg) {
				t.Errorf("message %q lacks %q", pe.Message, c.inMsg)
			}
			if strings.Contains(pe.Error(), key) || strings.Contains(pe.Error(), key[:12]) {
				t.Errorf("message leaks the key: %q", pe.Message)
			}
			if len(pe.Message) > maxErrorMessage+10 {
				t.Errorf("message is %d bytes", len(pe.Message))
			}
		})
	}
}

func TestStreamTimeouts(t *testing.T) {
	t.Run("headers", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		cl := newClient(t, provider.OpenAICompatible, f.srv.URL+"/v1", "", 200)
		start := time.Now()
		_, err := cl.Stream(context.Background(), userText("hi"), nil)
		wantKind(t, err, provider.KindTimeout)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("idle gap", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: " + textChunk("a") + "\n\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		cl := newClient(t, provider.OpenAICompatible, f.srv.URL+"/v1", "", 200)
		var got string
		_, err := cl.Stream(context.Background(), userText("hi"), func(e provider.Event) { got += e.Text })
		wantKind(t, err, provider.KindTimeout)
		if got != "a" {
			t.Errorf("text before the gap = %q", got)
		}
	})
	t.Run("slow but steady stream is not a timeout", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < 5; i++ {
				w.Write([]byte("data: " + textChunk("x") + "\n\n"))
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
			w.Write([]byte(sse(finishChunk("stop"))))
		})
		cl := newClient(t, provider.OpenAICompatible, f.srv.URL+"/v1", "", 300)
		res, err := cl.Stream(context.Background(), userText("hi"), nil)
		if err != nil || res.Text != "xxxxx" {
			t.Fatalf("res %+v err %v", res, err)
		}
	})
}

func TestStreamCancel(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: " + textChunk("a") + "\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := compat(t, f).Stream(ctx, userText("hi"), func(e provider.Event) { cancel() })
	wantKind(t, err, provider.KindCancelled)

	// Cancelled before the headers arrive.
	g := newFake(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = compat(t, g).Stream(ctx2, userText("hi"), nil)
	if pe := provider.AsError(err); pe.Kind != provider.KindCancelled && pe.Kind != provider.KindTimeout {
		t.Fatalf("kind = %s", pe.Kind)
	}
}

func TestStreamNetworkErrorRefused(t *testing.T) {
	f := newFake(t, replay(""))
	url := f.srv.URL
	f.srv.Close()
	cl := newClient(t, provider.OpenAICompatible, url+"/v1", "", 2000)
	_, err := cl.Stream(context.Background(), userText("hi"), nil)
	wantKind(t, err, provider.KindNetwork)
}

func TestStreamServerIgnoringStreamTrue(t *testing.T) {
	f := newFake(t, jsonHandler(200, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,
	 "message":{"role":"assistant","content":"Reading.","reasoning_content":"hmm","tool_calls":[
	  {"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}},
	  {"id":"call_9","type":"function","function":{"name":"now","arguments":""}}]},
	 "finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":5}}`))
	var evs []provider.Event
	res, err := compat(t, f).Stream(context.Background(), userText("hi"), func(e provider.Event) { evs = append(evs, e) })
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.EventType{provider.EventThinkingDelta, provider.EventTextDelta, provider.EventToolCall, provider.EventToolCall, provider.EventUsage, provider.EventDone}
	if got := eventTypes(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if res.Text != "Reading." || len(res.ToolCalls) != 2 || res.ToolCalls[0].Name != "read_file" || !strings.HasPrefix(res.ToolCalls[0].ID, "call_") ||
		res.ToolCalls[1].ID != "call_9" || string(res.ToolCalls[1].Input) != "{}" || res.StopReason != provider.StopToolUse || res.Usage.OutputTokens != 5 {
		t.Fatalf("result = %+v", res)
	}

	g := newFake(t, jsonHandler(200, `{"error":{"message":"overloaded","type":"overloaded_error"}}`))
	_, err = compat(t, g).Stream(context.Background(), userText("hi"), nil)
	wantKind(t, err, provider.KindOverloaded)
}

func TestStreamEventStreamLabelledJSON(t *testing.T) {
	f := newFake(t, jsonHandler(200, sse(textChunk("a"), finishChunk("stop"))))
	res, err := compat(t, f).Stream(context.Background(), userText("hi"), nil)
	if err != nil || res.Text != "a" {
		t.Fatalf("res %+v err %v", res, err)
	}
}
