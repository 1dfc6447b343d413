package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/provider/anthropic"
	"github.com/task-x/task-x-runtime/internal/provider/openai"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// validRequest checks what a real provider checks: the first message is the
// user's, roles alternate, every toolUse is answered by exactly one
// toolResult in the next message, and every toolResult answers a toolUse of
// the message right before it.
func validRequest(t *testing.T, msgs []provider.Message) {
	t.Helper()
	checkConversation(t, msgs, false)
	for i, m := range msgs {
		for _, p := range m.Content {
			if p.Type != provider.PartToolResult {
				continue
			}
			found := false
			if i > 0 && msgs[i-1].Role == provider.RoleAssistant {
				for _, q := range msgs[i-1].Content {
					found = found || (q.Type == provider.PartToolUse && q.ID == p.ToolUseID)
				}
			}
			if !found {
				t.Errorf("message %d: orphan toolResult %s", i, p.ToolUseID)
			}
		}
	}
}

func allowAll() policy.Policy { return policy.Policy{Mode: policy.ModeDefault, AllowAll: true} }

// bigTokens wraps a fakeProvider: it validates every request and reports
// inputTokens of three times the request's characters / 4, as a model whose
// tokenizer is denser than the estimate would.
type bigTokens struct{ *fakeProvider }

func (b bigTokens) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	validRequest(b.t, req.Messages)
	res, err := b.fakeProvider.Stream(ctx, req, emit)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(req.Messages)
	res.Usage.InputTokens = 3 * (len(raw) + len(req.System)) / 4
	return res, nil
}

func TestCompactionStages(t *testing.T) {
	ts := tools()
	n := 0
	ts["read_file"] = newTool("read_file", tool.ClassRead, func(_ context.Context, in json.RawMessage) (tool.Result, error) {
		n++
		return tool.Result{Content: fmt.Sprintf("read %d\n%s", n, strings.Repeat("x", 2600))}, nil
	})
	var turns []turn
	for i := 1; i <= 14; i++ {
		path := []string{"a.go", "b.go", "c.go"}[i%3]
		turns = append(turns, turn{text: fmt.Sprintf("step %d", i), calls: []provider.ToolCall{call(fmt.Sprintf("r%d", i), "read_file", `{"path":"`+path+`"}`)}})
	}
	turns = append(turns, turn{text: "all read"})
	h := newHarness(t, ts, turns...)
	h.opts.Provider = bigTokens{h.prov}
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll(),
		Excerpts: strings.Repeat("func excerpt() {}\n", 120),
		Limits:   Limits{ContextWindowTokens: 10000, CompactPercent: 50}})
	if sum.Status != task.StatusCompleted {
		t.Fatalf("summary %+v", sum)
	}
	var pruned, folded, dropped bool
	for _, e := range of[protocol.CompactedEvent](h.rec) {
		if e.WindowTokens != 10000 || e.AfterTokens >= e.BeforeTokens {
			t.Errorf("compacted %+v", e)
		}
		pruned = pruned || e.Pruned > 0
		folded = folded || e.Folded > 0
		dropped = dropped || e.DroppedRetrieval
	}
	if !pruned || !folded || !dropped {
		t.Errorf("stages pruned=%v folded=%v dropped=%v; events %+v", pruned, folded, dropped, of[protocol.CompactedEvent](h.rec))
	}
	if ctx := of[protocol.ContextEvent](h.rec); len(ctx) != sum.Iterations || ctx[0].WindowTokens != 10000 || ctx[0].UsedTokens == 0 {
		t.Errorf("context events %+v", ctx)
	}
	// The first message keeps the prompt and gains the progress summary.
	first := msgs[0].Content
	if first[0].Text != "fix the bug" || !strings.HasPrefix(first[len(first)-1].Text, compressedMarker) ||
		!strings.Contains(first[len(first)-1].Text, "read_file ×") {
		t.Errorf("first message %+v", first)
	}
	last := h.prov.reqs[len(h.prov.reqs)-1]
	if strings.Contains(last.System, "func excerpt()") {
		t.Error("the excerpts were not dropped from the last request")
	}
	if !strings.Contains(h.prov.reqs[0].System, "func excerpt()") {
		t.Error("the first request has no excerpts")
	}
	for _, m := range msgs[len(msgs)-keepRecent:] {
		for _, p := range m.Content {
			if strings.HasPrefix(p.Content, compressedMarker) {
				t.Errorf("a recent result was compressed: %.80s", p.Content)
			}
		}
	}
}

