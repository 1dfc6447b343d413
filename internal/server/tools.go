package server

import (
	"context"
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// toolsList: tools/list → { tools: [{ name, description, inputSchema, permission }] }.
func (s *Server) toolsList(ctx context.Context, params json.RawMessage) (any, error) {
	return map[string]any{"tools": s.tools.Specs()}, nil
}

type callParams struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// toolsCall runs one tool directly for the client (no approval: the user
// asked for it). A tool failure is -32005 with data {kind, message}. The
// result is { content, data, changes } (docs/tools.md).
func (s *Server) toolsCall(ctx context.Context, params json.RawMessage) (any, error) {
	var p callParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, invalidParams("name is required")
	}
	t, ok := s.tools.Get(p.Name)
	if !ok {
		return nil, tool.Errorf(tool.ErrUnknownTool, "unknown tool %q", p.Name)
	}
	if _, err := s.project(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	env := s.direct
	s.mu.Unlock()
	input := p.Input
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	res, err := t.Run(ctx, env, input)
	if err != nil {
		return nil, err
	}
	s.filesChanged(ctx, res.Changes)
	changes := res.Changes
	if changes == nil {
		changes = []tool.FileChange{}
	}
	out := map[string]any{"content": res.Content, "data": res.Data, "changes": changes}
	// A tool can read or print a key the runtime holds (a file, a command's
	// output): redact it like every other reply (addendum §11).
	b, err := json.Marshal(out)
	if err != nil {
		return out, nil
	}
	return s.secrets.RedactJSON(b), nil
}

// filesChanged tells the index about files a tool changed.
func (s *Server) filesChanged(ctx context.Context, changes []tool.FileChange) {
	if len(changes) == 0 {
		return
	}
	proj, err := s.project()
	if err != nil {
		return
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	proj.Changed(ctx, paths)
}
