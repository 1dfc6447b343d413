package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Team mode through the binary: a lead whose scripted model calls
// run_plan, subagents on per-role fake providers (roleProviders), a git
// repository the test makes.

// roleModel is a fake OpenAI-compatible provider for one role. answer
// gives the step of a request (turn: the assistant messages in it so far;
// body: the request); a status other than 0 answers that HTTP error
// instead. Every request body is kept.
type roleModel struct {
	name   string
	answer func(turn int, body string) (step, int)

	mu       sync.Mutex
	requests []string
	first    chan struct{} // closed at the first request
	once     sync.Once
}

func newRoleModel(t *testing.T, name string, answer func(turn int, body string) (step, int)) (*roleModel, *httptest.Server) {
	m := &roleModel{name: name, answer: answer, first: make(chan struct{})}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

func (m *roleModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	body := mustJSON(req)
	m.mu.Lock()
	m.requests = append(m.requests, body)
	m.mu.Unlock()
	m.once.Do(func() { close(m.first) })
	turn := 0
	msgs, _ := req["messages"].([]any)
	for _, x := range msgs {
		if mm, ok := x.(map[string]any); ok && mm["role"] == "assistant" {
			turn++
		}
	}
	st, status := m.answer(turn, body)
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"error":{"message":"this provider refuses the request","type":"invalid_request_error"}}`)
		return
	}
	if st.hang {
		<-r.Context().Done()
		return
	}
	writeOpenAI(w, turn, st)
}

func (m *roleModel) bodies() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// script answers turn n with steps[n].
func script(steps ...step) func(int, string) (step, int) {
	return func(turn int, _ string) (step, int) {
		if turn >= len(steps) {
			return step{}, 500
		}
		return steps[turn], 0
	}
}

// waitClosed waits for c (a fake holding its answer until another fake
// was reached); false after a minute.
func waitClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	case <-time.After(60 * time.Second):
		return false
	}
}

func openaiProv(url, model string) map[string]any {
	return map[string]any{"kind": "openai", "model": model, "baseUrl": url + "/v1", "apiKey": "sk-e2e-team-31415"}
}

// teamRun sends agent/run and reads until its answer: agent/event
// notifications go to onEvent (which may send requests; their responses
// go to onResponse), approvals are allowed.
func teamRun(t *testing.T, p *proc, params map[string]any, onEvent func(agentEvent), onResponse func(id string, m *message)) *message {
	t.Helper()
	allowApprovals(p)
	return driveMethod(t, p, "agent/run", 300*time.Second, params, onEvent, onResponse)
}

// planLog follows a plan's events: the order subagents start and finish
// in (by step), how many run at once, and the plan events.
type planLog struct {
	order      []string // "start:<step>", "end:<step>"
	running    int
	peak       int
	started    map[string]map[string]any // by step
	finished   map[string]map[string]any // by step
	stepOf     map[string]string         // subagent task id -> step
	merged     []map[string]any
	skipped    []map[string]any
	planStart  map[string]any
	leadUsage  float64 // the lead's own costUsd so far
	warnings   []string
	subEvents  map[string][]map[string]any // by step: the subagent's own events
	typesOfAll []string
}

func newPlanLog() *planLog {
	return &planLog{started: map[string]map[string]any{}, finished: map[string]map[string]any{}, stepOf: map[string]string{},
		subEvents: map[string][]map[string]any{}}
}

func (l *planLog) add(ev agentEvent) {
	e := ev.Event
	typ, _ := e["type"].(string)
	l.typesOfAll = append(l.typesOfAll, typ)
	switch typ {
	case "planStarted":
		l.planStart = e
	case "subagentStarted":
		step, _ := e["step"].(string)
		l.stepOf[e["taskId"].(string)] = step
		l.started[step] = e
		l.order = append(l.order, "start:"+step)
		l.running++
		l.peak = max(l.peak, l.running)
	case "subagentFinished":
		step := l.stepOf[e["taskId"].(string)]
		l.finished[step] = e
		l.order = append(l.order, "end:"+step)
		l.running--
	case "subagent":
		step := l.stepOf[e["taskId"].(string)]
		inner, _ := e["event"].(map[string]any)
		l.subEvents[step] = append(l.subEvents[step], inner)
	case "merged":
		l.merged = append(l.merged, e)
	case "stepSkipped":
		l.skipped = append(l.skipped, e)
	case "usage":
		l.leadUsage, _ = e["costUsd"].(float64)
	case "warning":
		l.warnings = append(l.warnings, e["message"].(string))
	}
}

func (l *planLog) index(s string) int { return slices.Index(l.order, s) }

// TestTeamPlanDiamondThroughBinary: the lead runs a four-step plan with a
// diamond (research → implementation, testing → review) at maxParallel 2.
// Research runs first; implementation and testing run at the same time
// (each fake holds its first answer until the other was asked); review
// starts when both ended and gets their reports and the implementation's
// patch. Each role reached its own provider. At the end implementation
// merges into the working tree as pending edits of the lead; testing
// changed the same line, so it conflicts and keeps its worktree. The
// review's findings are on subagentFinished and the summary, and the
// subagents' costs and tokens are in the lead's metrics.
func TestTeamPlanDiamondThroughBinary(t *testing.T) {
	root := gitRepo(t, map[string]string{"greet.txt": "hello\n", "README.md": "# demo\n"})
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "research", "role": "Research", "objective": "Find where the greeting is."},
		map[string]any{"id": "impl", "role": "code", "objective": "Make the greeting say team.", "dependsOn": []string{"research"}},
		map[string]any{"id": "test", "role": "qa", "objective": "Add a test of the greeting.", "dependsOn": []string{"research"}},
		map[string]any{"id": "review", "role": "reviewer", "objective": "Review the change.", "dependsOn": []string{"impl", "test"}},
	}}
	lead, leadSrv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_plan", input: plan}}},
		{text: "The team finished; one step conflicted."},
	})
	research, researchSrv := newRoleModel(t, "research", script(step{text: "Research: the greeting is on line 1 of greet.txt."}))
	// implementation and testing each hold their first answer until the
	// other was asked: both must run at once.
	implAsked, testAsked := make(chan struct{}), make(chan struct{})
	var implOnce, testOnce sync.Once
	var notTogether atomic.Int32
	impl, implSrv := newRoleModel(t, "implementation", func(turn int, body string) (step, int) {
		if turn == 0 {
			implOnce.Do(func() { close(implAsked) })
			if !waitClosed(testAsked) {
				notTogether.Add(1)
			}
		}
		return script(
			step{calls: []scriptedCall{
				{name: "replace_text", input: map[string]any{"path": "greet.txt", "oldText": "hello", "newText": "hello, team"}},
				{name: "write_file", input: map[string]any{"path": "impl.txt", "content": "implemented\n"}}}},
			step{text: "Implemented: greet.txt says hello, team."})(turn, body)
	})
	testing_, testSrv := newRoleModel(t, "testing", func(turn int, body string) (step, int) {
		if turn == 0 {
			testOnce.Do(func() { close(testAsked) })
			if !waitClosed(implAsked) {
				notTogether.Add(1)
			}
		}
		return script(
			step{calls: []scriptedCall{
				{name: "replace_text", input: map[string]any{"path": "greet.txt", "oldText": "hello", "newText": "hello from the tests"}},
				{name: "write_file", input: map[string]any{"path": "greet_test.txt", "content": "expect hello\n"}}}},
			step{text: "Tests written."})(turn, body)
	})
	findings := "Looks fine.\n\n```task-x-findings\n" +
		`[{"path":"greet.txt","line":1,"severity":"warning","message":"say who the team is"},{"path":"../x","line":1,"severity":"error","message":"dropped"}]` +
		"\n```\n"
	review, reviewSrv := newRoleModel(t, "review", script(step{text: findings}))

	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	log := newPlanLog()
	res := teamRun(t, p, map[string]any{
		"prompt": "Make the greeting about the team, with tests and a review.", "chatMode": "team",
		"provider": openaiProv(leadSrv.URL, "gpt-lead"),
		"roleProviders": []any{
			map[string]any{"role": "research", "provider": openaiProv(researchSrv.URL, "gpt-research")},
			map[string]any{"role": "implementation", "provider": openaiProv(implSrv.URL, "gpt-impl")},
			map[string]any{"role": "testing", "provider": openaiProv(testSrv.URL, "gpt-test")},
			map[string]any{"role": "review", "provider": openaiProv(reviewSrv.URL, "gpt-review")},
		},
		"limits": map[string]any{"maxParallel": 2},
		"prices": []any{map[string]any{"model": "gpt-", "inputPerMtok": 2, "outputPerMtok": 10}},
		"policy": map[string]any{"mode": "default", "allowAll": true},
	}, log.add, nil)
	if res.Error != nil {
		t.Fatalf("agent/run: %v", res.Error)
	}
	var sum protocol.AgentSummary
	json.Unmarshal(res.Result, &sum)
	if sum.Status != "completed" || !strings.Contains(sum.Text, "team finished") {
		t.Fatalf("summary %s", res.Result)
	}
	if notTogether.Load() > 0 {
		t.Errorf("implementation and testing did not run at the same time")
	}

	// planStarted, then the start order of the diamond.
	if ps := log.planStart; ps == nil || ps["maxParallel"] != float64(2) || len(ps["steps"].([]any)) != 4 {
		t.Fatalf("planStarted %v", ps)
	}
	if st := log.planStart["steps"].([]any)[1].(map[string]any); st["role"] != "implementation" || fmt.Sprint(st["dependsOn"]) != "[research]" {
		t.Errorf("planStarted step %v", st)
	}
	if log.order[0] != "start:research" || log.order[1] != "end:research" || log.order[len(log.order)-1] != "end:review" {
		t.Errorf("order %v", log.order)
	}
	if i, j := log.index("start:review"), max(log.index("end:impl"), log.index("end:test")); i < j {
		t.Errorf("review started before its dependencies ended: %v", log.order)
	}
	if first := min(log.index("end:impl"), log.index("end:test")); max(log.index("start:impl"), log.index("start:test")) > first {
		t.Errorf("implementation and testing did not overlap: %v", log.order)
	}
	if log.peak != 2 {
		t.Errorf("at most %d subagents ran at once, want 2 (maxParallel)", log.peak)
	}

	// Each role on its own provider, with its own instructions.
	for role, m := range map[string]*roleModel{"research": research, "implementation": impl, "testing": testing_, "review": review} {
		bodies := m.bodies()
		if len(bodies) == 0 {
			t.Errorf("%s: no request", role)
		}
		for _, b := range bodies {
			if !strings.Contains(b, "Role: "+role+".") {
				t.Errorf("%s's provider got another role's request: %.300s", role, b)
			}
		}
	}
	for _, b := range lead.bodies() {
		if j := mustJSON(b); strings.Contains(j, "You are a subagent") || !strings.Contains(j, "Mode: team.") {
			t.Errorf("the lead's provider got a request that is not the lead's: %.300s", j)
		}
	}
	for step, model := range map[string]string{"research": "gpt-research", "impl": "gpt-impl", "test": "gpt-test", "review": "gpt-review"} {
		if s := log.started[step]; s == nil || s["model"] != model || s["step"] != step {
			t.Errorf("subagentStarted of %s: %v", step, s)
		}
	}
	if log.started["research"]["dir"] != nil || log.started["impl"]["dir"] == nil {
		t.Errorf("dirs: research %v, impl %v", log.started["research"]["dir"], log.started["impl"]["dir"])
	}
	// The review got the reports of its direct dependencies and the patch.
	rb := review.bodies()[0]
	for _, want := range []string{"Step impl (implementation): completed", "Implemented: greet.txt says hello, team.", "Step test (testing): completed", "+hello, team"} {
		if !strings.Contains(rb, want) {
			t.Errorf("the review's request has no %q", want)
		}
	}
	if strings.Contains(rb, "Research: the greeting") {
		t.Errorf("the review got the report of a step it does not depend on directly")
	}
	if ib := impl.bodies()[0]; !strings.Contains(ib, "Research: the greeting is on line 1") {
		t.Errorf("implementation did not get research's report")
	}

	// Merges in dependency order: implementation as pending edits, testing
	// conflicts and keeps its worktree.
	if len(log.merged) != 2 || log.merged[0]["step"] != "impl" || log.merged[0]["ok"] != true || log.merged[1]["step"] != "test" || log.merged[1]["ok"] != false {
		t.Fatalf("merged events %v", log.merged)
	}
	if files := fmt.Sprint(log.merged[0]["files"]); files != "[greet.txt impl.txt]" {
		t.Errorf("merged files %s", files)
	}
	if e, _ := log.merged[1]["error"].(string); !strings.Contains(e, "greet.txt") {
		t.Errorf("conflict error %q", e)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "greet.txt")); string(b) != "hello, team\n" {
		t.Errorf("greet.txt %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "greet_test.txt")); err == nil {
		t.Errorf("the conflicting step's file reached the working tree")
	}
	if len(sum.Operations) != 1 || len(sum.ChangedFiles) != 2 {
		t.Fatalf("summary operations %v, changed %v", sum.Operations, sum.ChangedFiles)
	}
	var paths []string
	for _, f := range pending(t, p) {
		paths = append(paths, f.Path)
		if fmt.Sprint(f.Operations) != fmt.Sprint(sum.Operations) {
			t.Errorf("pending %s from operations %v, the lead's are %v", f.Path, f.Operations, sum.Operations)
		}
	}
	slices.Sort(paths)
	if fmt.Sprint(paths) != "[greet.txt impl.txt]" {
		t.Errorf("pending edits %v", paths)
	}
	var list struct {
		Worktrees []struct {
			Name string `json:"name"`
			Role string `json:"role"`
		} `json:"worktrees"`
	}
	json.Unmarshal(p.mustCall("worktrees/list", nil), &list)
	if len(list.Worktrees) != 1 || list.Worktrees[0].Role != "testing" || list.Worktrees[0].Name != log.started["test"]["name"] {
		t.Fatalf("worktrees/list %+v", list)
	}
	if n := worktreeCount(t, root); n != 2 {
		t.Errorf("git worktree list has %d entries, want the main tree and the kept one", n)
	}

	// Findings on subagentFinished (invalid entry dropped) and the summary.
	rf, _ := log.finished["review"]["findings"].([]any)
	var sumFindings []protocol.Finding
	if sum.Findings != nil {
		sumFindings = *sum.Findings
	}
	if len(rf) != 1 || len(sumFindings) != 1 || sumFindings[0].Message != "say who the team is" || sumFindings[0].Severity != "warning" {
		t.Errorf("findings: event %v, summary %v", rf, sumFindings)
	}
	if _, ok := log.finished["impl"]["findings"]; ok {
		t.Errorf("an implementation subagent has findings")
	}

	// Costs: every subagent adds to the lead's metrics.
	var subCost float64
	var subTokens int
	for step, f := range log.finished {
		c, _ := f["costUsd"].(float64)
		tok, _ := f["tokens"].(float64)
		if c <= 0 || tok <= 0 {
			t.Errorf("%s: costUsd %v tokens %v", step, f["costUsd"], f["tokens"])
		}
		subCost += c
		subTokens += int(tok)
	}
	if sum.Metrics == nil {
		t.Fatal("the summary has no metrics")
	}
	m := sum.Metrics
	if m.Subagents != 4 || m.SubagentTokens != subTokens || math.Abs(m.SubagentCostUSD-subCost) > 1e-9 ||
		log.leadUsage <= 0 || math.Abs(m.CostUSD-(log.leadUsage+subCost)) > 1e-9 {
		t.Errorf("metrics %+v; subagents cost %v tokens %d, lead's own cost %v", m, subCost, subTokens, log.leadUsage)
	}

	// The kept worktree: apply still conflicts; discard removes it.
	name := list.Worktrees[0].Name
	var applied struct {
		Applied bool `json:"applied"`
	}
	json.Unmarshal(p.mustCall("worktrees/apply", map[string]any{"name": name}), &applied)
	if applied.Applied {
		t.Errorf("the conflicting worktree applied")
	}
	p.mustCall("worktrees/discard", map[string]any{"name": name})
	if n := worktreeCount(t, root); n != 1 {
		t.Errorf("after discard, git worktree list has %d entries", n)
	}
}

