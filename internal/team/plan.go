package team

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Bounds of run_plan (protocol.md Team mode).
const (
	MaxPlanSteps       = 12
	DefaultMaxParallel = 3
	MaxParallelCap     = 8
	maxStepID          = 64
	maxObjective       = 20_000 // characters of an objective
	maxContext         = 50_000 // characters of a step's context
)

// Step statuses of a StepResult: the subagent's summary status, or
// skipped when the step never ran.
const (
	StepCompleted = task.StatusCompleted
	StepFailed    = task.StatusFailed
	StepCancelled = task.StatusCancelled
	StepSkipped   = "skipped"
)

// RoleLookup matches a role as a model wrote it: the canonical role name,
// whether the role writes (works in its own worktree), and false for an
// unknown role. RoleNames lists the roles for the error message.
type RoleLookup struct {
	Match func(name string) (role string, writes bool, ok bool)
	Names []string
}

// StepInput is one step of run_plan's input: { id, role, objective,
// context?, dependsOn? }. Models write ids as numbers too (1, [1, 2]) and
// a single dependency as a bare id; both are taken as the same strings.
type StepInput struct {
	ID        stepID   `json:"id" jsonschema:"Unique step id, used in dependsOn"`
	Role      string   `json:"role" jsonschema:"research, implementation, testing, review or documentation"`
	Objective string   `json:"objective" jsonschema:"What this step's subagent must do"`
	Context   string   `json:"context,omitempty" jsonschema:"Extra context for this step"`
	DependsOn stepDeps `json:"dependsOn,omitempty" jsonschema:"Ids of steps that must complete first; their reports are given to this step"`
}

// stepID is a step id given as a JSON string or a whole number.
type stepID string

func (id *stepID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*id = stepID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("a step id is a string, got %s", b)
	}
	if _, err := n.Int64(); err != nil {
		return fmt.Errorf("a step id is a string, got %s", b)
	}
	*id = stepID(n.String())
	return nil
}

// stepDeps is dependsOn: an array of ids, or one id.
type stepDeps []string

func (d *stepDeps) UnmarshalJSON(b []byte) error {
	var ids []stepID
	if err := json.Unmarshal(b, &ids); err != nil {
		var one stepID
		if err := json.Unmarshal(b, &one); err != nil {
			return fmt.Errorf("dependsOn is an array of step ids, got %s", b)
		}
		ids = []stepID{one}
	}
	*d = nil
	for _, id := range ids {
		*d = append(*d, string(id))
	}
	return nil
}

// PlanInput is run_plan's input: { steps, merge? } (merge defaults to
// true).
type PlanInput struct {
	Steps []StepInput `json:"steps"`
	Merge *bool       `json:"merge,omitempty" jsonschema:"Merge the writing steps into the working tree at the end (default true); false keeps their worktrees for worktree_apply"`
}

// PlanStep is a checked step: Role is the canonical role, Writes whether
// it works in its own worktree.
type PlanStep struct {
	ID        string
	Role      string
	Objective string
	Context   string
	DependsOn []string
	Writes    bool

	index int
	deps  []*PlanStep
}

// Plan is a checked run_plan input: steps in the order given, their
// dependency order, and whether writing steps merge at the end.
type Plan struct {
	Steps []*PlanStep
	Merge bool
	order []*PlanStep
}

// ParsePlan checks run_plan's input: 1 to 12 steps with unique ids, a
// known role each, an objective, and dependencies on other steps of the
// plan without a cycle. A refusal is a tool failure of kind invalidInput
// whose message starts "invalid input: " (the model sees it and can call
// again).
func ParsePlan(input json.RawMessage, roles RoleLookup) (*Plan, error) {
	p, err := parsePlan(input, roles)
	if te, ok := tool.AsError(err); ok && te.Kind == tool.ErrInvalidInput {
		// The model and the toolFinished event see only the message: it
		// says the kind, as protocol.md's "-32602-style invalidInput".
		return nil, tool.Errorf(tool.ErrInvalidInput, "invalid input: %s", te.Message)
	}
	return p, err
}

