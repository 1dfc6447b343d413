package team

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
)

// roleWorker is a role's engine in these tests: a writing role writes its
// files through the job's tools; every role answers text and records the
// prompt it got.
type roleWorker struct {
	mu      sync.Mutex
	files   map[Role]map[string]string
	answer  map[Role]string
	fail    map[Role]bool
	prompts map[Role]string
	// saw lists, per role, the files of its root when it started.
	saw map[Role][]string
}

func (w *roleWorker) engine(role Role) (task.Engine, string, string) {
	return &roleRun{w: w, role: role}, "ollama", "m-" + string(role)
}

type roleRun struct {
	w    *roleWorker
	role Role
}

func (e *roleRun) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	w := e.w
	w.mu.Lock()
	w.prompts[e.role] = job.Prompt
	ents, _ := os.ReadDir(job.Env.Root)
	for _, en := range ents {
		w.saw[e.role] = append(w.saw[e.role], en.Name())
	}
	files, answer, fail := w.files[e.role], w.answer[e.role], w.fail[e.role]
	w.mu.Unlock()
	job.Emit(protocol.StartedEvent{TaskID: job.TaskID, ChatMode: protocol.ChatMode(job.ChatMode)})
	sum := task.Summary{TaskID: job.TaskID, Status: task.StatusCompleted, Text: answer,
		Usage: &provider.Usage{InputTokens: 100, OutputTokens: 20}, Metrics: &task.Metrics{CostUSD: 0.5, UnpricedTokens: 3}}
	if fail {
		msg := "provider error"
		sum.Status, sum.Error = task.StatusFailed, &msg
	}
	for p, c := range files {
		if fail {
			break
		}
		tl, _ := job.Tools.Get("write_file")
		in, _ := json.Marshal(map[string]string{"path": p, "content": c})
		if _, err := tl.Run(ctx, job.Env, in); err != nil {
			msg := err.Error()
			sum.Status, sum.Error = task.StatusFailed, &msg
		}
	}
	job.Emit(protocol.DoneEvent{Status: protocol.TaskStatus(sum.Status)})
	return sum, nil
}

// planLead is the lead's engine: it calls run_plan once with input and
// keeps the tool's result.
type planLead struct {
	input  string
	result tool.Result
	err    error
	specs  []string
}

func (e *planLead) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	for _, s := range job.Tools.Specs() {
		e.specs = append(e.specs, s.Name)
	}
	tl, ok := job.Tools.Get("run_plan")
	if !ok {
		return task.Summary{TaskID: job.TaskID, Status: task.StatusCompleted, Text: "no team tools"}, nil
	}
	e.result, e.err = tl.Run(tool.WithCallID(ctx, "call_plan"), job.Env, json.RawMessage(e.input))
	return task.Summary{TaskID: job.TaskID, Status: task.StatusCompleted, Text: "done",
		Usage: &provider.Usage{InputTokens: 1000, OutputTokens: 100}, Metrics: &task.Metrics{CostUSD: 1}}, nil
}

func runLead(t *testing.T, r *Runner, lead *planLead, w *roleWorker, maxPar int) (task.Summary, *events) {
	t.Helper()
	var evs events
	l := &Lead{Inner: lead, Subagents: r, Engines: w.engine, MaxParallel: maxPar}
	prep, err := r.Tasks.Prepare(&task.Request{Prompt: "do it as a team", ChatMode: policy.ChatTeam, Project: r.Main,
		Env: r.Main.Env(false, ""), Engine: l, Emit: evs.emit})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Tasks.Run(context.Background(), prep)
	if err != nil {
		t.Fatal(err)
	}
	return sum, &evs
}

func newWorker() *roleWorker {
	return &roleWorker{files: map[Role]map[string]string{}, answer: map[Role]string{}, fail: map[Role]bool{}, prompts: map[Role]string{}, saw: map[Role][]string{}}
}