func TestPruneStubsAndCuts(t *testing.T) {
	long := strings.Repeat("0123456789", 300)
	r := &run{p: Params{}, log: nil}
	r.messages = []provider.Message{
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "go"}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{
			{Type: provider.PartToolUse, ID: "1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
			{Type: provider.PartToolUse, ID: "2", Name: "run_command", Input: json.RawMessage(`{"command":"make"}`)},
			{Type: provider.PartToolUse, ID: "3", Name: "run_command", Input: json.RawMessage(`{"command":"bad"}`)}}},
		{Role: provider.RoleUser, Content: []provider.Part{
			{Type: provider.PartToolResult, ToolUseID: "1", Content: "package a"},
			{Type: provider.PartToolResult, ToolUseID: "2", Content: long},
			{Type: provider.PartToolResult, ToolUseID: "3", Content: long, IsError: true}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolUse, ID: "4", Name: "replace_text", Input: json.RawMessage(`{"path":"a.go"}`)}}},
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, ToolUseID: "4", Content: "ok"}}},
	}
	for i := 0; i < keepRecent; i++ {
		role := []provider.Role{provider.RoleAssistant, provider.RoleUser}[i%2]
		r.messages = append(r.messages, provider.Message{Role: role, Content: []provider.Part{{Type: provider.PartText, Text: "t"}}})
	}
	if got := r.prune(); got != 2 {
		t.Errorf("pruned %d, want 2", got)
	}
	res := r.messages[2].Content
	if !strings.HasPrefix(res[0].Content, compressedMarker) || !strings.Contains(res[0].Content, "a.go") {
		t.Errorf("superseded read: %q", res[0].Content)
	}
	cut := res[1].Content
	if !strings.HasPrefix(cut, compressedMarker) || !strings.Contains(cut, long[:1200]+"\n[…]\n"+long[len(long)-400:]) {
		t.Errorf("cut output: %.200q", cut)
	}
	if res[2].Content != long {
		t.Error("an error result was pruned")
	}
	if r.prune() != 0 {
		t.Error("a second prune changed compressed results again")
	}
}

// anthropicSSE is a minimal successful Messages stream.
func anthropicSSE(text string, in, out int) string {
	evs := []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-6","usage":{"input_tokens":` + fmt.Sprint(in) + `,"output_tokens":1}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`,
		`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
		`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":` + fmt.Sprint(out) + `}}`,
		`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
	}
	return strings.Join(evs, "\n\n") + "\n\n"
}

func anthropicError(w http.ResponseWriter, status int, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"%s happened"}}`, typ, typ)
}

