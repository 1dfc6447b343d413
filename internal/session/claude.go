package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/claudecode"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/task"
)

// ClaudeRequest is claude/run as a front end decoded it (protocol.md,
// Claude Code engine; docs/claude.md).
type ClaudeRequest struct {
	Prompt         string                     `json:"prompt"`
	Images         []Image                    `json:"images"`
	TaskID         string                     `json:"taskId"`
	Model          string                     `json:"model"`
	PermissionMode string                     `json:"permissionMode"`
	ClaudePath     string                     `json:"claudePath"`
	UseTaskTools   *bool                      `json:"useTaskTools"`
	ApproveAll     bool                       `json:"approveAll"`
	AllowCommands  bool                       `json:"allowCommands"`
	MCPServers     map[string]json.RawMessage `json:"mcpServers"`
	Editor         json.RawMessage            `json:"editor"` // EditorContext, as agent/run
	Policy         json.RawMessage            `json:"policy"` // agent/run's policy
}

// RunClaude is claude/run: the task run with the task layer's runner and
// the Claude Code engine (claudecode.Engine); it answers its agent/run-
// shaped summary as JSON with the keys redacted. A CLI that did not start
// is an error (invalid params for a reserved MCP server name).
func (s *Session) RunClaude(ctx context.Context, p *ClaudeRequest) (json.RawMessage, error) {
	if strings.TrimSpace(p.Prompt) == "" || !utf8.ValidString(p.Prompt) {
		return nil, Invalid("prompt is required (valid UTF-8)")
	}
	images, err := validateImages(p.Images)
	if err != nil {
		return nil, err
	}
	for name := range p.MCPServers {
		if strings.EqualFold(name, claudecode.ReservedServer) {
			return nil, Invalid("mcpServers: the name %q is reserved for the runtime's own tools", claudecode.ReservedServer)
		}
	}
	editor, err := task.ParseEditor(p.Editor)
	if err != nil {
		return nil, err
	}
	switch p.PermissionMode {
	case "", "default", "acceptEdits", "plan":
	default:
		return nil, Invalid("permissionMode must be default, acceptEdits or plan, got %q", p.PermissionMode)
	}
	pol, err := policy.Parse(p.Policy)
	if err != nil {
		return nil, Invalid("%v", err)
	}
	var given struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(p.Policy, &given) // Parse checked it
	pol = claudecode.PolicyFor(p.PermissionMode, pol, given.Mode != "")
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	eng := &claudecode.Engine{ApproveAll: p.ApproveAll, Options: claudecode.Options{
		Bin: p.ClaudePath, Model: p.Model, PermissionMode: claudecode.PermissionMode(p.PermissionMode, pol),
		UseTaskTools: p.UseTaskTools == nil || *p.UseTaskTools, RuntimeBin: self,
		AllowCommands: p.AllowCommands, MCPServers: p.MCPServers}}
	sum, err := s.runTask(ctx, &task.Request{
		TaskID: p.TaskID, Prompt: p.Prompt, Images: images, ChatMode: claudecode.ChatMode, Model: p.Model, Editor: editor, Policy: pol,
		Project: proj, Env: s.toolEnv(proj, ""), Engine: eng, Approve: s.approver(),
		Hooks: s.hookRunner(proj.Root(), s.sandboxOn()), // the forwarded mcp__task-x__ calls run them
	}, nil)
	if err != nil {
		return nil, err
	}
	if eng.StartErr != nil {
		if errors.Is(eng.StartErr, claudecode.ErrReservedServer) {
			return nil, Invalid("%v", eng.StartErr)
		}
		return nil, eng.StartErr
	}
	return s.secrets.RedactJSON(mustJSON(sum)), nil
}
