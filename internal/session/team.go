package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/store"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/team"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/worktree"
)

// teamState is the team layer of the open project: its worktree manager
// (nil when the workspace is no git repository) and the subagent runner
// that agent/bestOf and team mode share (so agent/cancelSubagent reaches
// every subagent).
type teamState struct {
	mu      sync.Mutex
	proj    *project.Project
	mgr     *worktree.Manager
	mgrErr  error
	runner  *team.Runner
	exclude []string // workspace/open exclude, for the worktrees' projects
}

// worktreeManager is the open project's worktree manager;
// worktree.ErrNoRepo when the workspace is not a git repository.
func (s *Session) worktreeManager(proj *project.Project) (*worktree.Manager, error) {
	s.teamFor(proj)
	s.team.mu.Lock()
	defer s.team.mu.Unlock()
	return s.team.mgr, s.team.mgrErr
}

// teamRunner is the subagent runner of proj (made on first use per open
// project).
func (s *Session) teamRunner(proj *project.Project) *team.Runner {
	return s.teamFor(proj)
}

func (s *Session) teamFor(proj *project.Project) *team.Runner {
	s.mu.Lock()
	dataDir := s.dataDir
	s.mu.Unlock()
	t := &s.team
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proj == proj && t.runner != nil && t.mgrErr == nil {
		return t.runner
	}
	if t.proj == proj && t.runner != nil && !t.runner.Idle() {
		return t.runner // agent/cancelSubagent must reach its subagents
	}
	mgr, err := worktree.Open(proj.Root(), &worktree.Options{DataDir: dataDir, Logger: s.log})
	if t.proj == proj && t.runner != nil && err != nil {
		// Still no repository to make worktrees in: the same runner (and
		// its error); a later call looks again, so a `git init` and a
		// first commit made since are found without a restart.
		return t.runner
	}
	t.proj = proj
	t.mgr, t.mgrErr = mgr, err
	if t.mgrErr != nil {
		mgr = nil
	}
	t.runner = &team.Runner{
		Tasks:     s.runner,
		Main:      proj,
		Worktrees: mgr,
		Tools:     s.tools,
		ProjectOptions: &project.Options{Exclude: t.exclude, Home: s.opts.Home, Logger: s.log,
			Redact: s.secrets.Redact},
		// Subagents ask no questions (ask_user is for top-level tasks).
		Env: func(p *project.Project) *tool.Env {
			env := s.toolEnv(p, "")
			env.Ask = nil
			return env
		},
		Hooks:  func(root string) *hooks.Runner { return s.hookRunner(root, s.sandboxOn()) },
		Logger: s.log,
	}
	return t.runner
}

// BestOfRequest is agent/bestOf as a front end decoded it (with the loop's
// limits, prices and validation).
type BestOfRequest struct {
	Prompt    string            `json:"prompt"`
	Providers []json.RawMessage `json:"providers"`
	TaskID    string            `json:"taskId"`
	Policy    json.RawMessage   `json:"policy"`
	Editor    json.RawMessage   `json:"editor"`
	LoopParams
}

// BestOf is agent/bestOf: the candidates run with the team layer
// (team.Runner.BestOf), each in a worktree; it answers { taskId,
// candidates, costUsd } as JSON with the keys redacted. agent/event
// notifications (the candidates' wrapped events, bestOfDone) carry the
// best-of task id.
func (s *Session) BestOf(ctx context.Context, p *BestOfRequest) (json.RawMessage, error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, Invalid("prompt is required")
	}
	if !utf8.ValidString(p.Prompt) {
		return nil, Invalid("prompt is not valid UTF-8")
	}
	if len(p.Providers) < 2 || len(p.Providers) > 4 {
		return nil, Invalid("providers must hold 2 to 4 ProviderConfigs, got %d", len(p.Providers))
	}
	if p.TaskID != "" && !store.ValidID(p.TaskID) {
		return nil, Invalid("taskId %q is not a valid task id", p.TaskID)
	}
	editor, err := task.ParseEditor(p.Editor)
	if err != nil {
		return nil, err
	}
	pol, err := policy.Parse(p.Policy)
	if err != nil {
		return nil, Invalid("%v", err) // policy errors name the field
	}
	loop, err := s.parseLoop(&p.LoopParams)
	if err != nil {
		return nil, err
	}
	var contenders []team.Contender
	for i, raw := range p.Providers {
		prov, err := s.parseProvider(raw)
		if err != nil {
			return nil, fieldPrefix(err, fmt.Sprintf("providers[%d].", i))
		}
		cfg := prov.Config()
		contenders = append(contenders, team.Contender{Kind: string(cfg.Kind), Model: cfg.Model,
			Engine: s.agentEngine(prov, loop, candidate)})
	}
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	runner := s.teamRunner(proj)
	if _, err := s.worktreeManager(proj); err != nil {
		return nil, Invalid("agent/bestOf needs the workspace to be a git repository with a commit: %v", err)
	}
	if _, err := runner.Worktrees.Head(ctx); err != nil {
		return nil, Invalid("agent/bestOf needs the workspace to be a git repository with a commit: %v", err)
	}
	if editor != nil {
		// Check the editor's mentions against the main tree now (-32602),
		// before anything runs.
		if _, err := s.runner.Prepare(&task.Request{Prompt: p.Prompt, Editor: editor, Project: proj, Engine: contenders[0].Engine}); err != nil {
			return nil, err
		}
	}
	taskID := p.TaskID
	if taskID == "" {
		taskID = task.NewID()
	}
	send := s.teamEmitter(ctx, taskID)
	emit := func(ev protocol.AgentEvent) { send(ev, nil) }
	detach(ctx)
	out, err := runner.BestOf(ctx, team.BestOfRequest{TaskID: taskID, Prompt: p.Prompt, Contenders: contenders,
		Policy: pol, Editor: editor, Approve: s.approver(), Hooks: s.hookRunner(proj.Root(), s.sandboxOn()), Emit: emit})
	if err != nil {
		return nil, err
	}
	return s.secrets.RedactJSON(mustJSON(out)), nil
}

