package protocol

import "encoding/json"

// BestOfParams is the params of agent/bestOf.
type BestOfParams struct {
	Prompt string `json:"prompt"`
	// Providers are 2 to 4.
	Providers  []ProviderConfig  `json:"providers"`
	TaskID     string            `json:"taskId,omitempty"`
	Editor     *EditorContext    `json:"editor,omitempty"`
	Policy     *Policy           `json:"policy,omitempty"`
	Limits     *Limits           `json:"limits,omitempty"`
	Prices     []Price           `json:"prices,omitempty"`
	Validation *ValidationConfig `json:"validation,omitempty"`
}

// BestOfResult is the result of agent/bestOf.
type BestOfResult struct {
	TaskID     string      `json:"taskId"`
	Candidates []Candidate `json:"candidates"`
	CostUSD    float64     `json:"costUsd"`
}

// Candidate is one candidate of agent/bestOf: a FinishedCandidate, or a
// FailedCandidate when its subagent failed.
type Candidate interface{ candidate() }

// FinishedCandidate is a candidate whose subagent ended (completed or
// cancelled): its change is in its worktree, named Name.
type FinishedCandidate struct {
	Name   *string    `json:"name"`
	Kind   string     `json:"kind"`
	Model  string     `json:"model"`
	Status TaskStatus `json:"status"`
	Report string     `json:"report,omitempty"`
	// Files, Added and Removed describe its change.
	Files       int                `json:"files"`
	Added       int                `json:"added"`
	Removed     int                `json:"removed"`
	Validations []ValidationResult `json:"validations"`
	CostUSD     float64            `json:"costUsd"`
	Tokens      int                `json:"tokens"`
	// Dir is its worktree folder.
	Dir *string `json:"dir"`
	// Patch is cut at 60000 characters.
	Patch          string `json:"patch"`
	PatchTruncated bool   `json:"patchTruncated,omitempty"`
	TaskID         string `json:"taskId,omitempty"`
}

// FailedCandidate is a candidate whose subagent failed: name null, status
// failed.
type FailedCandidate struct {
	Name   *string    `json:"name"`
	Kind   string     `json:"kind"`
	Model  string     `json:"model"`
	Status TaskStatus `json:"status"`
	Error  *string    `json:"error"`
}

func (FinishedCandidate) candidate() {}
func (FailedCandidate) candidate()   {}

// UnmarshalJSON decodes each candidate by its status.
func (r *BestOfResult) UnmarshalJSON(data []byte) error {
	var w struct {
		TaskID     string            `json:"taskId"`
		Candidates []json.RawMessage `json:"candidates"`
		CostUSD    float64           `json:"costUsd"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = BestOfResult{TaskID: w.TaskID, CostUSD: w.CostUSD}
	for _, raw := range w.Candidates {
		var head struct {
			Status TaskStatus `json:"status"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return err
		}
		if head.Status == TaskFailed {
			var c FailedCandidate
			if err := json.Unmarshal(raw, &c); err != nil {
				return err
			}
			r.Candidates = append(r.Candidates, c)
			continue
		}
		var c FinishedCandidate
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		r.Candidates = append(r.Candidates, c)
	}
	return nil
}

// WorktreeNameParams is the params of worktrees/apply and
// worktrees/discard.
type WorktreeNameParams struct {
	Name string `json:"name"`
}

// WorktreeApplyResult is the result of worktrees/apply: the merge goes
// through the edit log, so it is pending review and can be undone.
type WorktreeApplyResult struct {
	Applied bool `json:"applied"`
	// Files counts the files changed.
	Files   int      `json:"files"`
	Changed []string `json:"changed"`
	// Operation is the edit-log operation id, null when nothing changed.
	Operation *string  `json:"operation"`
	Conflicts []string `json:"conflicts,omitempty"`
	Error     *string  `json:"error,omitempty"`
}

// WorktreeDiscardResult is the result of worktrees/discard.
type WorktreeDiscardResult struct {
	Discarded bool `json:"discarded"`
}

// WorktreesListResult is the result of worktrees/list.
type WorktreesListResult struct {
	Worktrees []WorktreeInfo `json:"worktrees"`
}

// WorktreeInfo is one task-x worktree.
type WorktreeInfo struct {
	Name      string `json:"name"`
	Dir       string `json:"dir"`
	Branch    string `json:"branch"`
	Base      string `json:"base"`
	Head      string `json:"head"`
	Role      string `json:"role,omitempty"`
	TaskID    string `json:"taskId,omitempty"`
	CreatedAt string `json:"createdAt"`
}
