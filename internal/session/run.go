package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/store"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/team"
)

// RunRequest is agent/run as a front end decoded it (protocol.md agent/run;
// the loop's and team mode's fields in Loop and Team).
type RunRequest struct {
	Prompt   string          `json:"prompt"`
	Images   []Image         `json:"images"`
	Provider json.RawMessage `json:"provider"`
	ChatMode string          `json:"chatMode"`
	TaskID   string          `json:"taskId"`
	Policy   json.RawMessage `json:"policy"`
	Editor   json.RawMessage `json:"editor"` // task.Editor (EditorContext)
	LoopParams
	TeamParams
}

// Image is protocol.md ImageInput.
type Image struct {
	MediaType string `json:"mediaType"`
	Data      string `json:"data"`
}

// maxImages is the image cap of a prompt (protocol.md Images).
const maxImages = 8

// MaxImages is the image cap of a prompt (protocol.md Images).
const MaxImages = maxImages

// CheckImage checks one image as agent/run does (protocol.md Images): the
// error names the field (mediaType or data) and what is wrong with it.
func CheckImage(im Image) error {
	if err := provider.ValidateImage(im.MediaType, im.Data); err != nil {
		return fmt.Errorf("%s: %s", err.Field, err.Message)
	}
	return nil
}

// validateImages checks ImageInput[] as protocol.md Images says.
func validateImages(images []Image) ([]provider.Part, error) {
	if len(images) > maxImages {
		return nil, Invalid("at most %d images per prompt, got %d", maxImages, len(images))
	}
	parts := make([]provider.Part, 0, len(images))
	for i, im := range images {
		if err := provider.ValidateImage(im.MediaType, im.Data); err != nil {
			return nil, Invalid("images[%d].%s: %s", i, err.Field, err.Message)
		}
		parts = append(parts, provider.Part{Type: provider.PartImage, MediaType: im.MediaType, Data: im.Data})
	}
	return parts, nil
}

// engineUse says which of the loop config an agent engine takes.
type engineUse int

const (
	topLevel  engineUse = iota // a task of its own: routes, fallbacks, waits for MCP tools
	subagent                   // a team subagent: routes and fallbacks
	candidate                  // a best-of candidate: its own provider only
)

// agentEngine is the one place the agent loop's engine is assembled: the
// provider with the loop config (prices, limits, validation; routes and
// fallbacks but for a best-of candidate; the wait for MCP servers still
// starting for a top-level task), the session's context windows and key
// redaction.
func (s *Session) agentEngine(prov provider.Provider, loop loopConfig, use engineUse) *agent.Engine {
	e := &agent.Engine{Provider: prov, Prices: loop.prices, Limits: loop.limits, Windows: s.windows,
		Classify: retrieve.Classify, Validation: loop.validation, Redact: s.secrets.Redact}
	if use != candidate {
		e.Routes, e.Fallbacks = loop.routes, loop.fallbacks
	}
	if use == topLevel {
		e.WaitTools = s.waitMCPTools
	}
	return e
}

// Run is agent/run: the request checked (invalid params before anything
// runs), the task run with the task layer's runner (the agent loop, or in
// team mode a team lead over it), its events sent as agent/event with the
// keys redacted (across deltas too); the summary comes back as JSON with
// the keys redacted.
func (s *Session) Run(ctx context.Context, p *RunRequest) (json.RawMessage, error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, Invalid("prompt is required")
	}
	if !utf8.ValidString(p.Prompt) {
		return nil, Invalid("prompt is not valid UTF-8")
	}
	mode := p.ChatMode
	if mode == "" {
		mode = "agent"
	}
	switch mode {
	case "ask", "plan", "agent", "team":
	default:
		return nil, Invalid("chatMode must be ask, plan, agent or team, got %q", p.ChatMode)
	}
	images, err := validateImages(p.Images)
	if err != nil {
		return nil, err
	}
	editor, err := task.ParseEditor(p.Editor)
	if err != nil {
		return nil, err
	}
	pol, err := policy.Parse(p.Policy)
	if err != nil {
		return nil, Invalid("%v", err) // policy errors name the field
	}
	prov, err := s.parseProvider(p.Provider)
	if err != nil {
		return nil, err
	}
	loop, err := s.parseLoop(&p.LoopParams)
	if err != nil {
		return nil, err
	}
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	tc, err := s.parseTeam(&p.TeamParams, p.Limits) // teammode.go
	if err != nil {
		return nil, err
	}
	var engine task.Engine = s.agentEngine(prov, loop, topLevel)
	var emitter func(context.Context, string) func(protocol.AgentEvent, json.RawMessage)
	if mode == "team" {
		// The lead is a task like any other; its engine adds the team
		// tools (or warns and runs one agent without a repository).
		engine = &team.Lead{Inner: engine, Subagents: s.teamRunner(proj), Engines: s.roleEngines(prov, loop, tc),
			MaxParallel: tc.maxParallel, Editor: editor}
		emitter = s.teamEmitter // team.go: subagents' deltas redacted per subagent
	}
	summary, err := s.runTask(ctx, &task.Request{
		TaskID: p.TaskID, Prompt: p.Prompt, Images: images, ChatMode: mode, Policy: pol, Editor: editor,
		Model: prov.Config().Model, Project: proj, Env: s.toolEnv(proj, ""),
		Engine:  engine,
		Approve: s.approver(),
		Hooks:   s.hookRunner(proj.Root(), s.sandboxOn()), // hooks.go
	}, emitter)
	if err != nil {
		return nil, err
	}
	return s.secrets.RedactJSON(mustJSON(summary)), nil
}

