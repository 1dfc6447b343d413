package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestGivenToolCallIDsUniqueAcrossSession: Ollama sends tool calls without ids;
// the ids the runtime gives them are unique across responses, tasks and chat/send
// requests (addendum §10), not call_1 again in every response.
func TestGivenToolCallIDsUniqueAcrossSession(t *testing.T) {
	root := t.TempDir()
	listing := scriptedCall{name: "list_files", input: map[string]any{}}
	_, srv := newScriptedModel(t, "ollama", []step{
		{calls: []scriptedCall{listing}},
		{calls: []scriptedCall{listing, listing}},
		{text: "done"},
	})
	prov := map[string]any{"kind": "ollama", "model": "fake", "baseUrl": srv.URL}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	seen := map[string]int{}
	for range 2 {
		res := runDriven(t, p, map[string]any{"prompt": "list", "provider": prov, "chatMode": "agent"},
			func(ev agentEvent) {
				if ev.Event["type"] == "toolStarted" {
					seen[ev.Event["callId"].(string)]++
				}
			}, func(string, *message) {})
		if res.Error != nil {
			t.Fatalf("agent/run: %v", res.Error)
		}
	}
	for range 2 {
		id := p.request("chat/send", map[string]any{"provider": prov, "request": map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}})
		m := p.waitFor(itoa(id), 30*time.Second)
		var res struct {
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"toolCalls"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || len(res.ToolCalls) != 1 {
			t.Fatalf("chat/send: %s", m.raw)
		}
		seen[res.ToolCalls[0].ID]++
	}
	if len(seen) != 8 {
		t.Fatalf("tool-call ids %v; want 8 distinct ids", seen)
	}
}

