package protocol

import (
	"encoding/json"
	"time"
)

// ChatMode is agent/run's chatMode.
type ChatMode string

// The chat modes (addendum §5): ask and plan offer read and interactive
// tools only; agent offers all tools; team adds the team tools.
const (
	ChatModeAsk   ChatMode = "ask"
	ChatModePlan  ChatMode = "plan"
	ChatModeAgent ChatMode = "agent"
	ChatModeTeam  ChatMode = "team"
	// ChatModeClaudeCode marks a claude/run task (in its started event and
	// in agent/tasks), never a value of agent/run's chatMode.
	ChatModeClaudeCode ChatMode = "claudeCode"
)

// AgentRunParams is the params of agent/run.
type AgentRunParams struct {
	Prompt string `json:"prompt"`
	// Images join the user message (protocol.md Images): at most 8.
	Images   []ImageInput   `json:"images,omitempty"`
	Provider ProviderConfig `json:"provider"`
	// ChatMode defaults to agent.
	ChatMode ChatMode `json:"chatMode,omitempty"`
	// TaskID continues a saved task, or names a new one.
	TaskID string         `json:"taskId,omitempty"`
	Editor *EditorContext `json:"editor,omitempty"`
	// Policy: no policy means mode default.
	Policy *Policy `json:"policy,omitempty"`
	Limits *Limits `json:"limits,omitempty"`
	// Routes pick a provider per task kind.
	Routes []Route `json:"routes,omitempty"`
	// Fallbacks take over, in order, when the provider fails for good.
	Fallbacks []ProviderConfig `json:"fallbacks,omitempty"`
	// RoleProviders set the model of team subagents per role.
	RoleProviders []RoleProvider `json:"roleProviders,omitempty"`
	// Prices are per million tokens, matched by model id prefix.
	Prices     []Price           `json:"prices,omitempty"`
	Validation *ValidationConfig `json:"validation,omitempty"`
}

// ImageInput is protocol.md ImageInput.
type ImageInput struct {
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string `json:"mediaType"`
	// Data is base64 without a data: prefix, at most 7 000 000 characters.
	Data string `json:"data"`
}

