package server

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

type openParams struct {
	Root    string   `json:"root"`
	Exclude []string `json:"exclude"`
	// userInstructions and userPromptsDir from older clients are accepted
	// and ignored (protocol.md workspace/open).
}

// workspaceOpen scans the folder and replaces any open workspace. It runs in
// order with other requests, so a request sent after it sees the new
// workspace. Progress goes out as workspace/progress notifications.
func (s *Server) workspaceOpen(ctx context.Context, params json.RawMessage) (any, error) {
	var p openParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Root == "" {
		return nil, invalidParams("root is required")
	}
	if !filepath.IsAbs(p.Root) {
		return nil, invalidParams("root must be an absolute path, got %q", p.Root)
	}
	// A bad exclude glob is the client's params, not an internal error: check
	// it here with the same rule workspace.Open applies (`**` syntax).
	for _, g := range p.Exclude {
		if g == "" || !doublestar.ValidatePattern(g) {
			return nil, invalidParams("exclude: invalid glob %q", g)
		}
	}
	ws, err := workspace.Open(ctx, filepath.Clean(p.Root), &workspace.Options{
		Parse:   parseFile,
		Exclude: p.Exclude,
		Home:    s.opts.Home,
		Logger:  s.log,
		Progress: func(pr workspace.Progress) {
			s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
				"phase": pr.Phase, "files": pr.Files, "parsed": pr.Parsed, "elapsedMs": pr.ElapsedMs,
			})
		},
	})
	if err != nil {
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		if errors.Is(err, workspace.ErrInvalidRoot) {
			return nil, invalidParams("%v", err)
		}
		return nil, err
	}
	sum := ws.Summary()
	edits, err := s.openEditLog(ws.Root())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ws = ws
	s.edits = edits
	s.direct = tool.NewEnv(ws.Root(), liveIndex{ws}, s.sandbox, "")
	s.direct.Edits = builtin.LogEdits(edits)
	s.mu.Unlock()
	s.graphReady(ctx, ws, sum.Stats.ElapsedMs) // graph.go: graph, then ready
	return sum, nil
}

// contextInspect returns the current workspace summary, -32004 without one.
func (s *Server) contextInspect(ctx context.Context, params json.RawMessage) (any, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	return ws.Summary(), nil
}

func (s *Server) workspace() (*workspace.Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws == nil {
		return nil, errNoWorkspace()
	}
	return s.ws, nil
}

func errNoWorkspace() error {
	return jsonrpc.NewError(jsonrpc.ErrNoWorkspace.Code, "no workspace is open: send workspace/open first")
}

// liveIndex is the tool.Index over whatever snapshot is current, so tools see
// files the agent created once the index knows them.
type liveIndex struct{ ws *workspace.Workspace }

func (l liveIndex) Files() []string { return l.ws.Snapshot().Files() }
func (l liveIndex) Excluded(rel string, isDir bool) bool {
	return l.ws.Snapshot().Excluded(rel, isDir)
}
