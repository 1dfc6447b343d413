package team

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// testRoles stands for the role table in these tests: five roles, three
// of them writing, matched without case, with a few aliases.
var testRoles = RoleLookup{
	Names: []string{"research", "implementation", "testing", "review", "documentation"},
	Match: func(name string) (string, bool, bool) {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "research":
			return "research", false, true
		case "implementation", "code":
			return "implementation", true, true
		case "testing", "qa":
			return "testing", true, true
		case "review", "reviewer":
			return "review", false, true
		case "documentation", "docs":
			return "documentation", true, true
		}
		return "", false, false
	},
}

func mustPlan(t *testing.T, input string) *Plan {
	t.Helper()
	p, err := ParsePlan(json.RawMessage(input), testRoles)
	if err != nil {
		t.Fatalf("ParsePlan: %v", err)
	}
	return p
}

func TestParsePlanRefuses(t *testing.T) {
	var thirteen []string
	for i := 0; i < 13; i++ {
		thirteen = append(thirteen, fmt.Sprintf(`{"id":"s%d","role":"research","objective":"x"}`, i))
	}
	for _, tc := range []struct{ input, want string }{
		{`{"steps":[]}`, "1 to 12 steps, got 0"},
		{`{"steps":[` + strings.Join(thirteen, ",") + `]}`, "1 to 12 steps, got 13"},
		{`{"steps":[{"id":"a","role":"wizard","objective":"x"}]}`, `unknown role "wizard"; the roles are research, implementation, testing, review, documentation`},
		{`{"steps":[{"id":"","role":"research","objective":"x"}]}`, "steps[0].id is required"},
		{`{"steps":[{"id":"a","role":"research","objective":"x"},{"id":"a","role":"review","objective":"y"}]}`, `steps[1].id "a" is used by an earlier step`},
		{`{"steps":[{"id":"a","role":"research","objective":"  "}]}`, "steps[0].objective is required"},
		{`{"steps":[{"id":"a","role":"research","objective":"x","dependsOn":["b"]}]}`, `no step has the id "b"`},
		{`{"steps":[{"id":"a","role":"research","objective":"x","dependsOn":["a"]}]}`, `step "a" depends on itself`},
		{`{"steps":[{"id":"a","role":"research","objective":"x","dependsOn":["c"]},{"id":"b","role":"code","objective":"y","dependsOn":["a"]},{"id":"c","role":"qa","objective":"z","dependsOn":["b"]},{"id":"d","role":"docs","objective":"w"}]}`,
			"the steps a → c → b → a form a cycle"},
		{`{"steps":[{"id":"a","role":"research","objective":"x","dependsOn":{"b":1}}]}`, "dependsOn is an array of step ids"},
		{`{"steps":[{"id":1.5,"role":"research","objective":"x"}]}`, "a step id is a string"},
		{`[1]`, "run_plan input"},
	} {
		_, err := ParsePlan(json.RawMessage(tc.input), testRoles)
		te, ok := tool.AsError(err)
		// The kind is in the text too: the model and the toolFinished
		// event see only the message (protocol.md: a -32602-style
		// invalidInput error).
		if !ok || te.Kind != tool.ErrInvalidInput || !strings.Contains(te.Message, tc.want) || !strings.HasPrefix(te.Message, "invalid input: ") {
			t.Errorf("%s: %v; want invalidInput saying so, with %q", tc.input, err, tc.want)
		}
	}
}

func TestParsePlanOrder(t *testing.T) {
	p := mustPlan(t, `{"steps":[
		{"id":"review","role":"Reviewer","objective":"check","dependsOn":["impl","test","impl"]},
		{"id":"test","role":"QA","objective":"tests","dependsOn":["research"]},
		{"id":"impl","role":"code","objective":"build","dependsOn":["research"]},
		{"id":"research","role":"Research","objective":"look"}]}`)
	var ids []string
	for _, s := range p.Order() {
		ids = append(ids, s.ID+":"+s.Role)
	}
	if got := strings.Join(ids, " "); got != "research:research test:testing impl:implementation review:review" {
		t.Errorf("order %s", got)
	}
	if !p.Merge || !reflect.DeepEqual(p.Steps[0].DependsOn, []string{"impl", "test"}) {
		t.Errorf("merge %v, review depends on %v", p.Merge, p.Steps[0].DependsOn)
	}
	if p := mustPlan(t, `{"steps":[{"id":"a","role":"docs","objective":"x"}],"merge":false}`); p.Merge || !p.Steps[0].Writes {
		t.Errorf("merge false: %+v %+v", p, p.Steps[0])
	}
	// Ids as numbers, one dependency as a bare id.
	p = mustPlan(t, `{"steps":[{"id":1,"role":"research","objective":"x"},{"id":"2","role":"code","objective":"y","dependsOn":1},{"id":3,"role":"qa","objective":"z","dependsOn":[1,"2"]}]}`)
	if p.Steps[0].ID != "1" || !reflect.DeepEqual(p.Steps[1].DependsOn, []string{"1"}) || !reflect.DeepEqual(p.Steps[2].DependsOn, []string{"1", "2"}) {
		t.Errorf("numeric ids: %+v %+v %+v", p.Steps[0], p.Steps[1], p.Steps[2])
	}
}

