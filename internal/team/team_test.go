package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/worktree"
)

func TestParseRole(t *testing.T) {
	for in, want := range map[string]Role{"Research": Research, "code": Implementation, "docs": Documentation,
		"qa": Testing, "reviewer": Review, " IMPLEMENTATION ": Implementation, "Code_Review": Review, "tests": Testing} {
		got, err := ParseRole(in)
		if err != nil || got != want {
			t.Errorf("ParseRole(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseRole("manager")
	var re *RoleError
	if !errors.As(err, &re) {
		t.Fatalf("ParseRole(manager): %v", err)
	}
	for _, r := range Roles() {
		if !strings.Contains(err.Error(), string(r)) {
			t.Errorf("error %q does not name %s", err, r)
		}
	}
}

func TestRoleToolsAndPrompts(t *testing.T) {
	all := builtin.Registry(nil)
	for _, r := range Roles() {
		names := map[string]tool.Class{}
		for _, s := range r.Tools(all).Specs() {
			names[s.Name] = s.Permission
		}
		if _, ok := names["read_file"]; !ok {
			t.Errorf("%s: no read_file", r)
		}
		if _, ok := names["ask_user"]; ok {
			t.Errorf("%s: ask_user is for top-level tasks", r)
		}
		_, write := names["replace_text"]
		_, cmd := names["run_command"]
		if write != r.Writes() || cmd != r.Writes() {
			t.Errorf("%s: replace_text %v run_command %v, writes %v", r, write, cmd, r.Writes())
		}
	}
	if !strings.Contains(Review.SystemPrompt(), "```"+FindingsFence) && !strings.Contains(Review.SystemPrompt(), FindingsFence) {
		t.Error("the review prompt does not ask for the findings block")
	}
}

func git(t *testing.T, dir string, args ...string) string {
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

// writer is an engine that writes one file through the job's tools (so in
// the job's Env root) and answers, or fails without writing.
type writer struct {
	path, content string
	text          string // the answer (default "wrote <path>")
	fail          bool
	block         chan struct{} // when set, waits for ctx to end
	sawSystem     string
	sawTools      []string
	mu            sync.Mutex
}

func (e *writer) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	e.mu.Lock()
	e.sawSystem = job.System
	for _, s := range job.Tools.Specs() {
		e.sawTools = append(e.sawTools, s.Name)
	}
	e.mu.Unlock()
	job.Emit(protocol.StartedEvent{TaskID: job.TaskID, ChatMode: protocol.ChatMode(job.ChatMode)})
	sum := task.Summary{TaskID: job.TaskID, Status: task.StatusCompleted, Text: "wrote " + e.path,
		Usage: &provider.Usage{InputTokens: 10, OutputTokens: 5}, Metrics: &task.Metrics{CostUSD: 0.25}}
	if e.text != "" {
		sum.Text = e.text
	}
	if e.block != nil {
		close(e.block)
		<-ctx.Done()
		msg := "cancelled"
		sum.Status, sum.Error = task.StatusCancelled, &msg
	} else if e.fail {
		msg := "provider error: boom"
		sum.Status, sum.Error = task.StatusFailed, &msg
	} else if tl, ok := job.Tools.Get("write_file"); ok {
		in, _ := json.Marshal(map[string]string{"path": e.path, "content": e.content})
		if _, err := tl.Run(ctx, job.Env, in); err != nil {
			msg := err.Error()
			sum.Status, sum.Error = task.StatusFailed, &msg
		}
	}
	job.Emit(protocol.DoneEvent{Status: protocol.TaskStatus(sum.Status), Error: sum.Error})
	return sum, nil
}

func setup(t *testing.T) (*Runner, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	git(t, root, "init", "-q", ".")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	git(t, root, "add", "-A")
	git(t, root, "commit", "-qm", "init")
	ctx := context.Background()
	proj, err := project.Open(ctx, root, &project.Options{NoParse: true})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := worktree.Open(root, &worktree.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tools := builtin.Registry(nil)
	return &Runner{Tasks: &task.Runner{Tools: tools}, Main: proj, Worktrees: mgr,
		ProjectOptions: &project.Options{NoParse: true},
		Env:            func(p *project.Project) *tool.Env { return p.Env(false, "") }}, root
}

type events struct {
	mu  sync.Mutex
	evs []protocol.AgentEvent
}

func (e *events) emit(ev protocol.AgentEvent) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) json(t *testing.T) []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, ev := range e.evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		out = append(out, m)
	}
	return out
}

func TestWritingSubagentWorksInItsWorktree(t *testing.T) {
	r, root := setup(t)
	var evs events
	eng := &writer{path: "b.txt", content: "b\n"}
	res := r.Run(context.Background(), Spec{Role: Implementation, Objective: "write b", Step: "s1", Engine: eng,
		Kind: "ollama", Model: "m1", Emit: evs.emit})
	if res.Status != "completed" || res.Dir == "" || len(res.Change.Files) != 1 || res.Change.Added != 1 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the subagent wrote into the main tree")
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, "b.txt")); string(b) != "b\n" {
		t.Fatal("the worktree does not hold the write")
	}
	if !strings.HasPrefix(eng.sawSystem, Implementation.SystemPrompt()) || !strings.Contains(eng.sawSystem, res.Dir) {
		t.Fatalf("system prompt: %q", eng.sawSystem)
	}
	js := evs.json(t)
	if len(js) != 4 || js[0]["type"] != "subagentStarted" || js[1]["type"] != "subagent" || js[3]["type"] != "subagentFinished" {
		t.Fatalf("events %v", js)
	}
	st := js[0]
	for k, v := range map[string]any{"name": res.Name, "taskId": res.TaskID, "role": "implementation", "objective": "write b",
		"kind": "ollama", "model": "m1", "dir": res.Dir, "step": "s1"} {
		if st[k] != v {
			t.Errorf("subagentStarted.%s = %v, want %v", k, st[k], v)
		}
	}
	inner := js[1]["event"].(map[string]any)
	if inner["type"] != "started" || js[1]["taskId"] != res.TaskID || js[1]["name"] != res.Name {
		t.Errorf("wrapped event %v", js[1])
	}
	fin := js[3]
	for k, v := range map[string]any{"status": "completed", "error": nil, "costUsd": 0.25, "unpricedTokens": 0.0, "tokens": 15.0,
		"files": 1.0, "added": 1.0, "removed": 0.0, "worktree": res.Dir, "role": "implementation"} {
		if fin[k] != v {
			t.Errorf("subagentFinished.%s = %v, want %v", k, fin[k], v)
		}
	}
}

