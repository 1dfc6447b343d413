package e2e

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallRepo writes a tiny workspace: a README, a Go file, a folder, an
// ignored file and a file that holds key.
func smallRepo(t *testing.T, key string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"README.md":   "# demo\nThe demo project.\n",
		"main.go":     "package main\n\nfunc main() { x() }\n",
		"pkg/a.go":    "package pkg\n",
		"pkg/b.go":    "package pkg\n",
		".gitignore":  "ignored.txt\n",
		"ignored.txt": "IGNORED-CONTENT-MUST-NOT-BE-ATTACHED\n",
		"notes.txt":   "the deploy key is " + key + "\n",
		"big.txt":     strings.Repeat("a", 50_000) + "TAIL-MUST-BE-CUT\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// plainJSON is v as JSON without HTML escaping, so '<' reads as itself.
func plainJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func openaiProvider(url, key string) map[string]any {
	return map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": url + "/v1", "apiKey": key}
}

// taskInfo is one task of agent/tasks.
type taskInfo = protocol.TaskInfo

func listTasks(t *testing.T, p *proc) []taskInfo {
	t.Helper()
	var res struct {
		Tasks []taskInfo `json:"tasks"`
	}
	if err := json.Unmarshal(p.mustCall("agent/tasks", map[string]any{}), &res); err != nil {
		t.Fatal(err)
	}
	return res.Tasks
}

// TestSavedTasks: a task file is running while the task runs and completed
// after; agent/tasks, agent/task and agent/deleteTask; agent/run with the
// taskId continues the conversation (issue 4 point 5).
func TestSavedTasks(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "openai", []step{
		{text: "Writing it.", calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "out.txt", "content": "hello\n"}}}},
		{text: "First answer."},
		{text: "Second answer, with the earlier context."},
	})
	dataDir := t.TempDir()
	p := start(t)
	var midRun map[string]any
	p.onRequest = func(method string, params json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		var req struct {
			TaskID string `json:"taskId"`
		}
		json.Unmarshal(params, &req)
		data, err := os.ReadFile(filepath.Join(dataDir, "tasks", req.TaskID+".json"))
		if err != nil {
			t.Errorf("no task file while the task runs: %v", err)
		} else if err := json.Unmarshal(data, &midRun); err != nil {
			t.Errorf("task file while running is not JSON: %v", err)
		}
		return map[string]any{"decision": "allow"}
	}
	p.initialize(map[string]any{"sandbox": false, "dataDir": dataDir})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	prov := openaiProvider(srv.URL, "sk-tasks-test-key")

	var sum struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		Text   string `json:"text"`
	}
	json.Unmarshal(p.mustCall("agent/run", map[string]any{"prompt": "Create out.txt\nwith a greeting", "provider": prov}), &sum)
	if sum.Status != "completed" || sum.TaskID == "" {
		t.Fatalf("first run: %+v", sum)
	}
	if midRun["status"] != "running" || midRun["taskId"] != sum.TaskID {
		t.Fatalf("task file during the run: %v", midRun)
	}
	file := filepath.Join(dataDir, "tasks", sum.TaskID+".json")
	var saved struct {
		Status   string            `json:"status"`
		Title    string            `json:"title"`
		Summary  map[string]any    `json:"summary"`
		Messages []json.RawMessage `json:"messages"`
	}
	data, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(data, &saved) != nil {
		t.Fatalf("task file: %v %s", err, data)
	}
	if saved.Status != "completed" || saved.Title != "Create out.txt" || saved.Summary["status"] != "completed" || len(saved.Messages) < 4 {
		t.Fatalf("saved task: %s", data)
	}

	tasks := listTasks(t, p)
	if len(tasks) != 1 || tasks[0].TaskID != sum.TaskID || tasks[0].Status != "completed" || tasks[0].ChatMode != "agent" ||
		tasks[0].Model != "fake-model" || tasks[0].Title != "Create out.txt" || tasks[0].CreatedAt.IsZero() || tasks[0].UpdatedAt.Before(tasks[0].CreatedAt) {
		t.Fatalf("agent/tasks: %+v", tasks)
	}
	first := tasks[0]

	// Continue the task: the model sees the earlier conversation.
	var sum2 struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	json.Unmarshal(p.mustCall("agent/run", map[string]any{"prompt": "And now?", "provider": prov, "taskId": sum.TaskID}), &sum2)
	if sum2.TaskID != sum.TaskID || sum2.Status != "completed" {
		t.Fatalf("continued run: %+v", sum2)
	}
	bodies := model.bodies()
	last := mustJSON(bodies[len(bodies)-1])
	for _, want := range []string{"Create out.txt", "First answer.", "And now?", "hello"} {
		if !strings.Contains(last, want) {
			t.Fatalf("the continued request lacks %q: %.1500s", want, last)
		}
	}
	tasks = listTasks(t, p)
	if len(tasks) != 1 || !tasks[0].CreatedAt.Equal(first.CreatedAt) || !tasks[0].UpdatedAt.After(first.UpdatedAt) || tasks[0].Title != first.Title {
		t.Fatalf("agent/tasks after continuing: %+v (before %+v)", tasks, first)
	}

	var got struct {
		Title    string            `json:"title"`
		Summary  map[string]any    `json:"summary"`
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(p.mustCall("agent/task", map[string]any{"taskId": sum.TaskID}), &got)
	if got.Title != "Create out.txt" || got.Summary["text"] != "Second answer, with the earlier context." || len(got.Messages) < 6 {
		t.Fatalf("agent/task: %+v", got)
	}
	if _, e := p.call("agent/task", map[string]any{"taskId": "task-nope"}); e == nil || e.Code != -32602 {
		t.Fatalf("agent/task unknown: %v", e)
	}
	if _, e := p.call("agent/task", map[string]any{"taskId": "../../etc/passwd"}); e == nil || e.Code != -32602 {
		t.Fatalf("agent/task bad id: %v", e)
	}
	if string(p.mustCall("agent/deleteTask", map[string]any{"taskId": sum.TaskID})) != "true" {
		t.Fatal("agent/deleteTask did not delete")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("task file still there: %v", err)
	}
	if string(p.mustCall("agent/deleteTask", map[string]any{"taskId": sum.TaskID})) != "false" {
		t.Fatal("agent/deleteTask of a deleted task")
	}
	if len(listTasks(t, p)) != 0 {
		t.Fatal("agent/tasks after delete")
	}
}