// runTask runs a decoded request with the task layer's runner: the request
// is checked (Prepare's invalid params before anything runs), the call
// detaches, every event goes out as agent/event by emitter(ctx, taskID)
// (nil: one delta redactor for the task's stream, the keys redacted once
// per event: a recorded event's redacted JSON is sent as recorded), and
// the summary comes back to be encoded.
func (s *Session) runTask(ctx context.Context, req *task.Request, emitter func(context.Context, string) func(protocol.AgentEvent, json.RawMessage)) (task.Summary, error) {
	var taskID string
	var emit func(protocol.AgentEvent, json.RawMessage)
	deltas := newDeltaRedactor(s.secrets) // redactstream.go: keys split across deltas
	req.EmitJSON = func(ev protocol.AgentEvent, raw json.RawMessage) {
		if emit != nil {
			emit(ev, raw)
			return
		}
		for _, out := range deltas.encoded(ev, raw) {
			s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: taskID, Event: protocol.RawEvent(out)})
		}
	}
	prep, err := s.runner.Prepare(req)
	if err != nil {
		return task.Summary{}, err
	}
	taskID = prep.TaskID()
	if emitter != nil {
		emit = emitter(ctx, taskID) // set before the task runs: no event is sent yet
	}
	if s.runner.Running(taskID) {
		return task.Summary{}, Invalid("task %s is already running", taskID)
	}
	detach(ctx)
	summary, err := s.runner.Run(ctx, prep)
	if errors.Is(err, task.ErrBusy) {
		return task.Summary{}, Invalid("task %s is already running", taskID)
	}
	return summary, err
}

// NewTaskID is a fresh task id (a front end that names a task before its
// first run: an Agent Client Protocol session is a task).
func NewTaskID() string { return task.NewID() }

// Tasks is agent/tasks: the saved tasks, newest first (addendum §11);
// without a dataDir, this session's tasks kept in memory.
func (s *Session) Tasks() ([]store.Info, error) { return s.runner.List() }

// SavedTask is agent/task's result (fields in the wire's key order).
type SavedTask struct {
	Messages json.RawMessage `json:"messages"`
	Status   string          `json:"status"`
	Summary  json.RawMessage `json:"summary"`
	Title    string          `json:"title"`
}

// Task is agent/task: a saved task's summary, conversation (bounded under
// the message cap), title and status; invalid params for an unknown task.
func (s *Session) Task(taskID string) (SavedTask, error) {
	t, err := s.runner.Load(taskID)
	if errors.Is(err, store.ErrNotFound) {
		return SavedTask{}, Invalid("no saved task %q", taskID)
	}
	if err != nil {
		return SavedTask{}, err
	}
	msgs := boundMessages(t.Messages) // bound.go: under the message cap
	if len(msgs) == 0 {
		msgs = json.RawMessage("[]")
	}
	sum := t.Summary
	if len(sum) == 0 {
		sum = json.RawMessage("null")
	}
	return SavedTask{Summary: sum, Messages: msgs, Title: t.Title, Status: t.Status}, nil
}

// DeleteTask is agent/deleteTask. A running task is not deleted (false):
// its recorder would save it again when it ends (task.Runner.Delete;
// docs/runtime.md "Agent tasks"). Cancel it first.
func (s *Session) DeleteTask(taskID string) (bool, error) { return s.runner.Delete(taskID) }

// Replay is agent/replay (additive, docs/tasklog.md): the task's saved
// events are sent again as agent/event notifications marked `replay:
// true`, then the `replayed` marker; a task this runtime runs keeps
// streaming its live events after the marker, in order. Invalid params for
// an unknown task.
func (s *Session) Replay(ctx context.Context, taskID string) (protocol.ReplayResult, error) {
	if taskID == "" {
		return protocol.ReplayResult{}, Invalid("taskId is required")
	}
	info, err := s.runner.Replay(taskID, func(ev json.RawMessage) {
		s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: taskID, Event: protocol.RawEvent(s.secrets.RedactJSON(ev)), Replay: true})
	})
	if errors.Is(err, store.ErrNotFound) {
		return protocol.ReplayResult{}, Invalid("no saved task %q", taskID)
	}
	return info, err
}

// Steer is agent/steer: true when the running task queued text, false when
// no such task runs or its queue (10) is full. Text is 1..=100 000
// characters after trimming, else invalid params.
func (s *Session) Steer(taskID, text string) (bool, error) {
	t, ok := agent.ValidSteerText(text)
	if !ok {
		return false, Invalid("text must be 1 to %d characters after trimming", agent.MaxSteerChars)
	}
	return s.runner.Steer(taskID, t), nil
}

// CancelTool is agent/cancelTool: true when a running built-in tool call or
// background command of that task was stopped. A Claude Code Bash call may
// take seconds to become stoppable (the CLI reports its task first): the
// call detaches meanwhile.
func (s *Session) CancelTool(ctx context.Context, taskID, callID string) bool {
	detach(ctx)
	return s.runner.CancelTool(taskID, callID)
}
