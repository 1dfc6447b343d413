package team

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/worktree"
)

// Runner runs the subagents of one front end session. Tasks and Main are
// required; Worktrees is nil when the workspace is not a git repository
// with a commit (a writing role then fails). Safe for concurrent use.
type Runner struct {
	Tasks *task.Runner
	// Main is the lead's project (the main tree).
	Main *project.Project
	// Worktrees makes the writing roles' worktrees.
	Worktrees *worktree.Manager
	// Tools is the full registry the roles' sets are cut from (nil:
	// Tasks.Tools).
	Tools *tool.Registry
	// Open opens the project of a worktree (nil: project.Open with
	// ProjectOptions).
	Open func(ctx context.Context, root string) (*project.Project, error)
	// ProjectOptions are given to project.Open for a worktree when Open is
	// nil (DataDir is cleared: a worktree's edit log lives in memory, its
	// commit is the record).
	ProjectOptions *project.Options
	// Env is the tools' environment of a task on p (nil: p.Env with the
	// sandbox on). The front end adds its Secrets.
	Env func(p *project.Project) *tool.Env
	// Hooks gives the hook runner of a subagent working in root (its
	// worktree or the main tree) when its Spec has none; nil: no hooks.
	Hooks  func(root string) *hooks.Runner
	Logger *slog.Logger

	mu      sync.Mutex
	running map[string]context.CancelFunc
}

// Spec is one subagent to run.
type Spec struct {
	Role Role
	// Objective is the subagent's prompt; Context (the reports of the
	// steps it depends on, ...) follows it.
	Objective string
	Context   string
	// Step is the plan step id ("" outside a plan).
	Step string
	// Name is the worktree name (and the subagent's name in events); ""
	// makes one from the role.
	Name string
	// Base is the commit of the worktree ("" is the main tree's HEAD);
	// Seed names worktrees whose own changes are committed into it first
	// (the writing ancestors of a plan step, in dependency order).
	Base string
	Seed []string
	// Engine runs the task (a agent.Engine with the role's provider);
	// Kind and Model name that provider in events.
	Engine      task.Engine
	Kind, Model string
	// Candidate is the provider's index in agent/bestOf's providers (nil
	// elsewhere), sent in subagentStarted.
	Candidate *int
	// Policy is the lead's policy (a read-only role runs it in readOnly
	// mode).
	Policy policy.Policy
	// Editor is the lead's editor context (main-tree paths; moved into the
	// worktree for a writing role).
	Editor  *task.Editor
	Approve task.Approver
	Hooks   *hooks.Runner
	// Emit receives subagentStarted, the wrapped events and
	// subagentFinished (the lead's emitter).
	Emit func(protocol.AgentEvent)
}

// Result is a finished subagent.
type Result struct {
	Name   string
	TaskID string
	Role   Role
	Step   string
	// Status is completed, failed or cancelled; Error is set unless
	// completed.
	Status string
	Error  *string
	// Report is the subagent's final answer.
	Report string
	// Dir is the worktree folder ("" for a read-only role).
	Dir string
	// Summary is the subagent task's summary (zero when it never ran).
	Summary task.Summary
	// Change is the worktree's own committed change.
	Change         worktree.Change
	CostUSD        float64
	UnpricedTokens int
	Tokens         int
	// Findings are a review report's task-x-findings (ParseFindings).
	Findings []Finding
}

// Cancel stops the running subagent taskID and its command trees; false
// when this runner runs no such subagent.
func (r *Runner) Cancel(taskID string) bool {
	r.mu.Lock()
	cancel := r.running[taskID]
	r.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// Running reports whether the subagent taskID runs.
func (r *Runner) Running(taskID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[taskID] != nil
}

// Idle reports whether no subagent of this runner runs.
func (r *Runner) Idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running) == 0
}