// TestTeamPlanSkipsAfterFailureAndBoundsParallelism: research, then three
// writing steps that all depend on it, at maxParallel 2; testing's
// provider refuses every request, so testing fails and review (which
// depends on it) is skipped. Documentation can only start once a slot is
// free (after testing failed); implementation holds its first answer until
// documentation was asked, so two run at once and never three. Both
// completed writing steps merge, in dependency order.
func TestTeamPlanSkipsAfterFailureAndBoundsParallelism(t *testing.T) {
	root := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "r", "role": "research", "objective": "Look around."},
		map[string]any{"id": "impl", "role": "implementation", "objective": "Write impl.txt.", "dependsOn": []string{"r"}},
		map[string]any{"id": "test", "role": "testing", "objective": "Write tests.", "dependsOn": []string{"r"}},
		map[string]any{"id": "docs", "role": "docs", "objective": "Write docs.", "dependsOn": []string{"r"}},
		map[string]any{"id": "review", "role": "review", "objective": "Review.", "dependsOn": []string{"impl", "test"}},
	}}
	_, leadSrv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_plan", input: plan}}},
		{text: "Testing failed; the rest is merged."},
	})
	_, researchSrv := newRoleModel(t, "research", script(step{text: "Nothing special."}))
	docs, docsSrv := newRoleModel(t, "documentation", script(
		step{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "DOCS.md", "content": "# Docs\n"}}}},
		step{text: "Documented."}))
	var heldTooLong atomic.Bool
	docsAsked := docs.first
	_, implSrv := newRoleModel(t, "implementation", func(turn int, body string) (step, int) {
		if turn == 0 && !waitClosed(docsAsked) {
			heldTooLong.Store(true)
		}
		return script(
			step{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "impl.txt", "content": "impl\n"}}}},
			step{text: "Implemented."})(turn, body)
	})
	_, failSrv := newRoleModel(t, "testing", func(int, string) (step, int) { return step{}, 400 })
	review, reviewSrv := newRoleModel(t, "review", script(step{text: "ok"}))

	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	log := newPlanLog()
	res := teamRun(t, p, map[string]any{
		"prompt": "Do it.", "chatMode": "team", "provider": openaiProv(leadSrv.URL, "gpt-lead"),
		"roleProviders": []any{
			map[string]any{"role": "research", "provider": openaiProv(researchSrv.URL, "gpt-research")},
			map[string]any{"role": "implementation", "provider": openaiProv(implSrv.URL, "gpt-impl")},
			map[string]any{"role": "testing", "provider": openaiProv(failSrv.URL, "gpt-test")},
			map[string]any{"role": "documentation", "provider": openaiProv(docsSrv.URL, "gpt-docs")},
			map[string]any{"role": "review", "provider": openaiProv(reviewSrv.URL, "gpt-review")},
		},
		"limits": map[string]any{"maxParallel": 2},
		"policy": map[string]any{"allowAll": true},
	}, log.add, nil)
	var sum protocol.AgentSummary
	json.Unmarshal(res.Result, &sum)
	if res.Error != nil || sum.Status != "completed" {
		t.Fatalf("agent/run: %v %s", res.Error, res.Result)
	}
	if heldTooLong.Load() {
		t.Errorf("documentation never started while implementation ran")
	}
	if log.peak != 2 {
		t.Errorf("peak %d subagents at once, want 2: %v", log.peak, log.order)
	}
	if log.index("start:docs") < log.index("end:test") || log.index("end:impl") < log.index("start:docs") {
		t.Errorf("documentation did not take testing's slot while implementation ran: %v", log.order)
	}
	if f := log.finished["test"]; f["status"] != "failed" || f["error"] == nil {
		t.Errorf("testing finished %v", f)
	}
	if len(log.skipped) != 1 || log.skipped[0]["step"] != "review" || log.skipped[0]["reason"] != "its dependency test failed" {
		t.Errorf("skipped %v", log.skipped)
	}
	if _, ok := log.started["review"]; ok || len(review.bodies()) != 0 {
		t.Errorf("the skipped review ran")
	}
	var merged []string
	for _, m := range log.merged {
		merged = append(merged, fmt.Sprintf("%v:%v:%v", m["step"], m["ok"], m["files"]))
	}
	if got := strings.Join(merged, " "); got != "impl:true:[impl.txt] docs:true:[DOCS.md]" {
		t.Errorf("merged %s", got)
	}
	if pf := pending(t, p); len(pf) != 2 || len(sum.Operations) != 2 {
		t.Errorf("pending %v, operations %v", pf, sum.Operations)
	}
	// The failed step changed nothing: its worktree is gone too.
	if n := worktreeCount(t, root); n != 1 {
		t.Errorf("git worktree list:\n%s", gitCmd(t, root, "worktree", "list"))
	}
	if sum.Metrics == nil || sum.Metrics.Subagents != 4 {
		t.Errorf("metrics %+v", sum.Metrics)
	}
}

