package task

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// Saved tasks (protocol.md agent/tasks, agent/task, agent/deleteTask;
// addendum §7, §11; docs/tasklog.md). A running task is recorded in its
// Store's log (Store.Begin): the begin record when it starts, then, as they
// happen, each event worth keeping and each conversation message, so a
// turn writes what it adds and no more; the final status, summary and
// conversation go into the compact snapshot when it ends (Log.Finish).
// With a dataDir the store is the task folder (store.Open); without one it
// is store.Memory, so agent/tasks, agent/task, agent/replay,
// agent/deleteTask and continuing a task by its taskId work until the
// runtime exits. Every key the runtime holds is redacted from a record
// before it is stored, in memory or on disk.

// liveOnly are the events that are not recorded: streamed pieces and live
// views whose content other records hold (the assistant message, the
// tool result, the edit log).
func liveOnly(ev protocol.AgentEvent) bool {
	switch ev.(type) {
	case protocol.TextDeltaEvent, protocol.ThinkingDeltaEvent, protocol.ToolOutputEvent, protocol.DiffEvent:
		return true
	}
	return false
}

// taskRecorder records one running task. Its conversation while running is
// rebuilt from agent events: the new user message, then each assistant
// message and, once every tool call of it has finished, the user message
// with their results, so a recorded conversation never holds a toolUse
// without its toolResult. Steering messages and background-command outputs
// join with the snapshot (agent.Run's own conversation).
type taskRecorder struct {
	r   *Runner
	log store.Log // nil: not recorded (the store failed; logged)

	mu      sync.Mutex
	rec     store.Task
	turn    *provider.Message // assistant message waiting for tool results
	pending map[string]bool
	results []provider.Part
	done    bool
}

// startTask begins the task's log with the record as running, the history
// as events when the saved task has none (a task of the format before the
// log), and the new user message. store.ErrLocked when another runtime
// runs the task.
func (rn *Runner) startTask(rec *store.Task, saved *store.Task, history []provider.Message, first provider.Message, raw string, images int) (*taskRecorder, error) {
	r := &taskRecorder{r: rn, rec: *rec}
	meta := r.rec
	rn.redactTask(&meta)
	log, err := rn.store().Begin(&meta)
	if errors.Is(err, store.ErrLocked) {
		return nil, err
	}
	if err != nil {
		rn.log().Warn("starting the task log; the task runs unrecorded", "task", rec.TaskID, "err", err)
		return r, nil
	}
	r.log = log
	var recs []store.Record
	if saved != nil && len(saved.Events) == 0 && len(history) > 0 {
		for _, ev := range HistoryEvents(history) {
			recs = append(recs, store.Record{Kind: store.RecEvent, Value: rn.Secrets.RedactJSON(ev)})
		}
	}
	user, _ := json.Marshal(protocol.UserMessageEvent{Text: raw, Images: images})
	recs = append(recs, store.Record{Kind: store.RecEvent, Value: rn.Secrets.RedactJSON(user)}, r.message(first))
	r.append(recs)
	return r, nil
}

func (r *taskRecorder) message(m provider.Message) store.Record {
	b, _ := json.Marshal(m)
	return store.Record{Kind: store.RecMessage, Value: r.r.Secrets.RedactJSON(b)}
}

func (r *taskRecorder) append(recs []store.Record) {
	if r.log == nil || len(recs) == 0 {
		return
	}
	if err := r.log.Append(recs...); err != nil {
		r.r.log().Warn("appending to the task log", "task", r.rec.TaskID, "err", err)
	}
}

// event records one agent event (unless it is live only) and the
// conversation messages it completes, in one append. It returns the
// event's JSON with the keys redacted, as recorded (nil when it was not),
// so the front end sends those bytes instead of encoding the event again.
func (r *taskRecorder) event(ev protocol.AgentEvent) (raw json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || liveOnly(ev) {
		return nil
	}
	var recs []store.Record
	if b, err := json.Marshal(ev); err == nil {
		raw = r.r.Secrets.RedactJSON(b)
		recs = append(recs, store.Record{Kind: store.RecEvent, Value: raw})
	}
	switch ev := ev.(type) {
	case protocol.AssistantMessageEvent:
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
				recs = append(recs, r.message(msg))
			}
		} else {
			r.turn = &msg
		}
	case protocol.ToolFinishedEvent:
		if r.turn == nil || !r.pending[ev.CallID] {
			break // a background command's second event, or unknown
		}
		delete(r.pending, ev.CallID)
		r.results = append(r.results, provider.Part{Type: provider.PartToolResult, ToolUseID: ev.CallID,
			ToolName: ev.Tool, Content: resultText(ev.Result), IsError: !ev.OK})
		if len(r.pending) > 0 {
			break
		}
		recs = append(recs, r.message(*r.turn), r.message(provider.Message{Role: provider.RoleUser, Content: r.results}))
		r.turn, r.results = nil, nil
	}
	r.append(recs)
	return raw
}

// finish writes the snapshot with the final status, summary and
// conversation.
func (r *taskRecorder) finish(sum Summary, messages []provider.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.log == nil {
		return
	}
	t := r.rec
	t.Status = string(sum.Status)
	if sum.Error != nil {
		t.Error = *sum.Error
	}
	t.Summary, _ = json.Marshal(sum)
	if msgs, err := json.Marshal(messages); err == nil {
		t.Messages = msgs
	}
	r.r.redactTask(&t)
	if err := r.log.Finish(&t); err != nil {
		r.r.log().Warn("saving the task", "task", t.TaskID, "err", err)
	}
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