func (r *Runner) track(taskID string, cancel context.CancelFunc) {
	r.mu.Lock()
	if r.running == nil {
		r.running = map[string]context.CancelFunc{}
	}
	r.running[taskID] = cancel
	r.mu.Unlock()
}

func (r *Runner) untrack(taskID string) {
	r.mu.Lock()
	delete(r.running, taskID)
	r.mu.Unlock()
}

func (r *Runner) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

func (r *Runner) openProject(ctx context.Context, root string) (*project.Project, error) {
	if r.Open != nil {
		return r.Open(ctx, root)
	}
	var o project.Options
	if r.ProjectOptions != nil {
		o = *r.ProjectOptions
	}
	o.DataDir = ""
	o.Progress = nil
	return project.Open(ctx, root, &o)
}

func (r *Runner) env(p *project.Project) *tool.Env {
	if r.Env != nil {
		return r.Env(p)
	}
	return p.Env(true, "")
}

// Run runs one subagent to its end (see the package doc). It never
// returns an error: a subagent that cannot start (no worktree, a seed
// that does not apply) is a failed Result, reported by subagentStarted and
// subagentFinished like any other.
func (r *Runner) Run(ctx context.Context, s Spec) Result {
	emit := s.Emit
	if emit == nil {
		emit = func(protocol.AgentEvent) {}
	}
	name := s.Name
	if name == "" {
		name = worktree.NewName(string(s.Role))
	}
	res := Result{Name: name, TaskID: task.NewID(), Role: s.Role, Step: s.Step, Status: "failed"}
	var step *string
	if s.Step != "" {
		step = &s.Step
	}
	started := false
	start := func() {
		if started {
			return
		}
		started = true
		var dir *string
		if res.Dir != "" {
			d := res.Dir
			dir = &d
		}
		emit(protocol.SubagentStartedEvent{Name: name, TaskID: res.TaskID, Role: string(s.Role),
			Objective: s.Objective, Kind: s.Kind, Model: s.Model, Dir: dir, Step: step, Candidate: s.Candidate})
	}
	defer func() {
		start()
		var wt *string
		if res.Dir != "" {
			d := res.Dir
			wt = &d
		}
		emit(protocol.SubagentFinishedEvent{Name: name, TaskID: res.TaskID, Role: string(s.Role),
			Status: protocol.TaskStatus(res.Status), Error: res.Error, CostUSD: res.CostUSD, UnpricedTokens: res.UnpricedTokens, Tokens: res.Tokens,
			Files: len(res.Change.Files), Added: res.Change.Added, Removed: res.Change.Removed, Worktree: wt, Findings: res.Findings})
	}()
	fail := func(err error) Result {
		msg := err.Error()
		res.Status, res.Error = "failed", &msg
		return res
	}
	if s.Engine == nil || r.Tasks == nil || r.Main == nil {
		return fail(errors.New("team: the subagent has no engine or project"))
	}
	if _, err := ParseRole(string(s.Role)); err != nil {
		return fail(err)
	}

	proj := r.Main
	editor := s.Editor
	pol := s.Policy
	if s.Role.Writes() {
		if r.Worktrees == nil {
			return fail(errors.New("a writing subagent needs a git repository with a commit"))
		}
		w, err := r.Worktrees.Create(ctx, name, &worktree.CreateOptions{Base: s.Base, TaskID: res.TaskID, Role: string(s.Role)})
		if err != nil {
			return fail(err)
		}
		res.Dir = w.Dir
		if len(s.Seed) > 0 {
			if err := r.Worktrees.Seed(ctx, name, s.Seed); err != nil {
				return fail(err)
			}
		}
		if proj, err = r.openProject(ctx, w.Dir); err != nil {
			return fail(fmt.Errorf("opening the worktree: %w", err))
		}
		editor = rebaseEditor(editor, r.Main.Root(), proj.Root())
	} else {
		pol.Mode = policy.ModeReadOnly
	}
	prompt := s.Objective
	if c := strings.TrimSpace(s.Context); c != "" {
		prompt += "\n\n" + c
	}
	tools := r.Tools
	if tools == nil {
		tools = r.Tasks.Tools
	}
	env := r.env(proj)
	hk := s.Hooks
	if hk == nil && r.Hooks != nil {
		hk = r.Hooks(proj.Root())
	}
	prep, err := r.Tasks.Prepare(&task.Request{
		TaskID: res.TaskID, Prompt: prompt, ChatMode: policy.ChatAgent, Policy: pol, Editor: editor, Model: s.Model,
		Project: proj, Env: env, Approve: s.Approve, Hooks: hk,
		Engine: &roleEngine{inner: s.Engine, role: s.Role, tools: s.Role.Tools(tools)},
		Emit: func(ev protocol.AgentEvent) {
			emit(protocol.SubagentEvent{Name: name, TaskID: res.TaskID, Event: ev})
		},
	})
	if err != nil {
		return fail(err)
	}
	// Tracked before subagentStarted goes out: a client that answers that
	// event with agent/cancelSubagent at once finds it.
	sctx, cancel := context.WithCancel(ctx)
	r.track(res.TaskID, cancel)
	start()
	sum, err := r.Tasks.Run(sctx, prep)
	r.untrack(res.TaskID)
	cancel()
	if err != nil {
		return fail(err)
	}
	res.Summary = sum
	res.Status = string(sum.Status)
	res.Error = sum.Error
	res.Report = sum.Text
	res.CostUSD = sum.Metrics.CostUSD
	res.UnpricedTokens = sum.Metrics.UnpricedTokens
	res.Tokens = sum.Usage.InputTokens + sum.Usage.OutputTokens
	if s.Role.Writes() {
		c, err := r.Worktrees.Commit(context.WithoutCancel(ctx), name, fmt.Sprintf("task-x: %s (%s)", s.Role, res.TaskID))
		if err != nil {
			r.log().Warn("team: committing a subagent's worktree failed", "name", name, "err", err)
			if res.Status == "completed" {
				msg := err.Error()
				res.Status, res.Error = "failed", &msg
			}
		}
		res.Change = c
	}
	if s.Role == Review {
		res.Findings = ParseFindings(res.Report)
	}
	return res
}