// TestTasksWithoutDataDir: without a dataDir nothing is written, but this
// session's tasks are listed and can be continued.
func TestTasksWithoutDataDir(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "anthropic", []step{{text: "One."}, {text: "Two."}})
	home := t.TempDir()
	p := start(t, "HOME="+home)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	prov := map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKey": "sk-ant-nodatadir"}
	var sum struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(p.mustCall("agent/run", map[string]any{"prompt": "First question", "provider": prov, "chatMode": "ask"}), &sum)
	tasks := listTasks(t, p)
	if len(tasks) != 1 || tasks[0].TaskID != sum.TaskID || tasks[0].Status != "completed" || tasks[0].ChatMode != "ask" {
		t.Fatalf("agent/tasks: %+v", tasks)
	}
	p.mustCall("agent/run", map[string]any{"prompt": "Second question", "provider": prov, "taskId": sum.TaskID, "chatMode": "ask"})
	bodies := model.bodies()
	if last := mustJSON(bodies[len(bodies)-1]); !strings.Contains(last, "First question") || !strings.Contains(last, "One.") {
		t.Fatalf("continuation without dataDir lost the conversation: %.1000s", last)
	}
	var got struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(p.mustCall("agent/task", map[string]any{"taskId": sum.TaskID}), &got)
	if len(got.Messages) != 4 {
		t.Fatalf("agent/task messages: %d", len(got.Messages))
	}
	if string(p.mustCall("agent/deleteTask", map[string]any{"taskId": sum.TaskID})) != "true" || len(listTasks(t, p)) != 0 {
		t.Fatal("agent/deleteTask without dataDir")
	}
	entries, _ := os.ReadDir(home)
	if len(entries) != 0 {
		t.Fatalf("something was written to HOME without a dataDir: %v", entries)
	}
}

