package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// claudeCLI is the real Claude Code CLI (.ci/run installs the pinned npm
// package and sets TASK_X_CLAUDE_BIN); the claude/run tests skip without it.
func claudeCLI(t *testing.T) string {
	p := os.Getenv("TASK_X_CLAUDE_BIN")
	if p == "" {
		t.Skip("TASK_X_CLAUDE_BIN is not set (.ci/run installs @anthropic-ai/claude-code)")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("TASK_X_CLAUDE_BIN: %v", err)
	}
	return p
}

// TestClaudeRunReadEdit: claude/run through the binary drives the real CLI
// against a fake Anthropic server. The scripted model reads and edits a
// file with the mcp__task-x__ tools; the edit asks agent/requestApproval
// (read_file does not), the answer allows it, the file changes, the summary
// has agent/run's shape, and agent/tasks lists the task. The --mcp-server
// child shares the runtime's edit log: a fileChanged event follows the
// edit, the summary's operations are in edits/pending, and edits/undo
// restores the file. agent/task holds the whole conversation (tool calls
// and results), and an agent/run continuing the task sends it to the model.
func TestClaudeRunReadEdit(t *testing.T) {
	cli := claudeCLI(t)
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello world\n"), 0o644)
	model, srv := newClaudeModel(t, readThenReplace("Edited a.txt."))
	p := start(t, claudeEnv(t, srv.URL)...)
	var asked []map[string]any
	p.onRequest = func(method string, params json.RawMessage) any {
		if method == "agent/requestApproval" {
			var q map[string]any
			json.Unmarshal(params, &q)
			asked = append(asked, q)
			return map[string]any{"decision": "allow"}
		}
		return nil
	}
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	res := p.mustCall("claude/run", map[string]any{"prompt": "change hello to goodbye", "claudePath": cli, "model": "claude-sonnet-4-5"})
	var sum struct {
		TaskID       string `json:"taskId"`
		Status       string `json:"status"`
		Text         string `json:"text"`
		ChangedFiles []struct {
			Path    string `json:"path"`
			Kind    string `json:"kind"`
			Added   int    `json:"added"`
			Removed int    `json:"removed"`
		} `json:"changedFiles"`
		Operations []string `json:"operations"`
		Usage      struct {
			InputTokens  int `json:"inputTokens"`
			OutputTokens int `json:"outputTokens"`
		} `json:"usage"`
		ToolCalls int `json:"toolCalls"`
	}
	if err := json.Unmarshal(res, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Status != "completed" || sum.Text != "Edited a.txt." || sum.ToolCalls != 2 || len(sum.ChangedFiles) != 1 ||
		sum.ChangedFiles[0].Path != "a.txt" || sum.ChangedFiles[0].Kind != "modified" || sum.ChangedFiles[0].Added != 1 ||
		sum.ChangedFiles[0].Removed != 1 || len(sum.Operations) != 1 || sum.Usage.OutputTokens != 30 {
		t.Fatalf("summary: %s", res)
	}
	pend := pending(t, p)
	if len(pend) != 1 || pend[0].Path != "a.txt" || pend[0].Original == nil || *pend[0].Original != "hello world\n" ||
		len(pend[0].Operations) != 1 || pend[0].Operations[0] != sum.Operations[0] {
		t.Fatalf("edits/pending after claude/run: %+v", pend)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "goodbye world\n" {
		t.Errorf("a.txt = %q", b)
	}
	if len(asked) != 1 || asked[0]["tool"] != "replace_text" || asked[0]["permission"] != "edit" || asked[0]["taskId"] != sum.TaskID {
		t.Errorf("approvals: %v", asked)
	}
	var types []string
	for _, n := range p.notifications("agent/event") {
		var ev struct {
			Event struct {
				Type string `json:"type"`
			} `json:"event"`
		}
		json.Unmarshal(n.Params, &ev)
		types = append(types, ev.Event.Type)
	}
	got := strings.Join(types, ",")
	for _, want := range []string{"started", "toolStarted", "approvalRequested", "approvalResolved", "fileChanged", "toolFinished", "usage", "done"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s event: %s", want, got)
		}
	}
	found := false
	for _, tk := range listTasks(t, p) {
		if tk.TaskID == sum.TaskID && tk.Status == "completed" {
			found = true
		}
	}
	if !found {
		t.Errorf("agent/tasks does not list %s as completed", sum.TaskID)
	}
	if names := mustJSON(model.bodies()[0]["tools"]); strings.Contains(names, `"name":"Write"`) || !strings.Contains(names, "mcp__task-x__read_file") {
		t.Errorf("tools offered: %.400s", names)
	}

	// The saved conversation: prompt, tool calls with their results, answer.
	var saved struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"toolUseId"`
				Content   string          `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(p.mustCall("agent/task", map[string]any{"taskId": sum.TaskID}), &saved)
	var shape []string
	for _, m := range saved.Messages {
		for _, c := range m.Content {
			shape = append(shape, m.Role+":"+c.Type+":"+c.Name)
		}
	}
	wantShape := "user:text:,assistant:toolUse:read_file,user:toolResult:,assistant:toolUse:replace_text,user:toolResult:,assistant:text:"
	if strings.Join(shape, ",") != wantShape || !strings.Contains(saved.Messages[2].Content[0].Content, "hello world") ||
		saved.Messages[5].Content[0].Text != "Edited a.txt." {
		t.Fatalf("saved conversation %v, want %s", shape, wantShape)
	}

	// agent/run on the same task continues with that conversation.
	n := len(model.bodies())
	p.mustCall("agent/run", map[string]any{"prompt": "and now?", "taskId": sum.TaskID, "chatMode": "ask",
		"provider": map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKey": "sk-ant-e2e-claude"}})
	bodies := model.bodies()
	if len(bodies) <= n {
		t.Fatal("agent/run sent no request to the model")
	}
	if msgs := mustJSON(bodies[n]["messages"]); !strings.Contains(msgs, "hello world") || !strings.Contains(msgs, "replace_text") ||
		!strings.Contains(msgs, "Edited a.txt.") || !strings.Contains(msgs, "and now?") {
		t.Errorf("agent/run did not continue the conversation: %.1500s", msgs)
	}

	// edits/undo of Claude's operation restores the file.
	var undo struct{ Restored, Conflicts []string }
	json.Unmarshal(p.mustCall("edits/undo", map[string]any{"operation": sum.Operations[0]}), &undo)
	if len(undo.Restored) != 1 || undo.Restored[0] != "a.txt" || len(undo.Conflicts) != 0 {
		t.Fatalf("undo %+v", undo)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "hello world\n" {
		t.Errorf("a.txt after undo = %q", b)
	}
}

// TestClaudeRunCLIMissing: a CLI that is not there, or too old, is an
// error naming the cause and the install command, at once; one that exits
// at once fails the run with its exit code and stderr; the reserved server
// name is -32602.
func TestClaudeRunCLIMissing(t *testing.T) {
	p := start(t)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": t.TempDir()})
	_, err := p.call("claude/run", map[string]any{"prompt": "hi", "claudePath": filepath.Join(t.TempDir(), "claude")})
	if err == nil || !strings.Contains(err.Message, "not found") || !strings.Contains(err.Message, "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("err = %v", err)
	}
	_, err = p.call("claude/run", map[string]any{"prompt": "hi", "mcpServers": map[string]any{"task-x": map[string]any{"command": "x"}}})
	if err == nil || err.Code != -32602 {
		t.Errorf("reserved name: %v", err)
	}
	// Too old: the version found and the update command.
	old := fakeClaude(t, `echo "2.0.1 (Claude Code)"`)
	_, err = p.call("claude/run", map[string]any{"prompt": "hi", "claudePath": old})
	if err == nil || !strings.Contains(err.Message, "too old") || !strings.Contains(err.Message, "2.0.1") ||
		!strings.Contains(err.Message, "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("too old: %v", err)
	}
	// Exits at once: a failed summary naming the exit code and its stderr.
	dies := fakeClaude(t, `case "$1" in --version) echo "2.1.197 (Claude Code)"; exit 0;; esac
echo "fatal: cannot start here" >&2; exit 3`)
	res := p.mustCall("claude/run", map[string]any{"prompt": "hi", "claudePath": dies})
	if !strings.Contains(string(res), `"status":"failed"`) || !strings.Contains(string(res), "exited (code 3) before answering") ||
		!strings.Contains(string(res), "fatal: cannot start here") {
		t.Errorf("exits at once: %s", res)
	}
}

// fakeClaude writes a shell script standing in for the CLI.
func fakeClaude(t *testing.T, body string) string {
	path := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// claudeModel is a fake Anthropic Messages API for the Claude Code CLI:
// request n of the main conversation (the requests that carry tools) gets
// script[n], past it "done."; each answer has its own message id. seen
// gets each such request's index as it arrives; hold[n], when set, holds
// answer n until the channel is closed.
type claudeModel struct {
	script []step
	mu     sync.Mutex
	reqs   []map[string]any
	seen   chan int
	hold   map[int]chan struct{}
	side   atomic.Int64 // side requests (no tools) answered
}

// holdAnswer makes answer n wait until the returned channel is closed.
func (m *claudeModel) holdAnswer(n int) chan struct{} {
	ch := make(chan struct{})
	m.mu.Lock()
	m.hold[n] = ch
	m.mu.Unlock()
	return ch
}

func newClaudeModel(t *testing.T, script []step) (*claudeModel, *httptest.Server) {
	m := &claudeModel{script: script, seen: make(chan int, 64), hold: map[int]chan struct{}{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

func (m *claudeModel) bodies() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.reqs...)
}

func (m *claudeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if r.URL.Path != "/v1/messages" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, 404)
		return
	}
	st := step{text: "Side request."}
	n := -1
	if tools, _ := req["tools"].([]any); len(tools) > 0 {
		m.mu.Lock()
		n = len(m.reqs)
		m.reqs = append(m.reqs, req)
		hold := m.hold[n]
		m.mu.Unlock()
		st = step{text: "done."}
		if n < len(m.script) {
			st = m.script[n]
		}
		select {
		case m.seen <- n:
		default:
		}
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, data map[string]any) {
		data["type"] = name
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, mustJSON(data))
	}
	id := fmt.Sprintf("msg_e2e_%d", n+1)
	if n < 0 {
		id = fmt.Sprintf("msg_e2e_side_%d", m.side.Add(1))
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"content": []any{}, "model": "claude-fake-1", "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}})
	idx := 0
	if st.text != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": st.text}})
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for i, c := range st.calls {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.name, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": mustJSON(c.input)}})
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

// TestClaudeRunBlockedAndAsked: through the binary, a `sed -i` hidden in
// $(…) is blocked by the hook, dangerouslyDisableSandbox is denied at once,
// neither asks for approval, and AskUserQuestion goes to agent/askUser
// with the answers reaching the model.
func TestClaudeRunBlockedAndAsked(t *testing.T) {
	cli := claudeCLI(t)
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello\n"), 0o644)
	model, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{
			{name: "Bash", input: map[string]any{"command": "echo $(sed -i s/hello/bye/ a.txt)", "description": "edit"}},
			{name: "Bash", input: map[string]any{"command": "touch made.txt", "description": "touch", "dangerouslyDisableSandbox": true}},
			{name: "AskUserQuestion", input: map[string]any{"questions": []any{map[string]any{"question": "Which color?", "header": "Color",
				"multiSelect": false, "options": []any{map[string]any{"label": "Red", "description": "r"}, map[string]any{"label": "Blue", "description": "b"}}}}}},
		}},
		{text: "Done."},
	})
	p := start(t, "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-e2e-claude",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	var asked []string
	p.onRequest = func(method string, params json.RawMessage) any {
		asked = append(asked, method)
		if method == "agent/askUser" {
			return map[string]any{"answers": map[string]any{"q1": []string{"Blue"}}}
		}
		return map[string]any{"decision": "deny"}
	}
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": repo})
	res := p.mustCall("claude/run", map[string]any{"prompt": "try things", "claudePath": cli})
	if !strings.Contains(string(res), `"status":"completed"`) {
		t.Fatalf("summary: %s", res)
	}
	if len(asked) != 1 || asked[0] != "agent/askUser" {
		t.Errorf("client requests: %v, want only agent/askUser", asked)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "hello\n" {
		t.Errorf("sed -i ran: %q", b)
	}
	if _, err := os.Stat(filepath.Join(repo, "made.txt")); err == nil {
		t.Error("the unsandboxed command ran")
	}
	last := mustJSON(model.bodies()[1]["messages"])
	for _, want := range []string{"mcp__task-x__ tools", "dangerouslyDisableSandbox is not allowed", `\"Which color?\"=\"Blue\"`} {
		if !strings.Contains(last, want) {
			t.Errorf("the model did not get %s: %.2000s", want, last)
		}
	}
}

// readThenReplace is a Claude script that reads a.txt with the task-x
// tools, replaces "hello" by "goodbye" in it and answers final.
func readThenReplace(final string) []step {
	return []step{
		{calls: []scriptedCall{{name: "mcp__task-x__read_file", input: map[string]any{"path": "a.txt"}}}},
		{calls: []scriptedCall{{name: "mcp__task-x__replace_text", input: map[string]any{"path": "a.txt", "oldText": "hello", "newText": "goodbye"}}}},
		{text: final},
	}
}

// claudeEnv is the environment of a runtime whose claude/run talks to the
// fake model at url.
func claudeEnv(t *testing.T, url string) []string {
	return []string{"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-ant-e2e-claude",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
}

// TestClaudeRunSteer: through the binary, agent/steer while Claude's first
// answer is on its way is accepted, reported by a steered event when the
// CLI takes it, and answered before the run ends (stdin stays open until
// then); the saved conversation holds it, and a claude/run continuing the
// task gives it to the CLI.
func TestClaudeRunSteer(t *testing.T) {
	cli := claudeCLI(t)
	model, srv := newClaudeModel(t, []step{{text: "First answer."}, {text: "Second answer."}})
	release := model.holdAnswer(0)
	p := start(t, claudeEnv(t, srv.URL)...)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": t.TempDir()})
	var taskID, steerID string
	var steered []string
	answers := map[string]string{}
	res := driveMethod(t, p, "claude/run", 4*time.Minute, map[string]any{"prompt": "say something", "claudePath": cli},
		func(ev agentEvent) {
			switch ev.Event["type"] {
			case "started":
				taskID = ev.TaskID
			case "model":
				<-model.seen // the first request is waiting for its answer
				steerID = fmt.Sprint(p.request("agent/steer", map[string]any{"taskId": taskID, "text": "Also say hi."}))
			case "steered":
				steered = append(steered, fmt.Sprint(ev.Event["text"]))
			}
		},
		func(id string, m *message) {
			answers[id] = string(m.Result)
			if id == steerID {
				close(release)
			}
		})
	if res.Error != nil {
		t.Fatalf("claude/run: %v", res.Error)
	}
	if answers[steerID] != "true" || len(steered) != 1 || steered[0] != "Also say hi." {
		t.Fatalf("steer answered %q, steered events %v", answers[steerID], steered)
	}
	if !strings.Contains(string(res.Result), `"text":"Second answer."`) {
		t.Errorf("summary %s: the steer message must be answered before the run ends", res.Result)
	}
	bodies := model.bodies()
	if len(bodies) != 2 || !strings.Contains(mustJSON(bodies[1]["messages"]), "Also say hi.") {
		t.Errorf("%d requests; the second must carry the steer message", len(bodies))
	}
	saved := string(p.mustCall("agent/task", map[string]any{"taskId": taskID}))
	if !strings.Contains(saved, `"text":"Also say hi."`) || !strings.Contains(saved, `"text":"Second answer."`) {
		t.Errorf("saved conversation: %.1500s", saved)
	}
	if r := p.mustCall("agent/steer", map[string]any{"taskId": taskID, "text": "late"}); string(r) != "false" {
		t.Errorf("steer after the run: %s", r)
	}

	// claude/run continuing the task gives the CLI the earlier
	// conversation in front of the new prompt.
	p.mustCall("claude/run", map[string]any{"prompt": "and then?", "taskId": taskID, "claudePath": cli})
	bodies = model.bodies()
	last := mustJSON(bodies[len(bodies)-1]["messages"])
	if !strings.Contains(last, "earlier-conversation") || !strings.Contains(last, "[user] Also say hi.") ||
		!strings.Contains(last, "[assistant] Second answer.") || !strings.Contains(last, "and then?") {
		t.Errorf("the continued run's request lacks the earlier conversation: %.1500s", last)
	}
}

// TestClaudeRunCancelTool: through the binary, agent/cancelTool sent as
// soon as a Bash call starts stops that command (the CLI reports it
// stoppable a few seconds in; the request waits for that): the call fails
// with exit code 137, the model is told the user stopped it, and the run
// goes on to its answer.
func TestClaudeRunCancelTool(t *testing.T) {
	cli := claudeCLI(t)
	model, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{{name: "Bash", input: map[string]any{"command": "sleep 120", "description": "wait"}}}},
		// The stop note joins the turn's next request, or gets a turn of
		// its own when that request was already sent (the CLI decides).
		{text: "Stopped."},
		{text: "Stopped."},
	})
	p := start(t, claudeEnv(t, srv.URL)...)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": t.TempDir()})
	var taskID, callID, cancelID string
	var finished map[string]any
	answers := map[string]string{}
	res := driveMethod(t, p, "claude/run", 4*time.Minute, map[string]any{"prompt": "wait a while", "claudePath": cli},
		func(ev agentEvent) {
			switch ev.Event["type"] {
			case "started":
				taskID = ev.TaskID
			case "toolStarted":
				if ev.Event["tool"] == "Bash" {
					callID = fmt.Sprint(ev.Event["callId"])
					cancelID = fmt.Sprint(p.request("agent/cancelTool", map[string]any{"taskId": taskID, "callId": callID}))
				}
			case "toolFinished":
				if ev.Event["callId"] == callID {
					finished = ev.Event
				}
			}
		},
		func(id string, m *message) { answers[id] = string(m.Result) })
	if res.Error != nil {
		t.Fatalf("claude/run: %v", res.Error)
	}
	if answers[cancelID] != "true" {
		t.Fatalf("agent/cancelTool answered %q", answers[cancelID])
	}
	if finished == nil || finished["ok"] != false || !strings.Contains(fmt.Sprint(finished["error"]), "137") {
		t.Errorf("toolFinished of the stopped call: %v", finished)
	}
	if !strings.Contains(string(res.Result), `"status":"completed"`) || !strings.Contains(string(res.Result), `"text":"Stopped."`) {
		t.Errorf("summary %s", res.Result)
	}
	bodies := model.bodies()
	if msgs := mustJSON(bodies[len(bodies)-1]["messages"]); !strings.Contains(msgs, "Task has been stopped by user") || !strings.Contains(msgs, "Exit code 137") {
		t.Errorf("the model was not told the command was stopped: %.2000s", msgs)
	}
	if r := p.mustCall("agent/cancelTool", map[string]any{"taskId": taskID, "callId": callID}); string(r) != "false" {
		t.Errorf("cancelTool after the run: %s", r)
	}
}

// TestClaudeRunOwnToolsAndServers: with useTaskTools false the --no-tools
// MCP server serves only the approve tool (the model sees no mcp__task-x__
// tool and keeps Claude's own file tools; a Write is asked about as an
// edit), another server from mcpServers reaches the CLI through
// --mcp-config (its tool is asked about as mcp), and the skills the task
// layer resolves for the prompt (as skills/resolve gives them) are in the
// system prompt.
func TestClaudeRunOwnToolsAndServers(t *testing.T) {
	cli := claudeCLI(t)
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello from a\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, ".task-x/skills/haiku"), 0o755)
	os.WriteFile(filepath.Join(repo, ".task-x/skills/haiku/SKILL.md"),
		[]byte("---\nname: haiku\ndescription: poems\ntriggers: [poem]\n---\nAnswer in haiku form.\n"), 0o644)
	model, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{
			{name: "Write", input: map[string]any{"file_path": filepath.Join(repo, "new.txt"), "content": "made by Write\n"}},
			{name: "mcp__other__read_file", input: map[string]any{"path": "a.txt"}},
		}},
		{text: "Wrote it."},
	})
	p := start(t, claudeEnv(t, srv.URL)...)
	var asked []string
	p.onRequest = func(method string, params json.RawMessage) any {
		var q struct{ Tool, Permission string }
		json.Unmarshal(params, &q)
		asked = append(asked, method+" "+q.Tool+" "+q.Permission)
		return map[string]any{"decision": "allow"}
	}
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": repo})
	other := map[string]any{"command": filepath.Join(binDir, "task-x-runtime"), "args": []string{"--mcp-server", "--root", repo}}
	res := p.mustCall("claude/run", map[string]any{"prompt": "write a poem file", "claudePath": cli, "useTaskTools": false,
		"mcpServers": map[string]any{"other": other}})
	if !strings.Contains(string(res), `"status":"completed"`) || !strings.Contains(string(res), `"path":"new.txt"`) {
		t.Fatalf("summary: %s", res)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "new.txt")); string(b) != "made by Write\n" {
		t.Errorf("new.txt = %q", b)
	}
	want := []string{"agent/requestApproval Write edit", "agent/requestApproval mcp__other__read_file mcp"}
	if strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Errorf("asked %v, want %v", asked, want)
	}
	bodies := model.bodies()
	tools := mustJSON(bodies[0]["tools"])
	if strings.Contains(tools, "mcp__task-x__") || !strings.Contains(tools, `"name":"Write"`) || !strings.Contains(tools, `"name":"mcp__other__read_file"`) {
		t.Errorf("tools offered: %.3000s", tools)
	}
	if sys := mustJSON(bodies[0]["system"]); !strings.Contains(sys, "Answer in haiku form.") || strings.Contains(sys, "mcp__task-x__ tools") {
		t.Errorf("system prompt: skills missing or task-x tools named: %.600s", sys)
	}
	if msgs := mustJSON(bodies[1]["messages"]); !strings.Contains(msgs, "hello from a") {
		t.Errorf("the other server's read_file result did not reach the model: %.2000s", msgs)
	}
}

