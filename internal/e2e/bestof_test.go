package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// agent/bestOf and worktrees/* through the binary, on git repositories the
// tests make, with scripted fake providers.

// gitCmd runs the test's own git (not the runtime's) in dir.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitRepo makes a repository of files with one commit.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := writeFiles(t, files)
	root, _ = filepath.EvalSymlinks(root)
	gitCmd(t, root, "init", "-q", ".")
	gitCmd(t, root, "add", "-A")
	gitCmd(t, root, "commit", "-qm", "init")
	return root
}

// worktreeCount is the number of entries of `git worktree list` (1: only
// the main tree).
func worktreeCount(t *testing.T, root string) int {
	return strings.Count(gitCmd(t, root, "worktree", "list", "--porcelain"), "worktree ")
}

// authFailure is a provider that refuses every request (401: no retry).
func authFailure(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"bad key","type":"invalid_request_error"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// bestOfRun sends agent/bestOf and reads until its answer, collecting
// agent/event notifications and answering approvals with allow.
func bestOfRun(t *testing.T, p *proc, params map[string]any, onEvent func(agentEvent)) *message {
	t.Helper()
	allowApprovals(p)
	return driveMethod(t, p, "agent/bestOf", 240*time.Second, params, onEvent, nil)
}

// TestBestOfThreeProvidersApplyOneDiscardOthers: three providers, one of
// which refuses every request. The two others each change the repository
// in a worktree of their own; their candidates carry validations and
// patches, nothing reaches the main tree. worktrees/apply merges one as a
// pending edit that edits/undo takes back; worktrees/discard removes the
// others, and git knows no worktree afterwards.
func TestBestOfThreeProvidersApplyOneDiscardOthers(t *testing.T) {
	root := gitRepo(t, map[string]string{"go.mod": "module calc\n\ngo 1.22\n", "calc.go": calcGo})
	addSub := "func Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"
	subModel, subSrv := newScriptedModel(t, "openai", []step{
		edit("calc.go", "func Add(a, b int) int { return a + b }\n", addSub),
		{text: "Added Sub to calc.go."},
	})
	notesModel, notesSrv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "# Notes\n\nAdd adds.\n"}}}},
		{text: "Wrote NOTES.md."},
	})
	bad := authFailure(t)
	prov := func(url, model string) map[string]any {
		return map[string]any{"kind": "openaiCompatible", "model": model, "baseUrl": url + "/v1", "apiKey": "sk-e2e-bestof-2718"}
	}
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})

	// 2 to 4 providers.
	if _, err := p.call("agent/bestOf", map[string]any{"prompt": "x", "providers": []any{prov(subSrv.URL, "a")}}); err == nil || err.Code != -32602 {
		t.Fatalf("one provider: %v", err)
	}

	started := map[string]map[string]any{}
	finished := map[string]map[string]any{}
	var lastType, eventTask string
	wrapped := 0
	res := bestOfRun(t, p, map[string]any{
		"prompt":     "Improve the calc package.",
		"providers":  []any{prov(subSrv.URL, "model-sub"), prov(bad.URL, "model-bad"), prov(notesSrv.URL, "model-notes")},
		"policy":     map[string]any{"mode": "acceptEdits", "allowAll": true},
		"validation": map[string]any{"checks": []any{map[string]any{"name": "has-sub", "command": "grep -q 'func Sub' calc.go"}}, "fixRounds": 0},
	}, func(ev agentEvent) {
		eventTask = ev.TaskID
		lastType, _ = ev.Event["type"].(string)
		switch lastType {
		case "subagentStarted":
			started[ev.Event["model"].(string)] = ev.Event
		case "subagentFinished":
			finished[ev.Event["taskId"].(string)] = ev.Event
		case "subagent":
			wrapped++
		}
	})
	if res.Error != nil {
		t.Fatalf("agent/bestOf: %v", res.Error)
	}
	var out protocol.BestOfResult
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatal(err)
	}
	if out.TaskID == "" || out.TaskID != eventTask || len(out.Candidates) != 3 {
		t.Fatalf("result %s", res.Result)
	}
	if lastType != "bestOfDone" || len(started) != 3 || len(finished) != 3 || wrapped == 0 {
		t.Fatalf("events: last %s, %d started, %d finished, %d wrapped", lastType, len(started), len(finished), wrapped)
	}
	for model, ev := range started {
		if ev["role"] != "implementation" || ev["kind"] != "openaiCompatible" || ev["objective"] != "Improve the calc package." {
			t.Errorf("subagentStarted of %s: %v", model, ev)
		}
	}
	sub, ok1 := out.Candidates[0].(protocol.FinishedCandidate)
	failed, ok2 := out.Candidates[1].(protocol.FailedCandidate)
	notes, ok3 := out.Candidates[2].(protocol.FinishedCandidate)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("candidates %+v: want finished, failed, finished", out.Candidates)
	}
	if failed.Name != nil || failed.Status != "failed" || failed.Error == nil || failed.Model != "model-bad" || failed.Kind != "openaiCompatible" {
		t.Fatalf("failed candidate %+v", failed)
	}
	var rawCands []map[string]any
	json.Unmarshal(res.Result, &struct {
		C *[]map[string]any `json:"candidates"`
	}{&rawCands})
	if len(rawCands[1]) != 5 {
		t.Fatalf("a failed candidate has the five fields of protocol.md: %v", rawCands[1])
	}
	for _, c := range []protocol.FinishedCandidate{sub, notes} {
		if c.Status != "completed" || c.Name == nil || c.Dir == nil || c.Files != 1 || c.Tokens <= 0 {
			t.Fatalf("candidate %+v", c)
		}
		if strings.HasPrefix(*c.Dir, root) {
			t.Fatalf("worktree %s inside the workspace", *c.Dir)
		}
		if st := started[c.Model]; st["name"] != *c.Name || st["dir"] != *c.Dir {
			t.Errorf("subagentStarted %v does not name candidate %s", st, *c.Name)
		}
	}
	if !strings.Contains(sub.Patch, "+func Sub(a, b int) int { return a - b }") || sub.Added != 3 || sub.Report != "Added Sub to calc.go." {
		t.Fatalf("sub candidate %+v", sub)
	}
	if !strings.Contains(notes.Patch, "+++ b/NOTES.md") {
		t.Fatalf("notes patch:\n%s", notes.Patch)
	}
	// The check ran in each worktree: passes where Sub was added.
	if len(sub.Validations) != 1 || !sub.Validations[0].Passed || len(notes.Validations) != 1 || notes.Validations[0].Passed {
		t.Fatalf("validations: sub %+v notes %+v", sub.Validations, notes.Validations)
	}
	for _, f := range finished {
		if f["status"] == "completed" && (f["files"] != 1.0 || f["worktree"] == nil) {
			t.Errorf("subagentFinished %v", f)
		}
		for _, k := range []string{"name", "taskId", "role", "status", "error", "costUsd", "unpricedTokens", "tokens", "files", "added", "removed", "worktree"} {
			if _, ok := f[k]; !ok {
				t.Errorf("subagentFinished without %s: %v", k, f)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "calc.go")); string(b) != calcGo {
		t.Fatal("best-of merged into the main tree")
	}
	if _, err := os.Stat(filepath.Join(root, "NOTES.md")); err == nil {
		t.Fatal("best-of merged into the main tree")
	}
	if len(subModel.bodies()) != 2 || len(notesModel.bodies()) != 2 {
		t.Fatalf("model calls: %d and %d", len(subModel.bodies()), len(notesModel.bodies()))
	}
	// The failed candidate's worktree is gone already.
	var list struct {
		Worktrees []struct {
			Name string `json:"name"`
			Dir  string `json:"dir"`
		} `json:"worktrees"`
	}
	json.Unmarshal(p.mustCall("worktrees/list", nil), &list)
	if len(list.Worktrees) != 2 || worktreeCount(t, root) != 3 {
		t.Fatalf("worktrees/list %+v, git worktrees %d", list, worktreeCount(t, root))
	}

	// Apply the Sub candidate: a pending edit, undoable.
	var applied struct {
		Applied   bool     `json:"applied"`
		Files     int      `json:"files"`
		Changed   []string `json:"changed"`
		Operation *string  `json:"operation"`
	}
	json.Unmarshal(p.mustCall("worktrees/apply", map[string]any{"name": *sub.Name}), &applied)
	if !applied.Applied || applied.Files != 1 || len(applied.Changed) != 1 || applied.Changed[0] != "calc.go" || applied.Operation == nil {
		t.Fatalf("worktrees/apply %+v", applied)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "calc.go")); !strings.Contains(string(b), "func Sub") {
		t.Fatal("apply did not write calc.go")
	}
	var pending struct {
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	json.Unmarshal(p.mustCall("edits/pending", nil), &pending)
	if len(pending.Files) != 1 || pending.Files[0].Path != "calc.go" {
		t.Fatalf("edits/pending %+v", pending)
	}
	var undo struct {
		Restored  []string `json:"restored"`
		Conflicts []string `json:"conflicts"`
	}
	json.Unmarshal(p.mustCall("edits/undo", map[string]any{"operation": *applied.Operation}), &undo)
	if len(undo.Restored) != 1 || len(undo.Conflicts) != 0 {
		t.Fatalf("edits/undo %+v", undo)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "calc.go")); string(b) != calcGo {
		t.Fatal("undo did not restore calc.go")
	}

	// Discard both; nothing is left for git.
	for _, c := range []protocol.FinishedCandidate{sub, notes} {
		var d struct {
			Discarded bool `json:"discarded"`
		}
		json.Unmarshal(p.mustCall("worktrees/discard", map[string]any{"name": *c.Name}), &d)
		if !d.Discarded {
			t.Fatalf("discard %s", *c.Name)
		}
		if _, err := os.Stat(*c.Dir); err == nil {
			t.Fatalf("worktree folder %s left", *c.Dir)
		}
	}
	json.Unmarshal(p.mustCall("worktrees/list", nil), &list)
	if len(list.Worktrees) != 0 {
		t.Fatalf("worktrees/list after discard %+v", list)
	}
	if n := worktreeCount(t, root); n != 1 {
		t.Fatalf("git worktree list: %d entries:\n%s", n, gitCmd(t, root, "worktree", "list"))
	}
	if b := gitCmd(t, root, "branch", "--list", "task-x/*"); strings.TrimSpace(b) != "" {
		t.Fatalf("branches left: %s", b)
	}
	if out, _ := p.call("worktrees/apply", map[string]any{"name": *sub.Name}); out != nil {
		t.Fatalf("apply of a discarded worktree answered %s", out)
	}
}