// fakeSteps runs steps for RunPlan: it records the order they start in and
// how many run at once; a step's outcome comes from outcome (default
// completed), and a step listed in hold waits until the steps it names
// have started (two steps holding for each other provably run at the
// same time).
type fakeSteps struct {
	mu       sync.Mutex
	started  []string
	runs     map[string]*StepRun
	active   int
	peak     int
	outcome  map[string]string
	hold     map[string][]string
	startedC map[string]chan struct{}
	events   []protocol.AgentEvent
	merges   []string
	conflict map[string]bool
	block    chan struct{} // when set, every step waits on it or ctx
}

func newFakeSteps(p *Plan) *fakeSteps {
	f := &fakeSteps{runs: map[string]*StepRun{}, outcome: map[string]string{}, hold: map[string][]string{},
		startedC: map[string]chan struct{}{}, conflict: map[string]bool{}}
	for _, s := range p.Steps {
		f.startedC[s.ID] = make(chan struct{})
	}
	return f
}

func (f *fakeSteps) run(ctx context.Context, run *StepRun) *StepResult {
	id := run.Step.ID
	f.mu.Lock()
	f.started = append(f.started, id)
	f.runs[id] = run
	f.active++
	f.peak = max(f.peak, f.active)
	out := f.outcome[id]
	waitFor := f.hold[id]
	f.mu.Unlock()
	close(f.startedC[id])
	defer func() {
		f.mu.Lock()
		f.active--
		f.mu.Unlock()
	}()
	for _, w := range waitFor {
		<-f.startedC[w]
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return &StepResult{Status: StepCancelled, Error: "cancelled", Name: "wt-" + id, HasWorktree: run.Step.Writes}
		}
	}
	if out == "" {
		out = StepCompleted
	}
	r := &StepResult{Status: out, Report: "report of " + id}
	if run.Step.Writes {
		r.Name = "wt-" + id
		r.Patch = "patch of " + id
		r.HasWorktree = true
	}
	if out != StepCompleted {
		r.Error = id + " went wrong"
	}
	return r
}

func (f *fakeSteps) merge(ctx context.Context, r *StepResult) MergeResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.merges = append(f.merges, r.Step)
	if f.conflict[r.Step] {
		return MergeResult{Error: "conflict in a.go"}
	}
	r.HasWorktree = false
	return MergeResult{OK: true, Files: []string{r.Step + ".go"}}
}

func (f *fakeSteps) emit(ev protocol.AgentEvent) {
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
}

func (f *fakeSteps) eventTypes() []string {
	var out []string
	for _, ev := range f.events {
		s := ev.EventType()
		switch ev := ev.(type) {
		case protocol.StepSkippedEvent:
			s += ":" + ev.Step
		case protocol.MergedEvent:
			s += fmt.Sprintf(":%s:%v", ev.Step, ev.OK)
		}
		out = append(out, s)
	}
	return out
}

const diamond = `{"steps":[
	{"id":"research","role":"research","objective":"look"},
	{"id":"impl","role":"implementation","objective":"build","dependsOn":["research"]},
	{"id":"test","role":"testing","objective":"tests","dependsOn":["research"]},
	{"id":"review","role":"review","objective":"check","dependsOn":["impl","test"]}]}`

