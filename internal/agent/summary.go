package agent

import (
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// Task statuses of a Summary (addendum §10).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Summary is the protocol.md agent/run result: { taskId, status, text,
// changedFiles, operations, validations, validationRan, skippedChecks, usage,
// metrics, model, iterations, toolCalls, error }. Slices are never nil, so
// they reach the wire as [] rather than null. Error is nil (null) unless the
// task failed or was cancelled.
type Summary struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	// Text is the last assistant text of the task.
	Text string `json:"text"`
	// ChangedFiles holds one entry per path, in first-change order, merged
	// over the task's calls (see mergeChange).
	ChangedFiles []tool.FileChange `json:"changedFiles"`
	// Operations are the edit-log operation ids of the task's edits, in
	// order, from each tool result's Operation.
	Operations []string `json:"operations"`
	// Validations are the checks of the last round (addendum §12,
	// validation.go); ValidationRan is true when a check ran in any round;
	// SkippedChecks are the last round's checks considered and not run.
	Validations   []validate.Result  `json:"validations"`
	ValidationRan bool               `json:"validationRan"`
	SkippedChecks []validate.Skipped `json:"skippedChecks"`
	// Usage sums the token counts the provider reported; UnreportedUsageCalls
	// counts the model calls it reported none for (they add nothing to Usage),
	// so {0, 0} with calls unreported is no measurement.
	Usage                provider.Usage `json:"usage"`
	UnreportedUsageCalls int            `json:"unreportedUsageCalls,omitempty"`
	Metrics              Metrics        `json:"metrics"`
	Model                string         `json:"model"`
	// Iterations counts model calls; ToolCalls counts the tool calls the model
	// made (denied and failed ones included).
	Iterations int     `json:"iterations"`
	ToolCalls  int     `json:"toolCalls"`
	Error      *string `json:"error"`
	// Findings (additive, team mode) are the review findings of the
	// task's review subagents (protocol.md "Review findings"); nil
	// outside team mode, so the field is left out then.
	Findings *[]Finding `json:"findings,omitempty"`
}

// Finding is one entry of a review answer's task-x-findings block:
// { path, line, severity: "error"|"warning"|"info", message } (parsed by
// internal/team).
type Finding struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// Metrics is protocol.md "Costs" metrics. Costs are 0 until prices are wired
// in; UnpricedTokens then counts every billed token.
type Metrics struct {
	CostUSD         float64 `json:"costUsd"`
	UnpricedTokens  int     `json:"unpricedTokens"`
	Subagents       int     `json:"subagents"`
	SubagentCostUSD float64 `json:"subagentCostUsd"`
	SubagentTokens  int     `json:"subagentTokens"`
}

// mergeChange folds c into files, one entry per path: line counts add up;
// created then modified stays created, anything then deleted is deleted,
// deleted then created is modified, and created then deleted drops the entry
// (the file did not exist before the task). The edit log gives exact net diffs
// later; these counts are the sums of the calls.
func mergeChange(files []tool.FileChange, c tool.FileChange) []tool.FileChange {
	return MergeChange(files, c)
}

// MergeChange is the rule of a summary's changedFiles for any engine:
// mergeChange above.
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
