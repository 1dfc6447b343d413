package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTasksDeleteRunning: agent/deleteTask on a running task answers false
// and deletes nothing, so the task file is still there (and not brought
// back) when the task completes; once it ended, deleting it answers true and
// the file stays gone (issue 4, QA finding 2). Without a dataDir the same
// rule holds for the in-memory task list.
func TestTasksDeleteRunning(t *testing.T) {
	for _, withDataDir := range []bool{true, false} {
		t.Run(fmt.Sprintf("dataDir=%v", withDataDir), func(t *testing.T) {
			repo := smallRepo(t, "unused")
			_, srv := newScriptedModel(t, "openai", []step{
				{text: "Writing.", calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "out.txt", "content": "hi\n"}}}},
				{text: "Done."},
			})
			dataDir := t.TempDir()
			p := start(t)
			init := map[string]any{"sandbox": false}
			if withDataDir {
				init["dataDir"] = dataDir
			}
			p.initialize(init)
			p.mustCall("workspace/open", map[string]any{"root": repo})

			runID := fmt.Sprint(p.request("agent/run", map[string]any{"prompt": "Write out.txt", "provider": openaiProvider(srv.URL, "sk-del-test-key")}))
			var approval *message
			deleteID, taskID := "", ""
			var runResult json.RawMessage
			deadline := time.Now().Add(60 * time.Second)
			for runResult == nil {
				m := p.next(time.Until(deadline))
				switch {
				case m.Method == "agent/requestApproval":
					// The task is running and waits for us: try to delete it.
					var req struct {
						TaskID string `json:"taskId"`
					}
					json.Unmarshal(m.Params, &req)
					taskID, approval = req.TaskID, m
					deleteID = fmt.Sprint(p.request("agent/deleteTask", map[string]any{"taskId": taskID}))
				case m.Method != "":
					// a notification
				case string(m.ID) == deleteID:
					if m.Error != nil || string(m.Result) != "false" {
						t.Fatalf("agent/deleteTask of a running task: %s", m.raw)
					}
					p.send(map[string]any{"jsonrpc": "2.0", "id": approval.ID, "result": map[string]any{"decision": "allow"}})
				case string(m.ID) == runID:
					if m.Error != nil {
						t.Fatalf("agent/run: %s", m.raw)
					}
					runResult = m.Result
				default:
					t.Fatalf("unexpected message: %s", m.raw)
				}
			}
			var sum struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			}
			json.Unmarshal(runResult, &sum)
			if sum.Status != "completed" || sum.TaskID != taskID || approval == nil {
				t.Fatalf("run: %s (approval seen: %v)", runResult, approval != nil)
			}
			file := filepath.Join(dataDir, "tasks", taskID+".json")
			if withDataDir {
				if _, err := os.Stat(file); err != nil {
					t.Fatalf("the refused delete removed the task file: %v", err)
				}
			}
			if ts := listTasks(t, p); len(ts) != 1 || ts[0].Status != "completed" {
				t.Fatalf("agent/tasks after a refused delete: %+v", ts)
			}
			if string(p.mustCall("agent/deleteTask", map[string]any{"taskId": taskID})) != "true" {
				t.Fatal("agent/deleteTask of an ended task")
			}
			time.Sleep(700 * time.Millisecond) // longer than the recorder's save interval
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Fatalf("task file came back: %v", err)
			}
			if ts := listTasks(t, p); len(ts) != 0 {
				t.Fatalf("agent/tasks after delete: %+v", ts)
			}
		})
	}
}
