package protocol

import "encoding/json"

// ToolSpec is one tool of tools/list (addendum §4).
type ToolSpec struct {
	// Name is snake_case; MCP tools are named mcp__<server>__<tool>.
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the tool's input.
	InputSchema json.RawMessage `json:"inputSchema"`
	Permission  Permission      `json:"permission"`
}

// ToolsListResult is the result of tools/list.
type ToolsListResult struct {
	Tools []ToolSpec `json:"tools"`
}

// ToolsCallParams is the params of tools/call.
type ToolsCallParams struct {
	Name string `json:"name"`
	// Input is the tool's input object ({} when absent).
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolsCallResult is the result of tools/call (docs/tools.md), in
// alphabetical order as the runtime has always sent it. A tool failure is
// error -32005 with ToolErrorData.
type ToolsCallResult struct {
	// Changes are the files the call changed.
	Changes []FileChange `json:"changes"`
	// Content is the text the model would see.
	Content string `json:"content"`
	// Data is the tool's structured result, null when it has none.
	Data any `json:"data"`
}

// EditsListResult is the result of edits/list: the operation log with
// diffs.
type EditsListResult struct {
	Operations []EditOperation `json:"operations"`
}

// EditOperation is one operation of the edit log.
type EditOperation struct {
	ID     string `json:"id"`
	TaskID string `json:"taskId,omitempty"`
	CallID string `json:"callId,omitempty"`
	Tool   string `json:"tool"`
	// Time is RFC 3339 with milliseconds.
	Time  string     `json:"time"`
	Files []EditFile `json:"files"`
	Diff  string     `json:"diff"`
	// Settled: every file of the operation was kept or reverted.
	Settled bool `json:"settled"`
	Undone  bool `json:"undone"`
	// Undoable is false once undone, or when its contents were dropped (the
	// log keeps 500 operations' contents).
	Undoable bool `json:"undoable"`
	// DiffTruncated: the diff was cut to keep the reply under the message
	// cap (additive).
	DiffTruncated bool `json:"diffTruncated,omitempty"`
}

// EditFile is one file of an edit operation.
type EditFile struct {
	Path       string         `json:"path"`
	Kind       FileChangeKind `json:"kind"`
	BeforeHash string         `json:"beforeHash"`
	AfterHash  string         `json:"afterHash"`
	Added      int            `json:"added"`
	Removed    int            `json:"removed"`
	Settled    bool           `json:"settled"`
}

// EditsPendingResult is the result of edits/pending: the net unsettled
// change of each file.
type EditsPendingResult struct {
	Files []PendingFile `json:"files"`
}

// PendingFile is one file of edits/pending.
type PendingFile struct {
	Path string `json:"path"`
	// Original is null for a file the agent created.
	Original *string `json:"original"`
	// Current is null for a file the agent deleted.
	Current    *string  `json:"current"`
	Added      int      `json:"added"`
	Removed    int      `json:"removed"`
	Operations []string `json:"operations"`
	// ChangedOutside: the file changed after the agent's edit (additive).
	ChangedOutside bool `json:"changedOutside"`
	// Truncated: original or current was cut to keep the reply under the
	// message cap (additive).
	Truncated bool `json:"truncated,omitempty"`
}

// PathsParams is the params of edits/keep and edits/revert: the paths to
// settle, every pending file when absent.
type PathsParams struct {
	Paths []string `json:"paths,omitempty"`
}

// KeepResult is the result of edits/keep.
type KeepResult struct {
	Kept []string `json:"kept"`
}

// RevertResult is the result of edits/revert, in alphabetical order as the
// runtime has always sent it. A file that changed after the agent's edit is
// never reverted: it is a conflict.
type RevertResult struct {
	Conflicts []string `json:"conflicts"`
	Reverted  []string `json:"reverted"`
}

// UndoParams is the params of edits/undo.
type UndoParams struct {
	// Operation is an operation id of edits/list.
	Operation string `json:"operation"`
}

// UndoResult is the result of edits/undo, in alphabetical order as the
// runtime has always sent it.
type UndoResult struct {
	Conflicts []string `json:"conflicts"`
	Restored  []string `json:"restored"`
}