// TestClaudeRunSessionApproval: through the binary, an allowSession answer
// covers the later calls of that tool in the run (one agent/requestApproval
// for two replace_text calls); images go with the prompt as image blocks;
// without a dataDir the edits are still operations of the runtime's edit
// log (the --forward MCP server runs them in the runtime: edits/pending,
// edits/undo);
// with approveAll a later run's edit is allowed by the runtime, with no
// agent/requestApproval.
func TestClaudeRunSessionApproval(t *testing.T) {
	cli := claudeCLI(t)
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one two\n"), 0o644)
	model, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{{name: "mcp__task-x__read_file", input: map[string]any{"path": "a.txt"}}}},
		{calls: []scriptedCall{{name: "mcp__task-x__replace_text", input: map[string]any{"path": "a.txt", "oldText": "one", "newText": "1"}}}},
		{calls: []scriptedCall{{name: "mcp__task-x__replace_text", input: map[string]any{"path": "a.txt", "oldText": "two", "newText": "2"}}}},
		{text: "Both edited."},
		{calls: []scriptedCall{{name: "mcp__task-x__write_file", input: map[string]any{"path": "b.txt", "content": "bee\n"}}}},
		{text: "Written."},
	})
	p := start(t, claudeEnv(t, srv.URL)...)
	var asked []string
	p.onRequest = func(method string, params json.RawMessage) any {
		var q struct{ Tool string }
		json.Unmarshal(params, &q)
		asked = append(asked, method+" "+q.Tool)
		return map[string]any{"decision": "allowSession"}
	}
	p.initialize(nil) // no dataDir: the edit log lives in the runtime's memory
	p.mustCall("workspace/open", map[string]any{"root": repo})
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	res := p.mustCall("claude/run", map[string]any{"prompt": "edit both words", "claudePath": cli,
		"images": []any{map[string]any{"mediaType": "image/png", "data": png}}})
	if !strings.Contains(string(res), `"status":"completed"`) || !strings.Contains(string(res), `"text":"Both edited."`) {
		t.Fatalf("summary: %s", res)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "1 2\n" {
		t.Errorf("a.txt = %q", b)
	}
	if strings.Join(asked, ",") != "agent/requestApproval replace_text" {
		t.Errorf("asked %v, want one approval for replace_text", asked)
	}
	first := mustJSON(model.bodies()[0]["messages"])
	if !strings.Contains(first, `"type":"image"`) || !strings.Contains(first, png) {
		t.Errorf("the image did not reach the model: %.1000s", first)
	}
	// The edits are operations of the runtime's own log, without a dataDir.
	var sum struct {
		Operations   []string `json:"operations"`
		ChangedFiles []struct {
			Path           string
			Added, Removed int
		} `json:"changedFiles"`
	}
	json.Unmarshal(res, &sum)
	pend := pending(t, p)
	if len(sum.Operations) != 2 || len(sum.ChangedFiles) != 1 || sum.ChangedFiles[0].Added != 2 || len(pend) != 1 ||
		pend[0].Path != "a.txt" || strings.Join(pend[0].Operations, ",") != strings.Join(sum.Operations, ",") {
		t.Fatalf("summary %s; edits/pending %+v", res, pend)
	}
	p.mustCall("edits/undo", map[string]any{"operation": sum.Operations[1]})
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "1 two\n" {
		t.Errorf("a.txt after undoing the second edit = %q", b)
	}

	asked = nil
	res = p.mustCall("claude/run", map[string]any{"prompt": "write b", "claudePath": cli, "approveAll": true})
	if !strings.Contains(string(res), `"text":"Written."`) || !strings.Contains(string(res), `"path":"b.txt","kind":"created"`) {
		t.Fatalf("summary: %s", res)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(b) != "bee\n" {
		t.Errorf("b.txt = %q", b)
	}
	if len(asked) != 0 {
		t.Errorf("approveAll asked %v", asked)
	}
}

// TestClaudeRunCancelEndsTree: $/cancelRequest of a claude/run while a Bash
// command runs answers -32800, and the CLI, its MCP server and the
// sandboxed command all end.
func TestClaudeRunCancelEndsTree(t *testing.T) {
	cli := claudeCLI(t)
	_, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{{name: "Bash", input: map[string]any{"command": "sleep 303", "description": "wait"}}}},
	})
	p := start(t, claudeEnv(t, srv.URL)...)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": t.TempDir()})
	id := fmt.Sprint(p.request("claude/run", map[string]any{"prompt": "wait", "claudePath": cli}))
	var tree []int
	sawSleep := false
	deadline := time.Now().Add(4 * time.Minute)
	for {
		m := p.next(time.Until(deadline))
		if m.Method != "" && len(m.ID) > 0 {
			p.answer(m)
			continue
		}
		if m.Method == "agent/event" && strings.Contains(string(m.Params), `"type":"toolStarted"`) {
			// The command starts after its toolStarted event: wait for it.
			for time.Now().Before(deadline) && !hasCommand(descendantsOf(p.cmd.Process.Pid), "sleep 303") {
				time.Sleep(50 * time.Millisecond)
			}
			tree = descendantsOf(p.cmd.Process.Pid)
			sawSleep = hasCommand(tree, "sleep 303")
			p.notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)})
			continue
		}
		if m.Method == "" && string(m.ID) == id {
			if m.Error == nil || m.Error.Code != -32800 {
				t.Fatalf("claude/run after cancel: %s", m.raw)
			}
			break
		}
	}
	if !sawSleep || len(tree) < 3 {
		t.Fatalf("processes under the runtime before the cancel: %v (the command among them: %v)", tree, sawSleep)
	}
	end := time.Now().Add(60 * time.Second)
	for _, pid := range tree {
		for alive(pid) && time.Now().Before(end) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("process %d (%q) survived the cancel", pid, b)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// hasCommand reports whether one of pids runs a command line containing s.
func hasCommand(pids []int, s string) bool {
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			return true
		}
	}
	return false
}