func TestRunPlanDiamond(t *testing.T) {
	p := mustPlan(t, diamond)
	f := newFakeSteps(p)
	f.hold["impl"], f.hold["test"] = []string{"test"}, []string{"impl"} // both run at once
	res := RunPlan(context.Background(), p, PlanOptions{MaxParallel: 2, CallID: "call_1", Emit: f.emit, Run: f.run, Merge: f.merge})
	if got := strings.Join(f.started, " "); got != "research impl test review" && got != "research test impl review" {
		t.Errorf("start order %s", got)
	}
	if f.peak != 2 {
		t.Errorf("peak parallelism %d, want 2", f.peak)
	}
	if got := strings.Join(f.merges, " "); got != "impl test" {
		t.Errorf("merges %s", got)
	}
	if got := strings.Join(f.eventTypes(), " "); got != "planStarted merged:impl:true merged:test:true" {
		t.Errorf("events %s", got)
	}
	ps := f.events[0].(protocol.PlanStartedEvent)
	if ps.CallID != "call_1" || ps.MaxParallel != 2 || len(ps.Steps) != 4 || !reflect.DeepEqual(ps.Steps[3].DependsOn, []string{"impl", "test"}) {
		t.Errorf("planStarted %+v", ps)
	}
	rv := f.runs["review"]
	if len(rv.Reports) != 2 || rv.Reports[0].Step != "impl" || rv.Reports[0].Patch != "patch of impl" || rv.Reports[1].Text != "report of test" || len(rv.Base) != 0 {
		t.Errorf("review's run %+v", rv)
	}
	if im := f.runs["impl"]; len(im.Reports) != 1 || im.Reports[0].Text != "report of research" || len(im.Base) != 0 {
		t.Errorf("impl's run %+v", im)
	}
	for _, r := range res.Steps {
		if r.Status != StepCompleted || r.Kept {
			t.Errorf("step %+v", r)
		}
	}
	if txt := res.Text(); !strings.Contains(txt, "4 completed") || !strings.Contains(txt, "Merged into the working tree (pending review): impl.go") {
		t.Errorf("text:\n%s", txt)
	}
}

func TestRunPlanBounded(t *testing.T) {
	var steps []string
	for i := 0; i < 8; i++ {
		steps = append(steps, fmt.Sprintf(`{"id":"s%d","role":"research","objective":"x"}`, i))
	}
	for _, maxPar := range []int{1, 3} {
		p := mustPlan(t, `{"steps":[`+strings.Join(steps, ",")+`]}`)
		f := newFakeSteps(p)
		if maxPar == 3 {
			f.hold["s0"], f.hold["s1"], f.hold["s2"] = []string{"s1", "s2"}, []string{"s0", "s2"}, []string{"s0", "s1"} // the first three overlap
		}
		RunPlan(context.Background(), p, PlanOptions{MaxParallel: maxPar, Emit: f.emit, Run: f.run, Merge: f.merge})
		if f.peak != maxPar || len(f.started) != 8 {
			t.Errorf("maxParallel %d: peak %d, %d started", maxPar, f.peak, len(f.started))
		}
	}
}

func TestRunPlanSkipsAfterFailure(t *testing.T) {
	p := mustPlan(t, `{"steps":[
		{"id":"research","role":"research","objective":"look"},
		{"id":"impl","role":"implementation","objective":"build","dependsOn":["research"]},
		{"id":"test","role":"testing","objective":"tests","dependsOn":["research"]},
		{"id":"review","role":"review","objective":"check","dependsOn":["impl","test"]},
		{"id":"docs","role":"documentation","objective":"write","dependsOn":["review"]}]}`)
	f := newFakeSteps(p)
	f.outcome["impl"] = StepFailed
	res := RunPlan(context.Background(), p, PlanOptions{MaxParallel: 1, Emit: f.emit, Run: f.run, Merge: f.merge})
	if got := strings.Join(f.started, " "); got != "research impl test" {
		t.Errorf("started %s", got)
	}
	if got := strings.Join(f.eventTypes(), " "); got != "planStarted stepSkipped:review stepSkipped:docs merged:test:true" {
		t.Errorf("events %s", got)
	}
	r1, r2 := f.events[1].(protocol.StepSkippedEvent).Reason, f.events[2].(protocol.StepSkippedEvent).Reason
	if r1 != "its dependency impl failed" || r2 != "its dependency review was skipped" {
		t.Errorf("reasons %q %q", r1, r2)
	}
	byID := map[string]*StepResult{}
	for _, r := range res.Steps {
		byID[r.Step] = r
	}
	if r := byID["impl"]; r.Status != StepFailed || r.Merged != nil || !r.Kept {
		t.Errorf("failed step %+v", r)
	}
	if r := byID["review"]; r.Status != StepSkipped || r.Kept {
		t.Errorf("skipped step %+v", r)
	}
}

