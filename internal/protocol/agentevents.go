package protocol

import "encoding/json"

// The agent/event types (docs/events.md). Every member listed for a type is
// always present, zero values included, unless its doc says otherwise.

// StartedEvent is always the first event of a task.
type StartedEvent struct {
	TaskID   string   `json:"taskId"`
	ChatMode ChatMode `json:"chatMode"`
	Model    string   `json:"model"`
}

// ModelEvent names the model that answers (ProviderConfig.kind and model).
type ModelEvent struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// IterationEvent starts a model turn.
type IterationEvent struct {
	// N is the model turn, from 1.
	N int `json:"n"`
}

// TextDeltaEvent is a piece of the answer as it streams.
type TextDeltaEvent struct {
	Text string `json:"text"`
}

// ThinkingDeltaEvent is a piece of the model's thinking (additive, addendum
// §10); never part of text.
type ThinkingDeltaEvent struct {
	Text string `json:"text"`
}

// AssistantMessageEvent is the whole turn's text (may be "") and its tool
// calls ([] when none).
type AssistantMessageEvent struct {
	Text      string     `json:"text"`
	ToolCalls []ToolCall `json:"toolCalls"`
}

// UsageEvent gives the token counts of a response whose provider reported
// them.
type UsageEvent struct {
	// InputTokens and OutputTokens are this call's.
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// TotalInputTokens and TotalOutputTokens are the task's so far.
	TotalInputTokens  int `json:"totalInputTokens"`
	TotalOutputTokens int `json:"totalOutputTokens"`
	// CostUSD is the task's cost so far (0 for local or unpriced models).
	CostUSD float64 `json:"costUsd"`
}

// ContextEvent follows every model response.
type ContextEvent struct {
	// UsedTokens is the last call's input plus output tokens.
	UsedTokens   int `json:"usedTokens"`
	WindowTokens int `json:"windowTokens"`
}

// CompactedEvent says the context was compressed (protocol.md Context
// compression).
type CompactedEvent struct {
	// Folded counts the messages folded into the progress summary.
	Folded int `json:"folded"`
	// Pruned counts the tool results cut or made into stubs.
	Pruned int `json:"pruned"`
	// DroppedRetrieval is true when the repository excerpts were dropped.
	DroppedRetrieval bool `json:"droppedRetrieval"`
	BeforeTokens     int  `json:"beforeTokens"`
	AfterTokens      int  `json:"afterTokens"`
	WindowTokens     int  `json:"windowTokens"`
}

