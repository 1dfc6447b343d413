package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// turn is one scripted model response.
type turn struct {
	text     string
	thinking string
	calls    []provider.ToolCall
	err      error
	usage    provider.Usage
	noUsage  bool // the provider reports no token counts
	cut      bool // the answer stops at the output token limit
	filtered bool // the provider refused: its content filter stopped the answer
}

// fakeProvider replays turns in order and records every request.
type fakeProvider struct {
	t     *testing.T
	mu    sync.Mutex
	turns []turn
	reqs  []provider.Request
	// repeat, when set, answers every call after the script with it.
	repeat *turn
}

func (f *fakeProvider) Config() provider.Config {
	return provider.Config{Kind: provider.Anthropic, Model: "fake-model"}
}

func (f *fakeProvider) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	f.mu.Lock()
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	f.reqs = append(f.reqs, cp)
	n := len(f.reqs)
	f.mu.Unlock()
	checkConversation(f.t, req.Messages, false)
	var tr turn
	switch {
	case n <= len(f.turns):
		tr = f.turns[n-1]
	case f.repeat != nil:
		tr = *f.repeat
	default:
		f.t.Errorf("unexpected model call %d", n)
		return nil, provider.Errorf(provider.KindProtocol, "script exhausted")
	}
	if err := ctx.Err(); err != nil {
		return nil, provider.Errorf(provider.KindCancelled, "cancelled")
	}
	if tr.err != nil {
		return nil, tr.err
	}
	if tr.thinking != "" {
		emit(provider.Event{Type: provider.EventThinkingDelta, Text: tr.thinking})
	}
	if tr.text != "" {
		emit(provider.Event{Type: provider.EventTextDelta, Text: tr.text})
	}
	stop := provider.StopEndTurn
	if len(tr.calls) > 0 {
		stop = provider.StopToolUse
	}
	if tr.cut {
		stop = provider.StopMaxTokens
	}
	if tr.filtered {
		stop = provider.StopContentFilter
	}
	return &provider.Result{Text: tr.text, ToolCalls: tr.calls, StopReason: stop, Usage: tr.usage, UsageReported: !tr.noUsage}, nil
}

func (f *fakeProvider) ListModels(context.Context) ([]provider.ModelInfo, error) {
	return nil, provider.ErrCannotList
}

func (f *fakeProvider) Describe(context.Context) (provider.ModelInfo, error) {
	return provider.ModelInfo{}, provider.ErrCannotList
}

// checkConversation asserts that the first message is the user's and that
// every toolUse has exactly one toolResult in the next message (final: also
// for the last assistant message).
func checkConversation(t *testing.T, msgs []provider.Message, final bool) {
	t.Helper()
	if len(msgs) == 0 || msgs[0].Role != provider.RoleUser {
		t.Errorf("conversation must start with a user message: %+v", msgs)
		return
	}
	for i, m := range msgs {
		if i > 0 && m.Role == msgs[i-1].Role {
			t.Errorf("messages %d and %d both have role %s", i-1, i, m.Role)
		}
		if m.Role != provider.RoleAssistant {
			continue
		}
		for _, p := range m.Content {
			if p.Type != provider.PartToolUse {
				continue
			}
			if i+1 == len(msgs) {
				if final {
					t.Errorf("toolUse %s has no result message", p.ID)
				}
				continue
			}
			count := 0
			for _, q := range msgs[i+1].Content {
				if q.Type == provider.PartToolResult && q.ToolUseID == p.ID {
					count++
				}
			}
			if count != 1 {
				t.Errorf("toolUse %s has %d results", p.ID, count)
			}
		}
	}
}

// fakeTool is a tool with a scripted run.
type fakeTool struct {
	spec  tool.Spec
	run   func(ctx context.Context, input json.RawMessage) (tool.Result, error)
	mu    sync.Mutex
	calls int
}

func (f *fakeTool) Spec() tool.Spec { return f.spec }

func (f *fakeTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if env == nil || env.Reads == nil {
		return tool.Result{}, errors.New("no env")
	}
	return f.run(ctx, input)
}

func (f *fakeTool) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func newTool(name string, class tool.Class, run func(ctx context.Context, input json.RawMessage) (tool.Result, error)) *fakeTool {
	return &fakeTool{spec: tool.Spec{Name: name, Description: name + " tool", InputSchema: json.RawMessage(`{"type":"object"}`), Permission: class}, run: run}
}