func newAnthropic(t *testing.T, url string, timeoutMs int) provider.Provider {
	t.Helper()
	p, err := anthropic.New(provider.Config{Kind: provider.Anthropic, Model: "claude-sonnet-4-6", BaseURL: url,
		APIKey: "sk-ant-test-key-0123456789", TimeoutMs: timeoutMs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRetriesWithRealAnthropicAdapter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			anthropicError(w, 429, "rate_limit_error")
		case 2:
			anthropicError(w, 529, "overloaded_error")
		case 3:
			anthropicError(w, 500, "api_error")
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, anthropicSSE("done", 1000, 100))
		}
	}))
	defer srv.Close()
	h := newHarness(t, tools())
	h.opts.Provider = newAnthropic(t, srv.URL, 5000)
	start := time.Now()
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Status != task.StatusCompleted || sum.Text != "done" {
		t.Fatalf("summary %+v", sum)
	}
	rs := of[protocol.RetryEvent](h.rec)
	want := []struct {
		kind   string
		status int
	}{{"rateLimited", 429}, {"overloaded", 529}, {"server", 500}}
	if len(rs) != 3 {
		t.Fatalf("retry events %+v", rs)
	}
	for i, w := range want {
		if rs[i].Attempt != i+1 || rs[i].MaxAttempts != 3 || string(rs[i].Kind) != w.kind || rs[i].Status != w.status || rs[i].Message == "" {
			t.Errorf("retry %d: %+v", i, rs[i])
		}
	}
	if rs[0].DelayMs != 1000 || time.Since(start) < time.Second {
		t.Errorf("Retry-After not honoured: delayMs %d, took %v", rs[0].DelayMs, time.Since(start))
	}
	// claude-sonnet-4-6 is $3 / $15 per million tokens.
	if want := (1000*3.0 + 100*15.0) / 1e6; abs(sum.Metrics.CostUSD-want) > 1e-12 || sum.Metrics.UnpricedTokens != 0 {
		t.Errorf("metrics %+v, want cost %v", sum.Metrics, want)
	}
	if u := of[protocol.UsageEvent](h.rec); len(u) != 1 || u[0].CostUSD != sum.Metrics.CostUSD {
		t.Errorf("usage events %+v", u)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestFallbackAfterTimeoutsAndDroppedStream(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1: // no headers within the timeout
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		case 2: // headers, one event, then an idle gap
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, strings.SplitAfter(anthropicSSE("x", 10, 1), "\n\n")[0])
			w.(http.Flusher).Flush()
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		default: // the stream drops midway
			w.Header().Set("Content-Type", "text/event-stream")
			parts := strings.SplitAfter(anthropicSSE("partial", 10, 1), "\n\n")
			fmt.Fprint(w, strings.Join(parts[:3], ""))
		}
	}))
	defer srv.Close()
	var oaCalls atomic.Int32
	oa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		oaCalls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"from fallback"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55}}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer oa.Close()
	fb, err := openai.New(provider.Config{Kind: provider.OpenAICompatible, Model: "local-coder", BaseURL: oa.URL + "/v1", TimeoutMs: 5000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, tools())
	h.opts.Provider = newAnthropic(t, srv.URL, 300)
	h.opts.Fallbacks = []provider.Provider{fb}
	h.opts.Retry.MaxRetries = 2
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Status != task.StatusCompleted || sum.Text != "from fallback" || sum.Model != "local-coder" {
		t.Fatalf("summary %+v", sum)
	}
	var kinds []string
	for _, e := range of[protocol.RetryEvent](h.rec) {
		kinds = append(kinds, string(e.Kind))
	}
	if strings.Join(kinds, ",") != "timeout,timeout" || calls.Load() != 3 || oaCalls.Load() != 1 {
		t.Errorf("retry kinds %v, %d anthropic calls, %d fallback calls", kinds, calls.Load(), oaCalls.Load())
	}
	sw := of[protocol.ModelSwitchedEvent](h.rec)
	if len(sw) != 1 || sw[0].From != "anthropic/claude-sonnet-4-6" || sw[0].To != "openaiCompatible/local-coder" || !strings.HasPrefix(sw[0].Reason, "network") {
		t.Errorf("modelSwitched %+v", sw)
	}
	// A local provider costs nothing and leaves nothing unpriced.
	if sum.Metrics.CostUSD != 0 || sum.Metrics.UnpricedTokens != 0 || sum.Usage.InputTokens != 50 {
		t.Errorf("metrics %+v usage %+v", sum.Metrics, sum.Usage)
	}
}

func TestNonRetryableFailsOverAndRoutes(t *testing.T) {
	h := newHarness(t, tools(), turn{err: &provider.Error{Kind: provider.KindAuth, Status: 401, Message: "bad key"}})
	second := &fakeProvider{t: t, turns: []turn{{text: "second"}}}
	routed := &namedProvider{fakeProvider: &fakeProvider{t: t, turns: []turn{{text: "routed"}}}, model: "review-model"}
	h.opts.Fallbacks = []provider.Provider{second}
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Status != task.StatusCompleted || sum.Text != "second" || len(of[protocol.RetryEvent](h.rec)) != 0 || len(of[protocol.ModelSwitchedEvent](h.rec)) != 1 {
		t.Errorf("summary %+v events %v", sum, h.rec.types())
	}

	h2 := newHarness(t, tools())
	h2.opts.Routes = []Route{{Kinds: []string{"review"}, Provider: routed}}
	h2.opts.Classify = func(p string) string { return "review" }
	sum, _ = h2.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Text != "routed" || sum.Model != "review-model" {
		t.Errorf("routed summary %+v", sum)
	}
}

type namedProvider struct {
	*fakeProvider
	model string
}

func (n *namedProvider) Config() provider.Config {
	return provider.Config{Kind: provider.OpenAI, Model: n.model}
}

