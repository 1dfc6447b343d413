package agent

import (
	"bytes"
	"encoding/json"

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
)

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
	Result     any    // toolFinished: tool.Result.Data, or Content when Data is nil; null on failure
	DurationMs int64  // toolFinished
	Path       string // fileChanged
	Kind       string // fileChanged: created|modified|deleted; error: ProviderError.kind
	Added      int    // fileChanged: lines
	Removed    int    // fileChanged: lines

	Message    string // warning, error
	HTTPStatus int    // error: ProviderError.status (0 when none), sent as "status"
	Retryable  bool   // error

	Status       string            // done: completed|failed|cancelled
	Error        *string           // toolFinished (failure message), done (null unless failed/cancelled)
	ChangedFiles []tool.FileChange // done
	Usage        *provider.Usage   // done: the task's summed tokens
	Iterations   int               // done
	ToolCallsN   int               // done: sent as "toolCalls"
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
	case EventFileChanged:
		f = append(f, kv{"callId", e.CallID}, kv{"path", e.Path}, kv{"kind", e.Kind}, kv{"added", e.Added}, kv{"removed", e.Removed})
	case EventWarning:
		f = append(f, kv{"message", e.Message})
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