// tools returns the standard fake set: read_file, replace_text, write_file,
// run_command, delete_path.
func tools() map[string]*fakeTool {
	return map[string]*fakeTool{
		"read_file": newTool("read_file", tool.ClassRead, func(_ context.Context, in json.RawMessage) (tool.Result, error) {
			var a struct{ Path string }
			_ = json.Unmarshal(in, &a)
			if a.Path == "missing.go" {
				return tool.Result{}, tool.Errorf(tool.ErrNotFound, "file not found: %s", a.Path)
			}
			return tool.Result{Content: "1\tpackage main", Data: map[string]any{"path": a.Path, "lines": 1}}, nil
		}),
		"replace_text": newTool("replace_text", tool.ClassEdit, func(_ context.Context, in json.RawMessage) (tool.Result, error) {
			var a struct{ Path string }
			_ = json.Unmarshal(in, &a)
			return tool.Result{Content: "replaced 1 occurrence", Changes: []tool.FileChange{{Path: a.Path, Kind: "modified", Added: 1, Removed: 1}}}, nil
		}),
		"write_file": newTool("write_file", tool.ClassEdit, func(_ context.Context, in json.RawMessage) (tool.Result, error) {
			var a struct{ Path string }
			_ = json.Unmarshal(in, &a)
			return tool.Result{Content: "written", Changes: []tool.FileChange{{Path: a.Path, Kind: "created", Added: 3}}}, nil
		}),
		"run_command": newTool("run_command", tool.ClassCommand, func(context.Context, json.RawMessage) (tool.Result, error) {
			return tool.Result{Content: "exit 0"}, nil
		}),
		"delete_path": newTool("delete_path", tool.ClassDestructive, func(context.Context, json.RawMessage) (tool.Result, error) {
			return tool.Result{Content: "deleted"}, nil
		}),
	}
}

func registry(ts map[string]*fakeTool) *tool.Registry {
	r := tool.NewRegistry()
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

func call(id, name, input string) provider.ToolCall {
	return provider.ToolCall{ID: id, Name: name, Input: json.RawMessage(input)}
}

// approver records requests and answers from a script keyed by call id
// (default deny).
type approver struct {
	mu      sync.Mutex
	answers map[string]task.Decision
	// messages are the deny reasons given with answers, by call id.
	messages map[string]string
	asked    []task.ApprovalRequest
}

func (a *approver) approve(_ context.Context, req task.ApprovalRequest) (task.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if d, ok := a.answers[req.CallID]; ok {
		return task.Answer{Decision: d, Message: a.messages[req.CallID]}, nil
	}
	return task.Answer{Decision: task.DecisionDeny}, nil
}

func (a *approver) ids() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.asked {
		out = append(out, r.CallID)
	}
	return out
}

type recorder struct {
	mu     sync.Mutex
	events []protocol.AgentEvent
}

func (r *recorder) emit(e protocol.AgentEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.EventType())
	}
	return out
}

// of returns the recorded events of type E, in order.
func of[E protocol.AgentEvent](r *recorder) []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []E
	for _, e := range r.events {
		if e, ok := e.(E); ok {
			out = append(out, e)
		}
	}
	return out
}

type harness struct {
	prov *fakeProvider
	rec  *recorder
	appr *approver
	opts Options
}

func newHarness(t *testing.T, ts map[string]*fakeTool, turns ...turn) *harness {
	h := &harness{prov: &fakeProvider{t: t, turns: turns}, rec: &recorder{}, appr: &approver{answers: map[string]task.Decision{}}}
	h.opts = Options{Provider: h.prov, Tools: registry(ts), Env: tool.NewEnv(t.TempDir(), nil, true, "t1"), Approve: h.appr.approve, Emit: h.rec.emit,
		Retry: RetryPolicy{Base: time.Millisecond, Cap: 5 * time.Millisecond}}
	return h
}

func (h *harness) run(t *testing.T, ctx context.Context, p Params) (task.Summary, []provider.Message) {
	t.Helper()
	if p.TaskID == "" {
		p.TaskID = "t1"
	}
	if p.Prompt == "" {
		p.Prompt = "fix the bug"
	}
	sum, msgs := Run(ctx, p, h.opts)
	checkConversation(t, msgs, true)
	types := h.rec.types()
	if len(types) < 2 || types[0] != "started" || types[len(types)-1] != "done" {
		t.Errorf("events must start with started and end with done: %v", types)
	}
	if n := strings.Count(strings.Join(types, ","), "done"); n != 1 {
		t.Errorf("%d done events", n)
	}
	done := of[protocol.DoneEvent](h.rec)[0]
	if done.Status != sum.Status || (done.Error == nil) != (sum.Error == nil) {
		t.Errorf("done event %+v does not match summary %+v", done, sum)
	}
	return sum, msgs
}

// lastResults returns the toolResult parts of the last user message of a
// conversation, by tool-use id.
func resultsIn(msgs []provider.Message) map[string]provider.Part {
	out := map[string]provider.Part{}
	for _, m := range msgs {
		for _, p := range m.Content {
			if p.Type == provider.PartToolResult {
				out[p.ToolUseID] = p
			}
		}
	}
	return out
}