func TestLeadRunsAPlan(t *testing.T) {
	r, root := setup(t)
	w := newWorker()
	w.answer[Research] = "a.txt holds the greeting"
	w.files[Implementation] = map[string]string{"impl.txt": "impl\n"}
	w.answer[Implementation] = "wrote impl.txt"
	w.files[Testing] = map[string]string{"test.txt": "test\n"}
	w.answer[Review] = "One problem.\n" + FindingsBlock([]Finding{{Path: "impl.txt", Line: 1, Severity: "warning", Message: "say more"}})
	lead := &planLead{input: diamond}
	sum, evs := runLead(t, r, lead, w, 2)
	if lead.err != nil {
		t.Fatalf("run_plan: %v", lead.err)
	}
	for _, name := range []string{"run_subagent", "run_plan", "worktree_apply", "worktree_discard", "read_file"} {
		if !strings.Contains(strings.Join(lead.specs, " "), name) {
			t.Errorf("the lead has no %s: %v", name, lead.specs)
		}
	}
	// Both writing steps merged, as pending edits of the lead task.
	for _, f := range []string{"impl.txt", "test.txt"} {
		if b, err := os.ReadFile(filepath.Join(root, f)); err != nil || !strings.HasSuffix(string(b), "\n") {
			t.Errorf("%s in the working tree: %q %v", f, b, err)
		}
	}
	if len(lead.result.Changes) != 2 || lead.result.Operation == "" || len(lead.result.Operations) != 1 {
		t.Errorf("tool result changes %+v, operations %q %v", lead.result.Changes, lead.result.Operation, lead.result.Operations)
	}
	ops := r.Main.Edits().TaskOperations(sum.TaskID)
	if len(ops) != 2 {
		t.Errorf("edit-log operations of the lead: %v", ops)
	}
	// The review read the implementation's patch and the testing report.
	if p := w.prompts[Review]; !strings.Contains(p, "+impl") || !strings.Contains(p, "### Step test (testing): completed") {
		t.Errorf("review prompt:\n%s", p)
	}
	if p := w.prompts[Implementation]; !strings.Contains(p, "a.txt holds the greeting") {
		t.Errorf("implementation prompt:\n%s", p)
	}
	// Merged worktrees are gone; nothing is kept.
	if list, _ := r.Worktrees.List(); len(list) != 0 {
		t.Errorf("worktrees left: %+v", list)
	}
	want := task.Metrics{CostUSD: 1 + 4*0.5, UnpricedTokens: 4 * 3, Subagents: 4, SubagentCostUSD: 2, SubagentTokens: 4 * 120}
	if sum.Metrics == nil || *sum.Metrics != want {
		t.Errorf("metrics %+v; want %+v", sum.Metrics, want)
	}
	if sum.Findings == nil || len(*sum.Findings) != 1 || (*sum.Findings)[0].Message != "say more" {
		t.Errorf("findings %+v", sum.Findings)
	}
	var types []string
	for _, ev := range evs.json(t) {
		switch ev["type"] {
		case "planStarted", "merged", "subagentStarted", "subagentFinished":
			types = append(types, ev["type"].(string))
		}
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "planStarted subagentStarted subagentFinished") || strings.Count(got, "merged") != 2 ||
		strings.Count(got, "subagentFinished") != 4 {
		t.Errorf("events %s", got)
	}
}