// TestClaudeRunCancelTaskXCommand: a task-x run_command call of Claude runs
// in the runtime (the --forward MCP server sends it back), so
// agent/cancelTool stops it there: only that call fails, with the
// stopped-by-user result, and the run goes on.
func TestClaudeRunCancelTaskXCommand(t *testing.T) {
	cli := claudeCLI(t)
	model, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{{name: "mcp__task-x__run_command", input: map[string]any{"command": "sleep 121"}}}},
		{text: "Moving on."},
	})
	p := start(t, claudeEnv(t, srv.URL)...)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": t.TempDir()})
	var taskID, callID, cancelID string
	var finished map[string]any
	answers := map[string]string{}
	res := driveMethod(t, p, "claude/run", 4*time.Minute, map[string]any{"prompt": "wait", "claudePath": cli, "allowCommands": true},
		func(ev agentEvent) {
			switch ev.Event["type"] {
			case "started":
				taskID = ev.TaskID
			case "toolStarted":
				callID = fmt.Sprint(ev.Event["callId"])
				// The call reaches the runtime after toolStarted: wait for
				// its command to run under the runtime.
				end := time.Now().Add(time.Minute)
				for time.Now().Before(end) && !hasCommand(descendantsOf(p.cmd.Process.Pid), "sleep 121") {
					time.Sleep(50 * time.Millisecond)
				}
				cancelID = fmt.Sprint(p.request("agent/cancelTool", map[string]any{"taskId": taskID, "callId": callID}))
			case "toolFinished":
				finished = ev.Event
			}
		},
		func(id string, m *message) { answers[id] = string(m.Result) })
	if res.Error != nil {
		t.Fatalf("claude/run: %v", res.Error)
	}
	if answers[cancelID] != "true" {
		t.Fatalf("agent/cancelTool answered %q", answers[cancelID])
	}
	if finished == nil || finished["ok"] != false || !strings.Contains(fmt.Sprint(finished["error"]), "stopped by user") {
		t.Errorf("toolFinished of the stopped call: %v", finished)
	}
	if !strings.Contains(string(res.Result), `"status":"completed"`) || !strings.Contains(string(res.Result), `"text":"Moving on."`) {
		t.Errorf("summary %s", res.Result)
	}
	if hasCommand(descendantsOf(p.cmd.Process.Pid), "sleep 121") {
		t.Error("the stopped command still runs")
	}
	bodies := model.bodies()
	if msgs := mustJSON(bodies[len(bodies)-1]["messages"]); !strings.Contains(msgs, "Task has been stopped by user") {
		t.Errorf("the model was not told the call was stopped: %.2000s", msgs)
	}
}