func TestReadEditCommandTask(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{text: "Let me look.", thinking: "hmm", calls: []provider.ToolCall{call("c1", "read_file", `{"path":"main.go"}`)}, usage: provider.Usage{InputTokens: 100, OutputTokens: 10}},
		turn{calls: []provider.ToolCall{call("c2", "replace_text", `{"path":"main.go","oldText":"a\n","newText":"b\n"}`)}, usage: provider.Usage{InputTokens: 120, OutputTokens: 20}},
		turn{calls: []provider.ToolCall{call("c3", "run_command", `{"command":"go test ./..."}`)}, usage: provider.Usage{InputTokens: 150, OutputTokens: 5}},
		turn{text: "Changed main.go; I could not run the tests.", usage: provider.Usage{InputTokens: 170, OutputTokens: 15}},
	)
	h.appr.answers["c2"] = task.DecisionAllow
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", System: "Go project."})

	if sum.Status != task.StatusCompleted || sum.Error != nil {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Text != "Changed main.go; I could not run the tests." || sum.Iterations != 4 || sum.ToolCalls != 3 || sum.Model != "fake-model" {
		t.Errorf("summary %+v", sum)
	}
	if *sum.Usage != (provider.Usage{InputTokens: 540, OutputTokens: 50}) || sum.Metrics.UnpricedTokens != 590 {
		t.Errorf("usage %+v metrics %+v", sum.Usage, sum.Metrics)
	}
	if want := []tool.FileChange{{Path: "main.go", Kind: "modified", Added: 1, Removed: 1}}; !slices.Equal(sum.ChangedFiles, want) {
		t.Errorf("changedFiles %+v", sum.ChangedFiles)
	}
	if got := h.appr.ids(); !slices.Equal(got, []string{"c2", "c3"}) {
		t.Errorf("approvals asked for %v; want c2, c3", got)
	}
	// The fake replace_text cannot plan (no tool.Previewer): its input is
	// shown (preview_test.go has the real tools' diffs).
	if p := h.appr.asked[0].Preview; !strings.Contains(p, `"oldText": "a\n"`) {
		t.Errorf("preview of a tool that cannot plan is not its input: %q", p)
	}
	if p := h.appr.asked[1].Preview; !strings.Contains(p, "$ go test ./...") || !strings.Contains(p, "cwd: .") {
		t.Errorf("command preview %q", p)
	}
	if ts["run_command"].count() != 0 {
		t.Error("a denied command ran")
	}
	res := resultsIn(msgs)
	if r := res["c3"]; !r.IsError || r.Content != resultDenied || r.ToolName != "run_command" {
		t.Errorf("denied result %+v", r)
	}
	if r := res["c1"]; r.IsError || r.Content != "1\tpackage main" {
		t.Errorf("read result %+v", r)
	}
	// The model saw the denial in its fourth request.
	last := h.prov.reqs[3].Messages
	if got := last[len(last)-1].Content[0]; got.Content != resultDenied {
		t.Errorf("fourth request ends with %+v", got)
	}
	// Request shape: system prompt, tools, first message.
	req := h.prov.reqs[0]
	if !strings.Contains(req.System, "Mode: agent") || !strings.Contains(req.System, "Go project.") || !strings.Contains(req.System, h.opts.Env.Root) {
		t.Errorf("system prompt misses parts: %q", req.System)
	}
	if len(req.Tools) != 5 || req.MaxTokens != DefaultMaxTokens {
		t.Errorf("offered %d tools, maxTokens %d", len(req.Tools), req.MaxTokens)
	}
	if m := req.Messages[0]; m.Content[0].Text != "fix the bug" {
		t.Errorf("first message %+v", m)
	}

	wantTypes := []string{
		"started", "model",
		"iteration", "thinkingDelta", "textDelta", "assistantMessage", "usage", "context", "toolStarted", "toolFinished",
		"iteration", "assistantMessage", "usage", "context", "toolStarted", "approvalRequested", "approvalResolved", "fileChanged", "toolFinished",
		"iteration", "assistantMessage", "usage", "context", "toolStarted", "approvalRequested", "approvalResolved", "toolFinished",
		"iteration", "textDelta", "assistantMessage", "usage", "context", "done",
	}
	if got := h.rec.types(); !slices.Equal(got, wantTypes) {
		t.Errorf("events\n got %v\nwant %v", got, wantTypes)
	}
	fin := of[protocol.ToolFinishedEvent](h.rec)
	if !fin[0].OK || fin[0].Result.(map[string]any)["path"] != "main.go" {
		t.Errorf("read toolFinished %+v", fin[0])
	}
	if fin[2].OK || fin[2].Error == nil || *fin[2].Error != resultDenied {
		t.Errorf("denied toolFinished %+v", fin[2])
	}
	if r := of[protocol.ApprovalResolvedEvent](h.rec); r[0].Decision != protocol.DecisionAllow || r[1].Decision != protocol.DecisionDeny {
		t.Errorf("approvalResolved %+v", r)
	}
	if u := of[protocol.UsageEvent](h.rec); u[1].InputTokens != 120 || u[1].TotalInputTokens != 220 || u[1].TotalOutputTokens != 30 {
		t.Errorf("usage event %+v", u[1])
	}

	// The summary's wire form has every protocol.md field, arrays not null.
	b, _ := json.Marshal(sum)
	var wire map[string]json.RawMessage
	_ = json.Unmarshal(b, &wire)
	for _, k := range []string{"taskId", "status", "text", "changedFiles", "operations", "validations", "validationRan", "skippedChecks", "usage", "metrics", "model", "iterations", "toolCalls", "error"} {
		if _, ok := wire[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, k := range []string{"operations", "validations"} {
		if string(wire[k]) != "[]" {
			t.Errorf("%s = %s; want []", k, wire[k])
		}
	}
	// The folder has no project: each default check is skipped, saying why.
	const noProject = `[{"name":"lint","reason":"no such command for this project"},{"name":"build","reason":"no such command for this project"},{"name":"test","reason":"no such command for this project"}]`
	if string(wire["skippedChecks"]) != noProject {
		t.Errorf("skippedChecks = %s; want %s", wire["skippedChecks"], noProject)
	}
	if string(wire["error"]) != "null" || string(wire["validationRan"]) != "false" {
		t.Errorf("error %s validationRan %s", wire["error"], wire["validationRan"])
	}
	var metrics map[string]any
	_ = json.Unmarshal(wire["metrics"], &metrics)
	for _, k := range []string{"costUsd", "unpricedTokens", "subagents", "subagentCostUsd", "subagentTokens"} {
		if _, ok := metrics[k]; !ok {
			t.Errorf("metrics lacks %q", k)
		}
	}
}

func TestAllowSessionCoversLaterCalls(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{
			call("c1", "run_command", `{"command":"npm test"}`),
			call("c2", "run_command", `{"command":"npm test -- -u && npm run lint"}`),
			call("c3", "run_command", `{"command":"npm test && rm -rf dist"}`),
			call("c4", "run_command", `{"command":"npm test $(rm -rf dist)"}`),
			call("c5", "write_file", `{"path":"a.txt","content":"x"}`),
			call("c6", "write_file", `{"path":"b.txt","content":"y"}`),
			call("c7", "replace_text", `{"path":"b.txt","oldText":"y","newText":"z"}`),
		}},
		turn{text: "done"},
	)
	h.appr.answers["c1"] = task.DecisionAllowSession
	h.appr.answers["c5"] = task.DecisionAllowSession
	h.appr.answers["c7"] = task.DecisionAllow
	_, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if got, want := h.appr.ids(), []string{"c1", "c3", "c4", "c5", "c7"}; !slices.Equal(got, want) {
		t.Errorf("asked for %v; want %v", got, want)
	}
	res := resultsIn(msgs)
	for id, wantErr := range map[string]bool{"c1": false, "c2": false, "c3": true, "c4": true, "c5": false, "c6": false, "c7": false} {
		if res[id].IsError != wantErr {
			t.Errorf("%s isError = %v (%s)", id, res[id].IsError, res[id].Content)
		}
	}
	if ts["run_command"].count() != 2 || ts["write_file"].count() != 2 {
		t.Errorf("runs: command %d, write %d", ts["run_command"].count(), ts["write_file"].count())
	}
}