// EditorContext is protocol.md EditorContext.
type EditorContext struct {
	ActiveFile  string       `json:"activeFile,omitempty"`
	Selection   *Selection   `json:"selection,omitempty"`
	OpenFiles   []string     `json:"openFiles,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Mentions are files and folders the user referenced with @path (at
	// most 10).
	Mentions []string `json:"mentions,omitempty"`
}

// Selection is EditorContext.selection.
type Selection struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Text      string `json:"text"`
}

// Diagnostic is one entry of EditorContext.diagnostics.
type Diagnostic struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Source   string `json:"source,omitempty"`
}

// PolicyMode is Policy.mode (addendum §5).
type PolicyMode string

// The policy modes.
const (
	PolicyDefault     PolicyMode = "default"
	PolicyAcceptEdits PolicyMode = "acceptEdits"
	PolicyReadOnly    PolicyMode = "readOnly"
)

// Policy is agent/run's policy.
type Policy struct {
	Mode PolicyMode `json:"mode,omitempty"`
	// Allow and Deny hold tool names or rules with an argument pattern,
	// such as "run_command(npm test:*)"; deny always wins.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// AllowAll runs every tool call with no agent/requestApproval; only
	// deny refuses a tool.
	AllowAll bool `json:"allowAll,omitempty"`
}

// Limits is agent/run's limits.
type Limits struct {
	MaxIterations    int   `json:"maxIterations,omitempty"`
	MaxTokensPerCall int   `json:"maxTokensPerCall,omitempty"`
	MaxWallClockMs   int64 `json:"maxWallClockMs,omitempty"`
	// ContextWindowTokens sets the model's window; without it the runtime
	// asks the provider.
	ContextWindowTokens int `json:"contextWindowTokens,omitempty"`
	// CompactPercent: compression starts above this share of the window
	// (default 85, 30 to 95).
	CompactPercent int `json:"compactPercent,omitempty"`
	// MaxParallel bounds the plan steps that run at a time (team mode;
	// default 3, at most 8).
	MaxParallel *int `json:"maxParallel,omitempty"`
}

// TaskKind is a kind of task (addendum §10).
type TaskKind string

// The task kinds.
const (
	KindQuestion         TaskKind = "question"
	KindCodeModification TaskKind = "codeModification"
	KindBugFix           TaskKind = "bugFix"
	KindRefactoring      TaskKind = "refactoring"
	KindTesting          TaskKind = "testing"
	KindDocumentation    TaskKind = "documentation"
	KindReview           TaskKind = "review"
	KindPlanning         TaskKind = "planning"
)

// Route sends the tasks of some kinds to a provider.
type Route struct {
	Kinds    []TaskKind     `json:"kinds"`
	Provider ProviderConfig `json:"provider"`
}

// RoleProvider sets the model of the subagents of one role.
type RoleProvider struct {
	// Role is research, implementation, testing, review or documentation.
	Role     string         `json:"role"`
	Provider ProviderConfig `json:"provider"`
}

// Price is a model's price per million tokens, matched by model id prefix.
type Price struct {
	Model         string  `json:"model"`
	InputPerMtok  float64 `json:"inputPerMtok"`
	OutputPerMtok float64 `json:"outputPerMtok"`
}

// ValidationConfig is agent/run's validation (addendum §12).
type ValidationConfig struct {
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
	// Checks default to the project's lint, build and test commands.
	Checks []ValidationCheck `json:"checks,omitempty"`
	// FixRounds defaults to 1 (0 to 3).
	FixRounds *int `json:"fixRounds,omitempty"`
	// TimeoutMs is per check, default 300000.
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
}

// ValidationCheck is one command to run, named.
type ValidationCheck struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// AgentSummary is the result of agent/run and claude/run, and the summary of
// a saved task.
type AgentSummary struct {
	TaskID string     `json:"taskId"`
	Status TaskStatus `json:"status"`
	// Text is the last assistant text of the task.
	Text string `json:"text"`
	// ChangedFiles holds one entry per path, in first-change order.
	ChangedFiles []FileChange `json:"changedFiles"`
	// Operations are the edit-log operation ids of the task's edits.
	Operations []string `json:"operations"`
	// Validations are the checks of the last round (addendum §12).
	Validations []ValidationResult `json:"validations"`
	// ValidationRan is true when a check ran in any round.
	ValidationRan bool `json:"validationRan"`
	// SkippedChecks are the last round's checks considered and not run.
	SkippedChecks []SkippedCheck `json:"skippedChecks"`
	// Usage sums the token counts the providers reported. Usage and
	// Metrics are absent only in the summary of a task that a killed
	// runtime left running (initialize marks it failed): nobody measured it.
	Usage *Usage `json:"usage,omitempty"`
	// UnreportedUsageCalls counts the model calls whose provider reported
	// no token counts (additive).
	UnreportedUsageCalls int      `json:"unreportedUsageCalls,omitempty"`
	Metrics              *Metrics `json:"metrics,omitempty"`
	Model                string   `json:"model"`
	// Iterations counts model calls.
	Iterations int `json:"iterations"`
	// ToolCalls counts the tool calls the model made (denied and failed
	// ones included).
	ToolCalls int     `json:"toolCalls"`
	Error     *string `json:"error"`
	// EndReason says which limit or refusal ended a failed task (additive;
	// absent for every other end), so that a client acts on it without
	// reading Error's text.
	EndReason TaskEndReason `json:"endReason,omitempty"`
	// Findings are the review findings of team mode's review subagents
	// (additive; absent outside team mode).
	Findings *[]Finding `json:"findings,omitempty"`
}

// TaskEndReason is AgentSummary.endReason.
type TaskEndReason string

// The end reasons of a failed task.
const (
	// EndMaxIterations: the task reached limits.maxIterations model turns.
	EndMaxIterations TaskEndReason = "maxIterations"
	// EndMaxWallClock: the task reached limits.maxWallClockMs.
	EndMaxWallClock TaskEndReason = "maxWallClock"
	// EndPromptRefused: a UserPromptSubmit hook refused the prompt.
	EndPromptRefused TaskEndReason = "promptRefused"
)

// FileChange is one changed file of a summary or done event.
type FileChange struct {
	Path    string         `json:"path"`
	Kind    FileChangeKind `json:"kind"`
	Added   int            `json:"added"`
	Removed int            `json:"removed"`
}

// ValidationResult is one check of summary validations.
type ValidationResult struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Passed  bool   `json:"passed"`
	// ExitCode is -1 when killed.
	ExitCode   int   `json:"exitCode"`
	TimedOut   bool  `json:"timedOut"`
	DurationMs int64 `json:"durationMs"`
	// Output is at most 4000 characters, head and tail kept.
	Output string `json:"output"`
}

// SkippedCheck is a check considered and not run.
type SkippedCheck struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Metrics is summary metrics (protocol.md Costs).
type Metrics struct {
	// CostUSD includes the subagents'.
	CostUSD float64 `json:"costUsd"`
	// UnpricedTokens are billed tokens of models with no price.
	UnpricedTokens  int     `json:"unpricedTokens"`
	Subagents       int     `json:"subagents"`
	SubagentCostUSD float64 `json:"subagentCostUsd"`
	SubagentTokens  int     `json:"subagentTokens"`
}

// Finding is one review finding (protocol.md Review findings).
type Finding struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	// Severity is error, warning or info.
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// ClaudeRunParams is the params of claude/run (docs/claude.md).
type ClaudeRunParams struct {
	Prompt string       `json:"prompt"`
	Images []ImageInput `json:"images,omitempty"`
	TaskID string       `json:"taskId,omitempty"`
	Model  string       `json:"model,omitempty"`
	// PermissionMode is Claude Code's permission mode.
	PermissionMode string `json:"permissionMode,omitempty"`
	// ClaudePath is the Claude Code CLI to run.
	ClaudePath string `json:"claudePath,omitempty"`
	// UseTaskTools defaults to true: Claude works through the task-x tools.
	UseTaskTools *bool `json:"useTaskTools,omitempty"`
	// ApproveAll allows every tool Claude Code asks about.
	ApproveAll    bool `json:"approveAll,omitempty"`
	AllowCommands bool `json:"allowCommands,omitempty"`
	// MCPServers are more servers in Claude Code's mcpServers format; the
	// name task-x is reserved.
	MCPServers map[string]json.RawMessage `json:"mcpServers,omitempty"`
	Editor     *EditorContext             `json:"editor,omitempty"`
	// Policy is agent/run's policy, applied to every call Claude Code asks
	// about or forwards; permissionMode follows policy.mode when absent.
	Policy *Policy `json:"policy,omitempty"`
}

// SteerParams is the params of agent/steer.
type SteerParams struct {
	TaskID string `json:"taskId"`
	// Text is 1 to 100 000 characters after trimming.
	Text string `json:"text"`
}

// CancelToolParams is the params of agent/cancelTool.
type CancelToolParams struct {
	// TaskID is a subagent's own task id for its calls.
	TaskID string `json:"taskId"`
	// CallID is from toolStarted.
	CallID string `json:"callId"`
}

// TaskIDParams is the params of agent/cancelSubagent, agent/task,
// agent/deleteTask and agent/replay.
type TaskIDParams struct {
	TaskID string `json:"taskId"`
}

// TasksResult is the result of agent/tasks, newest first.
type TasksResult struct {
	Tasks []TaskInfo `json:"tasks"`
}

// TaskInfo is one entry of agent/tasks (addendum §11).
type TaskInfo struct {
	TaskID    string     `json:"taskId"`
	Title     string     `json:"title"`
	Status    TaskStatus `json:"status"`
	ChatMode  ChatMode   `json:"chatMode"`
	Model     string     `json:"model"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	// Root is the workspace folder the task ran in (additive).
	Root string `json:"root,omitempty"`
}