func TestRejectedImageIsReplaced(t *testing.T) {
	h := newHarness(t, tools(),
		turn{err: &provider.Error{Kind: provider.KindInvalidRequest, Status: 400, Message: "Could not process image"}},
		turn{text: "no image then"})
	img := provider.Part{Type: provider.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="}
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Images: []provider.Part{img}})
	if sum.Status != task.StatusCompleted || len(h.prov.reqs) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if hasImages(h.prov.reqs[1].Messages) || hasImages(msgs) || !strings.Contains(msgs[0].Content[1].Text, "removed") {
		t.Errorf("the image stayed: %+v", msgs[0])
	}
}

func TestCosts(t *testing.T) {
	u := provider.Usage{InputTokens: 2_000_000, OutputTokens: 1_000_000}
	cases := []struct {
		cfg      provider.Config
		prices   []Price
		usd      float64
		unpriced int
	}{
		{provider.Config{Kind: provider.Anthropic, Model: "claude-opus-4-1-20250805"}, nil, 2*15 + 75, 0},
		{provider.Config{Kind: provider.Anthropic, Model: "claude-opus-4-6"}, nil, 2*5 + 25, 0},
		{provider.Config{Kind: provider.Anthropic, Model: "claude-haiku-4-5"}, nil, 2*1 + 5, 0},
		{provider.Config{Kind: provider.Anthropic, Model: "claude-opus-4-6"}, []Price{{"claude", 1, 1}, {"claude-opus", 2, 2}}, 2*2 + 2, 0},
		{provider.Config{Kind: provider.OpenAI, Model: "gpt-5-mini"}, []Price{{"gpt-5", 1, 10}, {"gpt-5-mini", 0.25, 2}}, 2*0.25 + 2, 0},
		{provider.Config{Kind: provider.OpenAI, Model: "gpt-4.1"}, nil, 0, 3_000_000},
		{provider.Config{Kind: provider.Ollama, Model: "qwen3"}, []Price{{"qwen", 9, 9}}, 0, 0},
		{provider.Config{Kind: provider.OpenAICompatible, Model: "m", BaseURL: "http://127.0.0.1:8000/v1"}, nil, 0, 0},
		{provider.Config{Kind: provider.OpenAICompatible, Model: "m", BaseURL: "https://api.example.com/v1"}, nil, 0, 3_000_000},
	}
	for _, c := range cases {
		usd, unpriced := newPricer(c.cfg, c.prices).cost(u)
		if abs(usd-c.usd) > 1e-9 || unpriced != c.unpriced {
			t.Errorf("%s %s: cost %v unpriced %d, want %v %d", c.cfg.Kind, c.cfg.Model, usd, unpriced, c.usd, c.unpriced)
		}
	}
}

func TestLimits(t *testing.T) {
	if err := (Limits{CompactPercent: 96}).Validate(); err == nil || !strings.Contains(err.Error(), "compactPercent") {
		t.Errorf("compactPercent 96: %v", err)
	}
	if err := (Limits{CompactPercent: 30, MaxIterations: 3}).Validate(); err != nil {
		t.Error(err)
	}
	loop := turn{calls: []provider.ToolCall{call("c", "read_file", `{"path":"a.go"}`)}}
	h := newHarness(t, tools())
	h.prov.repeat = &loop
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent", Limits: Limits{MaxIterations: 2, MaxTokensPerCall: 123}})
	if sum.Status != task.StatusFailed || !strings.Contains(*sum.Error, "limits.maxIterations") || sum.Iterations != 2 {
		t.Errorf("summary %+v", sum)
	}
	if h.prov.reqs[0].MaxTokens != 123 {
		t.Errorf("maxTokens %d", h.prov.reqs[0].MaxTokens)
	}

	ts := tools()
	ts["run_command"] = newTool("run_command", tool.ClassCommand, func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	h = newHarness(t, ts, turn{calls: []provider.ToolCall{call("c", "run_command", `{"command":"sleep 100"}`)}})
	start := time.Now()
	sum, _ = h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll(), Limits: Limits{MaxWallClockMs: 100}})
	if sum.Status != task.StatusFailed || !strings.Contains(*sum.Error, "maxWallClockMs") || sum.EndReason != protocol.EndMaxWallClock || time.Since(start) > 5*time.Second {
		t.Errorf("wall clock summary %+v", sum)
	}
}

