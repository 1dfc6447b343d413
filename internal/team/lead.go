package team

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/worktree"
)

// NoRepoWarning is the warning of a team-mode task on a workspace that is
// not a git repository with a commit (protocol.md Team mode).
const NoRepoWarning = "team mode needs a git repository with a commit; the task runs as one agent"

// RoleEngine is the engine of a role's subagents and the kind and model
// of its provider (roleProviders, else the lead's).
type RoleEngine func(role Role) (engine task.Engine, kind, model string)

// Lead is team mode as an engine of the task layer: the lead agent is a
// normal task whose engine (Inner, the agent loop) gets the team tools
// run_subagent, run_plan, worktree_apply and worktree_discard on top of
// the task's registry. The front end builds one per team-mode agent/run.
//
// Without a git repository with a commit (Subagents.Worktrees nil, or a
// repository with no commit) Run emits a warning and runs Inner as one
// agent in agent mode. Otherwise the subagents' spend is added to the
// summary's metrics and the review findings to its findings.
type Lead struct {
	Inner task.Engine
	// Subagents runs the subagents (the front end's session runner).
	Subagents *Runner
	// Engines gives each role's engine.
	Engines RoleEngine
	// MaxParallel bounds a plan's running steps (limits.maxParallel,
	// 0: DefaultMaxParallel).
	MaxParallel int
	// Editor is the lead's editor context, handed to subagents.
	Editor *task.Editor
}

// Available reports whether team mode can run: a worktree manager on a
// repository with a commit.
func (l *Lead) Available(ctx context.Context) bool {
	if l.Subagents == nil || l.Subagents.Worktrees == nil {
		return false
	}
	_, err := l.Subagents.Worktrees.Head(ctx)
	return err == nil
}

// Run runs the lead task (task.Engine).
func (l *Lead) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	if !l.Available(ctx) {
		job.Emit(protocol.WarningEvent{Message: NoRepoWarning})
		job.ChatMode = policy.ChatAgent
		return l.Inner.Run(ctx, job)
	}
	s := &session{lead: l, job: job, findings: []Finding{}}
	var mu sync.Mutex
	emit := job.Emit
	// The lead's loop and every subagent emit into one stream: one at a
	// time, in the order they happen.
	job.Emit = func(ev protocol.AgentEvent) {
		mu.Lock()
		defer mu.Unlock()
		emit(ev)
	}
	s.emit = job.Emit
	base := job.Tools
	if base == nil {
		base = tool.NewRegistry()
	}
	job.Tools = base.With(&runSubagentTool{s}, &runPlanTool{s}, &worktreeApplyTool{s}, &worktreeDiscardTool{s})
	sum, msgs := l.Inner.Run(ctx, job)
	if sum.Metrics == nil {
		sum.Metrics = &task.Metrics{}
	}
	s.tally.Apply(sum.Metrics)
	s.mu.Lock()
	f := append([]Finding{}, s.findings...)
	s.mu.Unlock()
	sum.Findings = &f
	return sum, msgs
}

// session is one lead task's team state.
type session struct {
	lead  *Lead
	job   *task.Job
	emit  func(protocol.AgentEvent)
	tally Tally

	mu       sync.Mutex
	findings []Finding
	seen     map[Finding]bool
}

func (s *session) worktrees() *worktree.Manager { return s.lead.Subagents.Worktrees }

// spec is the Spec of a subagent of this lead.
func (s *session) spec(role Role, objective, context, step string, seed []string) Spec {
	engine, kind, model := s.lead.Engines(role)
	return Spec{Role: role, Objective: objective, Context: context, Step: step, Seed: seed,
		Engine: engine, Kind: kind, Model: model, Policy: s.job.Policy, Editor: s.lead.Editor,
		Approve: s.job.Approve, Emit: s.emit} // Hooks: the runner's, for the subagent's own root
}

// ran counts a finished subagent: its spend and its findings.
func (s *session) ran(res Result) {
	s.tally.Add(Spend{CostUSD: res.CostUSD, UnpricedTokens: res.UnpricedTokens, Tokens: res.Tokens})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[Finding]bool{}
	}
	for _, f := range res.Findings {
		if !s.seen[f] && len(s.findings) < MaxFindings {
			s.seen[f] = true
			s.findings = append(s.findings, f)
		}
	}
}

// dropEmpty discards the worktree of a writing subagent that changed
// nothing: there is nothing to apply, so nothing to keep.
func (s *session) dropEmpty(ctx context.Context, res Result) bool {
	if res.Dir == "" || len(res.Change.Files) > 0 {
		return false
	}
	if err := s.worktrees().Discard(context.WithoutCancel(ctx), res.Name); err != nil {
		s.job.Logger.Warn("team: discarding an empty worktree failed", "name", res.Name, "err", err)
		return false
	}
	return true
}

// apply merges worktree name into the main tree through the edit log (one
// operation of the lead task, pending review) and, once it applied,
// removes the worktree: its change is in the edit log now (edits/undo
// takes it back). A conflict writes nothing and keeps the worktree.
func (s *session) apply(ctx context.Context, name string) (worktree.ApplyResult, []tool.FileChange, error) {
	res, err := s.worktrees().Apply(ctx, name, s.job.Project.Edits(), s.job.TaskID)
	if err == nil && !res.Applied && res.Error == nil && len(res.Conflicts) == 0 {
		res.Applied = true // no change of its own: nothing to write, nothing to keep
	}
	if err != nil || !res.Applied {
		return res, nil, err
	}
	var changes []tool.FileChange
	if res.Operation != nil {
		changes = s.operationChanges(*res.Operation)
	}
	if err := s.worktrees().Discard(context.WithoutCancel(ctx), name); err != nil {
		s.job.Logger.Warn("team: removing an applied worktree failed", "name", name, "err", err)
	}
	return res, changes, nil
}