// sleepsUnder lists the runtime's descendants whose command line starts
// with "sleep <prefix>".
func sleepsUnder(pid int, prefix string) []int {
	var out []int
	for _, d := range descendantsOf(pid) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d))
		if strings.HasPrefix(string(b), "sleep\x00"+prefix) {
			out = append(out, d)
		}
	}
	return out
}

func waitGone(t *testing.T, pids []int, deadline time.Time) {
	t.Helper()
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d survived", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestTeamCancelSubagentMidCommand: a plan whose implementation step runs
// a command with children while a research step waits. agent/cancelSubagent
// of the implementation's task id answers true and ends its whole process
// tree; the research step then finishes, the step that depends on it runs,
// the step that depends on the cancelled one is skipped, and the lead
// completes.
func TestTeamCancelSubagentMidCommand(t *testing.T) {
	root := gitRepo(t, map[string]string{"a.txt": "a\n"})
	cmd := "sleep 320 & (sleep 321 & wait) & sleep 322"
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "slow", "role": "implementation", "objective": "Run the slow build."},
		map[string]any{"id": "look", "role": "research", "objective": "Look around."},
		map[string]any{"id": "check", "role": "review", "objective": "Check the build.", "dependsOn": []string{"slow"}},
		map[string]any{"id": "write", "role": "documentation", "objective": "Write it down.", "dependsOn": []string{"look"}},
	}}
	_, leadSrv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_plan", input: plan}}},
		{text: "The slow step was cancelled."},
	})
	_, slowSrv := newRoleModel(t, "implementation", script(
		step{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd, "timeoutMs": 600000}}}},
		step{text: "built"}))
	released := make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	_, lookSrv := newRoleModel(t, "research", func(turn int, body string) (step, int) {
		<-released
		return step{text: "Looked."}, 0
	})
	_, writeSrv := newRoleModel(t, "documentation", script(
		step{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "NOTES.md", "content": "notes\n"}}}},
		step{text: "Written."}))
	check, checkSrv := newRoleModel(t, "review", script(step{text: "ok"}))
	t.Cleanup(release) // before the fakes close: a held answer never blocks them

	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	if res := p.mustCall("agent/cancelSubagent", map[string]any{"taskId": "task-none"}); string(res) != "false" {
		t.Errorf("cancelSubagent of no subagent: %s", res)
	}
	for _, bad := range []map[string]any{
		{"limits": map[string]any{"maxParallel": 9}},
		{"limits": map[string]any{"maxParallel": 0}},
		{"roleProviders": []any{map[string]any{"role": "wizard", "provider": openaiProv(slowSrv.URL, "m")}}},
		{"roleProviders": []any{map[string]any{"role": "qa", "provider": openaiProv(slowSrv.URL, "m")},
			map[string]any{"role": "testing", "provider": openaiProv(slowSrv.URL, "m")}}},
		{"roleProviders": []any{map[string]any{"role": "docs", "provider": map[string]any{"kind": "nope"}}}},
	} {
		params := map[string]any{"prompt": "x", "chatMode": "team", "provider": openaiProv(leadSrv.URL, "gpt-lead")}
		for k, v := range bad {
			params[k] = v
		}
		if _, err := p.call("agent/run", params); err == nil || err.Code != -32602 {
			t.Errorf("agent/run with %v: %v", bad, err)
		}
	}
	log := newPlanLog()
	var slowTask string
	var sleeps []int
	cancelID := ""
	var cancelAnswer string
	deadline := time.Now().Add(240 * time.Second)
	res := teamRun(t, p, map[string]any{
		"prompt": "Build and document.", "chatMode": "team", "provider": openaiProv(leadSrv.URL, "gpt-lead"),
		"roleProviders": []any{
			map[string]any{"role": "implementation", "provider": openaiProv(slowSrv.URL, "gpt-impl")},
			map[string]any{"role": "research", "provider": openaiProv(lookSrv.URL, "gpt-research")},
			map[string]any{"role": "documentation", "provider": openaiProv(writeSrv.URL, "gpt-docs")},
			map[string]any{"role": "review", "provider": openaiProv(checkSrv.URL, "gpt-review")},
		},
		"policy": map[string]any{"allowAll": true},
	}, func(ev agentEvent) {
		log.add(ev)
		e := ev.Event
		if e["type"] == "subagentStarted" && e["step"] == "slow" {
			slowTask = e["taskId"].(string)
		}
		if e["type"] != "subagent" || e["taskId"] != slowTask {
			return
		}
		inner := e["event"].(map[string]any)
		if inner["type"] != "toolStarted" || inner["tool"] != "run_command" {
			return
		}
		for len(sleeps) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("the command's processes did not show up: %v", sleeps)
			}
			time.Sleep(20 * time.Millisecond)
			sleeps = sleepsUnder(p.cmd.Process.Pid, "32")
		}
		cancelID = fmt.Sprint(p.request("agent/cancelSubagent", map[string]any{"taskId": slowTask}))
	}, func(id string, m *message) {
		if id == cancelID {
			cancelAnswer = string(m.Result)
			release()
		}
	})
	var sum protocol.AgentSummary
	json.Unmarshal(res.Result, &sum)
	if res.Error != nil || sum.Status != "completed" {
		t.Fatalf("agent/run: %v %s", res.Error, res.Result)
	}
	if cancelAnswer != "true" {
		t.Fatalf("agent/cancelSubagent answered %q", cancelAnswer)
	}
	waitGone(t, sleeps, deadline)
	if f := log.finished["slow"]; f["status"] != "cancelled" {
		t.Errorf("slow finished %v", f)
	}
	for _, step := range []string{"look", "write"} {
		if f := log.finished[step]; f["status"] != "completed" {
			t.Errorf("%s finished %v", step, f)
		}
	}
	if len(log.skipped) != 1 || log.skipped[0]["step"] != "check" || log.skipped[0]["reason"] != "its dependency slow was cancelled" || len(check.bodies()) != 0 {
		t.Errorf("skipped %v", log.skipped)
	}
	if len(log.merged) != 1 || log.merged[0]["step"] != "write" || log.merged[0]["ok"] != true {
		t.Errorf("merged %v", log.merged)
	}
	if res := p.mustCall("agent/cancelSubagent", map[string]any{"taskId": slowTask}); string(res) != "false" {
		t.Errorf("cancelSubagent after the end: %s", res)
	}
	if n := worktreeCount(t, root); n != 1 {
		t.Errorf("git worktree list:\n%s", gitCmd(t, root, "worktree", "list"))
	}
}