func TestWrapperProgramsAreNotRemembered(t *testing.T) {
	g := newGrants()
	g.remember("run_command", json.RawMessage(`{"command":"bash -c 'make'"}`))
	if g.covers("run_command", json.RawMessage(`{"command":"bash -c 'rm -rf /'"}`)) {
		t.Error("an allowSession of bash must not cover later bash commands")
	}
	g.remember("run_command", json.RawMessage(`{"command":"go test ./... | tail"}`))
	if !g.covers("run_command", json.RawMessage(`{"command":"go vet ./... | tail -5"}`)) {
		t.Error("remembered programs must cover")
	}
	if g.covers("run_command", json.RawMessage(`{"command":"go test > out.txt"}`)) {
		t.Error("a redirect must ask again")
	}
}

func TestAcceptEditsSkipsEditApproval(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "replace_text", `{"path":"a.go","oldText":"a","newText":"b"}`), call("c2", "delete_path", `{"path":"a.go"}`)}},
		turn{text: "ok"},
	)
	pol, _ := policy.Parse(json.RawMessage(`{"mode":"acceptEdits"}`))
	h.run(t, context.Background(), Params{ChatMode: "agent", Policy: pol})
	if got := h.appr.ids(); !slices.Equal(got, []string{"c2"}) {
		t.Errorf("asked for %v; want only the destructive c2", got)
	}
	if ts["replace_text"].count() != 1 || ts["delete_path"].count() != 0 {
		t.Error("acceptEdits must run the edit and not the denied delete")
	}
}

