package session

import (
	"context"
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// Tools is the registry's tool specs (tools/list).
func (s *Session) Tools() []tool.Spec { return s.tools.Specs() }

// ToolResult is tools/call's result: { content, data, changes } (fields
// in the key order the wire has always had).
type ToolResult struct {
	Changes []tool.FileChange `json:"changes"`
	Content string            `json:"content"`
	Data    any               `json:"data"`
}

// CallTool runs one tool directly for the client (no approval: the user
// asked for it) in the open workspace. A tool failure is a *tool.Error
// (the protocol's -32005). The result comes back with every key the
// session holds redacted (a tool can read or print one: a file, a
// command's output), as JSON.
func (s *Session) CallTool(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error) {
	if name == "" {
		return nil, Invalid("name is required")
	}
	if _, err := s.project(); err != nil {
		if _, ok := s.tools.Get(name); !ok {
			return nil, tool.Errorf(tool.ErrUnknownTool, "unknown tool %q", name)
		}
		return nil, err
	}
	s.mu.Lock()
	env := s.direct
	s.mu.Unlock()
	mw := append([]toolcall.Middleware{}, s.opts.ToolMiddleware...)
	mw = append(mw, toolcall.WithChanges(func(ctx context.Context, _ *toolcall.Call, res tool.Result) {
		s.changed(ctx, tool.ChangedPaths(res.Changes))
	}))
	p := &toolcall.Pipeline{Tools: s.tools, Env: env, Middleware: mw}
	out := p.Invoke(ctx, toolcall.Call{Name: name, Input: input})
	if out.Err != nil {
		return nil, out.Err
	}
	res := out.Result
	changes := res.Changes
	if changes == nil {
		changes = []tool.FileChange{}
	}
	return s.secrets.RedactJSON(mustJSON(ToolResult{Content: res.Content, Data: res.Data, Changes: changes})), nil
}

// ServedTools is what `task-x-runtime --mcp-server` serves over the open
// project: the registry, the Env every call runs in (the open project's,
// recorded under taskID, commands in the sandbox whatever the setting, the
// live key set, no asker: interactive tools are not served) and the
// function that tells the index about the files a call changed.
func (s *Session) ServedTools(taskID string) (*tool.Registry, *tool.Env, func(context.Context, []tool.FileChange), error) {
	proj, err := s.project()
	if err != nil {
		return nil, nil, nil, err
	}
	env := proj.Env(true, taskID)
	env.Secrets = s.secrets.List
	return s.tools, env, func(ctx context.Context, changes []tool.FileChange) {
		proj.Changed(ctx, tool.ChangedPaths(changes))
	}, nil
}