func TestReadOnlySubagentReadsMainTree(t *testing.T) {
	r, _ := setup(t)
	var evs events
	eng := &writer{path: "b.txt", content: "b\n", text: "One problem.\n\n```task-x-findings\n[{\"path\":\"a.txt\",\"line\":1,\"severity\":\"warning\",\"message\":\"terse\"},{\"bad\":1}]\n```\n"}
	res := r.Run(context.Background(), Spec{Role: Review, Objective: "review", Engine: eng, Emit: evs.emit})
	if res.Dir != "" || res.Status != "completed" || !strings.HasPrefix(res.Report, "One problem.") {
		t.Fatalf("result %+v", res)
	}
	if len(res.Findings) != 1 || res.Findings[0].Path != "a.txt" || res.Findings[0].Severity != "warning" {
		t.Fatalf("findings %+v", res.Findings)
	}
	for _, n := range eng.sawTools {
		if n == "write_file" || n == "run_command" {
			t.Errorf("review got %s", n)
		}
	}
	js := evs.json(t)
	if f, _ := js[len(js)-1]["findings"].([]any); len(f) != 1 {
		t.Errorf("subagentFinished findings %v", js[len(js)-1]["findings"])
	}
	if js[0]["dir"] != nil || js[len(js)-1]["worktree"] != nil {
		t.Fatalf("read-only events %v %v", js[0], js[len(js)-1])
	}
	if l, _ := r.Worktrees.List(); len(l) != 0 {
		t.Fatal("a read-only role made a worktree")
	}
}

func TestCancelOneSubagent(t *testing.T) {
	r, _ := setup(t)
	blocked := make(chan struct{})
	eng := &writer{block: blocked}
	var wg sync.WaitGroup
	var res Result
	var evs events
	wg.Add(1)
	go func() {
		defer wg.Done()
		res = r.Run(context.Background(), Spec{Role: Implementation, Objective: "x", Engine: eng, Emit: evs.emit})
	}()
	<-blocked
	js := evs.json(t)
	id := js[0]["taskId"].(string)
	if !r.Running(id) || !r.Cancel(id) {
		t.Fatal("cancel of a running subagent")
	}
	wg.Wait()
	if res.Status != "cancelled" || r.Cancel(id) {
		t.Fatalf("after cancel %+v", res)
	}
}

