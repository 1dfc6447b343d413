package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

type runParams struct {
	Prompt   string          `json:"prompt"`
	Images   []imageInput    `json:"images"`
	Provider json.RawMessage `json:"provider"`
	ChatMode string          `json:"chatMode"`
	TaskID   string          `json:"taskId"`
	Policy   json.RawMessage `json:"policy"`
	Editor   json.RawMessage `json:"editor"` // editor.go: EditorContext
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

func newTaskID() string {
	var b [8]byte
	rand.Read(b[:])
	return "task-" + hex.EncodeToString(b[:])
}

// agentRun runs a top-level task and answers with its summary; agent/event
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
	editor, err := parseEditor(p.Editor)
	if err != nil {
		return nil, err
	}
	pol, err := policy.Parse(p.Policy)
	if err != nil {
		return nil, invalidParams("policy: %v", err)
	}
	prov, err := s.parseProvider(p.Provider)
	if err != nil {
		return nil, err
	}
	loop, err := s.parseLoopParams(params)
	if err != nil {
		return nil, err
	}
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	st, sandbox := s.store, s.sandbox
	s.mu.Unlock()

	taskID := p.TaskID
	var history []provider.Message
	var saved *store.Task
	if taskID != "" {
		if !store.ValidID(taskID) {
			return nil, invalidParams("taskId %q is not a valid task id", taskID)
		}
		// tasks.go: from dataDir, or this session's memory without one.
		if t, err := s.loadTask(st, taskID); err == nil {
			saved = t
			if len(t.Messages) > 0 {
				if err := json.Unmarshal(t.Messages, &history); err != nil {
					return nil, invalidParams("saved task %s has an unreadable conversation: %v", taskID, err)
				}
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	} else {
		taskID = newTaskID()
	}
	// editor.go: the EditorContext block leads the first user message.
	block, err := editorBlock(ws, editor)
	if err != nil {
		return nil, err
	}
	prompt := block + p.Prompt

	jsonrpc.Async(ctx)
	var rec *taskRecorder                 // tasks.go: saves the task as it runs
	deltas := newDeltaRedactor(s.secrets) // redactstream.go: keys split across deltas
	emit := func(ev agent.Event) {
		if rec != nil {
			rec.event(ev)
		}
		for _, out := range deltas.events(ev) {
			s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: taskID, Event: s.redactEvent(out)})
		}
		if ev.Type == "fileChanged" && ev.Path != "" {
			s.filesChanged(ctx, []tool.FileChange{{Path: ev.Path}})
		}
	}
	if mode == "team" {
		emit(agent.Event{Type: "warning", Message: "team mode is not available in this runtime yet; the task runs as one agent"})
		mode = "agent"
	}

	ctl := agent.NewControl()
	if !s.running.add(taskID, ctl) {
		return nil, invalidParams("task %s is already running", taskID)
	}
	defer s.running.remove(taskID)
	record := &store.Task{TaskID: taskID, Title: title(p.Prompt), Status: store.StatusRunning, ChatMode: mode,
		Model: prov.Config().Model, Owner: store.Self()}
	if saved != nil {
		record.CreatedAt = saved.CreatedAt
		record.Title = saved.Title
	}
	rec = s.startTask(st, record, history, firstMessage(prompt, images))

	env := tool.NewEnv(ws.Root(), liveIndex{ws}, sandbox, taskID)
	env.Edits = s.toolEdits()
	summary, messages := agent.Run(ctx, agent.Params{
		TaskID:   taskID,
		Prompt:   prompt,
		ChatMode: mode,
		Images:   images,
		Policy:   pol,
		System:   projectContext(ws),
		Excerpts: s.firstRequestContext(ctx, p.Prompt), // retrieve.go
		History:  history,
		Limits:   loop.limits,
		// The agent runs the checks (addendum §12); this is only the config.
		Validation: loop.validation,
		Skills:     s.activeSkills(p.Prompt, editorPaths(ws.Root(), editor)), // skills.go
	}, agent.Options{
		Provider: prov,
		Tools:    s.tools,
		Env:      env,
		Approve:  s.approver(),
		Emit:     emit,
		Logger:   s.log,
		// agentctl.go: steering, cancelTool, routes, fallbacks, prices.
		Control:   ctl,
		WaitTools: s.waitMCPTools, // mcp.go
		Routes:    loop.routes,
		Fallbacks: loop.fallbacks,
		Prices:    loop.prices,
		Windows:   s.windows,
		Classify:  retrieve.Classify,
		Hooks:     s.hookRunner(ws.Root(), sandbox), // hooks.go
		Redact:    s.secrets.Redact,
	})

	rec.finish(summary, messages)
	return s.redactSummary(summary), nil
}