// TestEditorContext: the editor block joins the first user message; mentions
// attach indexed text (cut at 40 000 characters), folders as file lists,
// never excluded files; bad shapes and outside paths are -32602.
func TestEditorContext(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "openai", []step{{text: "Seen."}})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	prov := openaiProvider(srv.URL, "sk-editor-key")
	editor := map[string]any{
		"activeFile":  filepath.Join(repo, "main.go"),
		"selection":   map[string]any{"path": "main.go", "startLine": 3, "endLine": 3, "text": "func main() { x() }"},
		"openFiles":   []string{"main.go", "README.md"},
		"diagnostics": []map[string]any{{"path": "main.go", "line": 3, "severity": "error", "message": "undefined: x", "source": "compiler"}},
		"mentions":    []string{"README.md", "pkg", "ignored.txt", "big.txt"},
	}
	p.mustCall("agent/run", map[string]any{"prompt": "Fix the build", "provider": prov, "chatMode": "ask", "editor": editor})
	body := plainJSON(t, model.bodies()[0])
	for _, want := range []string{
		"<editor-context>", "Active file: main.go", "Selection in main.go, lines 3-3", "func main() { x() }",
		"Open files: main.go README.md", "main.go:3 error compiler: undefined: x",
		"The demo project.", "pkg/a.go", "pkg/b.go", `ignored.txt\">not attached: excluded`, "[… cut here", "Fix the build",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	for _, bad := range []string{"IGNORED-CONTENT", "TAIL-MUST-BE-CUT"} {
		if strings.Contains(body, bad) {
			t.Errorf("first request holds %q", bad)
		}
	}
	if t.Failed() {
		t.Logf("body: %.3000s", body)
	}

	for name, ed := range map[string]any{
		"outside root":   map[string]any{"mentions": []string{"../etc/passwd"}},
		"absolute out":   map[string]any{"mentions": []string{"/etc/passwd"}},
		"11 mentions":    map[string]any{"mentions": []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}},
		"mentions type":  map[string]any{"mentions": "README.md"},
		"selection type": map[string]any{"selection": "main.go"},
		"selection line": map[string]any{"selection": map[string]any{"path": "main.go", "startLine": 5, "endLine": 2, "text": ""}},
		"not an object":  []string{"x"},
		"diag no path":   map[string]any{"diagnostics": []map[string]any{{"line": 1, "message": "m"}}},
	} {
		if _, e := p.call("agent/run", map[string]any{"prompt": "x", "provider": prov, "editor": ed}); e == nil || e.Code != -32602 {
			t.Errorf("%s: got %v; want -32602", name, e)
		}
	}
}

// TestImagesValidated: protocol.md Images limits are -32602 before any
// model call.
func TestImagesValidated(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "openai", []step{{text: "A red dot."}})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	prov := openaiProvider(srv.URL, "sk-images-key")
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	img := map[string]any{"mediaType": "image/png", "data": png}
	nine := make([]any, 9)
	for i := range nine {
		nine[i] = img
	}
	for name, images := range map[string]any{
		"nine images":  nine,
		"media type":   []any{map[string]any{"mediaType": "image/bmp", "data": png}},
		"data prefix":  []any{map[string]any{"mediaType": "image/png", "data": "data:image/png;base64," + png}},
		"oversize":     []any{map[string]any{"mediaType": "image/png", "data": strings.Repeat("A", 7_000_004)}},
		"not base64":   []any{map[string]any{"mediaType": "image/png", "data": "***"}},
		"not an array": img,
	} {
		if _, e := p.call("agent/run", map[string]any{"prompt": "What is this?", "provider": prov, "images": images}); e == nil || e.Code != -32602 {
			t.Errorf("%s: got %v; want -32602", name, e)
		}
	}
	if n := len(model.bodies()); n != 0 {
		t.Fatalf("the model was called %d times for invalid images", n)
	}
	eight := nine[:8]
	p.mustCall("agent/run", map[string]any{"prompt": "What is this?", "provider": prov, "images": eight, "chatMode": "ask"})
	body := mustJSON(model.bodies()[0])
	if strings.Count(body, "data:image/png;base64,"+png) != 8 {
		t.Fatalf("the model did not get 8 image_url parts: %.500s", body)
	}
}

