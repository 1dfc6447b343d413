package task

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// Saved tasks (protocol.md agent/tasks, agent/task, agent/deleteTask;
// addendum §7, §11). Each task is saved to the runner's Store: `running`
// when it starts, again at most every 500 ms while it runs (after
// assistantMessage and toolFinished events), and with its final status,
// summary and conversation when it ends. With a dataDir the store is the
// task folder (store.Open); without one it is store.Memory, so
// agent/tasks, agent/task, agent/deleteTask and continuing a task by its
// taskId work until the runtime exits. Every key the runtime holds is
// redacted from a record before it is stored, in memory or on disk.

// saveInterval is the least time between two saves of a running task.
const saveInterval = 500 * time.Millisecond

// taskRecorder saves one running task. Its conversation while running is
// rebuilt from agent events: the history, the new user message, then each
// assistant message and, once every tool call of it has finished, the user
// message with their results, so a saved conversation never holds a
// toolUse without its toolResult. Steering messages and background-command
// outputs join only with the final save (agent.Run's own conversation).
type taskRecorder struct {
	r  *Runner
	st Store

	mu       sync.Mutex
	rec      store.Task
	messages []provider.Message
	turn     *provider.Message // assistant message waiting for tool results
	pending  map[string]bool
	results  []provider.Part
	last     time.Time
	timer    *time.Timer
	done     bool
}

// startTask saves the record as running and returns its recorder.
// first is the new user message; history the conversation it continues.
func (rn *Runner) startTask(rec *store.Task, history []provider.Message, first provider.Message) *taskRecorder {
	r := &taskRecorder{r: rn, st: rn.store(), rec: *rec}
	r.messages = append(append(r.messages, history...), first)
	r.mu.Lock()
	r.saveLocked()
	r.mu.Unlock()
	return r
}

// event folds one agent event into the conversation and saves at most every
// saveInterval, with a trailing save for the last change.
func (r *taskRecorder) event(ev agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	switch ev.Type {
	case "assistantMessage":
		msg := provider.Message{Role: provider.RoleAssistant}
		if ev.Text != "" {
			msg.Content = append(msg.Content, provider.Part{Type: provider.PartText, Text: ev.Text})
		}
		r.pending = map[string]bool{}
		r.results = nil
		for _, c := range ev.ToolCalls {
			msg.Content = append(msg.Content, provider.Part{Type: provider.PartToolUse, ID: c.ID, Name: c.Name, Input: c.Input})
			r.pending[c.ID] = true
		}
		if len(r.pending) == 0 {
			r.turn = nil
			if len(msg.Content) > 0 {
				r.messages = append(r.messages, msg)
			}
		} else {
			r.turn = &msg
		}
	case "toolFinished":
		if r.turn == nil || !r.pending[ev.CallID] {
			return // a background command's second event, or unknown
		}
		delete(r.pending, ev.CallID)
		r.results = append(r.results, provider.Part{Type: provider.PartToolResult, ToolUseID: ev.CallID,
			ToolName: ev.Tool, Content: resultText(ev.Result), IsError: !ev.OK})
		if len(r.pending) > 0 {
			return
		}
		r.messages = append(r.messages, *r.turn, provider.Message{Role: provider.RoleUser, Content: r.results})
		r.turn, r.results = nil, nil
	default:
		return
	}
	if wait := saveInterval - time.Since(r.last); wait > 0 {
		if r.timer == nil {
			r.timer = time.AfterFunc(wait, func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.timer = nil
				if !r.done {
					r.saveLocked()
				}
			})
		}
		return
	}
	r.saveLocked()
}

// finish saves the final status, summary and conversation.
func (r *taskRecorder) finish(sum agent.Summary, messages []provider.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	r.rec.Status = sum.Status
	if sum.Error != nil {
		r.rec.Error = *sum.Error
	}
	r.rec.Summary, _ = json.Marshal(sum)
	r.messages = messages
	r.saveLocked()
}

func (r *taskRecorder) saveLocked() {
	r.last = time.Now()
	t := r.rec
	if msgs, err := json.Marshal(r.messages); err == nil {
		t.Messages = msgs
	}
	r.r.redactTask(&t)
	if err := r.st.Save(&t); err != nil {
		r.r.log().Warn("saving the task", "task", t.TaskID, "err", err)
	}
	r.rec.CreatedAt = t.CreatedAt
}

// resultText is the tool result content the model saw: a string as is,
// anything else as JSON.
func resultText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// redactTask replaces every key the runtime holds in the record's title,
// error, summary and messages with "[redacted]" (addendum §11).
func (rn *Runner) redactTask(t *store.Task) {
	t.Title = rn.Secrets.Redact(t.Title)
	t.Error = rn.Secrets.Redact(t.Error)
	t.Summary = rn.Secrets.RedactJSON(t.Summary)
	t.Messages = rn.Secrets.RedactJSON(t.Messages)
}

// firstMessage is the task's new user message as the agent builds it: the
// prompt (with the editor block) and the images.
func firstMessage(prompt string, images []provider.Part) provider.Message {
	m := provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: prompt}}}
	return provider.Message{Role: m.Role, Content: append(m.Content, images...)}
}