// TestChatSendUsageAndLog: chat/send logs its token counts at info (protocol.md
// Framing) and, when the provider reports none, leaves usage out of the result
// instead of saying {0, 0}.
func TestChatSendUsageAndLog(t *testing.T) {
	var counts atomic.Bool
	counts.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprintln(w, `{"model":"m","message":{"role":"assistant","content":"hello"},"done":false}`)
		if counts.Load() {
			fmt.Fprintln(w, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":4321,"eval_count":98}`)
		} else {
			fmt.Fprintln(w, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`)
		}
	}))
	t.Cleanup(srv.Close)
	p := start(t, "TASK_X_LOG=info")
	p.initialize(nil)
	send := func() map[string]json.RawMessage {
		res := p.mustCall("chat/send", map[string]any{"provider": map[string]any{"kind": "ollama", "model": "m", "baseUrl": srv.URL},
			"request": map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}})
		var m map[string]json.RawMessage
		json.Unmarshal(res, &m)
		return m
	}
	if m := send(); string(m["usage"]) != `{"inputTokens":4321,"outputTokens":98}` {
		t.Fatalf("usage %s", m["usage"])
	}
	counts.Store(false)
	if m := send(); m["usage"] != nil || string(m["text"]) != `"hello"` {
		t.Fatalf("a response without counts: usage %s text %s", m["usage"], m["text"])
	}
	var logged bool
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, "model call") && strings.Contains(line, "chat/send") &&
			strings.Contains(line, "4321") && strings.Contains(line, "98") {
			logged = true
		}
		if strings.Contains(line, "hello") || strings.Contains(line, `"hi"`) {
			t.Errorf("output or prompt text logged: %s", line)
		}
	}
	if !logged {
		t.Fatalf("no info line with chat/send's token counts:\n%s", p.stderr.String())
	}
}

// TestCrashSweptTaskHasFailedSummary: a runtime killed mid-task leaves the task
// file running; the next initialize marks it failed, and agent/task's result
// carries a summary with status "failed" and error set (protocol.md
// initialize), not summary: null with the error only in the file.
func TestCrashSweptTaskHasFailedSummary(t *testing.T) {
	hang := newHangingServer(t)
	dataDir, root := t.TempDir(), t.TempDir()
	p := start(t)
	p.initialize(map[string]any{"dataDir": dataDir, "sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	p.request("agent/run", map[string]any{"prompt": "hello", "chatMode": "ask",
		"provider": map[string]any{"kind": "ollama", "model": "m", "baseUrl": hang.URL, "timeoutMs": 600000}})
	var taskID string
	for taskID == "" {
		m := p.next(30 * time.Second)
		var ev agentEvent
		if m.Method == "agent/event" && json.Unmarshal(m.Params, &ev) == nil && ev.Event["type"] == "started" {
			taskID = ev.TaskID
		}
	}
	file := filepath.Join(dataDir, "tasks", taskID+".json")
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.Contains(string(b), `"status": "running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task file while running: %s, %v", b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.cmd.Process.Kill()
	p.wait(10 * time.Second)

	p2 := start(t)
	p2.initialize(map[string]any{"dataDir": dataDir})
	var got struct {
		Summary *struct {
			TaskID string  `json:"taskId"`
			Status string  `json:"status"`
			Error  *string `json:"error"`
		} `json:"summary"`
	}
	res := p2.mustCall("agent/task", map[string]any{"taskId": taskID})
	if json.Unmarshal(res, &got) != nil || got.Summary == nil || got.Summary.Status != "failed" ||
		got.Summary.Error == nil || *got.Summary.Error == "" || got.Summary.TaskID != taskID {
		t.Fatalf("agent/task of a crash-swept task: %s", res)
	}
}

// TestSteerRightAfterStarted: agent/steer sent as soon as the started event
// arrives is accepted (protocol.md agent/steer) and joins the conversation:
// before the first model request when it arrives during set-up, else before
// the task would end (which of the two depends on scheduling, so the script
// has an answer for both). The first answer waits for the steer's reply:
// otherwise, under load, the task could finish before the runtime read the
// steer, and false would be the right answer (CI failed so at load 14).
func TestSteerRightAfterStarted(t *testing.T) {
	steered := make(chan struct{})
	model, srv := newScriptedModel(t, "openai", []step{{text: "ok", gate: steered}, {text: "ok, with tabs"}})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-steer-1"}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": t.TempDir()})
	steerID, answer, gotSteer := "", "", false
	res := runDriven(t, p, map[string]any{"prompt": "hello", "provider": prov, "chatMode": "agent"},
		func(ev agentEvent) {
			if ev.Event["type"] == "started" {
				steerID = itoa(p.request("agent/steer", map[string]any{"taskId": ev.TaskID, "text": "use tabs"}))
			}
		},
		func(id string, m *message) {
			if id == steerID && !gotSteer {
				gotSteer, answer = true, string(m.Result)
				close(steered) // the model may answer now
			}
		})
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	if !gotSteer {
		t.Fatalf("agent/run ended before agent/steer (id %q) was answered, though the model waited for it", steerID)
	}
	if answer != "true" {
		t.Fatalf("agent/steer right after started answered %q", answer)
	}
	bodies := model.bodies()
	last, _ := json.Marshal(bodies[len(bodies)-1]["messages"])
	if !strings.Contains(string(last), "use tabs") {
		t.Fatalf("the last model request (of %d) does not carry the steering: %s", len(bodies), last)
	}
}

// TestAgentRunWaitsForStartingMCPServer: an agent/run sent while an MCP
// server is still starting (mcp/configure answered "starting") waits for it,
// bounded, and offers its tools in the first model request.
func TestAgentRunWaitsForStartingMCPServer(t *testing.T) {
	root := t.TempDir()
	model, srv := newScriptedModel(t, "openai", []step{{text: "ok"}})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-mcpwait-1"}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	slow := "sleep 6; exec " + filepath.Join(binDir, "task-x-runtime") + " --mcp-server --root " + root
	st := p.mustCall("mcp/configure", map[string]any{"servers": map[string]any{
		"slow": map[string]any{"command": "/bin/sh", "args": []string{"-c", slow}, "timeoutMs": 60000}}, "workspaceTrusted": false})
	if !strings.Contains(string(st), `"state":"starting"`) {
		t.Fatalf("the server is not starting when agent/run is sent: %s", st)
	}
	res := runDriven(t, p, map[string]any{"prompt": "hello", "provider": prov, "chatMode": "agent",
		"policy": map[string]any{"mode": "default", "allowAll": true}}, func(agentEvent) {}, func(string, *message) {})
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	if names := toolNames(model.bodies()[0]); !contains(names, "mcp__slow__read_file") {
		t.Fatalf("the first request does not offer the starting server's tools: %v", names)
	}
}

// TestTruncatedPromptCountWarns: Ollama reports a prompt far smaller than the
// conversation (it cut it at num_ctx); the task says so in a warning event
// instead of calibrating its estimate down to that count.
func TestTruncatedPromptCountWarns(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("some words of a long file here\n", 1500)), 0o644)
	_, srv := newScriptedModel(t, "ollama", []step{
		{calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "big.txt"}}}},
		{calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "big.txt"}}}},
		{text: "done"},
	})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	var warnings []string
	res := runDriven(t, p, map[string]any{"prompt": "read it", "chatMode": "agent",
		"provider": map[string]any{"kind": "ollama", "model": "fake", "baseUrl": srv.URL},
		"limits":   map[string]any{"contextWindowTokens": 200000}},
		func(ev agentEvent) {
			if ev.Event["type"] == "warning" {
				warnings = append(warnings, ev.Event["message"].(string))
			}
		}, func(string, *message) {})
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	var n int
	for _, w := range warnings {
		if strings.Contains(w, "reported a prompt of 100 tokens, far below") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("warnings %q; want one about the truncated prompt count", warnings)
	}
}

