package e2e

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func fakeProvider(url string) map[string]any {
	return map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": url + "/v1", "apiKey": "sk-e2e-edits-key"}
}

// pendingFile is one file of edits/pending.
type pendingFile = protocol.PendingFile

func pending(t *testing.T, p *proc) []pendingFile {
	t.Helper()
	var res struct {
		Files []pendingFile `json:"files"`
	}
	if err := json.Unmarshal(p.mustCall("edits/pending", nil), &res); err != nil {
		t.Fatal(err)
	}
	return res.Files
}

func fileText(t *testing.T, root, rel string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// TestEditsReview runs an agent task that edits, then reviews it through
// edits/*: pending, undo, a revert that meets a user change (conflict, file
// untouched), keep, and an undo after a restart with the same dataDir.
func TestEditsReview(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.WriteFile(filepath.Join(root, "c.txt"), []byte("gamma\n"), 0o644)
	dataDir := t.TempDir()
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "a.txt", "oldText": "beta", "newText": "BETA"}}}},
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "dir/b.txt", "content": "new file\n"}}}},
		{calls: []scriptedCall{{name: "apply_patch", input: map[string]any{"patch": "--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-gamma\n+GAMMA\n"}}}},
		{text: "done"},
	})

	p := start(t)
	if _, err := p.call("edits/pending", nil); err == nil || err.Code != -32003 {
		t.Fatalf("before initialize: %v", err)
	}
	p.initialize(map[string]any{"dataDir": dataDir})
	if _, err := p.call("edits/list", nil); err == nil || err.Code != -32004 {
		t.Fatalf("without a workspace: %v", err)
	}
	p.mustCall("workspace/open", map[string]any{"root": root})
	var sum struct {
		Status     string   `json:"status"`
		Operations []string `json:"operations"`
	}
	json.Unmarshal(p.mustCall("agent/run", map[string]any{"prompt": "edit", "provider": fakeProvider(srv.URL),
		"chatMode": "agent", "policy": map[string]any{"mode": "acceptEdits"}}), &sum)
	if sum.Status != "completed" || len(sum.Operations) != 3 {
		t.Fatalf("summary %+v", sum)
	}
	var list struct {
		Operations []struct {
			ID    string `json:"id"`
			Tool  string `json:"tool"`
			Diff  string `json:"diff"`
			Files []struct {
				Path, Kind string
			} `json:"files"`
		} `json:"operations"`
	}
	json.Unmarshal(p.mustCall("edits/list", nil), &list)
	if len(list.Operations) != 3 || list.Operations[1].Files[0].Kind != "created" || !strings.Contains(list.Operations[0].Diff, "+BETA") {
		t.Fatalf("list %+v", list)
	}
	pend := pending(t, p)
	if len(pend) != 3 || pend[1].Path != "dir/b.txt" || pend[1].Original != nil || *pend[1].Current != "new file\n" ||
		*pend[0].Original != "alpha\nbeta\n" || pend[0].Added != 1 || pend[0].Removed != 1 {
		t.Fatalf("pending %+v", pend)
	}

	// Undo the created file.
	var undo struct{ Restored, Conflicts []string }
	json.Unmarshal(p.mustCall("edits/undo", map[string]any{"operation": sum.Operations[1]}), &undo)
	if !slices.Equal(undo.Restored, []string{"dir/b.txt"}) || len(undo.Conflicts) != 0 {
		t.Fatalf("undo %+v", undo)
	}
	if _, ok := fileText(t, root, "dir/b.txt"); ok {
		t.Fatal("undo left the created file")
	}
	if _, err := p.call("edits/undo", map[string]any{"operation": "op-999"}); err == nil || err.Code != -32602 {
		t.Fatalf("unknown op: %v", err)
	}

	// The user edits a.txt; revert reports it and leaves it alone.
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("user's own\n"), 0o644)
	var rev struct{ Reverted, Conflicts []string }
	json.Unmarshal(p.mustCall("edits/revert", map[string]any{"paths": []string{"a.txt"}}), &rev)
	if len(rev.Reverted) != 0 || !slices.Equal(rev.Conflicts, []string{"a.txt"}) {
		t.Fatalf("revert %+v", rev)
	}
	if s, _ := fileText(t, root, "a.txt"); s != "user's own\n" {
		t.Fatalf("conflicting file touched: %q", s)
	}
	var kept struct{ Kept []string }
	json.Unmarshal(p.mustCall("edits/keep", map[string]any{"paths": []string{"a.txt"}}), &kept)
	if !slices.Equal(kept.Kept, []string{"a.txt"}) {
		t.Fatalf("keep %+v", kept)
	}
	if _, err := p.call("edits/keep", map[string]any{"paths": []string{"../x"}}); err == nil || err.Code != -32602 {
		t.Fatalf("outside path: %v", err)
	}
	p.mustCall("shutdown", nil)
	p.notify("exit", nil)
	p.wait(10 * time.Second)

	// A new runtime with the same dataDir: the log is back and undo works.
	p2 := start(t)
	p2.initialize(map[string]any{"dataDir": dataDir})
	p2.mustCall("workspace/open", map[string]any{"root": root})
	pend = pending(t, p2)
	if len(pend) != 1 || pend[0].Path != "c.txt" {
		t.Fatalf("pending after restart %+v", pend)
	}
	json.Unmarshal(p2.mustCall("edits/undo", map[string]any{"operation": sum.Operations[2]}), &undo)
	if !slices.Equal(undo.Restored, []string{"c.txt"}) {
		t.Fatalf("undo after restart %+v", undo)
	}
	if s, _ := fileText(t, root, "c.txt"); s != "gamma\n" {
		t.Fatalf("c.txt %q", s)
	}
}