// TestTeamKilledDuringPlanLeavesNoProcess: the runtime is killed while
// two plan steps run commands with children; none of those processes
// outlives it.
func TestTeamKilledDuringPlanLeavesNoProcess(t *testing.T) {
	root := gitRepo(t, map[string]string{"a.txt": "a\n"})
	cmd := "sleep 330 & (sleep 331 & wait) & sleep 332"
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "one", "role": "implementation", "objective": "Build one."},
		map[string]any{"id": "two", "role": "testing", "objective": "Test two."},
		map[string]any{"id": "three", "role": "review", "objective": "Review.", "dependsOn": []string{"one", "two"}},
	}}
	_, leadSrv := newScriptedModel(t, "openai", []step{{calls: []scriptedCall{{name: "run_plan", input: plan}}}, {text: "done"}})
	_, workSrv := newRoleModel(t, "worker", script(
		step{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd, "timeoutMs": 600000}}}},
		step{text: "done"}))
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	p.onRequest = func(string, json.RawMessage) any { return map[string]any{"decision": "allow"} }
	p.request("agent/run", map[string]any{"prompt": "go", "chatMode": "team", "provider": openaiProv(leadSrv.URL, "gpt-lead"),
		"roleProviders": []any{map[string]any{"role": "implementation", "provider": openaiProv(workSrv.URL, "gpt-w")},
			map[string]any{"role": "testing", "provider": openaiProv(workSrv.URL, "gpt-w")}},
		"policy": map[string]any{"allowAll": true}})
	running := map[string]bool{}
	deadline := time.Now().Add(240 * time.Second)
	for len(running) < 2 {
		m := p.next(time.Until(deadline))
		if m.Method != "" && len(m.ID) > 0 {
			p.answer(m)
			continue
		}
		var ev agentEvent
		if m.Method != "agent/event" || json.Unmarshal(m.Params, &ev) != nil || ev.Event["type"] != "subagent" {
			continue
		}
		if inner, _ := ev.Event["event"].(map[string]any); inner["type"] == "toolStarted" && inner["tool"] == "run_command" {
			running[ev.Event["taskId"].(string)] = true
		}
	}
	var sleeps []int
	for len(sleeps) < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("the commands' processes did not show up: %v", sleeps)
		}
		time.Sleep(20 * time.Millisecond)
		sleeps = sleepsUnder(p.cmd.Process.Pid, "33")
	}
	p.cmd.Process.Kill()
	p.wait(10 * time.Second)
	waitGone(t, sleeps, deadline)
}