// TestClaudeRunForwardedToolHooks: the mcp__task-x__ calls Claude Code
// forwards into the runtime run agent/run's config/hooks like the agent
// loop's calls (docs/hooks.md): a PreToolUse hook that exits 2 blocks
// replace_text (the file stays, the model gets the hook's stderr, the hook
// saw the task-x tool name and input), a PostToolUse hook's stderr joins
// read_file's result, and each run is a hook event.
func TestClaudeRunForwardedToolHooks(t *testing.T) {
	cli := claudeCLI(t)
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello world\n"), 0o644)
	model, srv := newClaudeModel(t, readThenReplace("The hook refused the edit."))
	p := start(t, claudeEnv(t, srv.URL)...)
	p.onRequest = func(method string, params json.RawMessage) any {
		if method == "agent/requestApproval" {
			return map[string]any{"decision": "allow"}
		}
		return nil
	}
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	p.mustCall("config/hooks", map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "replace_text", "hooks": []any{map[string]any{"type": "command",
			"command": "cat > pre-input.json; echo 'edits are frozen today' >&2; exit 2"}}}},
		"PostToolUse": []any{map[string]any{"matcher": "read_file", "hooks": []any{map[string]any{"type": "command",
			"command": "echo 'the post hook read it' >&2; exit 2"}}}},
	}})
	res := p.mustCall("claude/run", map[string]any{"prompt": "change hello to goodbye", "claudePath": cli, "model": "claude-sonnet-4-5"})
	var sum struct {
		Status string `json:"status"`
	}
	json.Unmarshal(res, &sum)
	if sum.Status != "completed" {
		t.Fatalf("summary: %s", res)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "hello world\n" {
		t.Errorf("the blocked edit ran: a.txt = %q", b)
	}
	if in, _ := os.ReadFile(filepath.Join(repo, "pre-input.json")); !strings.Contains(string(in), `"tool_name":"replace_text"`) ||
		!strings.Contains(string(in), `"oldText":"hello"`) {
		t.Errorf("PreToolUse stdin = %s", in)
	}
	bodies := model.bodies()
	if len(bodies) < 3 {
		t.Fatalf("%d model requests", len(bodies))
	}
	if msgs := mustJSON(bodies[1]["messages"]); !strings.Contains(msgs, "hello world") || !strings.Contains(msgs, "the post hook read it") {
		t.Errorf("read_file's result lacks the file or the PostToolUse feedback: %.2000s", msgs)
	}
	if msgs := mustJSON(bodies[2]["messages"]); !strings.Contains(msgs, "A PreToolUse hook blocked this tool call") || !strings.Contains(msgs, "edits are frozen today") {
		t.Errorf("the model did not get the PreToolUse hook's stderr: %.2000s", msgs)
	}
	var hooksSeen []string
	for _, n := range p.notifications("agent/event") {
		var ev struct {
			Event map[string]any `json:"event"`
		}
		json.Unmarshal(n.Params, &ev)
		if ev.Event["type"] == "hook" {
			hooksSeen = append(hooksSeen, fmt.Sprintf("%v:%v:%v", ev.Event["event"], ev.Event["matcher"], ev.Event["blocked"]))
		}
	}
	if strings.Join(hooksSeen, ",") != "PostToolUse:read_file:true,PreToolUse:replace_text:true" {
		t.Errorf("hook events %v", hooksSeen)
	}
}