// RetryEvent announces a retry of a failed model call.
type RetryEvent struct {
	// Attempt is the retry about to run, from 1.
	Attempt     int   `json:"attempt"`
	MaxAttempts int   `json:"maxAttempts"`
	DelayMs     int64 `json:"delayMs"`
	// Kind is the ProviderError kind of the failure.
	Kind ProviderErrorKind `json:"kind"`
	// Status is the HTTP status, 0 when none.
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// ModelSwitchedEvent says a fallback model takes over.
type ModelSwitchedEvent struct {
	// From and To are "kind/model".
	From string `json:"from"`
	To   string `json:"to"`
	// Reason is "<kind>: <message>" of the failure.
	Reason string `json:"reason"`
}

// SteeredEvent reports an agent/steer message as it joined (trimmed).
type SteeredEvent struct {
	Text string `json:"text"`
}

// Permission is a tool's permission class (addendum §4); "" for an unknown
// tool.
type Permission string

// The permission classes.
const (
	PermissionRead        Permission = "read"
	PermissionEdit        Permission = "edit"
	PermissionCommand     Permission = "command"
	PermissionDestructive Permission = "destructive"
	PermissionMCP         Permission = "mcp"
	PermissionInteractive Permission = "interactive"
)

// ToolStartedEvent starts a tool call.
type ToolStartedEvent struct {
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
	// Input is the call's arguments.
	Input      json.RawMessage `json:"input"`
	Permission Permission      `json:"permission"`
}

// ApprovalRequestedEvent says the runtime sent agent/requestApproval for a
// call.
type ApprovalRequestedEvent struct {
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Permission Permission      `json:"permission"`
	Input      json.RawMessage `json:"input"`
	Preview    string          `json:"preview"`
}

// Decision is an approval's answer.
type Decision string

// The decisions. No answer, an error, a timeout of 10 minutes or the task's
// end count as deny.
const (
	DecisionAllow        Decision = "allow"
	DecisionAllowSession Decision = "allowSession"
	DecisionDeny         Decision = "deny"
)

// ApprovalResolvedEvent gives an approval's decision.
type ApprovalResolvedEvent struct {
	CallID   string   `json:"callId"`
	Tool     string   `json:"tool"`
	Decision Decision `json:"decision"`
}

// FileChangeKind says how a file changed.
type FileChangeKind string

// The file change kinds.
const (
	FileCreated  FileChangeKind = "created"
	FileModified FileChangeKind = "modified"
	FileDeleted  FileChangeKind = "deleted"
)

// FileChangedEvent reports one file a call changed.
type FileChangedEvent struct {
	CallID string `json:"callId"`
	// Path is root-relative, with "/".
	Path string         `json:"path"`
	Kind FileChangeKind `json:"kind"`
	// Added and Removed count lines.
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// ToolFinishedEvent ends a tool call.
type ToolFinishedEvent struct {
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
	OK     bool   `json:"ok"`
	// Result is the tool's structured data, or its text; null when not ok.
	Result any `json:"result"`
	// Error is the message the model saw, null when ok.
	Error      *string `json:"error"`
	DurationMs int64   `json:"durationMs"`
	// Background is true on both events of a background command: the
	// first, at once, with the result { background, command, message },
	// the second with the output when the command ends.
	Background bool `json:"background,omitempty"`
}

// HookEvent reports one hook run (docs/hooks.md).
type HookEvent struct {
	// Event is PreToolUse, PostToolUse, UserPromptSubmit, Stop or
	// SessionStart.
	Event   string `json:"event"`
	Matcher string `json:"matcher"`
	Command string `json:"command"`
	// ExitCode is -1 when the hook was killed or did not start.
	ExitCode   int   `json:"exitCode"`
	DurationMs int64 `json:"durationMs"`
	Blocked    bool  `json:"blocked"`
	// Output is the hook's stderr, cut at 2000 characters.
	Output string `json:"output"`
}

// ValidationStartedEvent says a check starts (addendum §12).
type ValidationStartedEvent struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// ValidationFinishedEvent says a check ended; a cancelled check gets one
// too (passed false, exitCode -1).
type ValidationFinishedEvent struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	Passed     bool   `json:"passed"`
	ExitCode   int    `json:"exitCode"`
	TimedOut   bool   `json:"timedOut"`
	DurationMs int64  `json:"durationMs"`
}

// WarningEvent can come anywhere.
type WarningEvent struct {
	Message string `json:"message"`
	// Kind names a warning a client may act on (additive; absent for the
	// others).
	Kind WarningKind `json:"kind,omitempty"`
}

// WarningKind is WarningEvent.kind.
type WarningKind string

const (
	// WarningOutputCut: the model's answer was cut at the output token limit.
	WarningOutputCut WarningKind = "outputCut"
	// WarningContentFilter: the provider stopped the model's answer with
	// its content filter, a refusal (OpenAI's finish_reason content_filter,
	// Anthropic's stop_reason refusal).
	WarningContentFilter WarningKind = "contentFilter"
)

// ErrorEvent is the ProviderError of a failed model call; done follows.
type ErrorEvent struct {
	Message string            `json:"message"`
	Kind    ProviderErrorKind `json:"kind"`
	// Status is the HTTP status, 0 when none.
	Status    int  `json:"status"`
	Retryable bool `json:"retryable"`
}

// TaskStatus is a task's status.
type TaskStatus string

// The task statuses (addendum §7); running only in saved tasks.
const (
	TaskRunning   TaskStatus = "running"
	TaskCompleted TaskStatus = "completed"
	TaskFailed    TaskStatus = "failed"
	TaskCancelled TaskStatus = "cancelled"
)

// DoneEvent is always the last event of a task, exactly once.
type DoneEvent struct {
	Status TaskStatus `json:"status"`
	// Error is null when completed, "cancelled" on cancel.
	Error *string `json:"error"`
	// Text is the last assistant text.
	Text         string       `json:"text"`
	ChangedFiles []FileChange `json:"changedFiles"`
	// Usage is the task's summed token counts.
	Usage      Usage  `json:"usage"`
	Model      string `json:"model"`
	Iterations int    `json:"iterations"`
	ToolCalls  int    `json:"toolCalls"`
	// ValidationRan and SkippedChecks repeat the summary's (additive): a
	// client that rebuilds a saved task from its events (agent/replay)
	// shows "no checks ran" and the skipped checks as the live run did.
	ValidationRan bool           `json:"validationRan"`
	SkippedChecks []SkippedCheck `json:"skippedChecks"`
}

// PlanStartedEvent starts a run_plan (team mode, docs/team.md).
type PlanStartedEvent struct {
	// CallID is the lead's run_plan call.
	CallID      string     `json:"callId"`
	MaxParallel int        `json:"maxParallel"`
	Steps       []PlanStep `json:"steps"`
}

// PlanStep is one step of planStarted.
type PlanStep struct {
	ID string `json:"id"`
	// Role is the role as the runtime matched it.
	Role      string `json:"role"`
	Objective string `json:"objective"`
	// DependsOn is [] when none.
	DependsOn []string `json:"dependsOn"`
}

// StepSkippedEvent says a plan step did not run.
type StepSkippedEvent struct {
	Step string `json:"step"`
	// Reason says which dependency did not complete, or that the plan was
	// cancelled.
	Reason string `json:"reason"`
}

// MergedEvent reports the merge of one writing step, at the end of a plan
// in dependency order.
type MergedEvent struct {
	Step string `json:"step"`
	// Name is the step's worktree.
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Files are the paths the merge changed.
	Files []string `json:"files"`
	// Error is null when ok.
	Error *string `json:"error"`
}

// SubagentStartedEvent starts a subagent (team mode and best-of).
type SubagentStartedEvent struct {
	// Name is the worktree name; read-only roles get one too.
	Name string `json:"name"`
	// TaskID is the subagent's own task id.
	TaskID    string `json:"taskId"`
	Role      string `json:"role"`
	Objective string `json:"objective"`
	Kind      string `json:"kind"`
	Model     string `json:"model"`
	// Dir is the worktree folder, null for research and review.
	Dir *string `json:"dir"`
	// Step is the plan step id, null outside a plan.
	Step *string `json:"step"`
	// Candidate is the index in agent/bestOf's providers of the provider
	// this subagent runs, absent outside best of N (additive): two providers
	// of one kind and model are told apart by it.
	Candidate *int `json:"candidate,omitempty"`
}

// SubagentEvent carries one event of a subagent's own task.
type SubagentEvent struct {
	Name   string     `json:"name"`
	TaskID string     `json:"taskId"`
	Event  AgentEvent `json:"event"`
}

// MarshalJSON writes the event, and the inner event, with its "type".
func (e SubagentEvent) MarshalJSON() ([]byte, error) {
	ev, err := MarshalAgentEvent(e.Event)
	if err != nil {
		return nil, err
	}
	return withType(e, struct {
		Name   string          `json:"name"`
		TaskID string          `json:"taskId"`
		Event  json.RawMessage `json:"event"`
	}{e.Name, e.TaskID, ev})
}

// UnmarshalJSON decodes the inner event by its "type".
func (e *SubagentEvent) UnmarshalJSON(data []byte) error {
	var w struct {
		Name   string          `json:"name"`
		TaskID string          `json:"taskId"`
		Event  json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	ev, err := DecodeAgentEvent(w.Event)
	if err != nil {
		return err
	}
	*e = SubagentEvent{Name: w.Name, TaskID: w.TaskID, Event: ev}
	return nil
}

// SubagentFinishedEvent ends a subagent.
type SubagentFinishedEvent struct {
	Name           string     `json:"name"`
	TaskID         string     `json:"taskId"`
	Role           string     `json:"role"`
	Status         TaskStatus `json:"status"`
	Error          *string    `json:"error"`
	CostUSD        float64    `json:"costUsd"`
	UnpricedTokens int        `json:"unpricedTokens"`
	// Tokens is input plus output.
	Tokens int `json:"tokens"`
	// Files, Added and Removed describe its own committed change.
	Files   int `json:"files"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Worktree is the folder, null for read-only roles.
	Worktree *string `json:"worktree"`
	// Findings of a review subagent (additive).
	Findings []Finding `json:"findings,omitempty"`
}

// BestOfDoneEvent is the last event of agent/bestOf.
type BestOfDoneEvent struct {
	// TaskID is the best-of's.
	TaskID     string             `json:"taskId"`
	Candidates []CandidateSummary `json:"candidates"`
	CostUSD    float64            `json:"costUsd"`
}

// CandidateSummary is one candidate of bestOfDone.
type CandidateSummary struct {
	Name   *string    `json:"name"`
	Kind   string     `json:"kind"`
	Model  string     `json:"model"`
	Status TaskStatus `json:"status"`
}

// ToolOutputEvent is live output of a running run_command call or
// validation check (callId "validation:<name>").
type ToolOutputEvent struct {
	CallID string `json:"callId"`
	// Stream is stdout or stderr.
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// DiffEvent gives the task's whole diff after file changes (debounced).
type DiffEvent struct {
	// Diff is the task's whole unified diff.
	Diff string `json:"diff"`
	// Files are the paths in it, in edits/pending's order.
	Files []string `json:"files"`
	// Truncated: the diff was cut at 4 MiB.
	Truncated bool `json:"truncated"`
}

// PlanEvent is an update_plan call, before its toolFinished.
type PlanEvent struct {
	// Explanation is "" when none.
	Explanation string `json:"explanation"`
	// Steps is the whole plan.
	Steps []PlanItem `json:"steps"`
}

// PlanItem is one step of a plan event.
type PlanItem struct {
	Step string `json:"step"`
	// Status is pending, inProgress or completed.
	Status string `json:"status"`
}

// ApprovalWithdrawnEvent says the runtime stopped waiting for the answer to
// agent/requestApproval or agent/askUser of this call; the client closes
// the dialog.
type ApprovalWithdrawnEvent struct {
	CallID string `json:"callId"`
}

// ReplayedEvent is the last event of agent/replay (docs/tasklog.md).
type ReplayedEvent struct {
	// Events counts the events replayed.
	Events int `json:"events"`
	// Running: this runtime runs the task; its live events follow.
	Running bool       `json:"running"`
	Status  TaskStatus `json:"status"`
}

// UserMessageEvent shows, only in agent/replay, the prompt that started a
// run.
type UserMessageEvent struct {
	// Images counts the images attached.
	Images int    `json:"images"`
	Text   string `json:"text"`
}

func (StartedEvent) EventType() string            { return "started" }
func (ModelEvent) EventType() string              { return "model" }
func (IterationEvent) EventType() string          { return "iteration" }
func (TextDeltaEvent) EventType() string          { return "textDelta" }
func (ThinkingDeltaEvent) EventType() string      { return "thinkingDelta" }
func (AssistantMessageEvent) EventType() string   { return "assistantMessage" }
func (UsageEvent) EventType() string              { return "usage" }
func (ContextEvent) EventType() string            { return "context" }
func (CompactedEvent) EventType() string          { return "compacted" }
func (RetryEvent) EventType() string              { return "retry" }
func (ModelSwitchedEvent) EventType() string      { return "modelSwitched" }
func (SteeredEvent) EventType() string            { return "steered" }
func (ToolStartedEvent) EventType() string        { return "toolStarted" }
func (ApprovalRequestedEvent) EventType() string  { return "approvalRequested" }
func (ApprovalResolvedEvent) EventType() string   { return "approvalResolved" }
func (FileChangedEvent) EventType() string        { return "fileChanged" }
func (ToolFinishedEvent) EventType() string       { return "toolFinished" }
func (HookEvent) EventType() string               { return "hook" }
func (ValidationStartedEvent) EventType() string  { return "validationStarted" }
func (ValidationFinishedEvent) EventType() string { return "validationFinished" }
func (WarningEvent) EventType() string            { return "warning" }
func (ErrorEvent) EventType() string              { return "error" }
func (DoneEvent) EventType() string               { return "done" }
func (PlanStartedEvent) EventType() string        { return "planStarted" }
func (StepSkippedEvent) EventType() string        { return "stepSkipped" }
func (MergedEvent) EventType() string             { return "merged" }
func (SubagentStartedEvent) EventType() string    { return "subagentStarted" }
func (SubagentEvent) EventType() string           { return "subagent" }
func (SubagentFinishedEvent) EventType() string   { return "subagentFinished" }
func (BestOfDoneEvent) EventType() string         { return "bestOfDone" }
func (ToolOutputEvent) EventType() string         { return "toolOutput" }
func (DiffEvent) EventType() string               { return "diff" }
func (PlanEvent) EventType() string               { return "plan" }
func (ApprovalWithdrawnEvent) EventType() string  { return "approvalWithdrawn" }
func (ReplayedEvent) EventType() string           { return "replayed" }
func (UserMessageEvent) EventType() string        { return "userMessage" }

func (StartedEvent) agentEvent()            {}
func (ModelEvent) agentEvent()              {}
func (IterationEvent) agentEvent()          {}
func (TextDeltaEvent) agentEvent()          {}
func (ThinkingDeltaEvent) agentEvent()      {}
func (AssistantMessageEvent) agentEvent()   {}
func (UsageEvent) agentEvent()              {}
func (ContextEvent) agentEvent()            {}
func (CompactedEvent) agentEvent()          {}
func (RetryEvent) agentEvent()              {}
func (ModelSwitchedEvent) agentEvent()      {}
func (SteeredEvent) agentEvent()            {}
func (ToolStartedEvent) agentEvent()        {}
func (ApprovalRequestedEvent) agentEvent()  {}
func (ApprovalResolvedEvent) agentEvent()   {}
func (FileChangedEvent) agentEvent()        {}
func (ToolFinishedEvent) agentEvent()       {}
func (HookEvent) agentEvent()               {}
func (ValidationStartedEvent) agentEvent()  {}
func (ValidationFinishedEvent) agentEvent() {}
func (WarningEvent) agentEvent()            {}
func (ErrorEvent) agentEvent()              {}
func (DoneEvent) agentEvent()               {}
func (PlanStartedEvent) agentEvent()        {}
func (StepSkippedEvent) agentEvent()        {}
func (MergedEvent) agentEvent()             {}
func (SubagentStartedEvent) agentEvent()    {}
func (SubagentEvent) agentEvent()           {}
func (SubagentFinishedEvent) agentEvent()   {}
func (BestOfDoneEvent) agentEvent()         {}
func (ToolOutputEvent) agentEvent()         {}
func (DiffEvent) agentEvent()               {}
func (PlanEvent) agentEvent()               {}
func (ApprovalWithdrawnEvent) agentEvent()  {}
func (ReplayedEvent) agentEvent()           {}
func (UserMessageEvent) agentEvent()        {}

// MarshalJSON encodes the event with its "type" first (MarshalAgentEvent).
func (e StartedEvent) MarshalJSON() ([]byte, error) {
	type plain StartedEvent
	return withType(e, plain(e))
}
func (e ModelEvent) MarshalJSON() ([]byte, error) {
	type plain ModelEvent
	return withType(e, plain(e))
}
func (e IterationEvent) MarshalJSON() ([]byte, error) {
	type plain IterationEvent
	return withType(e, plain(e))
}
func (e TextDeltaEvent) MarshalJSON() ([]byte, error) {
	type plain TextDeltaEvent
	return withType(e, plain(e))
}
func (e ThinkingDeltaEvent) MarshalJSON() ([]byte, error) {
	type plain ThinkingDeltaEvent
	return withType(e, plain(e))
}
func (e AssistantMessageEvent) MarshalJSON() ([]byte, error) {
	type plain AssistantMessageEvent
	return withType(e, plain(e))
}
func (e UsageEvent) MarshalJSON() ([]byte, error) {
	type plain UsageEvent
	return withType(e, plain(e))
}
func (e ContextEvent) MarshalJSON() ([]byte, error) {
	type plain ContextEvent
	return withType(e, plain(e))
}
func (e CompactedEvent) MarshalJSON() ([]byte, error) {
	type plain CompactedEvent
	return withType(e, plain(e))
}
func (e RetryEvent) MarshalJSON() ([]byte, error) {
	type plain RetryEvent
	return withType(e, plain(e))
}
func (e ModelSwitchedEvent) MarshalJSON() ([]byte, error) {
	type plain ModelSwitchedEvent
	return withType(e, plain(e))
}
func (e SteeredEvent) MarshalJSON() ([]byte, error) {
	type plain SteeredEvent
	return withType(e, plain(e))
}
func (e ToolStartedEvent) MarshalJSON() ([]byte, error) {
	type plain ToolStartedEvent
	return withType(e, plain(e))
}
func (e ApprovalRequestedEvent) MarshalJSON() ([]byte, error) {
	type plain ApprovalRequestedEvent
	return withType(e, plain(e))
}
func (e ApprovalResolvedEvent) MarshalJSON() ([]byte, error) {
	type plain ApprovalResolvedEvent
	return withType(e, plain(e))
}
func (e FileChangedEvent) MarshalJSON() ([]byte, error) {
	type plain FileChangedEvent
	return withType(e, plain(e))
}
func (e ToolFinishedEvent) MarshalJSON() ([]byte, error) {
	type plain ToolFinishedEvent
	return withType(e, plain(e))
}
func (e HookEvent) MarshalJSON() ([]byte, error) { type plain HookEvent; return withType(e, plain(e)) }
func (e ValidationStartedEvent) MarshalJSON() ([]byte, error) {
	type plain ValidationStartedEvent
	return withType(e, plain(e))
}
func (e ValidationFinishedEvent) MarshalJSON() ([]byte, error) {
	type plain ValidationFinishedEvent
	return withType(e, plain(e))
}
func (e WarningEvent) MarshalJSON() ([]byte, error) {
	type plain WarningEvent
	return withType(e, plain(e))
}
func (e ErrorEvent) MarshalJSON() ([]byte, error) {
	type plain ErrorEvent
	return withType(e, plain(e))
}
func (e DoneEvent) MarshalJSON() ([]byte, error) { type plain DoneEvent; return withType(e, plain(e)) }
func (e PlanStartedEvent) MarshalJSON() ([]byte, error) {
	type plain PlanStartedEvent
	return withType(e, plain(e))
}
func (e StepSkippedEvent) MarshalJSON() ([]byte, error) {
	type plain StepSkippedEvent
	return withType(e, plain(e))
}
func (e MergedEvent) MarshalJSON() ([]byte, error) {
	type plain MergedEvent
	return withType(e, plain(e))
}
func (e SubagentStartedEvent) MarshalJSON() ([]byte, error) {
	type plain SubagentStartedEvent
	return withType(e, plain(e))
}
func (e SubagentFinishedEvent) MarshalJSON() ([]byte, error) {
	type plain SubagentFinishedEvent
	return withType(e, plain(e))
}
func (e BestOfDoneEvent) MarshalJSON() ([]byte, error) {
	type plain BestOfDoneEvent
	return withType(e, plain(e))
}
func (e ToolOutputEvent) MarshalJSON() ([]byte, error) {
	type plain ToolOutputEvent
	return withType(e, plain(e))
}
func (e DiffEvent) MarshalJSON() ([]byte, error) { type plain DiffEvent; return withType(e, plain(e)) }
func (e PlanEvent) MarshalJSON() ([]byte, error) { type plain PlanEvent; return withType(e, plain(e)) }
func (e ApprovalWithdrawnEvent) MarshalJSON() ([]byte, error) {
	type plain ApprovalWithdrawnEvent
	return withType(e, plain(e))
}
func (e ReplayedEvent) MarshalJSON() ([]byte, error) {
	type plain ReplayedEvent
	return withType(e, plain(e))
}
func (e UserMessageEvent) MarshalJSON() ([]byte, error) {
	type plain UserMessageEvent
	return withType(e, plain(e))
}