// TaskResult is the result of agent/task.
type TaskResult struct {
	// Messages is the task's conversation (bounded under the message cap).
	Messages []Message  `json:"messages"`
	Status   TaskStatus `json:"status"`
	// Summary is null for a task saved before it ended.
	Summary *AgentSummary `json:"summary"`
	Title   string        `json:"title"`
}

// ReplayResult is the result of agent/replay (docs/tasklog.md).
type ReplayResult struct {
	TaskID string `json:"taskId"`
	// Events counts the events replayed (the replayed marker not counted).
	Events int `json:"events"`
	// Status is the saved task's status when the replay read it.
	Status TaskStatus `json:"status"`
	// Running: this runtime runs the task; its live events follow.
	Running bool `json:"running"`
}

// RequestApprovalParams is the params of agent/requestApproval (runtime →
// client). Its members come in alphabetical order, as the runtime has
// always sent them.
type RequestApprovalParams struct {
	CallID string `json:"callId"`
	// Input is the call's arguments.
	Input      json.RawMessage `json:"input"`
	Permission Permission      `json:"permission"`
	// Preview shows the change (a unified diff) or the command.
	Preview string `json:"preview"`
	TaskID  string `json:"taskId"`
	Tool    string `json:"tool"`
}

// RequestApprovalResult is the client's answer to agent/requestApproval. No
// answer, or an error, counts as deny.
type RequestApprovalResult struct {
	Decision Decision `json:"decision"`
	// Message (optional, with deny only) is the user's reason for the
	// denial: the model reads it in the denied call's result, in the same
	// turn (docs/events.md). Ignored with allow and allowSession; cut at
	// MaxDenyMessage bytes.
	Message string `json:"message,omitempty"`
}

