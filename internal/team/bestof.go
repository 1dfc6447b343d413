package team

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// PatchLimit is the most characters of a best-of candidate's patch
// (protocol.md "Best of N").
const PatchLimit = 60000

// Contender is one provider of a best-of run: its engine and the
// provider's kind and model.
type Contender struct {
	Engine      task.Engine
	Kind, Model string
}

// BestOfRequest is agent/bestOf as the front end decoded it.
type BestOfRequest struct {
	// TaskID is the best-of run's id ("" makes one).
	TaskID     string
	Prompt     string
	Contenders []Contender
	Policy     policy.Policy
	Editor     *task.Editor
	Approve    task.Approver
	Hooks      *hooks.Runner
	// Emit receives the subagents' events and bestOfDone.
	Emit func(protocol.AgentEvent)
}

// BestOfResult is agent/bestOf's answer: { taskId, candidates, costUsd }
// (costUsd sums every candidate's, failed ones included); a candidate is a
// protocol.FinishedCandidate, or a protocol.FailedCandidate (name null,
// the five members of protocol.md) whose worktree is gone.
type BestOfResult = protocol.BestOfResult

// BestOf runs req.Prompt as an implementation subagent on every
// contender at once, each in its own worktree, and merges nothing: the
// client applies one candidate (worktrees/apply) and discards the others.
// A candidate whose subagent did not complete is failed and its worktree
// discarded. When ctx ends first every worktree is discarded and ctx's
// error returned.
func (r *Runner) BestOf(ctx context.Context, req BestOfRequest) (BestOfResult, error) {
	out := BestOfResult{TaskID: req.TaskID, Candidates: make([]protocol.Candidate, len(req.Contenders))}
	if out.TaskID == "" {
		out.TaskID = task.NewID()
	}
	results := make([]Result, len(req.Contenders))
	var wg sync.WaitGroup
	for i, c := range req.Contenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.Run(ctx, Spec{Role: Implementation, Objective: req.Prompt, Engine: c.Engine, Kind: c.Kind, Model: c.Model, Candidate: &i,
				Policy: req.Policy, Editor: req.Editor, Approve: req.Approve, Hooks: req.Hooks, Emit: req.Emit})
		}()
	}
	wg.Wait()
	cleanup := context.WithoutCancel(ctx)
	done := protocol.BestOfDoneEvent{TaskID: out.TaskID, Candidates: []protocol.CandidateSummary{}}
	for i, res := range results {
		c := req.Contenders[i]
		out.CostUSD += res.CostUSD
		if res.Status != task.StatusCompleted || ctx.Err() != nil {
			if res.Dir != "" && r.Worktrees != nil {
				if err := r.Worktrees.Discard(cleanup, res.Name); err != nil {
					r.log().Warn("team: discarding a failed candidate's worktree", "name", res.Name, "err", err)
				}
			}
			msg := res.Error
			if msg == nil {
				m := "the candidate did not complete"
				msg = &m
			}
			out.Candidates[i] = protocol.FailedCandidate{Kind: c.Kind, Model: c.Model, Status: protocol.TaskFailed, Error: msg}
			done.Candidates = append(done.Candidates, protocol.CandidateSummary{Kind: c.Kind, Model: c.Model, Status: protocol.TaskFailed})
			continue
		}
		name, dir := res.Name, res.Dir
		cand := protocol.FinishedCandidate{Name: &name, Kind: c.Kind, Model: c.Model, Status: protocol.TaskStatus(res.Status),
			Report: res.Report, Files: len(res.Change.Files), Added: res.Change.Added, Removed: res.Change.Removed,
			Validations: res.Summary.Validations, CostUSD: res.CostUSD, Tokens: res.Tokens, Dir: &dir, TaskID: res.TaskID}
		cand.Patch, cand.PatchTruncated = cutPatch(res.Change.Patch, PatchLimit)
		if cand.Validations == nil {
			cand.Validations = []validate.Result{}
		}
		out.Candidates[i] = cand
		done.Candidates = append(done.Candidates, protocol.CandidateSummary{Name: cand.Name, Kind: cand.Kind, Model: cand.Model, Status: cand.Status})
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	done.CostUSD = out.CostUSD
	if req.Emit != nil {
		req.Emit(done)
	}
	return out, nil
}

// cutPatch returns s cut at n characters, and whether it was.
func cutPatch(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k], true
		}
		i++
	}
	return s, false
}