func TestBestOf(t *testing.T) {
	r, root := setup(t)
	var evs events
	out, err := r.BestOf(context.Background(), BestOfRequest{Prompt: "do it", Emit: evs.emit, Contenders: []Contender{
		{Engine: &writer{path: "x.txt", content: "one\n"}, Kind: "ollama", Model: "a"},
		{Engine: &writer{fail: true}, Kind: "openai", Model: "b"},
		{Engine: &writer{path: "x.txt", content: strings.Repeat("é\n", PatchLimit)}, Kind: "anthropic", Model: "c"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Candidates) != 3 || out.CostUSD != 0.75 || out.TaskID == "" {
		t.Fatalf("result %+v", out)
	}
	c0, ok0 := out.Candidates[0].(protocol.FinishedCandidate)
	c1, ok1 := out.Candidates[1].(protocol.FailedCandidate)
	c2, ok2 := out.Candidates[2].(protocol.FinishedCandidate)
	if !ok0 || !ok1 || !ok2 {
		t.Fatalf("candidates %+v: want finished, failed, finished", out.Candidates)
	}
	if c0.Status != "completed" || c0.Name == nil || c0.Files != 1 || !strings.Contains(c0.Patch, "+one") || c0.PatchTruncated {
		t.Fatalf("candidate 0 %+v", c0)
	}
	if n := len([]rune(c2.Patch)); n != PatchLimit || !c2.PatchTruncated {
		t.Fatalf("candidate 2 patch of %d characters", n)
	}
	b, _ := json.Marshal(c1)
	if string(b) != `{"name":null,"kind":"openai","model":"b","status":"failed","error":"provider error: boom"}` {
		t.Fatalf("failed candidate %s", b)
	}
	if l, _ := r.Worktrees.List(); len(l) != 2 {
		t.Fatalf("worktrees %+v: the failed one should be gone", l)
	}
	js := evs.json(t)
	if last := js[len(js)-1]; last["type"] != "bestOfDone" {
		t.Fatalf("last event %v", last)
	}
	// Each subagentStarted names its provider's index (two of one kind and model are told apart).
	byModel := map[any]any{}
	for _, e := range js {
		if e["type"] == "subagentStarted" {
			byModel[e["model"]] = e["candidate"]
		}
	}
	if fmt.Sprint(byModel) != fmt.Sprint(map[any]any{"a": 0.0, "b": 1.0, "c": 2.0}) {
		t.Fatalf("subagentStarted candidates by model %v", byModel)
	}
	for _, c := range []protocol.FinishedCandidate{c0, c2} {
		if err := r.Worktrees.Discard(context.Background(), *c.Name); err != nil {
			t.Fatal(err)
		}
	}
	if out := git(t, root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("git worktree list:\n%s", out)
	}
}

// commander runs one command through the job's run_command (in the job's
// root) and reports when it started.
type commander struct {
	command string
	started chan struct{}
}

func (e *commander) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	job.Emit(protocol.StartedEvent{TaskID: job.TaskID})
	tl, _ := job.Tools.Get("run_command")
	in, _ := json.Marshal(map[string]any{"command": e.command, "timeoutMs": 600000})
	close(e.started)
	tl.Run(ctx, job.Env, in)
	sum := task.Summary{TaskID: job.TaskID, Status: task.StatusCompleted}
	if ctx.Err() != nil {
		msg := "cancelled"
		sum.Status, sum.Error = task.StatusCancelled, &msg
	}
	job.Emit(protocol.DoneEvent{Status: protocol.TaskStatus(sum.Status)})
	return sum, nil
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// Cancelling one subagent ends its command tree (children that left the
// process group included); the other subagent finishes.
func TestCancelSubagentEndsItsCommandTree(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	r, _ := setup(t)
	slow := &commander{command: "sleep 320 & echo $! > pids; (setsid sleep 321 & echo $! >> pids; wait) & sleep 322", started: make(chan struct{})}
	var evs events
	var wg sync.WaitGroup
	var slowRes, fastRes Result
	wg.Add(2)
	go func() {
		defer wg.Done()
		slowRes = r.Run(context.Background(), Spec{Role: Testing, Objective: "slow", Engine: slow, Emit: evs.emit})
	}()
	<-slow.started
	var dir, id string
	for _, ev := range evs.json(t) {
		if ev["type"] == "subagentStarted" {
			dir, id = ev["dir"].(string), ev["taskId"].(string)
		}
	}
	var pids []int
	for len(pids) < 2 {
		b, _ := os.ReadFile(filepath.Join(dir, "pids"))
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	go func() {
		defer wg.Done()
		fastRes = r.Run(context.Background(), Spec{Role: Implementation, Objective: "fast", Engine: &writer{path: "f.txt", content: "f\n"}})
	}()
	if !r.Cancel(id) {
		t.Fatal("Cancel of the running subagent")
	}
	wg.Wait()
	if slowRes.Status != "cancelled" || fastRes.Status != "completed" {
		t.Fatalf("slow %s, fast %s", slowRes.Status, fastRes.Status)
	}
	for _, pid := range pids {
		for i := 0; alive(pid); i++ {
			if i > 500 {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d survived the cancel", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