func TestReadOnlyAndAskModeOfferOnlyReads(t *testing.T) {
	readOnly, _ := policy.Parse(json.RawMessage(`{"mode":"readOnly"}`))
	for _, tc := range []struct {
		name string
		p    Params
		want string
	}{
		{"readOnly", Params{ChatMode: "agent", Policy: readOnly}, "readOnly mode"},
		{"ask", Params{ChatMode: "ask"}, "ask mode"},
		{"plan", Params{ChatMode: "plan"}, "plan mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := tools()
			h := newHarness(t, ts,
				turn{calls: []provider.ToolCall{call("c1", "replace_text", `{"path":"a.go","oldText":"a","newText":"b"}`), call("c2", "read_file", `{"path":"a.go"}`)}},
				turn{text: "answer"},
			)
			_, msgs := h.run(t, context.Background(), tc.p)
			var offered []string
			for _, s := range h.prov.reqs[0].Tools {
				offered = append(offered, s.Name)
			}
			if !slices.Equal(offered, []string{"read_file"}) {
				t.Errorf("offered %v", offered)
			}
			if ts["replace_text"].count() != 0 || len(h.appr.ids()) != 0 {
				t.Error("an edit ran or asked in a read-only mode")
			}
			r := resultsIn(msgs)["c1"]
			if !r.IsError || !strings.HasPrefix(r.Content, "denied by policy: ") || !strings.Contains(r.Content, tc.want) {
				t.Errorf("result %+v", r)
			}
			if resultsIn(msgs)["c2"].IsError {
				t.Error("read failed")
			}
		})
	}
}