// TestBestOfKilledRuntimeLeavesNoProcessAndWorktreesStayListed: the
// runtime is killed (SIGKILL) while both candidates run a command with
// children; no process survives, and a new runtime on the same dataDir
// lists both worktrees and discards them until git knows none.
func TestBestOfKilledRuntimeLeavesNoProcessAndWorktreesStayListed(t *testing.T) {
	root := gitRepo(t, map[string]string{"a.txt": "a\n"})
	dataDir := t.TempDir()
	cmd := "sleep 310 & echo $! > pids; (sleep 311 & echo $! >> pids; wait) & echo $! >> pids; sleep 312"
	var srvs []string
	for i := 0; i < 2; i++ {
		_, srv := newScriptedModel(t, "openai", []step{
			{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd, "timeoutMs": 600000}}}},
			{text: "done"},
		})
		srvs = append(srvs, srv.URL)
	}
	p := start(t)
	p.initialize(map[string]any{"dataDir": dataDir})
	p.mustCall("workspace/open", map[string]any{"root": root})
	p.onRequest = func(method string, raw json.RawMessage) any {
		if method == "agent/requestApproval" {
			return map[string]any{"decision": "allow"}
		}
		return nil
	}
	var provs []any
	for i, u := range srvs {
		provs = append(provs, map[string]any{"kind": "openaiCompatible", "model": fmt.Sprintf("m%d", i), "baseUrl": u + "/v1", "apiKey": "sk-e2e-bestof-kill"})
	}
	p.request("agent/bestOf", map[string]any{"prompt": "run it", "providers": provs, "policy": map[string]any{"allowAll": true}})
	// Wait for both commands to have started (their toolStarted), then
	// for their pid files.
	dirs := map[string]string{}
	running := map[string]bool{}
	deadline := time.Now().Add(120 * time.Second)
	for len(running) < 2 {
		m := p.next(time.Until(deadline))
		if m.Method != "" && len(m.ID) > 0 {
			p.answer(m)
			continue
		}
		var ev agentEvent
		if m.Method != "agent/event" || json.Unmarshal(m.Params, &ev) != nil {
			continue
		}
		switch ev.Event["type"] {
		case "subagentStarted":
			dirs[ev.Event["taskId"].(string)] = ev.Event["dir"].(string)
		case "subagent":
			inner, _ := ev.Event["event"].(map[string]any)
			if inner["type"] == "toolStarted" && inner["tool"] == "run_command" {
				running[ev.Event["taskId"].(string)] = true
			}
		}
	}
	// Each command's pid file holds three pids (of its pid namespace when
	// sandboxed); find the runtime's descendants on the host that run the
	// sleeps instead.
	for _, dir := range dirs {
		file := filepath.Join(dir, "pids")
		for len(readPIDs(t, file)) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("pid file %s: %v", file, readPIDs(t, file))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The pid files can be complete before the last sleeps have exec'd:
	// wait until all six run.
	var pids []int
	for {
		pids = pids[:0]
		for _, pid := range descendantsOf(p.cmd.Process.Pid) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if strings.HasPrefix(string(b), "sleep\x0031") {
				pids = append(pids, pid)
			}
		}
		if len(pids) == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("found %d sleeps under the runtime, want 6", len(pids))
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.cmd.Process.Kill()
	p.wait(10 * time.Second)
	// The sandbox's pid namespace (or the subreaper sweep) ends every
	// descendant once its parent is gone; they may need a moment.
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d survived the runtime", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	p2 := start(t)
	p2.initialize(map[string]any{"dataDir": dataDir})
	p2.mustCall("workspace/open", map[string]any{"root": root})
	var list struct {
		Worktrees []struct {
			Name string `json:"name"`
			Dir  string `json:"dir"`
		} `json:"worktrees"`
	}
	json.Unmarshal(p2.mustCall("worktrees/list", nil), &list)
	if len(list.Worktrees) != 2 || worktreeCount(t, root) != 3 {
		t.Fatalf("after restart: worktrees/list %+v, git worktrees %d", list, worktreeCount(t, root))
	}
	for _, w := range list.Worktrees {
		var d struct {
			Discarded bool `json:"discarded"`
		}
		json.Unmarshal(p2.mustCall("worktrees/discard", map[string]any{"name": w.Name}), &d)
		if !d.Discarded {
			t.Fatalf("discard %s after restart", w.Name)
		}
	}
	if n := worktreeCount(t, root); n != 1 {
		t.Fatalf("git worktree list after discard:\n%s", gitCmd(t, root, "worktree", "list"))
	}
	if b := gitCmd(t, root, "branch", "--list", "task-x/*"); strings.TrimSpace(b) != "" {
		t.Fatalf("branches left: %s", b)
	}
}