// TestTeamCancelLeadEndsEverySubagent: $/cancelRequest of a team-mode
// agent/run while two plan steps run commands with children: the request
// answers -32800, both subagents end cancelled with their process trees,
// the step after them is skipped, nothing is merged, and the lead's done
// comes last with status cancelled.
func TestTeamCancelLeadEndsEverySubagent(t *testing.T) {
	root := gitRepo(t, map[string]string{"a.txt": "a\n"})
	cmd := "sleep 340 & (sleep 341 & wait) & sleep 342"
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "one", "role": "implementation", "objective": "Build one."},
		map[string]any{"id": "two", "role": "testing", "objective": "Test two."},
		map[string]any{"id": "three", "role": "review", "objective": "Review.", "dependsOn": []string{"one"}},
	}}
	_, leadSrv := newScriptedModel(t, "openai", []step{{calls: []scriptedCall{{name: "run_plan", input: plan}}}, {text: "done"}})
	_, workSrv := newRoleModel(t, "worker", script(
		step{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd, "timeoutMs": 600000}}}},
		step{text: "done"}))
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	p.onRequest = func(string, json.RawMessage) any { return map[string]any{"decision": "allow"} }
	id := p.request("agent/run", map[string]any{"prompt": "go", "chatMode": "team", "provider": openaiProv(leadSrv.URL, "gpt-lead"),
		"roleProviders": []any{map[string]any{"role": "implementation", "provider": openaiProv(workSrv.URL, "gpt-w")},
			map[string]any{"role": "testing", "provider": openaiProv(workSrv.URL, "gpt-w")}},
		"policy": map[string]any{"allowAll": true}})
	log := newPlanLog()
	running := map[string]bool{}
	var sleeps []int
	var answer *message
	var leadDone map[string]any
	deadline := time.Now().Add(240 * time.Second)
	for answer == nil || leadDone == nil {
		m := p.next(time.Until(deadline))
		switch {
		case m.Method != "" && len(m.ID) > 0:
			p.answer(m)
			continue
		case m.Method == "" && string(m.ID) == fmt.Sprint(id):
			answer = m
			continue
		case m.Method != "agent/event":
			continue
		}
		var ev agentEvent
		json.Unmarshal(m.Params, &ev)
		log.add(ev)
		switch ev.Event["type"] {
		case "done":
			leadDone = ev.Event
		case "subagent":
			inner, _ := ev.Event["event"].(map[string]any)
			if inner["type"] != "toolStarted" || inner["tool"] != "run_command" {
				break
			}
			running[ev.Event["taskId"].(string)] = true
			if len(running) < 2 {
				break
			}
			for len(sleeps) < 6 {
				if time.Now().After(deadline) {
					t.Fatalf("the commands' processes did not show up: %v", sleeps)
				}
				time.Sleep(20 * time.Millisecond)
				sleeps = sleepsUnder(p.cmd.Process.Pid, "34")
			}
			p.notify("$/cancelRequest", map[string]any{"id": id})
		}
	}
	if answer.Error == nil || answer.Error.Code != -32800 {
		t.Fatalf("the cancelled agent/run answered %s", answer.raw)
	}
	waitGone(t, sleeps, deadline)
	if leadDone["status"] != "cancelled" || log.typesOfAll[len(log.typesOfAll)-1] != "done" {
		t.Errorf("lead done %v, last events %v", leadDone, log.typesOfAll[max(0, len(log.typesOfAll)-3):])
	}
	for _, step := range []string{"one", "two"} {
		if f := log.finished[step]; f["status"] != "cancelled" {
			t.Errorf("%s finished %v", step, f)
		}
	}
	if len(log.skipped) != 1 || log.skipped[0]["step"] != "three" || len(log.merged) != 0 {
		t.Errorf("skipped %v merged %v", log.skipped, log.merged)
	}
}

