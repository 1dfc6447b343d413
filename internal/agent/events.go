package agent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Event types this loop emits (protocol.md agent/event; docs/events.md).
const (
	EventStarted           = "started"
	EventModel             = "model"
	EventIteration         = "iteration"
	EventTextDelta         = "textDelta"
	EventThinkingDelta     = "thinkingDelta"
	EventAssistantMessage  = "assistantMessage"
	EventUsage             = "usage"
	EventToolStarted       = "toolStarted"
	EventApprovalRequested = "approvalRequested"
	EventApprovalResolved  = "approvalResolved"
	EventToolFinished      = "toolFinished"
	EventFileChanged       = "fileChanged"
	EventWarning           = "warning"
	EventError             = "error"
	EventDone              = "done"
	EventRetry             = "retry"
	EventModelSwitched     = "modelSwitched"
	EventCompacted         = "compacted"
	EventContext           = "context"
	EventSteered           = "steered"
	EventHook              = "hook"
	EventValidationStarted = "validationStarted"
	EventValidationDone    = "validationFinished"

	// Team mode's plan events (internal/team, docs/team.md), emitted in
	// the lead's stream by run_plan.
	EventPlanStarted = "planStarted"
	EventStepSkipped = "stepSkipped"
	EventMerged      = "merged"

	// Additive (docs/events.md).
	EventToolOutput        = "toolOutput"
	EventDiff              = "diff"
	EventPlan              = "plan"
	EventApprovalWithdrawn = "approvalWithdrawn"
	EventReplayed          = "replayed"
)

// PlanStep is one step of a planStarted event: { id, role, objective,
// dependsOn } (dependsOn [] when none).
type PlanStep struct {
	ID        string   `json:"id"`
	Role      string   `json:"role"`
	Objective string   `json:"objective"`
	DependsOn []string `json:"dependsOn"`
}

// Event is one protocol.md agent/event `event` object. Only the fields of its
// Type reach the wire, in the order docs/events.md lists them, zero values
// included (so `ok: false` and `added: 0` are sent); MarshalJSON does that.
// Fields shared by several types mean the same thing in each.
type Event struct {
	Type string

	TaskID   string // started
	ChatMode string // started
	Provider string // model
	Model    string // started, model, done

	N int // iteration: 1-based model turn

	Text      string              // textDelta, thinkingDelta, assistantMessage, done
	ToolCalls []provider.ToolCall // assistantMessage: never nil on the wire

	InputTokens       int     // usage: this model call
	OutputTokens      int     // usage: this model call
	TotalInputTokens  int     // usage: the task so far
	TotalOutputTokens int     // usage: the task so far
	CostUSD           float64 // usage: the task so far (0 until prices exist)

	CallID     string          // tool and approval events, fileChanged
	Tool       string          // tool and approval events
	Input      json.RawMessage // toolStarted, approvalRequested
	Permission tool.Class      // toolStarted, approvalRequested
	Preview    string          // approvalRequested
	Decision   Decision        // approvalResolved

	OK         bool   // toolFinished
	Background bool   // toolFinished: a background command (both of its events)
	Result     any    // toolFinished: tool.Result.Data, or Content when Data is nil; null on failure
	DurationMs int64  // toolFinished
	Path       string // fileChanged
	Kind       string // fileChanged: created|modified|deleted; error: ProviderError.kind
	Added      int    // fileChanged: lines
	Removed    int    // fileChanged: lines

	Message    string // warning, error
	HTTPStatus int    // error: ProviderError.status (0 when none), sent as "status"
	Retryable  bool   // error

	Attempt     int    // retry: the retry about to run, from 1
	MaxAttempts int    // retry: the most retries of one model call
	DelayMs     int64  // retry: the wait before it
	From        string // modelSwitched: the model that failed for good
	To          string // modelSwitched: the model taking over
	Reason      string // modelSwitched: the failure, "<kind>: <message>"

	Folded           int  // compacted: messages folded into the progress summary
	Pruned           int  // compacted: tool results made into stubs or cut
	DroppedRetrieval bool // compacted: the repository excerpts were dropped
	BeforeTokens     int  // compacted: the estimate before
	AfterTokens      int  // compacted: the estimate after
	WindowTokens     int  // compacted, context: the model's context window
	UsedTokens       int  // context: the last call's input plus output tokens

	HookEvent string // hook: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart (sent as "event")
	Matcher   string // hook: the group's matcher ("" for all)
	Command   string // hook: the command line
	ExitCode  int    // hook: the exit code, -1 when killed or not started
	Blocked   bool   // hook: whether this run blocked
	Output    string // hook: stderr, cut at 2000 characters

	CheckName string // validationStarted, validationFinished: the check's name (sent as "name"); Command, ExitCode, DurationMs too
	Passed    bool   // validationFinished
	TimedOut  bool   // validationFinished

	MaxParallel int        // planStarted: steps run at most this many at a time
	PlanSteps   []PlanStep // planStarted: sent as "steps"
	Step        string     // stepSkipped, merged: the plan step's id
	Name        string     // merged: the step's worktree name
	Files       []string   // merged: the paths the merge changed; diff: the paths the diff covers (root-relative, "/")

	Stream  string          // toolOutput: stdout|stderr
	Diff    string          // diff: the task's whole unified diff
	DiffCut bool            // diff: Diff was cut at editlog.TaskDiffLimit (sent as "truncated")
	Items   []tool.PlanStep // plan: the whole plan, in order (sent as "steps")

	Status       string            // done: completed|failed|cancelled
	Error        *string           // toolFinished (failure message), done (null unless failed/cancelled), merged (null when ok)
	ChangedFiles []tool.FileChange // done
	Usage        *provider.Usage   // done: the task's summed tokens
	Iterations   int               // done
	ToolCallsN   int               // done: sent as "toolCalls"

	// Fields carries the fields of an event type this package does not
	// define (the team layer's subagent, subagentStarted, subagentFinished,
	// planStarted, stepSkipped, merged, bestOfDone): a struct or map that
	// marshals to a JSON object, whose members follow "type" in its order.
	Fields any
}