// teamEmitter sends a lead's events as agent/event of taskID, keys
// redacted (a recorded event's JSON, raw, is sent as recorded); a
// subagent's text deltas are redacted across pieces per subagent, as a
// top-level task's are. Safe for concurrent use (the subagents run at
// once).
func (s *Session) teamEmitter(ctx context.Context, taskID string) func(protocol.AgentEvent, json.RawMessage) {
	var mu sync.Mutex
	lead := newDeltaRedactor(s.secrets)
	subs := map[string]*deltaRedactor{}
	return func(ev protocol.AgentEvent, raw json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		var out []json.RawMessage
		if se, ok := ev.(protocol.SubagentEvent); ok {
			d := subs[se.TaskID]
			if d == nil {
				d = newDeltaRedactor(s.secrets)
				subs[se.TaskID] = d
			}
			own := se.Event
			inners := d.events(own)
			for i, inner := range inners {
				if i == len(inners)-1 && raw != nil && !isStreamed(own) {
					out = append(out, raw) // the subagent event itself, unchanged
					continue
				}
				se.Event = inner
				out = append(out, s.secrets.RedactJSON(mustJSON(se)))
			}
			if _, done := own.(protocol.DoneEvent); done {
				delete(subs, se.TaskID)
			}
		} else {
			out = lead.encoded(ev, raw)
		}
		for _, e := range out {
			s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: taskID, Event: protocol.RawEvent(e)})
		}
	}
}

// worktree is the manager and project of a worktrees/* call on name.
func (s *Session) worktree(name string) (*worktree.Manager, *project.Project, error) {
	if !worktree.ValidName(name) {
		return nil, nil, Invalid("name %q is not a task-x worktree name", name)
	}
	proj, err := s.project()
	if err != nil {
		return nil, nil, err
	}
	mgr, err := s.worktreeManager(proj)
	if err != nil {
		return nil, nil, Invalid("no task-x worktree %q: %v", name, err)
	}
	return mgr, proj, nil
}

// ApplyWorktree is worktrees/apply: { applied, files, changed, operation }
// (+ conflicts, error when it did not apply). The change goes through the
// edit log: pending review, undoable with edits/undo. A conflict writes
// nothing and keeps the worktree.
func (s *Session) ApplyWorktree(ctx context.Context, name string) (worktree.ApplyResult, error) {
	mgr, proj, err := s.worktree(name)
	if err != nil {
		return worktree.ApplyResult{}, err
	}
	res, err := mgr.Apply(ctx, name, proj.Edits(), "")
	if errors.Is(err, worktree.ErrUnknown) {
		return worktree.ApplyResult{}, Invalid("no task-x worktree %q", name)
	}
	if err != nil {
		return worktree.ApplyResult{}, err
	}
	proj.Changed(ctx, res.Changed)
	return res, nil
}

// DiscardWorktree is worktrees/discard: the worktree, its branch and its
// git admin folder are removed; false for a name the runtime does not
// know.
func (s *Session) DiscardWorktree(ctx context.Context, name string) (bool, error) {
	mgr, _, err := s.worktree(name)
	if err != nil {
		return false, err
	}
	err = mgr.Discard(context.WithoutCancel(ctx), name)
	if errors.Is(err, worktree.ErrUnknown) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// Worktrees is worktrees/list, oldest first: every task-x worktree of the
// workspace's repository, those an earlier runtime left included.
func (s *Session) Worktrees() ([]protocol.WorktreeInfo, error) {
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	out := []protocol.WorktreeInfo{}
	mgr, err := s.worktreeManager(proj)
	if err != nil {
		return out, nil
	}
	list, err := mgr.List()
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		out = append(out, protocol.WorktreeInfo{Name: w.Name, Dir: w.Dir, Branch: w.Branch, Base: w.Base, Head: w.Head,
			Role: w.Role, TaskID: w.TaskID, CreatedAt: w.CreatedAt.Format("2006-01-02T15:04:05.000Z07:00")})
	}
	return out, nil
}