func parsePlan(input json.RawMessage, roles RoleLookup) (*Plan, error) {
	var in PlanInput
	dec := json.NewDecoder(bytes.NewReader(input))
	if err := dec.Decode(&in); err != nil {
		return nil, tool.Errorf(tool.ErrInvalidInput, "run_plan input: %v", err)
	}
	if len(in.Steps) < 1 || len(in.Steps) > MaxPlanSteps {
		return nil, tool.Errorf(tool.ErrInvalidInput, "steps: a plan has 1 to %d steps, got %d", MaxPlanSteps, len(in.Steps))
	}
	p := &Plan{Merge: in.Merge == nil || *in.Merge}
	byID := map[string]*PlanStep{}
	for i, s := range in.Steps {
		id := strings.TrimSpace(string(s.ID))
		switch {
		case id == "":
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].id is required", i)
		case utf8.RuneCountInString(id) > maxStepID || strings.ContainsFunc(id, isControl):
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].id must be at most %d characters without control characters", i, maxStepID)
		case byID[id] != nil:
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].id %q is used by an earlier step", i, id)
		}
		role, writes, ok := roles.Match(s.Role)
		if !ok {
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].role: unknown role %q; the roles are %s", i, s.Role, strings.Join(roles.Names, ", "))
		}
		obj := strings.TrimSpace(s.Objective)
		switch {
		case obj == "":
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].objective is required", i)
		case utf8.RuneCountInString(obj) > maxObjective:
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].objective is longer than %d characters", i, maxObjective)
		case utf8.RuneCountInString(s.Context) > maxContext:
			return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].context is longer than %d characters", i, maxContext)
		}
		st := &PlanStep{ID: id, Role: role, Objective: obj, Context: strings.TrimSpace(s.Context), Writes: writes, index: i}
		p.Steps = append(p.Steps, st)
		byID[id] = st
	}
	for i, s := range in.Steps {
		st := p.Steps[i]
		for _, d := range s.DependsOn {
			d = strings.TrimSpace(d)
			dep := byID[d]
			switch {
			case d == st.ID:
				return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].dependsOn: step %q depends on itself", i, d)
			case dep == nil:
				return nil, tool.Errorf(tool.ErrInvalidInput, "steps[%d].dependsOn: no step has the id %q", i, d)
			case slices.Contains(st.DependsOn, d):
				continue
			}
			st.DependsOn = append(st.DependsOn, d)
			st.deps = append(st.deps, dep)
		}
	}
	order, cycle := dependencyOrder(p.Steps)
	if cycle != nil {
		return nil, tool.Errorf(tool.ErrInvalidInput, "dependsOn: the steps %s form a cycle", strings.Join(cycle, " → "))
	}
	p.order = order
	return p, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// dependencyOrder sorts steps so that each comes after its dependencies,
// keeping the given order where the dependencies allow; on a cycle it
// returns the ids along one (the first id repeated at the end).
func dependencyOrder(steps []*PlanStep) ([]*PlanStep, []string) {
	done := make([]bool, len(steps))
	var order []*PlanStep
	for len(order) < len(steps) {
		progress := false
		for _, s := range steps {
			if done[s.index] {
				continue
			}
			ready := true
			for _, d := range s.deps {
				ready = ready && done[d.index]
			}
			if ready {
				done[s.index] = true
				order = append(order, s)
				progress = true
				break // restart from the first step: the given order wins ties
			}
		}
		if !progress {
			return nil, findCycle(steps, done)
		}
	}
	return order, nil
}