type kv struct {
	k string
	v any
}

// MarshalJSON writes {"type": ..., <the fields of Type>}.
func (e Event) MarshalJSON() ([]byte, error) {
	f := []kv{{"type", e.Type}}
	switch e.Type {
	case EventStarted:
		f = append(f, kv{"taskId", e.TaskID}, kv{"chatMode", e.ChatMode}, kv{"model", e.Model})
	case EventModel:
		f = append(f, kv{"provider", e.Provider}, kv{"model", e.Model})
	case EventIteration:
		f = append(f, kv{"n", e.N})
	case EventTextDelta, EventThinkingDelta:
		f = append(f, kv{"text", e.Text})
	case EventAssistantMessage:
		calls := e.ToolCalls
		if calls == nil {
			calls = []provider.ToolCall{}
		}
		f = append(f, kv{"text", e.Text}, kv{"toolCalls", calls})
	case EventUsage:
		f = append(f, kv{"inputTokens", e.InputTokens}, kv{"outputTokens", e.OutputTokens},
			kv{"totalInputTokens", e.TotalInputTokens}, kv{"totalOutputTokens", e.TotalOutputTokens}, kv{"costUsd", e.CostUSD})
	case EventToolStarted:
		f = append(f, kv{"callId", e.CallID}, kv{"tool", e.Tool}, kv{"input", rawOrEmpty(e.Input)}, kv{"permission", e.Permission})
	case EventApprovalRequested:
		f = append(f, kv{"callId", e.CallID}, kv{"tool", e.Tool}, kv{"permission", e.Permission},
			kv{"input", rawOrEmpty(e.Input)}, kv{"preview", e.Preview})
	case EventApprovalResolved:
		f = append(f, kv{"callId", e.CallID}, kv{"tool", e.Tool}, kv{"decision", e.Decision})
	case EventToolFinished:
		f = append(f, kv{"callId", e.CallID}, kv{"tool", e.Tool}, kv{"ok", e.OK}, kv{"result", e.Result},
			kv{"error", e.Error}, kv{"durationMs", e.DurationMs})
		if e.Background {
			f = append(f, kv{"background", true})
		}
	case EventFileChanged:
		f = append(f, kv{"callId", e.CallID}, kv{"path", e.Path}, kv{"kind", e.Kind}, kv{"added", e.Added}, kv{"removed", e.Removed})
	case EventWarning, EventSteered:
		if e.Type == EventSteered {
			f = append(f, kv{"text", e.Text})
			break
		}
		f = append(f, kv{"message", e.Message})
	case EventRetry:
		f = append(f, kv{"attempt", e.Attempt}, kv{"maxAttempts", e.MaxAttempts}, kv{"delayMs", e.DelayMs},
			kv{"kind", e.Kind}, kv{"status", e.HTTPStatus}, kv{"message", e.Message})
	case EventModelSwitched:
		f = append(f, kv{"from", e.From}, kv{"to", e.To}, kv{"reason", e.Reason})
	case EventCompacted:
		f = append(f, kv{"folded", e.Folded}, kv{"pruned", e.Pruned}, kv{"droppedRetrieval", e.DroppedRetrieval},
			kv{"beforeTokens", e.BeforeTokens}, kv{"afterTokens", e.AfterTokens}, kv{"windowTokens", e.WindowTokens})
	case EventContext:
		f = append(f, kv{"usedTokens", e.UsedTokens}, kv{"windowTokens", e.WindowTokens})
	case EventHook:
		f = append(f, kv{"event", e.HookEvent}, kv{"matcher", e.Matcher}, kv{"command", e.Command}, kv{"exitCode", e.ExitCode},
			kv{"durationMs", e.DurationMs}, kv{"blocked", e.Blocked}, kv{"output", e.Output})
	case EventValidationStarted:
		f = append(f, kv{"name", e.CheckName}, kv{"command", e.Command})
	case EventValidationDone:
		f = append(f, kv{"name", e.CheckName}, kv{"command", e.Command}, kv{"passed", e.Passed}, kv{"exitCode", e.ExitCode},
			kv{"timedOut", e.TimedOut}, kv{"durationMs", e.DurationMs})
	case EventPlanStarted:
		steps := make([]PlanStep, len(e.PlanSteps))
		for i, s := range e.PlanSteps {
			if s.DependsOn == nil {
				s.DependsOn = []string{}
			}
			steps[i] = s
		}
		f = append(f, kv{"callId", e.CallID}, kv{"maxParallel", e.MaxParallel}, kv{"steps", steps})
	case EventStepSkipped:
		f = append(f, kv{"step", e.Step}, kv{"reason", e.Reason})
	case EventMerged:
		files := e.Files
		if files == nil {
			files = []string{}
		}
		f = append(f, kv{"step", e.Step}, kv{"name", e.Name}, kv{"ok", e.OK}, kv{"files", files}, kv{"error", e.Error})
	case EventToolOutput:
		f = append(f, kv{"callId", e.CallID}, kv{"stream", e.Stream}, kv{"text", e.Text})
	case EventDiff:
		files := e.Files
		if files == nil {
			files = []string{}
		}
		f = append(f, kv{"diff", e.Diff}, kv{"files", files}, kv{"truncated", e.DiffCut})
	case EventPlan:
		items := e.Items
		if items == nil {
			items = []tool.PlanStep{}
		}
		f = append(f, kv{"explanation", e.Text}, kv{"steps", items})
	case EventApprovalWithdrawn:
		f = append(f, kv{"callId", e.CallID})
	case EventError:
		f = append(f, kv{"message", e.Message}, kv{"kind", e.Kind}, kv{"status", e.HTTPStatus}, kv{"retryable", e.Retryable})
	case EventDone:
		files := e.ChangedFiles
		if files == nil {
			files = []tool.FileChange{}
		}
		var u provider.Usage
		if e.Usage != nil {
			u = *e.Usage
		}
		f = append(f, kv{"status", e.Status}, kv{"error", e.Error}, kv{"text", e.Text}, kv{"changedFiles", files},
			kv{"usage", u}, kv{"model", e.Model}, kv{"iterations", e.Iterations}, kv{"toolCalls", e.ToolCallsN})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	if e.Fields != nil && len(f) == 1 {
		obj, err := json.Marshal(e.Fields)
		if err != nil {
			return nil, err
		}
		obj = bytes.TrimSpace(obj)
		if len(obj) < 2 || obj[0] != '{' {
			return nil, fmt.Errorf("agent: event %s: Fields is not an object", e.Type)
		}
		k, _ := json.Marshal(f[0].k)
		v, _ := json.Marshal(f[0].v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		if inner := bytes.TrimSpace(obj[1 : len(obj)-1]); len(inner) > 0 {
			b.WriteByte(',')
			b.Write(inner)
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	for i, p := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || !json.Valid(r) {
		return json.RawMessage("{}")
	}
	return r
}