// blocking returns a run_command fake that waits for its ctx and reports
// when it started.
func blocking(started chan<- string) *fakeTool {
	return newTool("run_command", tool.ClassCommand, func(ctx context.Context, in json.RawMessage) (tool.Result, error) {
		started <- commandOf(in)
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
}

func TestSteerAndCancelTool(t *testing.T) {
	ts := tools()
	started := make(chan string, 4)
	ts["run_command"] = blocking(started)
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "run_command", `{"command":"make slow"}`)}},
		turn{text: "moving on"})
	ctl := NewControl()
	if ctl.Steer("too early") {
		t.Error("a task that has not started accepted a message")
	}
	h.opts.Control = ctl
	go func() {
		<-started
		for i := 0; i < MaxSteerQueue; i++ {
			if !ctl.Steer(fmt.Sprintf("note %d", i)) {
				t.Errorf("message %d refused", i)
			}
		}
		if ctl.Steer("one too many") {
			t.Error("the 11th message was accepted")
		}
		if ctl.CancelTool("nope") || !ctl.CancelTool("c1") || ctl.CancelTool("c1") {
			t.Error("CancelTool answers")
		}
	}()
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll()})
	if sum.Status != task.StatusCompleted || sum.Text != "moving on" {
		t.Fatalf("summary %+v", sum)
	}
	res := resultsIn(msgs)["c1"]
	if res.Content != resultStoppedByUser || !res.IsError {
		t.Errorf("result %+v", res)
	}
	if st := of[protocol.SteeredEvent](h.rec); len(st) != MaxSteerQueue || st[0].Text != "note 0" {
		t.Errorf("steered %+v", st)
	}
	second := h.prov.reqs[1].Messages
	lastMsg := second[len(second)-1]
	if lastMsg.Content[0].Type != provider.PartToolResult || lastMsg.Content[MaxSteerQueue].Text != "note 9" {
		t.Errorf("steering did not join after the result: %+v", lastMsg)
	}
	if ctl.Steer("after the end") {
		t.Error("an ended task accepted a message")
	}
}

func TestSteerBeforeTheTaskEnds(t *testing.T) {
	h := newHarness(t, tools(), turn{text: "first answer"}, turn{text: "second answer"})
	ctl := NewControl()
	h.opts.Control = ctl
	h.opts.Emit = func(e protocol.AgentEvent) {
		h.rec.emit(e)
		if m, ok := e.(protocol.AssistantMessageEvent); ok && m.Text == "first answer" {
			ctl.Steer("and one more thing")
		}
	}
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Text != "second answer" || msgs[2].Content[0].Text != "and one more thing" {
		t.Errorf("summary %+v messages %+v", sum, msgs)
	}
}

type fakeJob struct {
	done      chan tool.Result
	cancelled atomic.Bool
	once      sync.Once
}

func (j *fakeJob) job() *tool.BackgroundJob {
	return &tool.BackgroundJob{Done: j.done, Cancel: func() {
		j.cancelled.Store(true)
		j.once.Do(func() { j.done <- tool.Result{Content: "killed"}; close(j.done) })
	}}
}

func TestBackgroundCommand(t *testing.T) {
	ts := tools()
	jobs := []*fakeJob{{done: make(chan tool.Result, 1)}, {done: make(chan tool.Result, 1)}}
	n := 0
	ts["run_command"] = newTool("run_command", tool.ClassCommand, func(ctx context.Context, in json.RawMessage) (tool.Result, error) {
		j := jobs[n]
		n++
		return tool.Result{Content: "started in the background", Background: j.job()}, nil
	})
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("b1", "run_command", `{"command":"go test ./...","background":true}`),
			call("b2", "run_command", `{"command":"sleep 1000","background":true}`)}},
		turn{text: "waiting for the tests"},
		turn{text: "tests passed"},
		turn{text: "all done"})
	ctl := NewControl()
	h.opts.Control = ctl
	h.opts.Emit = func(e protocol.AgentEvent) {
		h.rec.emit(e)
		m, _ := e.(protocol.AssistantMessageEvent)
		if m.Text == "waiting for the tests" {
			go func() {
				time.Sleep(20 * time.Millisecond)
				jobs[0].once.Do(func() { jobs[0].done <- tool.Result{Content: "ok all tests"}; close(jobs[0].done) })
			}()
		}
		if m.Text == "tests passed" {
			if !ctl.CancelTool("b2") {
				t.Error("cancelTool of a background command")
			}
		}
	}
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll()})
	if sum.Status != task.StatusCompleted || sum.Text != "all done" {
		t.Fatalf("summary %+v", sum)
	}
	var fin []protocol.ToolFinishedEvent
	for _, e := range of[protocol.ToolFinishedEvent](h.rec) {
		if e.Background {
			fin = append(fin, e)
		}
	}
	if len(fin) != 4 || fin[0].Result.(map[string]any)["command"] != "go test ./..." || fin[0].Result.(map[string]any)["message"] != "started in the background" ||
		fin[2].CallID != "b1" || fin[2].Result.(map[string]any)["output"] != "ok all tests" || fin[3].CallID != "b2" || fin[3].OK {
		t.Errorf("background toolFinished %+v", fin)
	}
	b, _ := json.Marshal(fin[2])
	if !strings.Contains(string(b), `"background":true`) {
		t.Errorf("wire %s", b)
	}
	third := h.prov.reqs[2].Messages
	if txt := third[len(third)-1].Content[0].Text; !strings.Contains(txt, "ok all tests") || !strings.Contains(txt, "go test ./...") {
		t.Errorf("the output did not join: %q", txt)
	}
	if txt := msgs[len(msgs)-2].Content[0].Text; !strings.Contains(txt, resultStoppedByUser) {
		t.Errorf("the stopped job: %q", txt)
	}
}