// TestEditsPendingStaysUnderMessageCap: edits/pending after the agent
// rewrote 12 files of 3 MB (36 MB of originals) is one line under the 32 MiB
// cap, with the cut files marked truncated; edits/list too. The run does
// 36 MB of work (slow with -race on a loaded machine): it is driven by its
// events, each awaited, not bounded as a whole.
func TestEditsPendingStaysUnderMessageCap(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("a line of a large generated file\n", 3<<20/33)
	var calls []scriptedCall
	for i := range 12 {
		name := fmt.Sprintf("big%d.txt", i)
		os.WriteFile(filepath.Join(root, name), []byte(big), 0o644)
		calls = append(calls, scriptedCall{name: "write_file", input: map[string]any{"path": name, "content": "short\n"}})
	}
	_, srv := newScriptedModel(t, "openai", []step{{calls: calls}, {text: "done"}})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	res := runDriven(t, p, map[string]any{"prompt": "shrink", "provider": fakeProvider(srv.URL),
		"chatMode": "agent", "policy": map[string]any{"mode": "acceptEdits"}}, nil, nil)
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	for _, method := range []string{"edits/pending", "edits/list"} {
		// One reply of up to 32 MiB, the only event to wait for.
		m := p.waitFor(itoa(p.request(method, nil)), 120*time.Second)
		if m.Error != nil {
			t.Fatalf("%s: %v", method, m.Error)
		}
		if len(m.raw) >= 32<<20 {
			t.Fatalf("%s reply is %d bytes, over the cap", method, len(m.raw))
		}
		if method == "edits/pending" {
			var res struct {
				Files []struct {
					Path      string  `json:"path"`
					Original  *string `json:"original"`
					Truncated bool    `json:"truncated"`
				} `json:"files"`
			}
			json.Unmarshal(m.Result, &res)
			if len(res.Files) != 12 || !res.Files[0].Truncated || res.Files[0].Original == nil ||
				!strings.Contains(*res.Files[0].Original, "more bytes not shown") {
				t.Fatalf("pending: %d files, first %+v", len(res.Files), res.Files[0].Path)
			}
		}
	}
}