// title is the first line of the prompt, cut at 80 characters.
func title(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if utf8.RuneCountInString(line) > 80 {
		r := []rune(line)
		line = string(r[:80]) + "…"
	}
	return line
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

// projectContext is the workspace part of the agent's system prompt: the
// project, its commands and the instructions that apply at the root.
func projectContext(ws *workspace.Workspace) string {
	sum := ws.Summary()
	var b strings.Builder
	fmt.Fprintf(&b, "Workspace root: %s\n", sum.Root)
	pr := sum.Project
	fmt.Fprintf(&b, "Project: %s", pr.Name)
	if len(pr.Kinds) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(pr.Kinds, ", "))
	}
	b.WriteString("\n")
	if len(pr.Languages) > 0 {
		b.WriteString("Languages:")
		for i, l := range pr.Languages {
			if i == 6 {
				break
			}
			fmt.Fprintf(&b, " %s (%d files)", l.Language, l.Files)
		}
		b.WriteString("\n")
	}
	for _, k := range []string{"build", "test", "lint", "run"} {
		if c, ok := pr.Commands[k]; ok && c != "" {
			fmt.Fprintf(&b, "%s command: %s\n", k, c)
		}
	}
	fmt.Fprintf(&b, "Indexed files: %d\n", sum.Stats.IndexedFiles)
	for _, in := range sum.Instructions {
		if in.Scope == "directory" {
			fmt.Fprintf(&b, "\nInstructions in %s apply to work under %s/ (read them with read_file when you work there).\n", in.Source, in.Dir)
			continue
		}
		fmt.Fprintf(&b, "\n<instructions source=%q scope=%q>\n%s\n</instructions>\n", in.Source, in.Scope, in.Content)
	}
	return b.String()
}

type taskIDParams struct {
	TaskID string `json:"taskId"`
}

func (s *Server) taskStore() *store.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store
}

// agentTasks: agent/tasks → { tasks: [{ taskId, title, status, chatMode,
// model, createdAt, updatedAt }] } newest first (addendum §11); without a
// dataDir, this session's tasks kept in memory (tasks.go).
func (s *Server) agentTasks(ctx context.Context, params json.RawMessage) (any, error) {
	st := s.taskStore()
	if st == nil {
		return map[string]any{"tasks": s.tasks.list()}, nil
	}
	list, err := st.List()
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
	st := s.taskStore()
	if !store.ValidID(p.TaskID) {
		return nil, invalidParams("no saved task %q", p.TaskID)
	}
	t, err := s.loadTask(st, p.TaskID)
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
// not deleted (false): its recorder would save it again when it ends. That
// is a task this runtime runs, or one whose saved record is `running` with
// a live owner (another runtime on the same dataDir). Cancel it first
// (docs/runtime.md "Agent tasks").
func (s *Server) agentDeleteTask(ctx context.Context, params json.RawMessage) (any, error) {
	var p taskIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	st := s.taskStore()
	if !store.ValidID(p.TaskID) || s.running.get(p.TaskID) != nil {
		return false, nil
	}
	if st == nil {
		return s.tasks.remove(p.TaskID), nil
	}
	if t, err := st.Load(p.TaskID); err == nil && t.Status == store.StatusRunning && store.OwnerAlive(t.Owner) {
		return false, nil
	}
	return st.Delete(p.TaskID)
}
