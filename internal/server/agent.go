package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/store"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/team"
)

type runParams struct {
	Prompt   string          `json:"prompt"`
	Images   []imageInput    `json:"images"`
	Provider json.RawMessage `json:"provider"`
	ChatMode string          `json:"chatMode"`
	TaskID   string          `json:"taskId"`
	Policy   json.RawMessage `json:"policy"`
	Editor   json.RawMessage `json:"editor"` // task.Editor (EditorContext)
}

// imageInput is protocol.md ImageInput.
type imageInput struct {
	MediaType string `json:"mediaType"`
	Data      string `json:"data"`
}

// maxImages is the image cap of a prompt (protocol.md Images).
const maxImages = 8

// validateImages checks ImageInput[] as protocol.md Images says; -32602 otherwise.
func validateImages(images []imageInput) ([]provider.Part, error) {
	if len(images) > maxImages {
		return nil, invalidParams("at most %d images per prompt, got %d", maxImages, len(images))
	}
	parts := make([]provider.Part, 0, len(images))
	for i, im := range images {
		if err := provider.ValidateImage(im.MediaType, im.Data); err != nil {
			return nil, invalidParams("images[%d].%s: %s", i, err.Field, err.Message)
		}
		parts = append(parts, provider.Part{Type: provider.PartImage, MediaType: im.MediaType, Data: im.Data})
	}
	return parts, nil
}

// agentRun decodes agent/run, runs the task with the task layer's runner
// (the agent loop as its engine) and answers with its summary; agent/event
// notifications stream while it runs (protocol.md Agent, tools, and
// extensions).
func (s *Server) agentRun(ctx context.Context, params json.RawMessage) (any, error) {
	var p runParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, invalidParams("prompt is required")
	}
	if !utf8.ValidString(p.Prompt) {
		return nil, invalidParams("prompt is not valid UTF-8")
	}
	mode := p.ChatMode
	if mode == "" {
		mode = "agent"
	}
	switch mode {
	case "ask", "plan", "agent", "team":
	default:
		return nil, invalidParams("chatMode must be ask, plan, agent or team, got %q", p.ChatMode)
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
		return nil, invalidParams("%v", err) // policy errors name the field
	}
	prov, err := s.parseProvider(p.Provider)
	if err != nil {
		return nil, err
	}
	loop, err := s.parseLoopParams(params)
	if err != nil {
		return nil, err
	}
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	tc, err := s.parseTeamParams(params) // teammode.go
	if err != nil {
		return nil, err
	}
	var engine task.Engine = &task.AgentEngine{Provider: prov, Routes: loop.routes, Fallbacks: loop.fallbacks, Prices: loop.prices,
		Limits: loop.limits, Windows: s.windows, Classify: retrieve.Classify,
		Validation: loop.validation, WaitTools: s.waitMCPTools, Redact: s.secrets.Redact}
	var emitter func(context.Context, string) func(agent.Event)
	if mode == "team" {
		// The lead is a task like any other; its engine adds the team
		// tools (or warns and runs one agent without a repository).
		engine = &team.Lead{Inner: engine, Subagents: s.teamRunner(proj), Engines: s.roleEngines(prov, loop, tc),
			MaxParallel: tc.maxParallel, Editor: editor}
		emitter = s.teamEmitter // team.go: subagents' deltas redacted per subagent
	}
	summary, err := s.runTaskWith(ctx, &task.Request{
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
// is checked (Prepare's -32602 before anything runs), the call turns
// asynchronous, every event goes out as agent/event with the keys
// redacted (across deltas too), and the summary comes back to be encoded.
func (s *Server) runTask(ctx context.Context, req *task.Request) (agent.Summary, error) {
	return s.runTaskWith(ctx, req, nil)
}

// runTaskWith is runTask with the events sent by emitter(ctx, taskID)
// (nil: one delta redactor for the task's stream).
func (s *Server) runTaskWith(ctx context.Context, req *task.Request, emitter func(context.Context, string) func(agent.Event)) (agent.Summary, error) {
	var taskID string
	var emit func(agent.Event)
	deltas := newDeltaRedactor(s.secrets) // redactstream.go: keys split across deltas
	req.Emit = func(ev agent.Event) {
		if emit != nil {
			emit(ev)
			return
		}
		for _, out := range deltas.events(ev) {
			s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: taskID, Event: protocol.RawEvent(s.secrets.RedactJSON(mustJSON(out)))})
		}
	}
	prep, err := s.runner.Prepare(req)
	if err != nil {
		return agent.Summary{}, err
	}
	taskID = prep.TaskID()
	if emitter != nil {
		emit = emitter(ctx, taskID) // set before the task runs: no event is sent yet
	}
	if s.runner.Running(taskID) {
		return agent.Summary{}, invalidParams("task %s is already running", taskID)
	}
	jsonrpc.Async(ctx)
	summary, err := s.runner.Run(ctx, prep)
	if errors.Is(err, task.ErrBusy) {
		return agent.Summary{}, invalidParams("task %s is already running", taskID)
	}
	return summary, err
}