func TestRunPlanBaseAndConflicts(t *testing.T) {
	p := mustPlan(t, `{"steps":[
		{"id":"c","role":"docs","objective":"z","dependsOn":["b"]},
		{"id":"b","role":"testing","objective":"y","dependsOn":["r"]},
		{"id":"r","role":"research","objective":"look","dependsOn":["a"]},
		{"id":"a","role":"code","objective":"x"},
		{"id":"d","role":"code","objective":"w"}]}`)
	f := newFakeSteps(p)
	f.conflict["b"] = true
	res := RunPlan(context.Background(), p, PlanOptions{Emit: f.emit, Run: f.run, Merge: f.merge})
	var base []string
	for _, r := range f.runs["c"].Base {
		base = append(base, r.Step+"="+r.Patch)
	}
	if got := strings.Join(base, " "); got != "a=patch of a b=patch of b" {
		t.Errorf("c starts from %s", got)
	}
	if len(f.runs["c"].Reports) != 1 || f.runs["c"].Reports[0].Step != "b" {
		t.Errorf("c's reports %+v", f.runs["c"].Reports)
	}
	if got := strings.Join(f.merges, " "); got != "a b d" {
		t.Errorf("merges %s", got)
	}
	if got := strings.Join(f.eventTypes(), " "); got != "planStarted merged:a:true merged:b:false merged:c:false merged:d:true" {
		t.Errorf("events %s", got)
	}
	if e := f.events[3].(protocol.MergedEvent).Error; e == nil || !strings.Contains(*e, "step b, which did not merge") {
		t.Errorf("c's merge error %v", e)
	}
	kept := map[string]bool{}
	for _, r := range res.Steps {
		kept[r.Step] = r.Kept
	}
	if !reflect.DeepEqual(kept, map[string]bool{"a": false, "b": true, "c": true, "d": false, "r": false}) {
		t.Errorf("kept %v", kept)
	}
	if txt := res.Text(); !strings.Contains(txt, "Worktrees kept: wt-c, wt-b.") {
		t.Errorf("text:\n%s", txt)
	}
}

func TestRunPlanNoMerge(t *testing.T) {
	p := mustPlan(t, `{"steps":[{"id":"a","role":"code","objective":"x"}],"merge":false}`)
	f := newFakeSteps(p)
	res := RunPlan(context.Background(), p, PlanOptions{Emit: f.emit, Run: f.run, Merge: f.merge})
	if len(f.merges) != 0 || !res.Steps[0].Kept || len(f.events) != 1 {
		t.Errorf("merges %v, result %+v, events %v", f.merges, res.Steps[0], f.eventTypes())
	}
}

func TestRunPlanCancelled(t *testing.T) {
	p := mustPlan(t, `{"steps":[
		{"id":"a","role":"code","objective":"x"},
		{"id":"b","role":"code","objective":"y"},
		{"id":"c","role":"review","objective":"z","dependsOn":["a"]}]}`)
	f := newFakeSteps(p)
	f.block = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.startedC["a"]
		<-f.startedC["b"]
		cancel()
	}()
	res := RunPlan(ctx, p, PlanOptions{MaxParallel: 2, Emit: f.emit, Run: f.run, Merge: f.merge})
	if !res.Cancelled || len(f.merges) != 0 {
		t.Errorf("cancelled %v, merges %v", res.Cancelled, f.merges)
	}
	if got := strings.Join(f.eventTypes(), " "); got != "planStarted stepSkipped:c" {
		t.Errorf("events %s", got)
	}
	if res.Steps[0].Status != StepCancelled || !res.Steps[0].Kept || res.Steps[2].Status != StepSkipped {
		t.Errorf("steps %+v %+v", res.Steps[0], res.Steps[2])
	}
	if !strings.Contains(res.Text(), "The plan was cancelled; nothing was merged.") {
		t.Errorf("text %s", res.Text())
	}
}

func TestPlanPreview(t *testing.T) {
	got := planPreview(mustPlan(t, diamond), 2)
	want := `Run a plan of 4 step(s), at most 2 at a time; the writing steps are merged into the working tree at the end (pending review):

1. research (research, reads the working tree): look

2. impl (implementation, writes in its own worktree) after research: build

3. test (testing, writes in its own worktree) after research: tests

4. review (review, reads the working tree) after impl, test: check
`
	if got != want {
		t.Errorf("preview:\n%s\nwant:\n%s", got, want)
	}
}