func TestLeadConflictKeepsWorktree(t *testing.T) {
	r, root := setup(t)
	w := newWorker()
	w.files[Implementation] = map[string]string{"a.txt": "from impl\n"}
	w.files[Testing] = map[string]string{"a.txt": "from test\n"}
	w.fail[Review] = true
	lead := &planLead{input: `{"steps":[
		{"id":"impl","role":"code","objective":"x"},
		{"id":"test","role":"qa","objective":"y"},
		{"id":"review","role":"reviewer","objective":"z","dependsOn":["impl"]},
		{"id":"docs","role":"docs","objective":"w","dependsOn":["review"]}]}`}
	_, evs := runLead(t, r, lead, w, 3)
	if lead.err != nil {
		t.Fatal(lead.err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "from impl\n" {
		t.Errorf("a.txt is %q", b)
	}
	list, _ := r.Worktrees.List()
	if len(list) != 1 || list[0].Role != "testing" {
		t.Fatalf("worktrees kept: %+v", list)
	}
	var merged, skipped []string
	for _, ev := range evs.json(t) {
		switch ev["type"] {
		case "merged":
			merged = append(merged, ev["step"].(string)+":"+strings.TrimSpace(strings.Split(jsonOf(ev["ok"]), " ")[0]))
		case "stepSkipped":
			skipped = append(skipped, ev["step"].(string)+": "+ev["reason"].(string))
		}
	}
	if strings.Join(merged, " ") != "impl:true test:false" || strings.Join(skipped, "|") != "docs: its dependency review failed" {
		t.Errorf("merged %v skipped %v", merged, skipped)
	}
	if !strings.Contains(lead.result.Content, "Worktrees kept: "+list[0].Name) {
		t.Errorf("result:\n%s", lead.result.Content)
	}
	// The lead can apply it later: it still conflicts, so it is refused
	// and kept; discarding removes it.
	s := &session{lead: &Lead{Subagents: r}, job: &task.Job{Project: r.Main, TaskID: "task-lead"}}
	in, _ := json.Marshal(map[string]string{"name": list[0].Name})
	if _, err := (&worktreeApplyTool{s}).Run(context.Background(), nil, in); err == nil || !strings.Contains(err.Error(), "kept") {
		t.Errorf("apply of a conflicting worktree: %v", err)
	}
	if _, err := (&worktreeDiscardTool{s}).Run(context.Background(), nil, in); err != nil {
		t.Errorf("discard: %v", err)
	}
	if list, _ := r.Worktrees.List(); len(list) != 0 {
		t.Errorf("after discard: %+v", list)
	}
	if _, err := (&worktreeDiscardTool{s}).Run(context.Background(), nil, in); err == nil || !strings.Contains(err.Error(), "no task-x worktree") {
		t.Errorf("second discard: %v", err)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestLeadWithoutRepositoryRunsOneAgent(t *testing.T) {
	root := t.TempDir()
	proj, err := project.Open(context.Background(), root, &project.Options{NoParse: true})
	if err != nil {
		t.Fatal(err)
	}
	tasks := &task.Runner{Tools: builtin.Registry(nil)}
	r := &Runner{Tasks: tasks, Main: proj}
	lead := &planLead{input: diamond}
	var evs events
	prep, _ := tasks.Prepare(&task.Request{Prompt: "x", ChatMode: policy.ChatTeam, Project: proj, Env: proj.Env(false, ""),
		Engine: &Lead{Inner: lead, Subagents: r, Engines: newWorker().engine}, Emit: evs.emit})
	sum, _ := tasks.Run(context.Background(), prep)
	if sum.Text != "no team tools" || sum.Findings != nil {
		t.Errorf("summary %+v", sum)
	}
	if got := evs.json(t); len(got) == 0 || got[0]["type"] != "warning" || got[0]["message"] != NoRepoWarning {
		t.Errorf("events %v", got)
	}
}

// subagentLead calls run_subagent with each input in turn, then
// worktree_apply of the last worktree it got.
type subagentLead struct {
	inputs  []string
	results []tool.Result
	errs    []error
	applied tool.Result
	applyEr error
}

func (e *subagentLead) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	run, _ := job.Tools.Get("run_subagent")
	var last string
	for _, in := range e.inputs {
		res, err := run.Run(ctx, job.Env, json.RawMessage(in))
		e.results, e.errs = append(e.results, res), append(e.errs, err)
		if d, ok := res.Data.(map[string]any); ok && d["worktree"] != nil {
			last = d["worktree"].(string)
		}
	}
	if last != "" {
		apply, _ := job.Tools.Get("worktree_apply")
		in, _ := json.Marshal(map[string]string{"name": last})
		e.applied, e.applyEr = apply.Run(ctx, job.Env, in)
	}
	return task.Summary{TaskID: job.TaskID, Status: task.StatusCompleted}, nil
}

func TestRunSubagentThenApply(t *testing.T) {
	r, root := setup(t)
	w := newWorker()
	w.files[Documentation] = map[string]string{"DOCS.md": "# docs\n"}
	w.answer[Documentation] = "documented"
	w.answer[Research] = "found it"
	lead := &subagentLead{inputs: []string{
		`{"role":"wizard","objective":"x"}`,
		`{"role":"docs","objective":"  "}`,
		`{"role":"Research","objective":"look","context":"in a.txt"}`,
		`{"role":"docs","objective":"write the docs"}`,
	}}
	var evs events
	l := &Lead{Inner: lead, Subagents: r, Engines: w.engine}
	prep, _ := r.Tasks.Prepare(&task.Request{Prompt: "x", ChatMode: policy.ChatTeam, Project: r.Main, Env: r.Main.Env(false, ""), Engine: l, Emit: evs.emit})
	sum, _ := r.Tasks.Run(context.Background(), prep)
	if te, ok := tool.AsError(lead.errs[0]); !ok || te.Kind != tool.ErrInvalidInput || !strings.Contains(te.Message, "research, implementation, testing, review, documentation") ||
		!strings.HasPrefix(te.Message, "invalid input: ") {
		t.Errorf("unknown role: %v", lead.errs[0])
	}
	if te, ok := tool.AsError(lead.errs[1]); !ok || te.Kind != tool.ErrInvalidInput {
		t.Errorf("empty objective: %v", lead.errs[1])
	}
	if d := lead.results[2].Data.(map[string]any); d["status"] != "completed" || d["worktree"] != nil || d["report"] != "found it" ||
		!strings.Contains(w.prompts[Research], "in a.txt") {
		t.Errorf("research result %v, prompt %q", d, w.prompts[Research])
	}
	d := lead.results[3].Data.(map[string]any)
	if d["status"] != "completed" || d["worktree"] == nil || !strings.Contains(lead.results[3].Content, "worktree_apply") {
		t.Fatalf("docs result %v\n%s", d, lead.results[3].Content)
	}
	if _, err := os.Stat(filepath.Join(root, "DOCS.md")); err != nil {
		t.Errorf("not applied: %v (%v)", err, lead.applyEr)
	}
	if len(lead.applied.Changes) != 1 || lead.applied.Changes[0].Kind != "created" || lead.applied.Operation == "" {
		t.Errorf("apply result %+v", lead.applied)
	}
	if list, _ := r.Worktrees.List(); len(list) != 0 {
		t.Errorf("worktrees after apply: %+v", list)
	}
	if sum.Metrics.Subagents != 2 {
		t.Errorf("metrics %+v", sum.Metrics)
	}
}

// A writing step that changed nothing merges as ok with no files, and its
// worktree is gone.
func TestLeadPlanStepWithoutChange(t *testing.T) {
	r, _ := setup(t)
	w := newWorker()
	w.answer[Documentation] = "nothing to document"
	lead := &planLead{input: `{"steps":[{"id":"d","role":"docs","objective":"x"}]}`}
	_, evs := runLead(t, r, lead, w, 0)
	var merged []map[string]any
	for _, ev := range evs.json(t) {
		if ev["type"] == "merged" {
			merged = append(merged, ev)
		}
		if ev["type"] == "planStarted" && ev["maxParallel"] != float64(DefaultMaxParallel) {
			t.Errorf("planStarted %v", ev)
		}
	}
	if len(merged) != 1 || merged[0]["ok"] != true || len(merged[0]["files"].([]any)) != 0 || merged[0]["error"] != nil {
		t.Errorf("merged %v", merged)
	}
	if list, _ := r.Worktrees.List(); len(list) != 0 {
		t.Errorf("worktrees left: %+v", list)
	}
}

// A writing step starts from its writing ancestors' committed changes, and
// its own merge holds only its change.
func TestLeadPlanChainStartsFromAncestors(t *testing.T) {
	r, root := setup(t)
	w := newWorker()
	w.files[Implementation] = map[string]string{"impl.txt": "impl\n"}
	w.files[Documentation] = map[string]string{"DOCS.md": "# docs\n"}
	lead := &planLead{input: `{"steps":[
		{"id":"impl","role":"code","objective":"x"},
		{"id":"look","role":"research","objective":"y","dependsOn":["impl"]},
		{"id":"docs","role":"docs","objective":"z","dependsOn":["look"]}]}`}
	_, evs := runLead(t, r, lead, w, 0)
	if !strings.Contains(strings.Join(w.saw[Documentation], " "), "impl.txt") {
		t.Errorf("docs started without impl's change: %v", w.saw[Documentation])
	}
	if strings.Contains(strings.Join(w.saw[Research], " "), "impl.txt") {
		t.Errorf("research (main tree) saw an unmerged file: %v", w.saw[Research])
	}
	if !strings.Contains(w.prompts[Documentation], "already holds the committed changes of step(s) impl") {
		t.Errorf("docs prompt:\n%s", w.prompts[Documentation])
	}
	var merged []string
	for _, ev := range evs.json(t) {
		if ev["type"] == "merged" {
			merged = append(merged, fmt.Sprintf("%v:%v:%v", ev["step"], ev["ok"], ev["files"]))
		}
	}
	if got := strings.Join(merged, " "); got != "impl:true:[impl.txt] docs:true:[DOCS.md]" {
		t.Errorf("merged %s", got)
	}
	for _, f := range []string{"impl.txt", "DOCS.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