func TestCancelStopsBackgroundJobs(t *testing.T) {
	ts := tools()
	j := &fakeJob{done: make(chan tool.Result, 1)}
	ts["run_command"] = newTool("run_command", tool.ClassCommand, func(ctx context.Context, in json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: "started", Background: j.job()}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("b1", "run_command", `{"command":"serve","background":true}`)}},
		turn{text: "waiting"})
	h.opts.Emit = func(e protocol.AgentEvent) {
		h.rec.emit(e)
		if m, ok := e.(protocol.AssistantMessageEvent); ok && m.Text == "waiting" {
			cancel()
		}
	}
	sum, _ := h.run(t, ctx, Params{ChatMode: "agent", Policy: allowAll()})
	if sum.Status != task.StatusCancelled || !j.cancelled.Load() {
		t.Errorf("summary %+v cancelled job %v", sum, j.cancelled.Load())
	}
}

// fixedTokens reports the same inputTokens for every request, as Ollama does
// when it silently cuts the prompt to a small num_ctx.
type fixedTokens struct {
	*fakeProvider
	n int
}

func (f fixedTokens) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	res, err := f.fakeProvider.Stream(ctx, req, emit)
	if err != nil {
		return nil, err
	}
	res.Usage.InputTokens = f.n
	return res, nil
}

// One truncated prompt count must not shrink the estimate: the task warns
// (once) and compaction still runs on the real size.
func TestTruncatedPromptCountDoesNotShrinkEstimate(t *testing.T) {
	ts := tools()
	ts["read_file"] = newTool("read_file", tool.ClassRead, func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: strings.Repeat("x", 24000)}, nil
	})
	var turns []turn
	for i := 1; i <= 8; i++ {
		turns = append(turns, turn{calls: []provider.ToolCall{call(fmt.Sprintf("r%d", i), "read_file", `{"path":"a.go"}`)}})
	}
	turns = append(turns, turn{text: "done"})
	h := newHarness(t, ts, turns...)
	h.opts.Provider = fixedTokens{h.prov, 2048}
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll(),
		Limits: Limits{ContextWindowTokens: 32768}})
	if sum.Status != task.StatusCompleted {
		t.Fatalf("summary %+v", sum)
	}
	var truncated int
	for _, w := range of[protocol.WarningEvent](h.rec) {
		if strings.Contains(w.Message, "far below the estimated") {
			truncated++
		}
	}
	if truncated != 1 {
		t.Errorf("%d truncation warnings, want 1: %+v", truncated, of[protocol.WarningEvent](h.rec))
	}
	if len(of[protocol.CompactedEvent](h.rec)) == 0 {
		t.Error("no compaction: the truncated count shrank the estimate")
	}
}

