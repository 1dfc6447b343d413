package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// mapJSON maps one encoded agent/event as the client port does.
func mapJSON(t *testing.T, tr *translator, taskID, raw string, replay bool) []any {
	t.Helper()
	ev, err := protocol.DecodeAgentEvent([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.mapEvent(ev, taskID, "", "", replay)
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Team mode: planStarted is a plan, a subagent is a tool call whose
// step goes in_progress then completed, its own tool calls are tool
// calls with prefixed ids and titles, a skipped step is completed with
// its reason, and the subagent's task belongs to the session.
func TestTeamUpdates(t *testing.T) {
	a := &Agent{sessions: map[string]*acpSession{}, tasks: map[string]*acpSession{}}
	s := &acpSession{id: "lead", cwd: "/w"}
	tr := newTranslator(a, s)
	s.updates = tr

	got := mapJSON(t, tr, "lead", `{"type":"planStarted","callId":"c1","maxParallel":2,"steps":[
		{"id":"s1","role":"research","objective":"find the parser","dependsOn":[]},
		{"id":"s2","role":"implementation","objective":"fix it","dependsOn":["s1"]}]}`, false)
	if len(got) != 1 || asJSON(got[0]) != `{"sessionUpdate":"plan","entries":[{"content":"research: find the parser","priority":"medium","status":"pending"},{"content":"implementation: fix it","priority":"medium","status":"pending"}]}` {
		t.Fatalf("planStarted: %s", asJSON(got))
	}
	got = mapJSON(t, tr, "lead", `{"type":"subagentStarted","name":"wt-1","taskId":"sub-1","role":"research","objective":"find the parser","kind":"openai","model":"m","dir":null,"step":"s1"}`, false)
	if len(got) != 2 || !strings.Contains(asJSON(got[0]), `"toolCallId":"subagent/sub-1","title":"research subagent: find the parser","kind":"think","status":"in_progress"`) ||
		!strings.Contains(asJSON(got[1]), `{"content":"research: find the parser","priority":"medium","status":"in_progress"}`) {
		t.Fatalf("subagentStarted: %s", asJSON(got))
	}
	if a.sessionOfTask("sub-1") != s {
		t.Fatal("the subagent's task does not belong to the session")
	}
	got = mapJSON(t, tr, "lead", `{"type":"subagent","name":"wt-1","taskId":"sub-1","event":{"type":"toolStarted","callId":"k1","tool":"read_file","input":{"path":"parse.go"},"permission":"read"}}`, false)
	if len(got) != 1 || !strings.Contains(asJSON(got[0]), `"toolCallId":"sub-1/k1","title":"[wt-1] Read parse.go","kind":"read","status":"pending","locations":[{"path":"/w/parse.go"}]`) {
		t.Fatalf("a subagent's tool call: %s", asJSON(got))
	}
	got = mapJSON(t, tr, "lead", `{"type":"subagent","name":"wt-1","taskId":"sub-1","event":{"type":"textDelta","text":"thinking aloud"}}`, false)
	if len(got) != 0 {
		t.Fatalf("a subagent's text went to the lead's answer: %s", asJSON(got))
	}
	got = mapJSON(t, tr, "lead", `{"type":"subagentFinished","name":"wt-1","taskId":"sub-1","role":"research","status":"completed","error":null,"costUsd":0,"unpricedTokens":0,"tokens":10,"files":0,"added":0,"removed":0,"worktree":null}`, false)
	if len(got) != 2 || !strings.Contains(asJSON(got[0]), `"toolCallId":"subagent/sub-1","status":"completed"`) ||
		!strings.Contains(asJSON(got[1]), `{"content":"research: find the parser","priority":"medium","status":"completed"}`) {
		t.Fatalf("subagentFinished: %s", asJSON(got))
	}
	got = mapJSON(t, tr, "lead", `{"type":"stepSkipped","step":"s2","reason":"s1 failed"}`, false)
	if len(got) != 1 || !strings.Contains(asJSON(got[0]), `{"content":"implementation: fix it (skipped: s1 failed)","priority":"medium","status":"completed"}`) {
		t.Fatalf("stepSkipped: %s", asJSON(got))
	}
}

// The lead's own stream: deltas, thinking, the whole message only when
// no delta carried it (or in a replay), update_plan's plan, live output
// then the result, a background command's first finish in progress,
// usage with cost, the cut warning.
func TestLeadUpdates(t *testing.T) {
	s := &acpSession{id: "t", cwd: "/w"}
	tr := newTranslator(&Agent{}, s)
	if got := mapJSON(t, tr, "t", `{"type":"textDelta","text":"Hi"}`, false); asJSON(got) != `[{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}]` {
		t.Fatalf("textDelta: %s", asJSON(got))
	}
	if got := mapJSON(t, tr, "t", `{"type":"assistantMessage","text":"Hi","toolCalls":[]}`, false); len(got) != 0 {
		t.Fatalf("a streamed message sent again: %s", asJSON(got))
	}
	if got := mapJSON(t, tr, "t", `{"type":"assistantMessage","text":"Whole","toolCalls":[]}`, false); len(got) != 1 {
		t.Fatalf("an unstreamed message lost: %s", asJSON(got))
	}
	if got := mapJSON(t, tr, "t", `{"type":"thinkingDelta","text":"hmm"}`, false); !strings.Contains(asJSON(got), `"agent_thought_chunk"`) {
		t.Fatalf("thinkingDelta: %s", asJSON(got))
	}
	if got := mapJSON(t, tr, "t", `{"type":"plan","explanation":"","steps":[{"step":"read","status":"completed"},{"step":"fix","status":"inProgress"},{"step":"test","status":"pending"}]}`, false); asJSON(got) !=
		`[{"sessionUpdate":"plan","entries":[{"content":"read","priority":"medium","status":"completed"},{"content":"fix","priority":"medium","status":"in_progress"},{"content":"test","priority":"medium","status":"pending"}]}]` {
		t.Fatalf("plan: %s", asJSON(got))
	}
	mapJSON(t, tr, "t", `{"type":"toolStarted","callId":"r1","tool":"run_command","input":{"command":"go test ./..."},"permission":"command"}`, false)
	if got := mapJSON(t, tr, "t", `{"type":"approvalResolved","callId":"r1","tool":"run_command","decision":"allowSession"}`, false); !strings.Contains(asJSON(got), `"status":"in_progress"`) {
		t.Fatalf("approvalResolved: %s", asJSON(got))
	}
	mapJSON(t, tr, "t", `{"type":"toolOutput","callId":"r1","stream":"stdout","text":"ok  pkg\n"}`, false)
	got := mapJSON(t, tr, "t", `{"type":"toolOutput","callId":"r1","stream":"stdout","text":"PASS\n"}`, false)
	if !strings.Contains(asJSON(got), "ok  pkg\\nPASS") {
		t.Fatalf("toolOutput accumulates: %s", asJSON(got))
	}
	got = mapJSON(t, tr, "t", `{"type":"toolFinished","callId":"r1","tool":"run_command","ok":true,"result":{"output":"ok  pkg\nPASS\n","exitCode":0},"error":null,"durationMs":5}`, false)
	if !strings.Contains(asJSON(got), `"status":"completed"`) || !strings.Contains(asJSON(got), "PASS") {
		t.Fatalf("toolFinished: %s", asJSON(got))
	}
	// A command the cancelled turn killed, or one that timed out, failed.
	for i, res := range []string{`{"output":"hi\n","exitCode":-1,"cancelled":true}`, `{"output":"","exitCode":-1,"timedOut":true}`} {
		id := fmt.Sprintf("k%d", i)
		mapJSON(t, tr, "t", `{"type":"toolStarted","callId":"`+id+`","tool":"run_command","input":{"command":"sleep 9"},"permission":"command"}`, false)
		got = mapJSON(t, tr, "t", `{"type":"toolFinished","callId":"`+id+`","tool":"run_command","ok":true,"result":`+res+`,"error":null,"durationMs":5}`, false)
		if !strings.Contains(asJSON(got), `"status":"failed"`) {
			t.Fatalf("a stopped command: %s", asJSON(got))
		}
	}
	mapJSON(t, tr, "t", `{"type":"toolStarted","callId":"b1","tool":"run_command","input":{"command":"sleep 9","background":true},"permission":"command"}`, false)
	got = mapJSON(t, tr, "t", `{"type":"toolFinished","callId":"b1","tool":"run_command","ok":true,"result":{"background":true,"command":"sleep 9","message":"started"},"error":null,"durationMs":1,"background":true}`, false)
	if !strings.Contains(asJSON(got), `"status":"in_progress"`) {
		t.Fatalf("the first finish of a background command: %s", asJSON(got))
	}
	got = mapJSON(t, tr, "t", `{"type":"toolFinished","callId":"b1","tool":"run_command","ok":true,"result":{"output":""},"error":null,"durationMs":9000,"background":true}`, false)
	if !strings.Contains(asJSON(got), `"status":"completed"`) {
		t.Fatalf("the second finish of a background command: %s", asJSON(got))
	}
	mapJSON(t, tr, "t", `{"type":"usage","inputTokens":10,"outputTokens":5,"totalInputTokens":10,"totalOutputTokens":5,"costUsd":0.25}`, false)
	if got := mapJSON(t, tr, "t", `{"type":"context","usedTokens":15,"windowTokens":1000}`, false); asJSON(got) != `[{"sessionUpdate":"usage_update","used":15,"size":1000,"cost":{"amount":0.25,"currency":"USD"}}]` {
		t.Fatalf("usage_update: %s", asJSON(got))
	}
	// The message alone is not the cut: the kind is.
	mapJSON(t, tr, "t", `{"type":"warning","message":"the model's answer was cut at the output token limit"}`, false)
	if res, _ := tr.stopReason(taskEnd{Status: protocol.TaskCompleted}); res.(promptResult).StopReason != "end_turn" {
		t.Fatalf("a warning without a kind: %v", res)
	}
	mapJSON(t, tr, "t", `{"type":"warning","message":"cut","kind":"outputCut"}`, false)
	if res, _ := tr.stopReason(taskEnd{Status: protocol.TaskCompleted}); res.(promptResult).StopReason != "max_tokens" {
		t.Fatalf("the cut answer: %v", res)
	}
	if got := mapJSON(t, tr, "t", `{"type":"userMessage","images":0,"text":"fix it"}`, true); !strings.Contains(asJSON(got), `"user_message_chunk"`) {
		t.Fatalf("userMessage: %s", asJSON(got))
	}
	if got := mapJSON(t, tr, "t", `{"type":"assistantMessage","text":"Replayed","toolCalls":[]}`, true); len(got) != 1 {
		t.Fatalf("a replayed message: %s", asJSON(got))
	}
}

// A call without the member its title names still has a title.
func TestTitleWithoutPath(t *testing.T) {
	for tool, want := range map[string]string{"read_file": "Read a file", "write_file": "Write a file", "run_command": "Run a command",
		"move_path": "Move a path", "delete_path": "Delete a path"} {
		if got := title(tool, json.RawMessage(`{"nopath":1}`)); got != want {
			t.Errorf("%s: %q, want %q", tool, got, want)
		}
	}
	if got := title("read_file", json.RawMessage(`{"path":"a.go"}`)); got != "Read a.go" {
		t.Errorf("read_file: %q", got)
	}
}
