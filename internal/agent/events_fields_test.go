package agent

import (
	"encoding/json"
	"testing"
)

// An event type of another layer marshals its Fields after "type".
func TestEventFields(t *testing.T) {
	b, err := json.Marshal(Event{Type: "subagent", Fields: struct {
		Name  string `json:"name"`
		Event Event  `json:"event"`
	}{"n", Event{Type: EventIteration, N: 2}}})
	if err != nil || string(b) != `{"type":"subagent","name":"n","event":{"type":"iteration","n":2}}` {
		t.Fatalf("%s %v", b, err)
	}
	if _, err := json.Marshal(Event{Type: "x", Fields: 3}); err == nil {
		t.Fatal("a non-object Fields marshalled")
	}
	b, _ = json.Marshal(Event{Type: "x", Fields: struct{}{}})
	if string(b) != `{"type":"x"}` {
		t.Fatalf("%s", b)
	}
}
