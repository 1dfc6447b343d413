package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// TestCrashTaskLogThroughBinary SIGKILLs the runtime at random points while
// it runs two long tasks (each a few hundred model turns with a tool call),
// round after round, each round continuing the tasks the last one left. A
// new runtime on the data folder then loads every task: status failed (the
// sweep), and its replay holds every event the client had received, in
// order, plus at most the one being sent when the kill landed; the
// conversation never has a tool call without its result.
func TestCrashTaskLogThroughBinary(t *testing.T) {
	repo := smallRepo(t, "unused")
	var script []step
	for i := range 300 {
		script = append(script, step{text: fmt.Sprintf("Turn %d: reading main.go again.", i),
			calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "main.go"}}}})
	}
	_, srv := newScriptedModel(t, "openai", append(script, step{text: "Done."}))
	prov := openaiProvider(srv.URL, "sk-crash-log-key")
	dataDir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	received := map[string][]json.RawMessage{} // task → kept events the client got, all rounds
	ids := []string{"", ""}
	for round := range 4 {
		p := start(t)
		p.initialize(map[string]any{"sandbox": false, "dataDir": dataDir})
		p.mustCall("workspace/open", map[string]any{"root": repo})
		for i := range ids {
			params := map[string]any{"prompt": fmt.Sprintf("long task %d", i), "provider": prov, "chatMode": "ask"}
			if ids[i] != "" {
				params["taskId"] = ids[i]
			}
			p.request("agent/run", params)
		}
		killAt := 40 + rng.IntN(400)
		n := 0
		killed := false
		for m := range p.lines { // to EOF: every line written before the kill landed
			if m.Method != "agent/event" {
				continue
			}
			var ev struct {
				TaskID string          `json:"taskId"`
				Event  json.RawMessage `json:"event"`
			}
			json.Unmarshal(m.Params, &ev)
			if ev.TaskID == "" {
				continue
			}
			for i := range ids {
				if ids[i] == "" && eventType(ev.Event) == "started" && !knownID(ids, ev.TaskID) {
					ids[i] = ev.TaskID
					break
				}
			}
			switch eventType(ev.Event) {
			case "textDelta", "thinkingDelta", "toolOutput", "diff":
			default:
				received[ev.TaskID] = append(received[ev.TaskID], ev.Event)
			}
			if n++; n == killAt && !killed {
				killed = true
				p.cmd.Process.Kill() // SIGKILL
			}
		}
		<-p.exited
		if !killed {
			t.Fatalf("round %d: the tasks ended before the kill at event %d", round, killAt)
		}

		p2 := start(t)
		p2.initialize(map[string]any{"dataDir": dataDir})
		for _, id := range ids {
			if id == "" {
				continue
			}
			var task struct {
				Status   string `json:"status"`
				Messages []struct {
					Role    string `json:"role"`
					Content []struct {
						Type      string `json:"type"`
						ID        string `json:"id"`
						ToolUseID string `json:"toolUseId"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(p2.mustCall("agent/task", map[string]any{"taskId": id}), &task); err != nil {
				t.Fatal(err)
			}
			if task.Status != "failed" {
				t.Fatalf("round %d: %s is %q after the sweep", round, id, task.Status)
			}
			uses, results := map[string]bool{}, map[string]bool{}
			for _, msg := range task.Messages {
				for _, c := range msg.Content {
					if c.Type == "toolUse" {
						uses[c.ID] = true
					}
					if c.Type == "toolResult" {
						results[c.ToolUseID] = true
					}
				}
			}
			for u := range uses {
				if !results[u] {
					t.Fatalf("round %d: %s has tool call %s without its result", round, id, u)
				}
			}
			got, _ := replay(t, p2, id, nil)
			var saved []string
			for _, ev := range got[:len(got)-1] {
				if eventType(ev) != "userMessage" {
					saved = append(saved, canon(t, ev))
				}
			}
			want := kept(t, received[id])
			if len(saved) < len(want) || len(saved) > len(want)+1 {
				t.Fatalf("round %d: %s replays %d events, the client received %d", round, id, len(saved), len(want))
			}
			for i := range want {
				if saved[i] != want[i] {
					t.Fatalf("round %d: %s event %d: saved %s, received %s", round, id, i, saved[i], want[i])
				}
			}
			// The next round's client knows what this replay showed.
			received[id] = nil
			for _, s := range saved {
				received[id] = append(received[id], json.RawMessage(s))
			}
		}
		p2.mustCall("shutdown", nil)
		p2.notify("exit", nil)
		p2.wait(30 * time.Second)
	}
	if entries, _ := os.ReadDir(dataDir + "/tasks"); len(entries) == 0 {
		t.Fatal("no task files")
	}
}

func knownID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