// A prompt still above the window after compression is said in a warning.
func TestCompactionEndingAboveWindowWarns(t *testing.T) {
	ts := tools()
	ts["read_file"] = newTool("read_file", tool.ClassRead, func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: strings.Repeat("x", 40000)}, nil // recent: never pruned
	})
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("r1", "read_file", `{"path":"a.go"}`)}},
		turn{text: "done"})
	h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll(), Limits: Limits{ContextWindowTokens: 4000}})
	var over int
	for _, w := range of[protocol.WarningEvent](h.rec) {
		if strings.Contains(w.Message, "above the model's context window of 4000") {
			over++
		}
	}
	if over != 1 {
		t.Fatalf("%d over-window warnings, want 1: %+v", over, of[protocol.WarningEvent](h.rec))
	}
}

// stopsMidAnswer streams some text of its first answer, then waits for the
// task to be stopped.
type stopsMidAnswer struct {
	*fakeProvider
	streamed chan struct{}
}

func (f stopsMidAnswer) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	emit(provider.Event{Type: provider.EventTextDelta, Text: "Counting: 1, 2, "})
	emit(provider.Event{Type: provider.EventTextDelta, Text: "3,"})
	close(f.streamed)
	<-ctx.Done()
	return nil, provider.Errorf(provider.KindCancelled, "cancelled")
}

// TestStoppedAnswerStaysInHistory: the text an answer streamed before the
// user stopped it is the assistant's turn in the history, marked as cut
// (QA: a follow-up after Stop reached the model joined with the stopped
// prompt, and the model never saw the answer the user had read).
func TestStoppedAnswerStaysInHistory(t *testing.T) {
	h := newHarness(t, tools())
	fake := stopsMidAnswer{fakeProvider: h.prov, streamed: make(chan struct{})}
	h.opts.Provider = fake
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-fake.streamed; cancel() }()
	sum, msgs := h.run(t, ctx, Params{ChatMode: "agent", Prompt: "Count for me", Policy: allowAll()})
	if sum.Status != task.StatusCancelled {
		t.Fatalf("status %s", sum.Status)
	}
	last := msgs[len(msgs)-1]
	if len(msgs) != 2 || last.Role != provider.RoleAssistant || len(last.Content) != 1 ||
		last.Content[0].Text != "Counting: 1, 2, 3,"+stoppedNote {
		t.Fatalf("history after a stop: %+v", msgs)
	}
}

// TestTimedOutAnswerStaysInHistory: the same for an answer the wall-clock
// limit stopped, said as such.
func TestTimedOutAnswerStaysInHistory(t *testing.T) {
	h := newHarness(t, tools())
	h.opts.Provider = stopsMidAnswer{fakeProvider: h.prov, streamed: make(chan struct{})}
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Prompt: "Count for me", Policy: allowAll(),
		Limits: Limits{MaxWallClockMs: 200}})
	if sum.Status != task.StatusFailed || sum.EndReason != protocol.EndMaxWallClock {
		t.Fatalf("status %s, end %s", sum.Status, sum.EndReason)
	}
	if last := msgs[len(msgs)-1]; len(msgs) != 2 || last.Content[0].Text != "Counting: 1, 2, 3,"+timedOutNote {
		t.Fatalf("history after the time limit: %+v", msgs)
	}
}

// failsMidAnswer streams some text, then fails with a server error.
type failsMidAnswer struct {
	*fakeProvider
	text string
}

func (f failsMidAnswer) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	if f.text != "" {
		emit(provider.Event{Type: provider.EventTextDelta, Text: f.text})
	}
	return nil, provider.Errorf(provider.KindServer, "upstream broke")
}

// TestFailedAnswerStaysInHistory: a model call that fails leaves an
// assistant turn saying so (with what it streamed first), so a follow-up
// in the same task is not joined with the prompt that failed.
func TestFailedAnswerStaysInHistory(t *testing.T) {
	for _, tc := range []struct{ streamed, want string }{
		{"", "[No answer: the model call failed (server).]"},
		{"Counting: 1,", "Counting: 1,\n\n[This answer was cut here: the model call failed (server).]"},
	} {
		h := newHarness(t, tools())
		h.opts.Provider = failsMidAnswer{fakeProvider: h.prov, text: tc.streamed}
		sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Prompt: "Count for me", Policy: allowAll()})
		if sum.Status != task.StatusFailed {
			t.Fatalf("status %s", sum.Status)
		}
		last := msgs[len(msgs)-1]
		if len(msgs) != 2 || last.Role != provider.RoleAssistant || len(last.Content) != 1 || last.Content[0].Text != tc.want {
			t.Fatalf("history after a failed call (streamed %q): %+v", tc.streamed, msgs)
		}
	}
}