// TestClaudeRunPolicy: claude/run takes agent/run's policy. With mode
// acceptEdits and no permissionMode, an edit runs without
// agent/requestApproval and a deny rule refuses the edit it names, without
// asking, before the tool runs (the model reads "denied by policy"); with
// readOnly the write and command tools (task-x's and Claude Code's Bash)
// are not offered to the model at all.
func TestClaudeRunPolicy(t *testing.T) {
	cli := claudeCLI(t)
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello a\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "b.txt"), []byte("hello b\n"), 0o644)
	model, srv := newClaudeModel(t, []step{
		{calls: []scriptedCall{
			{name: "mcp__task-x__replace_text", input: map[string]any{"path": "a.txt", "oldText": "hello", "newText": "bye"}},
			{name: "mcp__task-x__replace_text", input: map[string]any{"path": "b.txt", "oldText": "hello", "newText": "bye"}},
		}},
		{text: "Edited."},
		{text: "Read only."},
	})
	p := start(t, claudeEnv(t, srv.URL)...)
	var asked []string
	p.onRequest = func(method string, params json.RawMessage) any {
		asked = append(asked, method)
		return map[string]any{"decision": "deny"}
	}
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": repo})
	var finished []map[string]any
	res := driveMethod(t, p, "claude/run", 4*time.Minute, map[string]any{"prompt": "edit both", "claudePath": cli,
		"policy": map[string]any{"mode": "acceptEdits", "allow": []string{}, "deny": []string{"replace_text(b.txt)"}}},
		func(ev agentEvent) {
			if ev.Event["type"] == "toolFinished" {
				finished = append(finished, ev.Event)
			}
		}, nil)
	if res.Error != nil || !strings.Contains(string(res.Result), `"status":"completed"`) {
		t.Fatalf("claude/run: %v %s", res.Error, res.Result)
	}
	if len(asked) != 0 {
		t.Errorf("client requests %v: acceptEdits runs the edit and the deny rule refuses without asking", asked)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "bye a\n" {
		t.Errorf("a.txt = %q, want the edit", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(b) != "hello b\n" {
		t.Errorf("b.txt = %q: the deny rule did not hold", b)
	}
	if len(finished) != 2 || finished[0]["ok"] != true || finished[1]["ok"] != false ||
		!strings.Contains(fmt.Sprint(finished[1]["error"]), `denied by policy: deny rule "replace_text(b.txt)"`) {
		t.Errorf("toolFinished events %v", finished)
	}
	// readOnly: only the read tools are offered.
	p.mustCall("claude/run", map[string]any{"prompt": "look only", "claudePath": cli, "policy": map[string]any{"mode": "readOnly", "allow": []string{}, "deny": []string{}}})
	bodies := model.bodies()
	if len(bodies) != 3 {
		t.Fatalf("%d model requests, want 3", len(bodies))
	}
	names := map[string]bool{}
	for _, x := range bodies[2]["tools"].([]any) {
		names[x.(map[string]any)["name"].(string)] = true
	}
	if !names["mcp__task-x__read_file"] || names["mcp__task-x__write_file"] || names["mcp__task-x__replace_text"] || names["mcp__task-x__run_command"] || names["Bash"] {
		t.Errorf("readOnly offered %v", names)
	}
	if len(asked) != 0 {
		t.Errorf("client requests %v", asked)
	}
}
