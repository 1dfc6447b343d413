package task

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// Replay (agent/replay, docs/tasklog.md). A task's recorded events are sent
// again in order, then a `replayed` marker. A running task's live events
// pass through its stream: while a replay of it runs they are held, in
// order, and sent right after the marker, so the client sees the recorded
// events up to a point, the marker, and every later event once: none lost,
// none twice, none out of order.

// stream serialises a running task's events: each is recorded and then
// emitted (or held while a replay runs) under one lock.
type stream struct {
	mu        sync.Mutex
	cond      *sync.Cond
	emit      func(protocol.AgentEvent, json.RawMessage)
	replaying int
	held      []heldEvent
}

// heldEvent is an event and its recorded JSON (nil when not recorded).
type heldEvent struct {
	ev  protocol.AgentEvent
	raw json.RawMessage
}

func (s *stream) send(ev protocol.AgentEvent, rec *taskRecorder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var raw json.RawMessage
	if rec != nil {
		raw = rec.event(ev)
	}
	if s.replaying > 0 {
		s.held = append(s.held, heldEvent{ev, raw})
		return
	}
	s.emit(ev, raw)
}

// hold starts holding live events and runs load under the lock, so what it
// reads is exactly what was recorded before the first held event.
func (s *stream) hold(load func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaying++
	load()
}

// release ends one replay; the last one sends the held events.
func (s *stream) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaying--
	if s.replaying > 0 {
		return
	}
	held := s.held
	s.held = nil
	for _, h := range held {
		s.emit(h.ev, h.raw)
	}
	if s.cond != nil {
		s.cond.Broadcast()
	}
}

// wait returns once no replay holds events (Run's end: the held `done`
// goes out before the summary).
func (s *stream) wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cond == nil {
		s.cond = sync.NewCond(&s.mu)
	}
	for s.replaying > 0 {
		s.cond.Wait()
	}
}

// ReplayInfo is what a replay sent.
type ReplayInfo = protocol.ReplayResult

// Replay sends the saved events of taskID in order through send, then the
// `replayed` marker { events, status, running }. A task saved before the
// log (no events) is replayed from its conversation (HistoryEvents).
// store.ErrNotFound for an unknown task.
func (r *Runner) Replay(taskID string, send func(json.RawMessage)) (ReplayInfo, error) {
	if !store.ValidID(taskID) {
		return ReplayInfo{}, store.ErrNotFound
	}
	var t *store.Task
	var err error
	h := r.get(taskID)
	if h != nil {
		h.stream.hold(func() { t, err = r.store().Load(taskID) })
		defer h.stream.release()
	} else {
		t, err = r.store().Load(taskID)
	}
	if err != nil {
		return ReplayInfo{}, err
	}
	if t == nil {
		return ReplayInfo{}, errors.New("task: no saved task")
	}
	var events []json.RawMessage
	if len(t.Events) > 0 {
		if err := json.Unmarshal(t.Events, &events); err != nil {
			return ReplayInfo{}, err
		}
	} else if len(t.Messages) > 0 {
		var msgs []provider.Message
		if err := json.Unmarshal(t.Messages, &msgs); err != nil {
			return ReplayInfo{}, err
		}
		events = HistoryEvents(msgs)
	}
	for _, ev := range events {
		send(r.Secrets.RedactJSON(ev))
	}
	info := ReplayInfo{TaskID: taskID, Events: len(events), Status: protocol.TaskStatus(t.Status), Running: h != nil}
	marker, _ := json.Marshal(protocol.ReplayedEvent{Events: info.Events, Running: info.Running, Status: info.Status})
	send(marker)
	return info, nil
}

// HistoryEvents are the events that show a conversation that has no
// recorded events (a task saved before the log): a `userMessage` for each
// user prompt, an `assistantMessage` for each assistant message and a
// `toolFinished` for each tool result (durationMs 0: not recorded).
func HistoryEvents(msgs []provider.Message) []json.RawMessage {
	var out []json.RawMessage
	add := func(v any) {
		if b, err := json.Marshal(v); err == nil {
			out = append(out, b)
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleAssistant:
			var ev protocol.AssistantMessageEvent
			for _, p := range m.Content {
				switch p.Type {
				case provider.PartText:
					ev.Text += p.Text
				case provider.PartToolUse:
					ev.ToolCalls = append(ev.ToolCalls, protocol.ToolCall{ID: p.ID, Name: p.Name, Input: p.Input})
				}
			}
			add(ev)
		default:
			text, images := "", 0
			for _, p := range m.Content {
				switch p.Type {
				case provider.PartText:
					text += p.Text
				case provider.PartImage:
					images++
				case provider.PartToolResult:
					ev := protocol.ToolFinishedEvent{CallID: p.ToolUseID, Tool: p.ToolName, OK: !p.IsError}
					if p.IsError {
						e := p.Content
						ev.Error = &e
					} else {
						ev.Result = p.Content
					}
					add(ev)
				}
			}
			if text != "" || images > 0 {
				add(protocol.UserMessageEvent{Text: text, Images: images})
			}
		}
	}
	return out
}