// TestEditsCrash kills the runtime with SIGKILL at random points of an agent
// task that writes files, 50 times. Each file must hold one of its whole
// versions, task files and the checkpoint must be valid JSON, a running task
// must be failed at the next initialize, and edits/pending must answer.
func TestEditsCrash(t *testing.T) {
	const runs, files, steps = 50, 4, 12
	var script []step
	valid := map[string]map[string]bool{}
	for i := range files {
		name := fmt.Sprintf("f%d.txt", i)
		valid[name] = map[string]bool{fmt.Sprintf("file %d original\n", i): true}
	}
	valid["r.txt"] = map[string]bool{"count=0\n": true}
	for k := range steps {
		name := fmt.Sprintf("f%d.txt", k%files)
		content := fmt.Sprintf("file %d version %d\n%s", k%files, k, strings.Repeat("x", 200*k))
		valid[name][content] = true
		valid["r.txt"][fmt.Sprintf("count=%d\n", k+1)] = true
		script = append(script, step{calls: []scriptedCall{
			{name: "write_file", input: map[string]any{"path": name, "content": content}},
			{name: "replace_text", input: map[string]any{"path": "r.txt", "oldText": fmt.Sprintf("count=%d", k), "newText": fmt.Sprintf("count=%d", k+1)}},
		}})
	}
	script = append(script, step{text: "done"})
	_, srv := newScriptedModel(t, "openai", script)
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	begin := time.Now()
	finished, edited := 0, 0
	for run := range runs {
		root, dataDir := t.TempDir(), t.TempDir()
		for i := range files {
			os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d original\n", i)), 0o644)
		}
		os.WriteFile(filepath.Join(root, "r.txt"), []byte("count=0\n"), 0o644)

		p := start(t)
		p.initialize(map[string]any{"dataDir": dataDir})
		p.mustCall("workspace/open", map[string]any{"root": root})
		p.request("agent/run", map[string]any{"prompt": "write", "provider": fakeProvider(srv.URL),
			"chatMode": "agent", "policy": map[string]any{"mode": "acceptEdits"}})
		// Kill after a random number of fileChanged events (0 to all of
		// them), then a random few milliseconds more, so kills land before,
		// between and inside writes.
		for want, seen := rng.IntN(2*steps+1), 0; seen < want; {
			m := p.next(20 * time.Second)
			if m.Method == "agent/event" && strings.Contains(m.raw, `"type":"fileChanged"`) {
				seen++
			}
			if len(m.ID) > 0 && m.Method == "" {
				break // the task ended
			}
		}
		time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond)
		p.cmd.Process.Kill()
		p.wait(10 * time.Second)

		for name, ok := range valid {
			got, exists := fileText(t, root, name)
			if !exists || !ok[got] {
				t.Fatalf("run %d: %s is torn or unknown (exists %v): %q", run, name, exists, got)
			}
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") && !sameDevice(t, root, dataDir) {
				continue // a temp file next to the file is allowed only when dataDir is on another file system
			}
			if _, ok := valid[e.Name()]; !ok {
				t.Fatalf("run %d: unexpected file %s", run, e.Name())
			}
		}
		taskFiles, _ := filepath.Glob(filepath.Join(dataDir, "tasks", "*.json"))
		for _, f := range taskFiles {
			b, _ := os.ReadFile(f)
			if !json.Valid(b) {
				t.Fatalf("run %d: task file %s is not valid JSON: %q", run, f, b)
			}
		}
		cps, _ := filepath.Glob(filepath.Join(dataDir, "checkpoints", "*.json"))
		for _, f := range cps {
			if b, _ := os.ReadFile(f); !json.Valid(b) {
				t.Fatalf("run %d: checkpoint %s is not valid JSON", run, f)
			}
		}

		p2 := start(t)
		p2.initialize(map[string]any{"dataDir": dataDir})
		var tasks struct {
			Tasks []struct{ TaskID, Status string } `json:"tasks"`
		}
		json.Unmarshal(p2.mustCall("agent/tasks", nil), &tasks)
		for _, tk := range tasks.Tasks {
			if tk.Status == "running" {
				t.Fatalf("run %d: task %s still running after restart", run, tk.TaskID)
			}
			if tk.Status == "completed" {
				finished++
			}
		}
		p2.mustCall("workspace/open", map[string]any{"root": root})
		pend := pending(t, p2)
		// Every pending file's current content is what is on disk, unless
		// the crash came between the write and the commit (then the
		// recovery kept or dropped it by hash: still equal to the disk).
		for _, pf := range pend {
			got, exists := fileText(t, root, pf.Path)
			if pf.Current == nil || !exists || *pf.Current != got {
				t.Fatalf("run %d: pending %s current %v, disk %q", run, pf.Path, pf.Current, got)
			}
		}
		if got, _ := fileText(t, root, "r.txt"); got != "count=0\n" {
			edited++
		}
		p2.cmd.Process.Kill()
		p2.wait(10 * time.Second)
	}
	t.Logf("%d runs in %v; files edited before the kill in %d, tasks completed in %d", runs, time.Since(begin), edited, finished)
	if edited == 0 {
		t.Fatal("no run edited a file before the kill: the test exercised nothing")
	}
}