func TestAllowAllNeverAsksButDenyWins(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{
			call("c1", "delete_path", `{"path":"x"}`),
			call("c2", "run_command", `{"command":"make"}`),
			call("c3", "run_command", `{"command":"ls && rm -rf /"}`),
		}},
		turn{text: "ok"},
	)
	h.opts.Approve = func(context.Context, task.ApprovalRequest) (task.Answer, error) {
		t.Error("allowAll must never ask")
		return task.Answer{Decision: task.DecisionDeny}, nil
	}
	pol, err := policy.Parse(json.RawMessage(`{"allowAll":true,"deny":["run_command(rm:*)"]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: pol})
	res := resultsIn(msgs)
	if res["c1"].IsError || res["c2"].IsError {
		t.Errorf("allowAll calls failed: %+v %+v", res["c1"], res["c2"])
	}
	if r := res["c3"]; !r.IsError || !strings.Contains(r.Content, `denied by policy: deny rule "run_command(rm:*)"`) {
		t.Errorf("deny rule result %+v", r)
	}
	if ts["run_command"].count() != 1 {
		t.Errorf("run_command ran %d times", ts["run_command"].count())
	}
}

// A deny's reason (RequestApprovalResult.message) reaches the model with
// the denied call's result, in the request right after the denial, not a
// turn later; an allow's message is ignored.
func TestDenyReasonInTheSameTurn(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{
			call("c1", "run_command", `{"command":"make deploy"}`),
			call("c2", "replace_text", `{"path":"main.go","oldText":"a\n","newText":"b\n"}`),
		}},
		turn{text: "ok, no deploy"},
	)
	h.appr.answers["c1"] = task.DecisionDeny
	h.appr.answers["c2"] = task.DecisionAllow
	h.appr.messages = map[string]string{"c1": "  run make check instead, never deploy  ", "c2": "not a reason"}
	_, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
	want := resultDenied + " The user said: run make check instead, never deploy"
	if r := resultsIn(msgs)["c1"]; !r.IsError || r.Content != want {
		t.Errorf("denied result %+v; want %q", r, want)
	}
	if len(h.prov.reqs) != 2 {
		t.Fatalf("%d model requests; want 2", len(h.prov.reqs))
	}
	var seen string
	for _, p := range h.prov.reqs[1].Messages[len(h.prov.reqs[1].Messages)-1].Content {
		if p.ToolUseID == "c1" {
			seen = p.Content
		}
		if p.ToolUseID == "c2" && strings.Contains(p.Content, "not a reason") {
			t.Errorf("an allowed call's result carries the answer's message: %q", p.Content)
		}
	}
	if seen != want {
		t.Errorf("the turn after the denial saw %q; want %q", seen, want)
	}
	if fin := of[protocol.ToolFinishedEvent](h.rec); len(fin) != 2 || fin[0].Error == nil || *fin[0].Error != want {
		t.Errorf("toolFinished %+v", fin)
	}
}

func TestApprovalTimeoutCountsAsDeny(t *testing.T) {
	ts := tools()
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "run_command", `{"command":"make"}`)}},
		turn{text: "ok"},
	)
	h.opts.ApprovalTimeout = 20 * time.Millisecond
	h.opts.Approve = func(ctx context.Context, _ task.ApprovalRequest) (task.Answer, error) {
		<-ctx.Done()
		return task.Answer{Decision: task.DecisionAllow}, nil // too late: must not count
	}
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Status != task.StatusCompleted || ts["run_command"].count() != 0 {
		t.Errorf("status %s, ran %d", sum.Status, ts["run_command"].count())
	}
	if r := resultsIn(msgs)["c1"]; r.Content != resultDenied {
		t.Errorf("result %+v", r)
	}
	if r := of[protocol.ApprovalResolvedEvent](h.rec); len(r) != 1 || r[0].Decision != protocol.DecisionDeny {
		t.Errorf("approvalResolved %+v", r)
	}
}

func TestApproverErrorAndNilApproverDeny(t *testing.T) {
	for name, appr := range map[string]task.Approver{
		"error": func(context.Context, task.ApprovalRequest) (task.Answer, error) {
			return task.Answer{Decision: task.DecisionAllow}, errors.New("client gone")
		},
		"bogus": func(context.Context, task.ApprovalRequest) (task.Answer, error) {
			return task.Answer{Decision: "yes please"}, nil
		},
		"nil": nil,
	} {
		t.Run(name, func(t *testing.T) {
			ts := tools()
			h := newHarness(t, ts, turn{calls: []provider.ToolCall{call("c1", "run_command", `{"command":"make"}`)}}, turn{text: "ok"})
			h.opts.Approve = appr
			_, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
			if ts["run_command"].count() != 0 || resultsIn(msgs)["c1"].Content != resultDenied {
				t.Error("call was not denied")
			}
		})
	}
}

func TestProviderErrorFailsTask(t *testing.T) {
	h := newHarness(t, tools(),
		turn{calls: []provider.ToolCall{call("c1", "read_file", `{"path":"a.go"}`)}},
		turn{err: &provider.Error{Kind: provider.KindAuth, Message: "bad key", Status: 401}},
	)
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Status != task.StatusFailed || sum.Error == nil || !strings.Contains(*sum.Error, "bad key") {
		t.Errorf("summary %+v", sum)
	}
	ev := of[protocol.ErrorEvent](h.rec)
	if len(ev) != 1 || ev[0].Kind != "auth" || ev[0].Status != 401 || ev[0].Retryable || ev[0].Message != "bad key" {
		t.Errorf("error events %+v", ev)
	}
	b, _ := json.Marshal(ev[0])
	if string(b) != `{"type":"error","message":"bad key","kind":"auth","status":401,"retryable":false}` {
		t.Errorf("error event wire %s", b)
	}
	if len(msgs) != 4 || msgs[3].Role != provider.RoleAssistant || msgs[3].Content[0].Text != "[No answer: the model call failed (auth).]" {
		t.Errorf("conversation %+v; want prompt, tool call, results and the failed call's note", msgs)
	}
	if len(h.prov.reqs) != 2 {
		t.Errorf("%d model calls; an auth error is not retried", len(h.prov.reqs))
	}
}

func TestCancelMidTool(t *testing.T) {
	ts := tools()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	ts["run_command"].run = func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		close(started)
		<-ctx.Done()
		return tool.Result{}, tool.Errorf(tool.ErrCancelled, "command stopped")
	}
	h := newHarness(t, ts, turn{calls: []provider.ToolCall{
		call("c1", "run_command", `{"command":"sleep 100"}`),
		call("c2", "read_file", `{"path":"a.go"}`),
	}})
	h.appr.answers["c1"] = task.DecisionAllow
	go func() { <-started; cancel() }()
	sum, msgs := h.run(t, ctx, Params{ChatMode: "agent"})
	if sum.Status != task.StatusCancelled || sum.Error == nil || *sum.Error != "cancelled" {
		t.Errorf("summary %+v", sum)
	}
	res := resultsIn(msgs)
	if len(res) != 2 || !res["c1"].IsError || res["c2"].Content != resultCancelled {
		t.Errorf("results %+v", res)
	}
	if ts["read_file"].count() != 0 {
		t.Error("a call after the cancel ran")
	}
	if len(h.prov.reqs) != 1 {
		t.Errorf("%d model calls after cancel", len(h.prov.reqs))
	}
}

func TestCancelDuringApproval(t *testing.T) {
	ts := tools()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, ts, turn{calls: []provider.ToolCall{call("c1", "run_command", `{"command":"make"}`)}})
	h.opts.Approve = func(actx context.Context, _ task.ApprovalRequest) (task.Answer, error) {
		cancel()
		<-actx.Done()
		return task.Answer{Decision: task.DecisionAllow}, nil
	}
	sum, msgs := h.run(t, ctx, Params{ChatMode: "agent"})
	if sum.Status != task.StatusCancelled || ts["run_command"].count() != 0 || resultsIn(msgs)["c1"].Content != resultCancelled {
		t.Errorf("summary %+v results %+v", sum, resultsIn(msgs))
	}
}

func TestUnknownToolBadInputToolErrorsAndPanics(t *testing.T) {
	ts := tools()
	ts["delete_path"].run = func(context.Context, json.RawMessage) (tool.Result, error) { panic("boom") }
	ts["run_command"].run = func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, fmt.Errorf("sandbox helper died")
	}
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{
			call("c1", "fly_to_moon", `{}`),
			call("", "read_file", `{"path":"missing.go"}`),
			call("c3", "read_file", `[1,2]`),
			call("c4", "delete_path", `{"path":"x"}`),
			call("c5", "run_command", `{"command":"make"}`),
		}},
		turn{text: "sorry"},
	)
	pol, _ := policy.Parse(json.RawMessage(`{"allowAll":true}`))
	sum, msgs := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: pol})
	if sum.Status != task.StatusCompleted || sum.ToolCalls != 5 {
		t.Errorf("summary %+v", sum)
	}
	res := resultsIn(msgs)
	given := msgs[1].Content[1].ID
	if !strings.HasPrefix(given, "call_") {
		t.Fatalf("a call without an id got %q", given)
	}
	want := map[string]string{
		"c1":  `Unknown tool "fly_to_moon"`,
		given: "file not found: missing.go",
		"c3":  resultBadInput,
		"c4":  "tool panicked: boom",
		"c5":  "The tool failed: sandbox helper died",
	}
	for id, w := range want {
		if r, ok := res[id]; !ok || !r.IsError || !strings.Contains(r.Content, w) {
			t.Errorf("%s: %+v; want error containing %q", id, r, w)
		}
	}
	if string(msgs[1].Content[2].Input) != "{}" {
		t.Errorf("bad input kept in history: %s", msgs[1].Content[2].Input)
	}
}

// A model that numbers its calls per response (c1 in every turn) gets fresh ids
// for the repeats, so every result in the conversation pairs with one call.
func TestRepeatedCallIDAcrossTurnsReplaced(t *testing.T) {
	h := newHarness(t, tools(),
		turn{calls: []provider.ToolCall{call("c1", "read_file", `{"path":"a.go"}`)}},
		turn{calls: []provider.ToolCall{call("c1", "read_file", `{"path":"b.go"}`)}},
		turn{text: "done"},
	)
	_, msgs := h.run(t, context.Background(), Params{ChatMode: "agent"})
	uses := map[string]int{}
	for _, m := range msgs {
		for _, p := range m.Content {
			if p.Type == provider.PartToolUse {
				uses[p.ID]++
			}
		}
	}
	if len(uses) != 2 || uses["c1"] != 1 {
		t.Fatalf("tool-use ids %v; want c1 once and one fresh id", uses)
	}
}

// A response without token counts adds nothing to the summary's usage, emits no
// usage event (that would say {0, 0} as measured) and is counted as unreported.
func TestUnreportedUsageIsNotZero(t *testing.T) {
	h := newHarness(t, tools(),
		turn{calls: []provider.ToolCall{call("c1", "read_file", `{"path":"a.go"}`)}, usage: provider.Usage{InputTokens: 50, OutputTokens: 5}},
		turn{text: "done", noUsage: true},
	)
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	usageEvents := len(of[protocol.UsageEvent](h.rec))
	if *sum.Usage != (provider.Usage{InputTokens: 50, OutputTokens: 5}) || sum.UnreportedUsageCalls != 1 || usageEvents != 1 {
		t.Fatalf("usage %+v unreported %d usage events %d", sum.Usage, sum.UnreportedUsageCalls, usageEvents)
	}
	b, _ := json.Marshal(sum)
	if !strings.Contains(string(b), `"unreportedUsageCalls":1`) {
		t.Fatalf("summary JSON %s", b)
	}
}

// A task accepts steering from the moment it reports started (protocol.md
// agent/steer); the message joins before the first model turn.
func TestSteerRightAfterStarted(t *testing.T) {
	h := newHarness(t, tools(), turn{text: "ok"})
	ctl := NewControl()
	h.opts.Control = ctl
	accepted := false
	h.opts.Emit = func(e protocol.AgentEvent) {
		if _, ok := e.(protocol.StartedEvent); ok {
			accepted = ctl.Steer("use tabs")
		}
		h.rec.emit(e)
	}
	h.run(t, context.Background(), Params{ChatMode: "agent"})
	if !accepted {
		t.Fatal("agent/steer right after started was refused")
	}
	first := h.prov.reqs[0].Messages
	last := first[len(first)-1]
	if len(last.Content) == 0 || !strings.Contains(last.Content[len(last.Content)-1].Text, "use tabs") {
		t.Fatalf("the steering message is not in the first request: %+v", first)
	}
	if len(of[protocol.SteeredEvent](h.rec)) != 1 {
		t.Fatal("no steered event")
	}
}

// WaitTools runs before the task offers its tools: a tool that joins during
// the wait is offered in the first request, and each source still missing is
// a warning event.
func TestWaitToolsBeforeOffering(t *testing.T) {
	h := newHarness(t, tools(), turn{text: "ok"})
	h.opts.WaitTools = func(context.Context) []string {
		h.opts.Tools.Add(newTool("mcp__late__echo", tool.ClassRead, nil))
		return []string{`MCP server "stuck" is still starting; its tools are not available to this task`}
	}
	h.run(t, context.Background(), Params{ChatMode: "agent", Policy: mustPolicy(t, `{"allowAll":true}`)})
	var offered bool
	for _, s := range h.prov.reqs[0].Tools {
		offered = offered || s.Name == "mcp__late__echo"
	}
	if !offered {
		t.Fatal("a tool that joined during WaitTools is not offered")
	}
	ws := of[protocol.WarningEvent](h.rec)
	if len(ws) != 1 || !strings.Contains(ws[0].Message, `"stuck" is still starting`) {
		t.Fatalf("warnings %+v", ws)
	}
}

func mustPolicy(t *testing.T, raw string) policy.Policy {
	t.Helper()
	p, err := policy.Parse(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMaxIterations(t *testing.T) {
	h := newHarness(t, tools())
	h.prov.repeat = &turn{calls: []provider.ToolCall{call("c", "read_file", `{"path":"a.go"}`)}}
	h.opts.MaxIterations = 3
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	if sum.Status != task.StatusFailed || sum.Iterations != 3 || sum.Error == nil || !strings.Contains(*sum.Error, "limit of 3 model turns") ||
		sum.EndReason != protocol.EndMaxIterations {
		t.Errorf("summary %+v", sum)
	}
	if len(h.prov.reqs) != 3 {
		t.Errorf("%d model calls", len(h.prov.reqs))
	}
}

// An answer cut at the output token limit: a warning of kind outputCut
// (clients such as ACP's max_tokens read the kind, not the message); the
// task completes with no end reason.
func TestOutputCutWarning(t *testing.T) {
	h := newHarness(t, tools(), turn{text: "half an answ", cut: true})
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	ws := of[protocol.WarningEvent](h.rec)
	if sum.Status != task.StatusCompleted || sum.EndReason != "" || len(ws) != 1 || ws[0].Kind != protocol.WarningOutputCut {
		t.Fatalf("summary %+v, warnings %+v", sum, ws)
	}
}

// An answer the provider stopped with its content filter (OpenAI's
// finish_reason content_filter, Anthropic's stop_reason refusal) is a
// warning of kind contentFilter: a front end can tell a refusal from an
// answer (ACP's stopReason refusal).
func TestContentFilterWarning(t *testing.T) {
	h := newHarness(t, tools(), turn{filtered: true})
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent"})
	ws := of[protocol.WarningEvent](h.rec)
	if sum.Status != task.StatusCompleted || len(ws) != 1 || ws[0].Kind != protocol.WarningContentFilter {
		t.Fatalf("summary %+v, warnings %+v", sum, ws)
	}
}

func TestNoProviderAndEmptyPrompt(t *testing.T) {
	rec := &recorder{}
	sum, _ := Run(context.Background(), Params{TaskID: "x", Prompt: "hi"}, Options{Emit: rec.emit})
	if sum.Status != task.StatusFailed || sum.Error == nil || rec.types()[len(rec.types())-1] != "done" {
		t.Errorf("no provider: %+v %v", sum, rec.types())
	}
	h := newHarness(t, tools())
	sum, _ = Run(context.Background(), Params{TaskID: "x"}, h.opts)
	if sum.Status != task.StatusFailed || !strings.Contains(*sum.Error, "empty") {
		t.Errorf("empty prompt: %+v", sum)
	}
}

func TestHistoryAndImages(t *testing.T) {
	history := []provider.Message{
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "earlier"}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolUse, ID: "old", Name: "read_file", Input: json.RawMessage(`{}`)}}},
	}
	img := provider.Part{Type: provider.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="}
	h := newHarness(t, tools(), turn{text: "ok"})
	_, msgs := h.run(t, context.Background(), Params{Prompt: "go on", ChatMode: "agent", History: history, Images: []provider.Part{img}})
	if len(history[1].Content) != 1 || len(history) != 2 {
		t.Error("History was modified")
	}
	if len(msgs) != 4 {
		t.Fatalf("conversation %+v", msgs)
	}
	u := msgs[2].Content
	if len(u) != 3 || u[0].ToolUseID != "old" || !u[0].IsError || u[1].Text != "go on" || u[2].Data != img.Data || u[2].Type != provider.PartImage {
		t.Errorf("continued user message %+v", u)
	}
}

func TestMergeChange(t *testing.T) {
	var f []tool.FileChange
	f = task.MergeChange(f, tool.FileChange{Path: "a", Kind: "created", Added: 3})
	f = task.MergeChange(f, tool.FileChange{Path: "b", Kind: "modified", Added: 1, Removed: 1})
	f = task.MergeChange(f, tool.FileChange{Path: "a", Kind: "modified", Added: 1, Removed: 1})
	f = task.MergeChange(f, tool.FileChange{Path: "b", Kind: "deleted", Removed: 5})
	f = task.MergeChange(f, tool.FileChange{Path: "c", Kind: "created", Added: 1})
	f = task.MergeChange(f, tool.FileChange{Path: "c", Kind: "deleted", Removed: 1})
	want := []tool.FileChange{{Path: "a", Kind: "created", Added: 4, Removed: 1}, {Path: "b", Kind: "deleted", Added: 1, Removed: 6}}
	if !slices.Equal(f, want) {
		t.Errorf("merged %+v; want %+v", f, want)
	}
}