// roleEngine runs the inner engine with the role's instructions before the
// project context and the role's tools.
type roleEngine struct {
	inner task.Engine
	role  Role
	tools *tool.Registry
}

func (e *roleEngine) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	job.System = e.role.SystemPrompt() + "\n\n" + job.System
	job.Tools = e.tools
	return e.inner.Run(ctx, job)
}

// rebaseEditor moves the editor's absolute paths under from to to
// (relative paths stay: they are taken from the worktree's root).
func rebaseEditor(e *task.Editor, from, to string) *task.Editor {
	if e == nil {
		return nil
	}
	mv := func(p string) string {
		if !filepath.IsAbs(p) {
			return p
		}
		rel, err := filepath.Rel(from, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return p
		}
		return filepath.Join(to, rel)
	}
	cp := *e
	cp.ActiveFile = mv(e.ActiveFile)
	cp.OpenFiles = nil
	for _, p := range e.OpenFiles {
		cp.OpenFiles = append(cp.OpenFiles, mv(p))
	}
	cp.Mentions = nil
	for _, p := range e.Mentions {
		cp.Mentions = append(cp.Mentions, mv(p))
	}
	if e.Selection != nil {
		sel := *e.Selection
		sel.Path = mv(sel.Path)
		cp.Selection = &sel
	}
	if e.Diagnostics != nil {
		cp.Diagnostics = append(cp.Diagnostics[:0:0], e.Diagnostics...)
		for i := range cp.Diagnostics {
			cp.Diagnostics[i].Path = mv(cp.Diagnostics[i].Path)
		}
	}
	return &cp
}