// mustJSON marshals a value the runtime built (events, summaries).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// approver asks the client with agent/requestApproval. No answer, an error or
// an unknown decision is deny (protocol.md agent/requestApproval).
func (s *Server) approver() agent.Approver {
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
		raw, err := s.conn.Call(ctx, protocol.MethodRequestApproval, map[string]any{
			"taskId": req.TaskID, "callId": req.CallID, "tool": req.Tool,
			"permission": req.Permission, "input": req.Input, "preview": req.Preview,
		})
		if err != nil {
			return "deny", err
		}
		var r struct {
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return "deny", fmt.Errorf("approval answer: %w", err)
		}
		switch r.Decision {
		case "allow", "allowSession", "deny":
			return agent.Decision(r.Decision), nil
		}
		return "deny", fmt.Errorf("unknown approval decision %q", r.Decision)
	}
}

type taskIDParams struct {
	TaskID string `json:"taskId"`
}

// agentTasks: agent/tasks → { tasks: [{ taskId, title, status, chatMode,
// model, createdAt, updatedAt }] } newest first (addendum §11); without a
// dataDir, this session's tasks kept in memory.
func (s *Server) agentTasks(ctx context.Context, params json.RawMessage) (any, error) {
	list, err := s.runner.List()
	if err != nil {
		return nil, err
	}
	return map[string]any{"tasks": list}, nil
}

// agentTask: agent/task { taskId } → { summary, messages, title }.
func (s *Server) agentTask(ctx context.Context, params json.RawMessage) (any, error) {
	var p taskIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	t, err := s.runner.Load(p.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalidParams("no saved task %q", p.TaskID)
	}
	if err != nil {
		return nil, err
	}
	msgs := boundMessages(t.Messages) // bound.go: under the message cap
	if len(msgs) == 0 {
		msgs = json.RawMessage("[]")
	}
	sum := t.Summary
	if len(sum) == 0 {
		sum = json.RawMessage("null")
	}
	return map[string]any{"summary": sum, "messages": msgs, "title": t.Title, "status": t.Status}, nil
}

// agentDeleteTask: agent/deleteTask { taskId } → bool. A running task is
// not deleted (false): its recorder would save it again when it ends
// (task.Runner.Delete; docs/runtime.md "Agent tasks"). Cancel it first.
func (s *Server) agentDeleteTask(ctx context.Context, params json.RawMessage) (any, error) {
	var p taskIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return s.runner.Delete(p.TaskID)
}

// agentReplay: agent/replay { taskId } (additive, docs/tasklog.md) sends the
// task's saved events again as agent/event notifications marked
// `replay: true`, then the `replayed` marker { events, status, running },
// and answers { taskId, events, status, running }. A task this runtime
// runs keeps streaming: its live events that arrive meanwhile follow the
// marker, in order. -32602 for an unknown task.
func (s *Server) agentReplay(ctx context.Context, params json.RawMessage) (any, error) {
	var p taskIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, invalidParams("taskId is required")
	}
	info, err := s.runner.Replay(p.TaskID, func(ev json.RawMessage) {
		s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: p.TaskID, Event: protocol.RawEvent(s.secrets.RedactJSON(ev)), Replay: true})
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalidParams("no saved task %q", p.TaskID)
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}
