package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEventsOverTheCapAreCut: the session sends each recorded event as
// the bytes the task recorded (Request.EmitJSON); an event bigger than
// the 32 MiB message cap (a tool call whose input, a file to write, is
// 33 MiB) must still reach the client under the
// cap, with its longest strings cut and marked (protocol.md Framing; the
// JSON-RPC layer's fit), never as a line the client would refuse, and
// the task goes on to its reply. (write_file refuses content that big;
// the call's input is in its recorded events all the same.)
func TestEventsOverTheCapAreCut(t *testing.T) {
	const capBytes = 32 << 20
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644)
	big := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", (33<<20)/64)
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "big.txt", "content": big}}}},
		{text: "done"},
	})
	p := start(t)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": root})
	id := p.request("agent/run", map[string]any{"prompt": "write", "provider": fakeProvider(srv.URL),
		"chatMode": "agent", "policy": map[string]any{"allowAll": true}})
	// 10 minutes: the run moves 33 MiB strings through -race builds (~90
	// CPU-s), which took 2-6 minutes at load 8-17 on two cores.
	reply := p.waitFor(fmt.Sprint(id), 10*time.Minute)
	longest, cut, over := len(reply.raw), 0, 0
	p.mu.Lock()
	notes := append([]*message(nil), p.notes...)
	p.mu.Unlock()
	for _, m := range notes {
		n := len(m.raw)
		longest = max(longest, n)
		if n > capBytes {
			over++
		}
		if m.Method == "!unparsable" {
			t.Fatalf("a line that is not JSON (%d bytes)", n)
		}
		if m.Method == "agent/event" && strings.Contains(m.raw, "cut here") {
			cut++
			var ev struct {
				TaskID string `json:"taskId"`
				Event  struct {
					Type string `json:"type"`
				} `json:"event"`
			}
			if json.Unmarshal(m.Params, &ev) != nil || ev.TaskID == "" || ev.Event.Type == "" {
				t.Errorf("a cut event lost its small fields: %.300s", m.raw)
			}
		}
	}
	if reply.Error != nil {
		t.Fatalf("agent/run: %v", reply.Error)
	}
	var sum struct {
		Status string `json:"status"`
	}
	json.Unmarshal(reply.Result, &sum)
	if sum.Status != "completed" {
		t.Fatalf("summary %s", reply.Result)
	}
	if over > 0 {
		t.Fatalf("%d lines over the 32 MiB cap (longest %d bytes)", over, longest)
	}
	if cut == 0 {
		t.Fatalf("no agent/event was cut (longest line %d bytes): the over-cap event did not reach the client", longest)
	}
	t.Logf("longest line %d bytes; %d agent/event cut", longest, cut)
}