// operationChanges are the files of edit-log operation id as the agent
// reports changes (fileChanged events, the summary's changedFiles).
func (s *session) operationChanges(id string) []tool.FileChange {
	for _, op := range s.job.Project.Edits().List() {
		if op.ID != id {
			continue
		}
		out := make([]tool.FileChange, 0, len(op.Files))
		for i := range op.Files {
			f := &op.Files[i]
			out = append(out, tool.FileChange{Path: f.Path, Kind: protocol.FileChangeKind(f.Kind()), Added: f.Added, Removed: f.Removed})
		}
		return out
	}
	return nil
}

// roleLookup is ParseRole for ParsePlan.
var roleLookup = RoleLookup{
	Match: func(name string) (string, bool, bool) {
		r, err := ParseRole(name)
		if err != nil {
			return "", false, false
		}
		return string(r), r.Writes(), true
	},
	Names: func() []string {
		var out []string
		for _, r := range Roles() {
			out = append(out, string(r))
		}
		return out
	}(),
}

// maxPatchInContext bounds a dependency's patch in a read-only step's
// prompt.
const maxPatchInContext = 20_000

// stepContext is the text after a step's objective: its own context, the
// reports of its direct dependencies (with the patch of a writing one for
// a read-only step, which reads the main tree where nothing is merged
// yet), and for a writing step the ancestors whose changes its worktree
// already holds.
func stepContext(run *StepRun) string {
	var b strings.Builder
	if run.Step.Context != "" {
		b.WriteString(run.Step.Context)
		b.WriteString("\n\n")
	}
	if len(run.Reports) > 0 {
		b.WriteString("Reports of the steps this one depends on:\n")
		for _, r := range run.Reports {
			fmt.Fprintf(&b, "\n### Step %s (%s): %s\n%s\n", r.Step, r.Role, r.Status, strings.TrimSpace(r.Text))
			if r.Writes && r.Patch != "" && !run.Step.Writes {
				fmt.Fprintf(&b, "\nIts change, not merged into the working tree yet (read the files with this change in mind):\n```diff\n%s\n```\n",
					cutText(strings.TrimRight(r.Patch, "\n"), maxPatchInContext))
			}
		}
	}
	if len(run.Base) > 0 {
		var ids []string
		for _, r := range run.Base {
			ids = append(ids, r.Step)
		}
		fmt.Fprintf(&b, "\nYour worktree already holds the committed changes of step(s) %s; build on them.\n", strings.Join(ids, ", "))
	}
	return strings.TrimSpace(b.String())
}

// stepResult is a finished subagent as a plan step result.
func stepResult(res Result) *StepResult {
	r := &StepResult{Status: res.Status, TaskID: res.TaskID, Name: res.Name, Report: res.Report,
		Findings: res.Findings, Patch: res.Change.Patch, Handle: res, HasWorktree: res.Dir != ""}
	if res.Error != nil {
		r.Error = *res.Error
	}
	for _, f := range res.Change.Files {
		r.Files = append(r.Files, f.Path)
	}
	return r
}

// runPlan runs a checked plan with this lead's subagents.
func (s *session) runPlan(ctx context.Context, p *Plan, callID string) (*PlanResult, []tool.FileChange, []string) {
	var mu sync.Mutex
	var changes []tool.FileChange
	var ops []string
	res := RunPlan(ctx, p, PlanOptions{
		MaxParallel: s.lead.MaxParallel,
		CallID:      callID,
		Emit:        s.emit,
		Run: func(ctx context.Context, run *StepRun) *StepResult {
			var seed []string
			for _, b := range run.Base {
				seed = append(seed, b.Name)
			}
			sub := s.lead.Subagents.Run(ctx, s.spec(Role(run.Step.Role), run.Step.Objective, stepContext(run), run.Step.ID, seed))
			s.ran(sub)
			return stepResult(sub)
		},
		Merge: func(ctx context.Context, r *StepResult) MergeResult {
			if !r.HasWorktree {
				return MergeResult{Error: "the step has no worktree"}
			}
			ar, ch, err := s.apply(ctx, r.Name)
			switch {
			case err != nil:
				return MergeResult{Error: err.Error()}
			case !ar.Applied:
				msg := "the change does not apply to the working tree"
				if ar.Error != nil {
					msg = *ar.Error
				}
				return MergeResult{Error: msg}
			}
			mu.Lock()
			changes = append(changes, ch...)
			if ar.Operation != nil {
				ops = append(ops, *ar.Operation)
			}
			mu.Unlock()
			r.HasWorktree = false
			return MergeResult{OK: true, Files: ar.Changed}
		},
	})
	// A writing step that changed nothing leaves nothing to apply.
	for _, r := range res.Steps {
		if sub, ok := r.Handle.(Result); ok && r.HasWorktree && s.dropEmpty(ctx, sub) {
			r.HasWorktree, r.Kept = false, false
		}
	}
	return res, changes, ops
}
