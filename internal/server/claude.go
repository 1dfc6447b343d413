package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/claudecode"
	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// claudeParams are the claude/run params (protocol.md, Claude Code engine;
// docs/claude.md).
type claudeParams struct {
	Prompt         string                     `json:"prompt"`
	Images         []imageInput               `json:"images"`
	TaskID         string                     `json:"taskId"`
	Model          string                     `json:"model"`
	PermissionMode string                     `json:"permissionMode"`
	ClaudePath     string                     `json:"claudePath"`
	UseTaskTools   *bool                      `json:"useTaskTools"`
	ApproveAll     bool                       `json:"approveAll"`
	AllowCommands  bool                       `json:"allowCommands"`
	MCPServers     map[string]json.RawMessage `json:"mcpServers"`
}

// claudeControl lets agent/steer and agent/cancelTool reach a claude/run.
type claudeControl struct {
	ctx context.Context
	run *claudecode.Run
}

func (c claudeControl) Steer(text string) bool { return c.run.Steer(text) }
func (c claudeControl) CancelTool(callID string) bool {
	return c.run.CancelTool(c.ctx, callID)
}

// claudeRun: claude/run drives the Claude Code CLI on the open workspace
// and answers with an agent/run-shaped summary; the task is saved like an
// agent/run task.
func (s *Server) claudeRun(ctx context.Context, params json.RawMessage) (any, error) {
	var p claudeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" || !utf8.ValidString(p.Prompt) {
		return nil, invalidParams("prompt is required (valid UTF-8)")
	}
	images, err := validateImages(p.Images)
	if err != nil {
		return nil, err
	}
	for name := range p.MCPServers {
		if strings.EqualFold(name, claudecode.ReservedServer) {
			return nil, invalidParams("mcpServers: the name %q is reserved for the runtime's own tools", claudecode.ReservedServer)
		}
	}
	switch p.PermissionMode {
	case "", "default", "acceptEdits", "plan":
	default:
		return nil, invalidParams("permissionMode must be default, acceptEdits or plan, got %q", p.PermissionMode)
	}
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	o := claudecode.Options{Bin: p.ClaudePath, Dir: proj.Root(), Prompt: p.Prompt, Model: p.Model,
		PermissionMode: p.PermissionMode, UseTaskTools: p.UseTaskTools == nil || *p.UseTaskTools,
		RuntimeBin: self, AllowCommands: p.AllowCommands, MCPServers: p.MCPServers}
	for _, im := range images {
		o.Images = append(o.Images, claudecode.Image{MediaType: im.MediaType, Data: im.Data})
	}
	for _, spec := range s.tools.Specs() {
		switch spec.Permission {
		case tool.ClassRead:
			o.ReadTools = append(o.ReadTools, spec.Name)
		case tool.ClassEdit:
			o.WriteTools = append(o.WriteTools, spec.Name)
		case tool.ClassCommand:
			o.CommandTools = append(o.CommandTools, spec.Name)
		}
	}
	var taskID string
	deltas := newDeltaRedactor(s.secrets)
	eng := &claudeEngine{s: s, o: o, approveAll: p.ApproveAll, model: p.Model}
	prep, err := s.runner.Prepare(&task.Request{
		TaskID: p.TaskID, Prompt: p.Prompt, Images: images, ChatMode: "claudeCode", Model: p.Model,
		Project: proj, Env: s.toolEnv(proj, ""), Engine: eng, Approve: s.approver(),
		Emit: func(ev agent.Event) {
			for _, out := range deltas.events(ev) {
				s.notify(ctx, protocol.MethodAgentEvent, protocol.AgentEventParams{TaskID: taskID, Event: s.secrets.RedactJSON(mustJSON(out))})
			}
		},
	})
	if err != nil {
		return nil, err
	}
	taskID = prep.TaskID()
	if s.runner.Running(taskID) {
		return nil, invalidParams("task %s is already running", taskID)
	}
	jsonrpc.Async(ctx)
	sum, err := s.runner.Run(ctx, prep)
	if errors.Is(err, task.ErrBusy) {
		return nil, invalidParams("task %s is already running", taskID)
	}
	if err != nil {
		return nil, err
	}
	if eng.startErr != nil {
		if errors.Is(eng.startErr, claudecode.ErrReservedServer) {
			return nil, invalidParams("%v", eng.startErr)
		}
		return nil, jsonrpc.NewError(jsonrpc.ErrInternal.Code, eng.startErr.Error())
	}
	return s.secrets.RedactJSON(mustJSON(sum)), nil
}

// claudeEngine is the Claude Code CLI as a task.Engine (claude/run).
type claudeEngine struct {
	s          *Server
	o          claudecode.Options
	approveAll bool
	model      string
	startErr   error // the CLI did not start
}

func (e *claudeEngine) Run(ctx context.Context, job *task.Job) (agent.Summary, []provider.Message) {
	first := provider.Message{Role: provider.RoleUser, Content: append([]provider.Part{{Type: provider.PartText, Text: job.Prompt}}, job.Images...)}
	job.Emit(agent.Event{Type: agent.EventStarted, TaskID: job.TaskID, ChatMode: "claudeCode", Model: e.model})
	run, err := claudecode.Start(ctx, e.o, claudecode.Hooks{
		Event: job.Emit, Approve: job.Approve, Ask: e.s.claudeAsk(job.TaskID), ClassOf: e.s.claudeClass,
		ApproveAll: e.approveAll, TaskID: job.TaskID,
	})
	if err != nil {
		e.startErr = err
		msg := err.Error()
		job.Emit(agent.Event{Type: agent.EventDone, Status: "failed", Error: &msg})
		return agent.Summary{TaskID: job.TaskID, Status: "failed", Error: &msg}, []provider.Message{first}
	}
	job.Attach(claudeControl{ctx: ctx, run: run})
	sum, _ := run.Wait()
	msgs := []provider.Message{first}
	if sum.Text != "" {
		msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: sum.Text}}})
	}
	paths := make([]string, len(sum.ChangedFiles))
	for i, c := range sum.ChangedFiles {
		paths[i] = c.Path
	}
	job.Project.Changed(ctx, paths)
	return sum, msgs
}

// claudeClass is the task-x permission class of a Claude Code tool name.
func (s *Server) claudeClass(name string) tool.Class {
	if t, ok := s.tools.Get(name); ok {
		return t.Spec().Permission
	}
	switch name {
	case "Bash":
		return tool.ClassCommand
	case "Read":
		return tool.ClassRead
	case "Edit", "Write", "NotebookEdit":
		return tool.ClassEdit
	case "AskUserQuestion":
		return tool.ClassInteractive
	}
	return tool.ClassMCP
}

// claudeAsk sends agent/askUser for an AskUserQuestion call.
func (s *Server) claudeAsk(taskID string) func(ctx context.Context, callID string, qs []claudecode.Question) (map[string][]string, error) {
	return func(ctx context.Context, callID string, qs []claudecode.Question) (map[string][]string, error) {
		raw, err := s.conn.Call(ctx, protocol.MethodAskUser, map[string]any{"taskId": taskID, "callId": callID, "questions": qs})
		if err != nil {
			return nil, err
		}
		var reply struct {
			Answers map[string][]string `json:"answers"`
		}
		if err := json.Unmarshal(raw, &reply); err != nil {
			return nil, err
		}
		return reply.Answers, nil
	}
}
