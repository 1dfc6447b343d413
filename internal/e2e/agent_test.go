package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentTaskOnRepository runs the main job end to end for each provider
// wire format: a copy of this repository is the workspace; the scripted model
// reads a file, replaces text in it, runs a command (sandbox false) and
// finishes; the edit and the command are approved over agent/requestApproval.
func TestAgentTaskOnRepository(t *testing.T) {
	for _, format := range []string{"openai", "anthropic", "ollama"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			repo := copyRepo(t)
			const heading = "# task-x-runtime"
			const edited = "# task-x-runtime (edited by the agent)"
			model, srv := newScriptedModel(t, format, []step{
				{text: "Let me look at the README.", calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "README.md"}}}},
				{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "README.md", "oldText": heading + "\n", "newText": edited + "\n"}}}},
				{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "head -n 1 README.md && echo from-the-shell"}}}},
				{text: "Done: the README heading now says it was edited."},
			})
			var prov map[string]any
			switch format {
			case "openai":
				prov = map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-openai-key-123"}
			case "anthropic":
				prov = map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKey": "sk-ant-e2e-key-456"}
			case "ollama":
				prov = map[string]any{"kind": "ollama", "model": "qwen3:latest", "baseUrl": srv.URL}
			}

			p := start(t, "TASK_X_LOG=trace")
			var approvals []map[string]any
			p.onRequest = func(method string, params json.RawMessage) any {
				if method != "agent/requestApproval" {
					return nil
				}
				var req map[string]any
				json.Unmarshal(params, &req)
				approvals = append(approvals, req)
				return map[string]any{"decision": "allow"}
			}
			p.initialize(map[string]any{"sandbox": false, "dataDir": t.TempDir()})
			sumRaw := p.mustCall("workspace/open", map[string]any{"root": repo})
			var ws struct {
				Stats struct {
					IndexedFiles int `json:"indexedFiles"`
				} `json:"stats"`
				Project struct {
					Kinds []string `json:"kinds"`
				} `json:"project"`
			}
			json.Unmarshal(sumRaw, &ws)
			if ws.Stats.IndexedFiles < 10 || !contains(ws.Project.Kinds, "go") {
				t.Fatalf("workspace summary: %s", sumRaw)
			}

			res := p.mustCall("agent/run", map[string]any{"prompt": "Mark the README heading as edited, then show its first line.", "provider": prov, "chatMode": "agent",
				// validation_test.go runs checks; go test of this repository's copy would take minutes.
				"validation": map[string]any{"enabled": false}})
			var sum struct {
				TaskID       string `json:"taskId"`
				Status       string `json:"status"`
				Text         string `json:"text"`
				ChangedFiles []struct {
					Path string `json:"path"`
				} `json:"changedFiles"`
				ToolCalls  int             `json:"toolCalls"`
				Iterations int             `json:"iterations"`
				Error      json.RawMessage `json:"error"`
				Usage      struct {
					InputTokens int `json:"inputTokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(res, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Status != "completed" || sum.ToolCalls != 3 || sum.Iterations != 4 {
				t.Fatalf("summary: %s", res)
			}
			if len(sum.ChangedFiles) != 1 || sum.ChangedFiles[0].Path != "README.md" {
				t.Fatalf("changedFiles: %s", res)
			}
			if !strings.Contains(sum.Text, "Done") || sum.Usage.InputTokens == 0 {
				t.Fatalf("text/usage: %s", res)
			}
			data, _ := os.ReadFile(filepath.Join(repo, "README.md"))
			if !strings.HasPrefix(string(data), edited+"\n") {
				t.Fatalf("README.md on disk starts %q", firstLine(string(data)))
			}
			if len(approvals) != 2 || approvals[0]["tool"] != "replace_text" || approvals[1]["tool"] != "run_command" {
				t.Fatalf("approvals: %v", approvals)
			}
			// The command ran after the edit, in the workspace, and the model saw its output.
			bodies := model.bodies()
			if len(bodies) != 4 {
				t.Fatalf("model received %d requests", len(bodies))
			}
			last := mustJSON(bodies[3])
			if !strings.Contains(last, "edited by the agent") || !strings.Contains(last, "from-the-shell") {
				t.Fatalf("last request lacks the command output: %.2000s", last)
			}
			checkToolPairs(t, format, bodies)

			events := p.notifications("agent/event")
			types := eventTypes(events)
			for _, want := range []string{"started", "model", "iteration", "textDelta", "assistantMessage", "toolStarted", "toolFinished",
				"approvalRequested", "approvalResolved", "fileChanged", "usage", "done"} {
				if !contains(types, want) {
					t.Errorf("no %s event; got %v", want, types)
				}
			}
			if types[0] != "started" || types[len(types)-1] != "done" {
				t.Errorf("event order: %v", types)
			}
			// The task file was saved and is complete.
			tasks := p.mustCall("agent/tasks", nil)
			if !strings.Contains(string(tasks), sum.TaskID) || !strings.Contains(string(tasks), `"completed"`) {
				t.Errorf("agent/tasks: %s", tasks)
			}
			p.mustCall("shutdown", nil)
			p.notify("exit", nil)
			if code := p.wait(10e9); code != 0 {
				t.Errorf("exit code %d", code)
			}
			// No key in stderr at trace level.
			for _, k := range []string{"sk-e2e-openai-key-123", "sk-ant-e2e-key-456"} {
				if strings.Contains(p.stderr.String(), k) {
					t.Errorf("stderr holds the API key %s", k)
				}
			}
		})
	}
}

func eventTypes(events []*message) []string {
	var out []string
	for _, e := range events {
		var ev struct {
			Event struct {
				Type string `json:"type"`
			} `json:"event"`
		}
		json.Unmarshal(e.Params, &ev)
		out = append(out, ev.Event.Type)
	}
	return out
}

// checkToolPairs asserts every tool call the model made is answered by
// exactly one tool result in the next request, as the real APIs demand.
func checkToolPairs(t *testing.T, format string, bodies []map[string]any) {
	t.Helper()
	for i, b := range bodies {
		msgs, _ := b["messages"].([]any)
		calls := map[string]int{}
		results := map[string]int{}
		for _, x := range msgs {
			m, _ := x.(map[string]any)
			switch format {
			case "openai":
				if tc, ok := m["tool_calls"].([]any); ok {
					for _, c := range tc {
						calls[c.(map[string]any)["id"].(string)]++
					}
				}
				if m["role"] == "tool" {
					results[m["tool_call_id"].(string)]++
				}
			case "anthropic":
				content, _ := m["content"].([]any)
				for _, c := range content {
					cm, _ := c.(map[string]any)
					switch cm["type"] {
					case "tool_use":
						calls[cm["id"].(string)]++
					case "tool_result":
						results[cm["tool_use_id"].(string)]++
					}
				}
			default:
				return
			}
		}
		for id, n := range calls {
			if n != 1 || results[id] != 1 {
				t.Errorf("request %d: tool call %s has %d uses and %d results", i, id, n, results[id])
			}
		}
		for id := range results {
			if calls[id] == 0 {
				t.Errorf("request %d: orphan tool result %s", i, id)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