// descendantsOf lists every process below pid (from /proc's parent links).
func descendantsOf(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[n] = pp
	}
	var out []int
	for n := range parent {
		for x, hops := parent[n], 0; x > 1 && hops < 64; x, hops = parent[x], hops+1 {
			if x == pid {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// TestBestOfCancelled: $/cancelRequest of agent/bestOf while both
// candidates wait for their model ends both, answers -32800 and leaves no
// worktree behind.
func TestBestOfCancelled(t *testing.T) {
	root := gitRepo(t, map[string]string{"a.txt": "a\n"})
	var provs []any
	for i := 0; i < 2; i++ {
		_, srv := newScriptedModel(t, "openai", []step{{hang: true}})
		provs = append(provs, map[string]any{"kind": "openaiCompatible", "model": fmt.Sprintf("h%d", i), "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-bestof-cancel"})
	}
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	id := p.request("agent/bestOf", map[string]any{"prompt": "wait", "providers": provs})
	models := 0
	deadline := time.Now().Add(120 * time.Second)
	for models < 2 {
		m := p.next(time.Until(deadline))
		var ev agentEvent
		if m.Method == "agent/event" && json.Unmarshal(m.Params, &ev) == nil && ev.Event["type"] == "subagent" {
			if inner, _ := ev.Event["event"].(map[string]any); inner["type"] == "iteration" {
				models++
			}
		}
	}
	p.notify("$/cancelRequest", map[string]any{"id": id})
	res := p.waitFor(fmt.Sprint(id), 60*time.Second)
	if res.Error == nil || res.Error.Code != -32800 {
		t.Fatalf("cancelled agent/bestOf answered %s", res.raw)
	}
	var list struct {
		Worktrees []any `json:"worktrees"`
	}
	json.Unmarshal(p.mustCall("worktrees/list", nil), &list)
	if len(list.Worktrees) != 0 || worktreeCount(t, root) != 1 {
		t.Fatalf("after a cancel: worktrees/list %v, git worktrees %d", list.Worktrees, worktreeCount(t, root))
	}
}

// TestBestOfFindsARepositoryMadeLater: agent/bestOf in a folder that is no
// git repository fails and says so; after `git init` and a first commit in
// the same session (no restart, no reopen) it runs.
func TestBestOfFindsARepositoryMadeLater(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var provs []any
	for i := 0; i < 2; i++ {
		_, srv := newScriptedModel(t, "openai", []step{{text: "Nothing to change."}, {text: "Nothing to change."}})
		provs = append(provs, map[string]any{"kind": "openaiCompatible", "model": fmt.Sprintf("m%d", i), "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-bestof-later"})
	}
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	res := bestOfRun(t, p, map[string]any{"prompt": "look", "providers": provs}, nil)
	if res.Error == nil || !strings.Contains(res.Error.Message, "git") {
		t.Fatalf("agent/bestOf outside a repository answered %s", res.raw)
	}
	gitCmd(t, root, "init", "-q")
	gitCmd(t, root, "add", "-A")
	gitCmd(t, root, "commit", "-qm", "first")
	res = bestOfRun(t, p, map[string]any{"prompt": "look", "providers": provs}, nil)
	if res.Error != nil {
		t.Fatalf("agent/bestOf after git init and a commit: %s", res.raw)
	}
}
