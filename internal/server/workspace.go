package server

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
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
	start := time.Now()
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
	s.mu.Lock()
	dataDir := s.dataDir
	s.mu.Unlock()
	proj, err := project.Open(ctx, filepath.Clean(p.Root), &project.Options{
		DataDir:        dataDir,
		Exclude:        p.Exclude,
		BuildRetrieval: true, // graphReady builds it before the reply (the first save waits for it)
		Home:           s.opts.Home,
		Logger:         s.log,
		Redact:         s.secrets.Redact,
		Progress: func(pr workspace.Progress) {
			msg := map[string]any{"phase": pr.Phase, "files": pr.Files, "parsed": pr.Parsed, "elapsedMs": pr.ElapsedMs}
			if pr.Stage != "" {
				msg["stage"] = pr.Stage
			}
			if pr.Total > 0 {
				msg["total"] = pr.Total
			}
			s.notify(ctx, protocol.MethodWorkspaceProg, msg)
		},
	})
	if err != nil {
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		if errors.Is(err, workspace.ErrInvalidRoot) {
			return nil, invalidParams("%v", err)
		}
		return nil, err
	}
	sum := proj.Summary()
	direct := s.toolEnv(proj, "")
	s.mu.Lock()
	prev := s.proj
	s.proj = proj
	s.direct = direct
	s.mu.Unlock()
	s.team.mu.Lock()
	s.team.exclude = p.Exclude
	s.team.mu.Unlock()
	if prev != nil {
		go closeProject(prev, s.log) // saves what changed since its last save
	}
	s.graphReady(ctx, proj, start) // graph.go: graph, then ready
	return sum, nil
}

// toolEnv is the tool environment of a task (taskID "" for tools/call) in
// proj: the project's env plus this session's asker and live key set.
func (s *Server) toolEnv(proj *project.Project, taskID string) *tool.Env {
	s.mu.Lock()
	sandbox := s.sandbox
	s.mu.Unlock()
	env := proj.Env(sandbox, taskID)
	env.Ask = s.askUser
	env.Secrets = s.secrets.List
	return env
}

// contextInspect returns the current workspace summary, -32004 without one.
func (s *Server) contextInspect(ctx context.Context, params json.RawMessage) (any, error) {
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	return proj.Summary(), nil
}

// project returns the open project, -32004 without one.
func (s *Server) project() (*project.Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proj == nil {
		return nil, errNoWorkspace()
	}
	return s.proj, nil
}

func errNoWorkspace() error {
	return jsonrpc.NewError(jsonrpc.ErrNoWorkspace.Code, "no workspace is open: send workspace/open first")
}

// clientRel turns a client path into a root-relative one with
// project.Rel; -32602 naming field for a path outside the root.
func clientRel(proj *project.Project, field, p string) (string, error) {
	rel, err := proj.Rel(p)
	if err != nil {
		return "", invalidParams("%s: %q is outside the workspace root", field, p)
	}
	return rel, nil
}

// closeProject closes a project the server no longer serves (its saved
// index written when it changed), logging a failure.
func closeProject(p *project.Project, log interface{ Warn(string, ...any) }) {
	if err := p.Close(); err != nil {
		log.Warn("saving the index", "err", err)
	}
}