// TestNoKeyLeaks is issue 4's key-leak test: with TASK_X_LOG=trace and a
// dataDir, a key the model and tools see (a file holds it, the model
// repeats it) and a provider error whose body echoes it never appear in
// stderr, in any file under dataDir or in any message the client received.
func TestNoKeyLeaks(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic", "ollama"} {
		t.Run(kind, func(t *testing.T) {
			key := "sk-LEAKCHECK-" + kind + "-7Hq2ZxP9wLm4"
			repo := smallRepo(t, key)
			_, srv := newScriptedModel(t, kind, []step{
				{text: "Reading the notes.", calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "notes.txt"}}}},
				{text: "The key in notes.txt is " + key + "."},
			})
			echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"error":{"message":"invalid api key ` + key + ` (Bearer ` + key + `)","type":"authentication_error"}}`))
			}))
			t.Cleanup(echo.Close)
			prov := func(url string) map[string]any {
				switch kind {
				case "openai":
					return openaiProvider(url, key)
				case "anthropic":
					return map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": url, "apiKey": key}
				}
				return map[string]any{"kind": "ollama", "model": "qwen3:latest", "baseUrl": url, "apiKey": key}
			}
			dataDir := t.TempDir()
			p := start(t, "TASK_X_LOG=trace")
			var received []string
			keep := func(raw json.RawMessage, e *rpcError) {
				received = append(received, string(raw))
				if e != nil {
					received = append(received, e.Error())
				}
			}
			keep(p.initialize(map[string]any{"sandbox": false, "dataDir": dataDir}), nil)
			keep(p.call("workspace/open", map[string]any{"root": repo}))

			res, e := p.call("agent/run", map[string]any{"prompt": "What is in notes.txt?", "provider": prov(srv.URL)})
			keep(res, e)
			if e != nil || !strings.Contains(string(res), "[redacted]") {
				t.Fatalf("the echoed key was not redacted from the summary: %s %v", res, e)
			}
			res, e = p.call("agent/run", map[string]any{"prompt": "Hello", "provider": prov(echo.URL)})
			keep(res, e)
			if e != nil || !strings.Contains(string(res), `"failed"`) {
				t.Fatalf("a rejected key should fail the task: %s %v", res, e)
			}
			keep(p.call("provider/test", map[string]any{"provider": prov(echo.URL)}))
			keep(p.call("chat/send", map[string]any{"provider": prov(echo.URL), "request": map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}}))
			keep(p.call("agent/tasks", map[string]any{}))
			// A direct tools/call that reads or prints the key.
			keep(p.call("tools/call", map[string]any{"name": "read_file", "input": map[string]any{"path": "notes.txt"}}))
			keep(p.call("tools/call", map[string]any{"name": "run_command", "input": map[string]any{"command": "cat notes.txt"}}))
			p.mu.Lock()
			for _, n := range p.notes {
				received = append(received, n.raw)
			}
			p.mu.Unlock()
			p.stdin.Close()
			p.wait(10 * time.Second)

			if len(received) < 8 {
				t.Fatalf("only %d messages received", len(received))
			}
			for i, m := range received {
				if strings.Contains(m, key) {
					t.Errorf("message %d the client received holds the key: %.300s", i, m)
				}
			}
			if s := p.stderr.String(); strings.Contains(s, key) {
				t.Errorf("stderr holds the key")
			} else if !strings.Contains(s, "trace") && !strings.Contains(s, "TRACE") && len(s) == 0 {
				t.Errorf("no trace output on stderr")
			}
			files := 0
			filepath.WalkDir(dataDir, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files++
				data, _ := os.ReadFile(path)
				if strings.Contains(string(data), key) {
					t.Errorf("%s holds the key", path)
				}
				return nil
			})
			if files < 2 {
				t.Fatalf("dataDir holds %d files; want the two task files", files)
			}
		})
	}
}
