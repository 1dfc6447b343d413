package task

import (
	"context"
	"encoding/json"
	"time"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// The shared vocabulary of every engine (the agent loop, Claude Code, team
// mode) and front end: a task's Summary, its approvals, and the events
// (protocol.AgentEvent) built from them.

// Task statuses of a Summary (addendum §10).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Summary is the protocol.md agent/run result (protocol.AgentSummary):
// { taskId, status, text, changedFiles, operations, validations,
// validationRan, skippedChecks, usage, metrics, model, iterations,
// toolCalls, error, findings? }. An engine starts it with NewSummary, so
// its slices are [] and its Usage and Metrics are there (the Runner fills
// any an engine left nil: only a crash-swept task's summary, written by the
// store, has none). Error is nil (null) unless the task failed or was
// cancelled; Findings is nil outside team mode.
type Summary = protocol.AgentSummary

// NewSummary is an empty summary of taskID on model: every list [], usage
// and metrics zero.
func NewSummary(taskID, model string) Summary {
	return Summary{TaskID: taskID, Model: model, ChangedFiles: []tool.FileChange{}, Operations: []string{},
		Validations: []validate.Result{}, SkippedChecks: []validate.Skipped{}, Usage: &protocol.Usage{}, Metrics: &protocol.Metrics{}}
}

// complete gives sum the members every answered summary has: the lists
// ([] for nil), usage and metrics.
func complete(sum *Summary) {
	if sum.ChangedFiles == nil {
		sum.ChangedFiles = []tool.FileChange{}
	}
	if sum.Operations == nil {
		sum.Operations = []string{}
	}
	if sum.Validations == nil {
		sum.Validations = []validate.Result{}
	}
	if sum.SkippedChecks == nil {
		sum.SkippedChecks = []validate.Skipped{}
	}
	if sum.Usage == nil {
		sum.Usage = &protocol.Usage{}
	}
	if sum.Metrics == nil {
		sum.Metrics = &protocol.Metrics{}
	}
}

// Finding is one entry of a review answer's task-x-findings block (parsed
// by internal/team).
type Finding = protocol.Finding

// Metrics is protocol.md "Costs" metrics. UnpricedTokens counts the billed
// tokens of models without a price.
type Metrics = protocol.Metrics

// MergeChange folds c into files, one entry per path: line counts add up;
// created then modified stays created, anything then deleted is deleted,
// deleted then created is modified, and created then deleted drops the entry
// (the file did not exist before the task). It is the rule of a summary's
// changedFiles for every engine. The edit log gives exact net diffs later;
// these counts are the sums of the calls.
func MergeChange(files []tool.FileChange, c tool.FileChange) []tool.FileChange {
	for i := range files {
		f := &files[i]
		if f.Path != c.Path {
			continue
		}
		switch {
		case f.Kind == "created" && c.Kind == "deleted":
			return append(files[:i], files[i+1:]...)
		case f.Kind == "created":
		case f.Kind == "deleted" && c.Kind != "deleted":
			f.Kind = "modified"
		default:
			f.Kind = c.Kind
		}
		f.Added += c.Added
		f.Removed += c.Removed
		return files
	}
	return append(files, c)
}

// Decision is an approval's answer (protocol.md agent/requestApproval
// result.decision).
type Decision = protocol.Decision

// The decisions.
const (
	DecisionAllow        = protocol.DecisionAllow
	DecisionAllowSession = protocol.DecisionAllowSession
	DecisionDeny         = protocol.DecisionDeny
)

// ApprovalTimeout bounds the wait for one approval (addendum §10).
const ApprovalTimeout = 10 * time.Minute

// ApprovalRequest is one tool call to approve: the protocol.md
// agent/requestApproval params { taskId, callId, tool, permission, input,
// preview }.
type ApprovalRequest struct {
	TaskID     string
	CallID     string
	Tool       string
	Permission tool.Class
	Input      json.RawMessage
	Preview    string
}

// Answer is the user's answer to one approval: the decision and, with a
// deny, the user's reason (protocol RequestApprovalResult.message), which
// the model reads in the denied call's result.
type Answer struct {
	Decision Decision
	Message  string
}

// Approver asks the user about one tool call (the server sends
// agent/requestApproval). ctx ends when the task is cancelled or the approval
// timeout passes. An error, the end of ctx, or any answer other than allow or
// allowSession counts as deny.
type Approver func(ctx context.Context, req ApprovalRequest) (Answer, error)

// ApprovalRequested is the approvalRequested event of req.
func ApprovalRequested(req ApprovalRequest) protocol.ApprovalRequestedEvent {
	return protocol.ApprovalRequestedEvent{CallID: req.CallID, Tool: req.Tool, Permission: req.Permission,
		Input: req.Input, Preview: req.Preview}
}

// FileChanged is the fileChanged event of one change of call callID.
func FileChanged(callID string, c tool.FileChange) protocol.FileChangedEvent {
	return protocol.FileChangedEvent{CallID: callID, Path: c.Path, Kind: c.Kind, Added: c.Added, Removed: c.Removed}
}

// Done is the done event of a summary.
func Done(sum Summary) protocol.DoneEvent {
	var usage protocol.Usage
	if sum.Usage != nil {
		usage = *sum.Usage
	}
	skipped := sum.SkippedChecks
	if skipped == nil {
		skipped = []protocol.SkippedCheck{}
	}
	return protocol.DoneEvent{Status: sum.Status, Error: sum.Error, Text: sum.Text,
		ChangedFiles: sum.ChangedFiles, Usage: usage, Model: sum.Model,
		Iterations: sum.Iterations, ToolCalls: sum.ToolCalls,
		ValidationRan: sum.ValidationRan, SkippedChecks: skipped}
}

// HookEvent is the `hook` event of one hook run.
func HookEvent(rep hooks.Report) protocol.HookEvent {
	return protocol.HookEvent{Event: rep.Event, Matcher: rep.Matcher, Command: rep.Command,
		ExitCode: rep.ExitCode, DurationMs: rep.DurationMs, Blocked: rep.Blocked, Output: rep.Output}
}