// findCycle walks dependencies from a step left over by dependencyOrder
// (every one of them lies on or leads to a cycle) until a step repeats.
func findCycle(steps []*PlanStep, done []bool) []string {
	var s *PlanStep
	for _, x := range steps {
		if !done[x.index] {
			s = x
			break
		}
	}
	seen := map[*PlanStep]int{}
	var path []*PlanStep
	for {
		if at, ok := seen[s]; ok {
			var ids []string
			for _, x := range path[at:] {
				ids = append(ids, x.ID)
			}
			return append(ids, s.ID)
		}
		seen[s] = len(path)
		path = append(path, s)
		for _, d := range s.deps {
			if !done[d.index] {
				s = d
				break
			}
		}
	}
}

// Order returns the steps in dependency order.
func (p *Plan) Order() []*PlanStep { return p.order }

// ancestors returns every step s depends on, directly or not, in
// dependency order.
func (p *Plan) ancestors(s *PlanStep) []*PlanStep {
	in := map[*PlanStep]bool{}
	var walk func(*PlanStep)
	walk = func(x *PlanStep) {
		for _, d := range x.deps {
			if !in[d] {
				in[d] = true
				walk(d)
			}
		}
	}
	walk(s)
	var out []*PlanStep
	for _, x := range p.order {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// Report is what a step hands its direct dependents: its role, status and
// final answer, and for a writing step the patch it made (a read-only
// dependent reads the main tree, where the patch is not merged yet).
type Report struct {
	Step   string
	Role   string
	Status string
	Text   string
	Writes bool
	Patch  string
}

// StepRun is one step to run: its direct dependencies' reports (in
// dependsOn order) and, for a writing step, the results of all its writing
// ancestors in dependency order, whose patches its worktree starts from.
type StepRun struct {
	Step    *PlanStep
	Reports []Report
	Base    []*StepResult
}

// StepResult is how one step ended, as the plan reports it. Handle is the
// step runner's own record of the subagent (its worktree), handed back to
// the merger and to the steps that start from its patch.
type StepResult struct {
	Step     string    `json:"step"`
	Role     string    `json:"role"`
	Status   string    `json:"status"`
	TaskID   string    `json:"taskId,omitempty"`
	Name     string    `json:"name,omitempty"`
	Report   string    `json:"report"`
	Error    string    `json:"error,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	Files    []string  `json:"files,omitempty"`
	// Merged is the merge of a writing step (nil when none was tried).
	Merged *MergeResult `json:"merged,omitempty"`
	// Kept is true when the step's worktree is left for worktree_apply or
	// worktree_discard (a conflict, merge: false, a failure).
	Kept bool `json:"kept,omitempty"`

	// HasWorktree is true while the step's worktree exists (a writing
	// step that got one and was not merged yet).
	HasWorktree bool   `json:"-"`
	Writes      bool   `json:"-"`
	Patch       string `json:"-"`
	Handle      any    `json:"-"`
}

// MergeResult is one writing step's merge into the working tree.
type MergeResult struct {
	OK    bool     `json:"ok"`
	Files []string `json:"files"`
	Error string   `json:"error,omitempty"`
}

// PlanOptions are the dependencies of RunPlan. Run runs one step (a
// subagent) to its end and must honour ctx; it is called on a goroutine of
// its own for each step. Merge merges a completed writing step into the
// working tree through the edit log. Emit receives the plan's own events
// (planStarted, stepSkipped, merged) from RunPlan's goroutine; the
// subagents' events come from the step goroutines, so an emitter they
// share must be safe for concurrent use.
type PlanOptions struct {
	MaxParallel int
	CallID      string
	Emit        func(protocol.AgentEvent)
	Run         func(ctx context.Context, run *StepRun) *StepResult
	Merge       func(ctx context.Context, res *StepResult) MergeResult
}

// PlanResult is how a plan ended: every step's result in the plan's order.
type PlanResult struct {
	Steps     []*StepResult `json:"steps"`
	Merge     bool          `json:"merge"`
	Cancelled bool          `json:"cancelled"`
}

// RunPlan runs the plan: a planStarted event, then every step whose
// dependencies completed, at most MaxParallel at a time (the given order
// first among those ready); a step whose dependency did not complete is
// skipped (stepSkipped) without running. When every step has ended and
// the plan asks for it, each completed writing step is merged in
// dependency order (merged per step); a step whose writing ancestor did
// not merge is not merged either (its patch was made on top of that one)
// and keeps its worktree. A cancelled ctx starts nothing more, skips what
// did not start, waits for the running steps to end and merges nothing.
func RunPlan(ctx context.Context, p *Plan, o PlanOptions) *PlanResult {
	maxPar := o.MaxParallel
	if maxPar <= 0 {
		maxPar = DefaultMaxParallel
	}
	maxPar = min(maxPar, MaxParallelCap)
	emit := o.Emit
	if emit == nil {
		emit = func(protocol.AgentEvent) {}
	}
	info := make([]protocol.PlanStep, len(p.Steps))
	for i, s := range p.Steps {
		info[i] = protocol.PlanStep{ID: s.ID, Role: s.Role, Objective: s.Objective, DependsOn: slices.Clone(s.DependsOn)}
	}
	emit(protocol.PlanStartedEvent{CallID: o.CallID, MaxParallel: maxPar, Steps: info})

	const (
		pending = iota
		running
		ended
	)
	n := len(p.Steps)
	state := make([]int, n)
	res := make([]*StepResult, n)
	doneCh := make(chan int)
	active := 0
	skip := func(s *PlanStep, reason string) {
		state[s.index] = ended
		res[s.index] = &StepResult{Step: s.ID, Role: s.Role, Status: StepSkipped, Reason: reason, Writes: s.Writes}
		emit(protocol.StepSkippedEvent{Step: s.ID, Reason: reason})
	}
	for {
		if ctx.Err() != nil {
			for _, s := range p.order {
				if state[s.index] == pending {
					skip(s, "the plan was cancelled")
				}
			}
		} else {
			for _, s := range p.order { // dependencies first: a skip reaches its dependents in one pass
				if state[s.index] != pending {
					continue
				}
				for _, d := range s.deps {
					if state[d.index] == ended && res[d.index].Status != StepCompleted {
						skip(s, fmt.Sprintf("its dependency %s %s", d.ID, verb(res[d.index].Status)))
						break
					}
				}
			}
			for _, s := range p.Steps {
				if active == maxPar {
					break
				}
				if state[s.index] != pending || !depsCompleted(s, state, res, ended) {
					continue
				}
				state[s.index] = running
				active++
				run := p.stepRun(s, res)
				go func() {
					r := o.Run(ctx, run)
					if r == nil {
						r = &StepResult{Status: StepFailed, Error: "the step returned no result"}
					}
					r.Step, r.Role, r.Writes = s.ID, s.Role, s.Writes
					if r.Status == "" {
						r.Status = StepFailed
					}
					res[s.index] = r
					doneCh <- s.index
				}()
			}
		}
		if active == 0 {
			break
		}
		i := <-doneCh
		state[i] = ended
		active--
	}

	out := &PlanResult{Steps: res, Merge: p.Merge, Cancelled: ctx.Err() != nil}
	for _, r := range res {
		r.Kept = r.Writes && r.HasWorktree && r.Status != StepSkipped
	}
	if !p.Merge || out.Cancelled || o.Merge == nil {
		return out
	}
	for _, s := range p.order {
		r := res[s.index]
		if !s.Writes || r.Status != StepCompleted {
			continue
		}
		if ctx.Err() != nil {
			out.Cancelled = true
			break
		}
		var m MergeResult
		if blocked := p.unmerged(s, res); blocked != "" {
			m = MergeResult{Files: []string{}, Error: fmt.Sprintf("not merged: it starts from the change of step %s, which did not merge", blocked)}
		} else {
			m = o.Merge(ctx, r)
			if m.Files == nil {
				m.Files = []string{}
			}
		}
		r.Merged = &m
		r.Kept = !m.OK && r.HasWorktree
		ev := protocol.MergedEvent{Step: s.ID, Name: r.Name, OK: m.OK, Files: m.Files}
		if !m.OK {
			msg := m.Error
			ev.Error = &msg
		}
		emit(ev)
	}
	return out
}

func verb(status string) string {
	switch status {
	case StepFailed:
		return "failed"
	case StepCancelled:
		return "was cancelled"
	case StepSkipped:
		return "was skipped"
	}
	return "did not complete (" + status + ")"
}

func depsCompleted(s *PlanStep, state []int, res []*StepResult, ended int) bool {
	for _, d := range s.deps {
		if state[d.index] != ended || res[d.index].Status != StepCompleted {
			return false
		}
	}
	return true
}

// stepRun is what step s starts with; every dependency has completed.
func (p *Plan) stepRun(s *PlanStep, res []*StepResult) *StepRun {
	run := &StepRun{Step: s}
	for _, d := range s.deps {
		r := res[d.index]
		run.Reports = append(run.Reports, Report{Step: d.ID, Role: d.Role, Status: r.Status, Text: r.Report, Writes: d.Writes, Patch: r.Patch})
	}
	if s.Writes {
		for _, a := range p.ancestors(s) {
			if a.Writes {
				run.Base = append(run.Base, res[a.index])
			}
		}
	}
	return run
}

// unmerged names the first writing ancestor of s that did not merge.
func (p *Plan) unmerged(s *PlanStep, res []*StepResult) string {
	for _, a := range p.ancestors(s) {
		if a.Writes && (res[a.index].Merged == nil || !res[a.index].Merged.OK) {
			return a.ID
		}
	}
	return ""
}

// maxReportInResult bounds each step's report in run_plan's text result.
const maxReportInResult = 6000

// Text is run_plan's result for the lead model: each step's outcome and
// report, the merges, and the worktrees kept for worktree_apply or
// worktree_discard.
func (r *PlanResult) Text() string {
	var b strings.Builder
	counts := map[string]int{}
	for _, s := range r.Steps {
		counts[s.Status]++
	}
	fmt.Fprintf(&b, "Plan of %d steps: %d completed, %d failed, %d cancelled, %d skipped.", len(r.Steps),
		counts[StepCompleted], counts[StepFailed], counts[StepCancelled], counts[StepSkipped])
	if r.Cancelled {
		b.WriteString(" The plan was cancelled; nothing was merged.")
	}
	b.WriteString("\n")
	var kept []string
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "\n## Step %s (%s): %s", s.Step, s.Role, s.Status)
		switch {
		case s.Status == StepSkipped:
			fmt.Fprintf(&b, ": %s", s.Reason)
		case s.Error != "":
			fmt.Fprintf(&b, ": %s", s.Error)
		}
		b.WriteString("\n")
		if s.Name != "" {
			fmt.Fprintf(&b, "Worktree: %s\n", s.Name)
		}
		if m := s.Merged; m != nil {
			if m.OK {
				fmt.Fprintf(&b, "Merged into the working tree (pending review): %s\n", filesOrNone(m.Files))
			} else {
				fmt.Fprintf(&b, "Not merged: %s\n", m.Error)
			}
		}
		if s.Kept {
			kept = append(kept, s.Name)
		}
		if len(s.Findings) > 0 {
			fmt.Fprintf(&b, "Findings: %d\n", len(s.Findings))
		}
		if s.Report != "" {
			b.WriteString(cutText(s.Report, maxReportInResult))
			b.WriteString("\n")
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(&b, "\nWorktrees kept: %s. Merge one with worktree_apply or remove it with worktree_discard.\n", strings.Join(kept, ", "))
	}
	return b.String()
}

func filesOrNone(files []string) string {
	if len(files) == 0 {
		return "no files changed"
	}
	return strings.Join(files, ", ")
}

// cutText keeps the first max characters of s and says how many were left out.
func cutText(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf("\n… %d characters cut …", len(r)-max)
}
