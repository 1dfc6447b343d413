package team

import (
	"context"
	"encoding/json"
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

// Candidate is one best-of candidate (protocol.md "Best of N"). A failed
// one is { name: null, kind, model, status: "failed", error } and its
// worktree is gone; PatchTruncated (additive) says Patch was cut.
type Candidate struct {
	Name           *string           `json:"name"`
	Kind           string            `json:"kind"`
	Model          string            `json:"model"`
	Status         string            `json:"status"`
	Report         string            `json:"report,omitempty"`
	Files          int               `json:"files"`
	Added          int               `json:"added"`
	Removed        int               `json:"removed"`
	Validations    []validate.Result `json:"validations"`
	CostUSD        float64           `json:"costUsd"`
	Tokens         int               `json:"tokens"`
	Dir            *string           `json:"dir"`
	Patch          string            `json:"patch"`
	PatchTruncated bool              `json:"patchTruncated,omitempty"`
	TaskID         string            `json:"taskId,omitempty"`
	Error          *string           `json:"error,omitempty"`
}

// MarshalJSON writes a failed candidate with the five fields protocol.md
// gives it.
func (c Candidate) MarshalJSON() ([]byte, error) {
	type plain Candidate
	if c.Status == "failed" {
		return json.Marshal(struct {
			Name   *string `json:"name"`
			Kind   string  `json:"kind"`
			Model  string  `json:"model"`
			Status string  `json:"status"`
			Error  *string `json:"error"`
		}{nil, c.Kind, c.Model, c.Status, c.Error})
	}
	return json.Marshal(plain(c))
}

// BestOfResult is agent/bestOf's answer: { taskId, candidates, costUsd }
// (costUsd sums every candidate's, failed ones included).
type BestOfResult struct {
	TaskID     string      `json:"taskId"`
	Candidates []Candidate `json:"candidates"`
	CostUSD    float64     `json:"costUsd"`
}

// BestOf runs req.Prompt as an implementation subagent on every
// contender at once, each in its own worktree, and merges nothing: the
// client applies one candidate (worktrees/apply) and discards the others.
// A candidate whose subagent did not complete is failed and its worktree
// discarded. When ctx ends first every worktree is discarded and ctx's
// error returned.
func (r *Runner) BestOf(ctx context.Context, req BestOfRequest) (BestOfResult, error) {
	out := BestOfResult{TaskID: req.TaskID, Candidates: make([]Candidate, len(req.Contenders))}
	if out.TaskID == "" {
		out.TaskID = task.NewID()
	}
	results := make([]Result, len(req.Contenders))
	var wg sync.WaitGroup
	for i, c := range req.Contenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.Run(ctx, Spec{Role: Implementation, Objective: req.Prompt, Engine: c.Engine, Kind: c.Kind, Model: c.Model,
				Policy: req.Policy, Editor: req.Editor, Approve: req.Approve, Hooks: req.Hooks, Emit: req.Emit})
		}()
	}
	wg.Wait()
	cleanup := context.WithoutCancel(ctx)
	done := protocol.BestOfDoneEvent{TaskID: out.TaskID, Candidates: []protocol.CandidateSummary{}}
	for i, res := range results {
		c := req.Contenders[i]
		out.CostUSD += res.CostUSD
		cand := Candidate{Kind: c.Kind, Model: c.Model, Status: res.Status, CostUSD: res.CostUSD, Tokens: res.Tokens, TaskID: res.TaskID}
		if res.Status != "completed" || ctx.Err() != nil {
			if res.Dir != "" && r.Worktrees != nil {
				if err := r.Worktrees.Discard(cleanup, res.Name); err != nil {
					r.log().Warn("team: discarding a failed candidate's worktree", "name", res.Name, "err", err)
				}
			}
			cand.Status = "failed"
			cand.Error = res.Error
			if cand.Error == nil {
				msg := "the candidate did not complete"
				cand.Error = &msg
			}
		} else {
			name, dir := res.Name, res.Dir
			cand.Name, cand.Dir = &name, &dir
			cand.Report = res.Report
			cand.Files, cand.Added, cand.Removed = len(res.Change.Files), res.Change.Added, res.Change.Removed
			cand.Validations = res.Summary.Validations
			cand.Patch, cand.PatchTruncated = cutPatch(res.Change.Patch, PatchLimit)
		}
		if cand.Validations == nil {
			cand.Validations = []validate.Result{}
		}
		out.Candidates[i] = cand
		done.Candidates = append(done.Candidates, protocol.CandidateSummary{Name: cand.Name, Kind: cand.Kind, Model: cand.Model, Status: protocol.TaskStatus(cand.Status)})
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