// MaxDenyMessage is the most of RequestApprovalResult.Message the model
// is given (bytes, cut at a rune boundary).
const MaxDenyMessage = 8 << 10

// AskUserParams is the params of agent/askUser (runtime → client), in
// alphabetical order as the runtime has always sent them.
type AskUserParams struct {
	CallID string `json:"callId"`
	// Questions are 1 to 4.
	Questions []Question `json:"questions"`
	TaskID    string     `json:"taskId"`
}

// QuestionKind is Question.kind.
type QuestionKind string

// The question kinds.
const (
	QuestionRadio    QuestionKind = "radio"
	QuestionCheckbox QuestionKind = "checkbox"
)

// Question is one question of agent/askUser.
type Question struct {
	ID   string       `json:"id"`
	Text string       `json:"text"`
	Kind QuestionKind `json:"kind"`
	// Options are 2 to 8 distinct labels.
	Options []string `json:"options"`
}

// AskUserResult is the client's answer to agent/askUser: the labels picked
// per question id, or null when the user dismissed the questions.
type AskUserResult struct {
	// Answers maps question ids to the labels picked; null when the user dismissed the questions.
	Answers *map[string][]string `json:"answers"`
}

// RefineParams is the params of prompt/refine.
type RefineParams struct {
	// Prompt is 1 to 100 000 characters.
	Prompt   string          `json:"prompt"`
	Provider *ProviderConfig `json:"provider,omitempty"`
	Routes   []Route         `json:"routes,omitempty"`
	// FocusPaths come first among the repository excerpts.
	FocusPaths []string `json:"focusPaths,omitempty"`
}

// RefineResult is the result of prompt/refine.
type RefineResult struct {
	Text   string   `json:"text"`
	Kind   TaskKind `json:"kind"`
	Model  string   `json:"model"`
	Routed bool     `json:"routed"`
	// Usage is absent when the provider reported none.
	Usage *Usage `json:"usage,omitempty"`
}
