package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentEvent is one agent/event notification, decoded.
type agentEvent struct {
	TaskID string         `json:"taskId"`
	Event  map[string]any `json:"event"`
}

// runDriven sends agent/run and reads every message until its response,
// handing each agent/event to onEvent (which may send more requests; their
// responses go to onResponse by id).
func runDriven(t *testing.T, p *proc, params map[string]any, onEvent func(agentEvent), onResponse func(id string, m *message)) *message {
	t.Helper()
	return driveMethod(t, p, "agent/run", 90*time.Second, params, onEvent, onResponse)
}

// openAndRunAllowAll opens root, runs prompt in agent mode on prov with
// allowAll and returns the toolFinished events; an agent/run error fails
// the test.
func openAndRunAllowAll(t *testing.T, p *proc, root, prompt string, prov map[string]any) []map[string]any {
	t.Helper()
	p.mustCall("workspace/open", map[string]any{"root": root})
	var finished []map[string]any
	res := runDriven(t, p, map[string]any{"prompt": prompt, "provider": prov, "chatMode": "agent",
		"policy": map[string]any{"mode": "default", "allowAll": true}},
		func(ev agentEvent) {
			if ev.Event["type"] == "toolFinished" {
				finished = append(finished, ev.Event)
			}
		}, func(string, *message) {})
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	return finished
}

// driveMethod is runDriven for any streaming method (claude/run,
// agent/bestOf); onEvent and onResponse may be nil. idle bounds the wait for
// each message, not the whole run: a run that keeps sending events is never
// cut short by a slow machine (a loaded 2-core CI runner with -race), and one
// that falls silent for idle fails.
func driveMethod(t *testing.T, p *proc, method string, idle time.Duration, params map[string]any, onEvent func(agentEvent), onResponse func(id string, m *message)) *message {
	t.Helper()
	id := fmt.Sprint(p.request(method, params))
	for {
		m := p.next(idle)
		switch {
		case m.Method != "" && len(m.ID) > 0:
			p.answer(m)
		case m.Method == "agent/event":
			var ev agentEvent
			json.Unmarshal(m.Params, &ev)
			if onEvent != nil {
				onEvent(ev)
			}
		case m.Method != "":
		case string(m.ID) == id:
			return m
		case onResponse != nil:
			onResponse(string(m.ID), m)
		}
	}
}

// allowApprovals answers every agent/requestApproval with allow.
func allowApprovals(p *proc) {
	p.onRequest = func(method string, raw json.RawMessage) any {
		if method == "agent/requestApproval" {
			return map[string]any{"decision": "allow"}
		}
		return nil
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func readPIDs(t *testing.T, path string) []int {
	b, _ := os.ReadFile(path)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// TestSteerAndCancelToolThroughBinary: a command that starts children is
// stopped by agent/cancelTool while a steering message waits; none of the
// children survive, the model is told, the steering message joins, and the
// task goes on to complete.
func TestSteerAndCancelToolThroughBinary(t *testing.T) {
	root := t.TempDir()
	pidFile := filepath.Join(root, "pids")
	cmd := fmt.Sprintf("sleep 300 & echo $! > %s; (sleep 301 & echo $! >> %s; wait) & sleep 302", pidFile, pidFile)
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd}}}},
		{text: "The command was stopped; moving on."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-loop-key-789"}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})

	if _, err := p.call("agent/steer", map[string]any{"taskId": "task-none", "text": "   "}); err == nil || err.Code != -32602 {
		t.Errorf("empty steering text: %v", err)
	}
	if res := p.mustCall("agent/steer", map[string]any{"taskId": "task-none", "text": "hi"}); string(res) != "false" {
		t.Errorf("steer of no task: %s", res)
	}

	var taskID, callID string
	answers := map[string]string{}
	pending := map[string]string{}
	var steered []string
	var pids []int
	res := runDriven(t, p, map[string]any{"prompt": "run the slow thing", "provider": prov, "chatMode": "agent",
		"policy": map[string]any{"mode": "default", "allowAll": true}},
		func(ev agentEvent) {
			switch ev.Event["type"] {
			case "started":
				taskID = ev.TaskID
			case "steered":
				steered = append(steered, ev.Event["text"].(string))
			case "toolStarted":
				callID = ev.Event["callId"].(string)
				deadline := time.Now().Add(60 * time.Second)
				for len(pids) < 2 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					pids = readPIDs(t, pidFile)
				}
				pending[fmt.Sprint(p.request("agent/steer", map[string]any{"taskId": taskID, "text": "  also say hello  "}))] = "steer"
				pending[fmt.Sprint(p.request("agent/cancelTool", map[string]any{"taskId": taskID, "callId": callID}))] = "cancel"
			}
		},
		func(id string, m *message) { answers[pending[id]] = string(m.Result) })
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	var sum struct {
		Status string `json:"status"`
		Text   string `json:"text"`
	}
	json.Unmarshal(res.Result, &sum)
	if sum.Status != "completed" || !strings.Contains(sum.Text, "moving on") {
		t.Fatalf("summary %s", res.Result)
	}
	if answers["steer"] != "true" || answers["cancel"] != "true" {
		t.Errorf("answers %v", answers)
	}
	if len(steered) != 1 || steered[0] != "also say hello" {
		t.Errorf("steered events %v", steered)
	}
	if len(pids) < 2 {
		t.Fatalf("the command did not record its children: %v", pids)
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("child %d survived agent/cancelTool", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	bodies := model.bodies()
	second, _ := json.Marshal(bodies[len(bodies)-1]["messages"])
	if !strings.Contains(string(second), "Task has been stopped by user") || !strings.Contains(string(second), "also say hello") {
		t.Errorf("the last request does not carry the stop note and the steering: %s", second)
	}
	if res := p.mustCall("agent/cancelTool", map[string]any{"taskId": taskID, "callId": callID}); string(res) != "false" {
		t.Errorf("cancelTool after the end: %s", res)
	}
	if _, err := p.call("agent/run", map[string]any{"prompt": "x", "provider": prov, "limits": map[string]any{"compactPercent": 20}}); err == nil || err.Code != -32602 {
		t.Errorf("compactPercent 20: %v", err)
	}
}

// TestBackgroundCommandThroughBinary: run_command with background: true
// gets two toolFinished events, its output joins before the next model
// step, and the task waits for it before ending.
func TestBackgroundCommandThroughBinary(t *testing.T) {
	root := t.TempDir()
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "sleep 0.3; echo background-output-42", "background": true}}}},
		{text: "Waiting for the command."},
		{text: "The command printed its output."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-loop-key-789"}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	finished := openAndRunAllowAll(t, p, root, "run it in the background", prov)
	if len(finished) != 2 || finished[0]["background"] != true || finished[1]["background"] != true {
		t.Fatalf("toolFinished events %v", finished)
	}
	if !strings.Contains(fmt.Sprint(finished[1]["result"]), "background-output-42") {
		t.Errorf("second toolFinished %v", finished[1])
	}
	// The final event carries run_command's whole result, as a foreground call does.
	if r, _ := finished[1]["result"].(map[string]any); r["exitCode"] != float64(0) || r["durationMs"] == nil || r["background"] != true {
		t.Errorf("second toolFinished result lacks exitCode/durationMs: %v", finished[1]["result"])
	}
	bodies := model.bodies()
	if len(bodies) != 3 {
		t.Fatalf("%d model calls; the task must wait for the command", len(bodies))
	}
	last, _ := json.Marshal(bodies[2]["messages"])
	if !strings.Contains(string(last), "background-output-42") {
		t.Errorf("the output did not join: %s", last)
	}
}
