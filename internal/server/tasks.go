package server

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// Saved tasks (protocol.md agent/tasks, agent/task, agent/deleteTask;
// addendum §7, §11). With a dataDir each task is written atomically to
// dataDir/tasks/<taskId>.json: `running` when it starts, again at most every
// 500 ms while it runs (after assistantMessage and toolFinished events), and
// with its final status, summary and conversation when it ends. Without a
// dataDir nothing touches the disk: the same records are kept in memory for
// this session (at most maxSessionTasks, oldest dropped), so agent/tasks,
// agent/task, agent/deleteTask and continuing a task by its taskId work
// until the runtime exits. Every key the runtime holds is redacted from a
// record before it is stored, in memory or on disk.

// saveInterval is the least time between two saves of a running task.
const saveInterval = 500 * time.Millisecond

// maxSessionTasks bounds the in-memory task list used without a dataDir.
const maxSessionTasks = 100

// taskState is the server's in-memory task list (no dataDir).
type taskState struct {
	mu    sync.Mutex
	tasks map[string]*store.Task
}

func (ts *taskState) put(t *store.Task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tasks == nil {
		ts.tasks = map[string]*store.Task{}
	}
	now := time.Now().UTC()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = now
	cp := *t
	ts.tasks[t.TaskID] = &cp
	for len(ts.tasks) > maxSessionTasks {
		var oldest *store.Task
		for _, x := range ts.tasks {
			if oldest == nil || x.UpdatedAt.Before(oldest.UpdatedAt) {
				oldest = x
			}
		}
		delete(ts.tasks, oldest.TaskID)
	}
}

func (ts *taskState) get(id string) (*store.Task, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tasks[id]
	if !ok {
		return nil, false
	}
	cp := *t
	return &cp, true
}

func (ts *taskState) remove(id string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	_, ok := ts.tasks[id]
	delete(ts.tasks, id)
	return ok
}

func (ts *taskState) list() []store.Info {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]store.Info, 0, len(ts.tasks))
	for _, t := range ts.tasks {
		out = append(out, store.Info{TaskID: t.TaskID, Title: t.Title, Status: t.Status, ChatMode: t.ChatMode,
			Model: t.Model, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out
}

// loadTask finds a saved task on disk (st non-nil) or in this session's
// memory; store.ErrNotFound when there is none.
func (s *Server) loadTask(st *store.Store, id string) (*store.Task, error) {
	if st != nil {
		return st.Load(id)
	}
	if t, ok := s.tasks.get(id); ok {
		return t, nil
	}
	return nil, store.ErrNotFound
}

// taskRecorder saves one running task. Its conversation while running is
// rebuilt from agent events: the history, the new user message, then each
// assistant message and, once every tool call of it has finished, the user
// message with their results, so a saved conversation never holds a
// toolUse without its toolResult. Steering messages and background-command
// outputs join only with the final save (agent.Run's own conversation).
type taskRecorder struct {
	s  *Server
	st *store.Store // nil: memory only

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
func (s *Server) startTask(st *store.Store, rec *store.Task, history []provider.Message, first provider.Message) *taskRecorder {
	r := &taskRecorder{s: s, st: st, rec: *rec}
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
	r.s.redactTask(&t)
	if r.st == nil {
		r.s.tasks.put(&t)
	} else if err := r.st.Save(&t); err != nil {
		r.s.log.Warn("saving the task file", "task", t.TaskID, "err", err)
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
func (s *Server) redactTask(t *store.Task) {
	t.Title = s.secrets.Redact(t.Title)
	t.Error = s.secrets.Redact(t.Error)
	t.Summary = s.redactJSON(t.Summary)
	t.Messages = s.redactJSON(t.Messages)
}

// redactJSON redacts the keys in a JSON document: the raw key and its
// JSON-escaped forms (a key holding '"', '\\', '<' or control characters is
// escaped inside JSON strings). If the byte replacement breaks the
// document, every string in it is redacted after decoding instead.
func (s *Server) redactJSON(raw json.RawMessage) json.RawMessage {
	secrets := s.secrets.List()
	if len(raw) == 0 || len(secrets) == 0 {
		return raw
	}
	out := []byte(raw)
	for _, k := range secrets {
		if k == "" {
			continue
		}
		forms := [][]byte{[]byte(k)}
		if b, err := json.Marshal(k); err == nil {
			forms = append(forms, b[1:len(b)-1])
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(k) == nil {
			b := bytes.TrimSpace(buf.Bytes())
			forms = append(forms, b[1:len(b)-1])
		}
		for _, f := range forms {
			out = bytes.ReplaceAll(out, f, []byte("[redacted]"))
		}
	}
	if json.Valid(out) {
		return out
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(s.redactValue(v))
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func (s *Server) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.secrets.Redact(x)
	case []any:
		for i := range x {
			x[i] = s.redactValue(x[i])
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[s.secrets.Redact(k)] = s.redactValue(e)
		}
		return m
	}
	return v
}

// firstMessage is the task's new user message as the agent builds it: the
// prompt (with the editor block) and the images.
func firstMessage(prompt string, images []provider.Part) provider.Message {
	m := provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: prompt}}}
	return provider.Message{Role: m.Role, Content: append(m.Content, images...)}
}

// redactEvent is ev as wire JSON with every key the runtime holds redacted:
// a model can echo a key it saw in a file or an error (addendum §11).
func (s *Server) redactEvent(ev agent.Event) any {
	b, err := json.Marshal(ev)
	if err != nil {
		return ev
	}
	return s.redactJSON(b)
}

// redactSummary is the agent/run summary as wire JSON, keys redacted.
func (s *Server) redactSummary(sum agent.Summary) any {
	b, err := json.Marshal(sum)
	if err != nil {
		return sum
	}
	return s.redactJSON(b)
}