// TestTeamPlanApproval: in default mode run_plan asks first, with the
// steps as the preview; a plan with an unknown role fails without asking,
// naming the five roles.
func TestTeamPlanApproval(t *testing.T) {
	root := gitRepo(t, map[string]string{"a.txt": "a\n"})
	bad := map[string]any{"steps": []any{map[string]any{"id": "x", "role": "wizard", "objective": "magic"}}}
	good := map[string]any{"steps": []any{map[string]any{"id": "look", "role": "research", "objective": "Look at a.txt."}}}
	lead, leadSrv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_plan", input: bad}}},
		{calls: []scriptedCall{{name: "run_plan", input: good}}},
		{text: "Looked."},
	})
	_, researchSrv := newRoleModel(t, "research", script(step{text: "a.txt holds a."}))
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	var asked []map[string]any
	var finished []map[string]any
	res := teamRun(t, p, map[string]any{"prompt": "look", "chatMode": "team", "provider": openaiProv(leadSrv.URL, "gpt-lead"),
		"roleProviders": []any{map[string]any{"role": "research", "provider": openaiProv(researchSrv.URL, "gpt-research")}}},
		func(ev agentEvent) {
			switch ev.Event["type"] {
			case "approvalRequested":
				asked = append(asked, ev.Event)
			case "toolFinished":
				finished = append(finished, ev.Event)
			}
		}, nil)
	var sum protocol.AgentSummary
	json.Unmarshal(res.Result, &sum)
	if res.Error != nil || sum.Status != "completed" {
		t.Fatalf("agent/run: %v %s", res.Error, res.Result)
	}
	if len(asked) != 1 || asked[0]["tool"] != "run_plan" || asked[0]["permission"] != "edit" ||
		!strings.HasPrefix(asked[0]["preview"].(string), "Run a plan of 1 step(s), at most 3 at a time") ||
		!strings.Contains(asked[0]["preview"].(string), "1. look (research, reads the working tree): Look at a.txt.") {
		t.Fatalf("approvals %v", asked)
	}
	if len(finished) != 2 || finished[0]["ok"] != false || !strings.Contains(fmt.Sprint(finished[0]["error"]), "the roles are research, implementation, testing, review, documentation") ||
		!strings.HasPrefix(fmt.Sprint(finished[0]["error"]), "invalid input: ") ||
		finished[1]["ok"] != true {
		t.Errorf("tool results %v", finished)
	}
	if second := mustJSON(lead.bodies()[1]); !strings.Contains(second, `unknown role \"wizard\"`) {
		t.Errorf("the model did not get the refusal: %.500s", second)
	}
}
