package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestEventsCarryTypeFirst: every event type encodes as an object whose
// first member is its "type", and decodes back to the same value.
func TestEventsCarryTypeFirst(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range AgentEvents {
		typ := e.EventType()
		if seen[typ] {
			t.Errorf("two agent event types are %q", typ)
		}
		seen[typ] = true
		b, err := MarshalAgentEvent(e)
		if err != nil {
			t.Fatalf("%T: %v", e, err)
		}
		if want := `{"type":"` + typ + `"`; !strings.HasPrefix(string(b), want) {
			t.Errorf("%T encodes as %s; want it to start with %s", e, b, want)
		}
		back, err := DecodeAgentEvent(b)
		if err != nil {
			t.Fatalf("%T: %v", e, err)
		}
		if reflect.TypeOf(back) != reflect.TypeOf(e) {
			t.Errorf("%s decodes as %T, want %T", b, back, e)
		}
	}
	for _, e := range ChatEvents {
		b, err := MarshalChatEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeChatEvent(b)
		if err != nil || reflect.TypeOf(back) != reflect.TypeOf(e) {
			t.Errorf("%s decodes as %T (%v), want %T", b, back, err, e)
		}
	}
}

func TestAgentEventParamsRoundTrip(t *testing.T) {
	errText := "boom"
	in := AgentEventParams{TaskID: "t1", Event: SubagentEvent{Name: "w", TaskID: "t2",
		Event: ToolFinishedEvent{CallID: "c", Tool: "read_file", Error: &errText, Result: nil}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"taskId":"t1","event":{"type":"subagent","name":"w","taskId":"t2","event":{"type":"toolFinished","callId":"c","tool":"read_file","ok":false,"result":null,"error":"boom","durationMs":0}}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var out AgentEventParams
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip: %#v", out)
	}
}

// TestUnknownEventKept: an event of a type this package does not know
// decodes as a RawEvent and encodes as it came.
func TestUnknownEventKept(t *testing.T) {
	const raw = `{"type":"somethingNew","x":1}`
	e, err := DecodeAgentEvent([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(RawEvent); !ok || e.EventType() != "somethingNew" {
		t.Fatalf("decoded %T %q", e, e.EventType())
	}
	b, err := MarshalAgentEvent(e)
	if err != nil || string(b) != raw {
		t.Fatalf("re-encoded %s %v", b, err)
	}
	if _, err := DecodeAgentEvent([]byte(`{"n":1}`)); err == nil {
		t.Fatal("an event without type decoded")
	}
	if _, err := DecodeAgentEvent([]byte(`{"type":"iteration","n":"one"}`)); err == nil {
		t.Fatal("a malformed iteration event decoded")
	}
}

func TestBestOfResultDecodesCandidates(t *testing.T) {
	const raw = `{"taskId":"b","candidates":[{"name":"w1","kind":"ollama","model":"m","status":"completed","files":1,"added":2,"removed":0,"validations":[],"costUsd":0,"tokens":5,"dir":"/d","patch":"p"},{"name":null,"kind":"openai","model":"n","status":"failed","error":"x"}],"costUsd":0}`
	var r BestOfResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 2 {
		t.Fatalf("%d candidates", len(r.Candidates))
	}
	if c, ok := r.Candidates[0].(FinishedCandidate); !ok || c.Tokens != 5 {
		t.Fatalf("first %#v", r.Candidates[0])
	}
	if c, ok := r.Candidates[1].(FailedCandidate); !ok || *c.Error != "x" {
		t.Fatalf("second %#v", r.Candidates[1])
	}
	b, _ := json.Marshal(r)
	if string(b) != raw {
		t.Fatalf("re-encoded\n%s\nwant\n%s", b, raw)
	}
}

// TestEventWireForm: every member of an event is sent, zero values
// included; a nil slice is [] (nested ones too) and an empty or invalid
// input is {}, so an engine need not fill them.
func TestEventWireForm(t *testing.T) {
	msg := "denied"
	for _, tc := range []struct {
		ev   AgentEvent
		want string
	}{
		{StartedEvent{TaskID: "t", ChatMode: "agent", Model: "m"}, `{"type":"started","taskId":"t","chatMode":"agent","model":"m"}`},
		{IterationEvent{N: 2}, `{"type":"iteration","n":2}`},
		{AssistantMessageEvent{Text: "hi"}, `{"type":"assistantMessage","text":"hi","toolCalls":[]}`},
		{AssistantMessageEvent{ToolCalls: []ToolCall{{ID: "a", Name: "n"}}}, `{"type":"assistantMessage","text":"","toolCalls":[{"id":"a","name":"n","input":{}}]}`},
		{ToolStartedEvent{CallID: "c", Tool: "x", Input: json.RawMessage(`{"a"`)}, `{"type":"toolStarted","callId":"c","tool":"x","input":{},"permission":""}`},
		{ToolFinishedEvent{CallID: "c", Tool: "x", Error: &msg, DurationMs: 3}, `{"type":"toolFinished","callId":"c","tool":"x","ok":false,"result":null,"error":"denied","durationMs":3}`},
		{FileChangedEvent{CallID: "c", Path: "a", Kind: "created"}, `{"type":"fileChanged","callId":"c","path":"a","kind":"created","added":0,"removed":0}`},
		{PlanStartedEvent{CallID: "c", MaxParallel: 3, Steps: []PlanStep{{ID: "a", Role: "research", Objective: "look"}, {ID: "b", Role: "review", Objective: "check", DependsOn: []string{"a"}}}},
			`{"type":"planStarted","callId":"c","maxParallel":3,"steps":[{"id":"a","role":"research","objective":"look","dependsOn":[]},{"id":"b","role":"review","objective":"check","dependsOn":["a"]}]}`},
		{StepSkippedEvent{Step: "b", Reason: "its dependency a failed"}, `{"type":"stepSkipped","step":"b","reason":"its dependency a failed"}`},
		{MergedEvent{Step: "a", Name: "task-x-1", OK: true}, `{"type":"merged","step":"a","name":"task-x-1","ok":true,"files":[],"error":null}`},
		{SubagentFinishedEvent{Name: "n"}, `{"type":"subagentFinished","name":"n","taskId":"","role":"","status":"","error":null,"costUsd":0,"unpricedTokens":0,"tokens":0,"files":0,"added":0,"removed":0,"worktree":null}`},
		{DoneEvent{Status: "completed"}, `{"type":"done","status":"completed","error":null,"text":"","changedFiles":[],"usage":{"inputTokens":0,"outputTokens":0},"model":"","iterations":0,"toolCalls":0,"validationRan":false,"skippedChecks":[]}`},
		{SubagentEvent{Name: "w", Event: PlanEvent{}}, `{"type":"subagent","name":"w","taskId":"","event":{"type":"plan","explanation":"","steps":[]}}`},
	} {
		b, err := MarshalAgentEvent(tc.ev)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.ev.EventType(), b, err, tc.want)
		}
	}
	// The caller's value is not changed.
	steps := []PlanStep{{ID: "a"}}
	MarshalAgentEvent(PlanStartedEvent{Steps: steps})
	if steps[0].DependsOn != nil {
		t.Error("MarshalAgentEvent changed the event it encoded")
	}
}
