package server

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/task"
)

// hooksState is the hooks configuration of this session: the user's hooks
// from config/hooks and whether workspace hooks may load.
type hooksState struct {
	mu      sync.Mutex
	user    hooks.Config
	trusted bool
}

type hooksParams struct {
	Hooks            json.RawMessage `json:"hooks"`
	WorkspaceTrusted bool            `json:"workspaceTrusted"`
}

// configHooks: config/hooks {hooks, workspaceTrusted} → {hooks,
// workspaceHooks, workspaceError?}. hooks is Claude Code's hooks object
// (addendum §8), replacing the earlier one; a malformed one is -32602.
// workspaceHooks is the open workspace's .task-x/hooks.json when trusted
// ({} otherwise); it is read again at each agent/run. workspaceError
// (additive) says why that file was not used.
func (s *Server) configHooks(ctx context.Context, params json.RawMessage) (any, error) {
	var p hooksParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	user := hooks.Config{}
	if len(p.Hooks) > 0 && string(p.Hooks) != "null" {
		c, err := hooks.Parse(p.Hooks)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		user = c
	}
	s.hookConf.mu.Lock()
	s.hookConf.user, s.hookConf.trusted = user, p.WorkspaceTrusted
	s.hookConf.mu.Unlock()
	ws, werr := s.workspaceHooks()
	out := map[string]any{"hooks": user, "workspaceHooks": ws}
	if werr != nil {
		out["workspaceError"] = werr.Error()
	}
	return out, nil
}

// workspaceHooks loads the open workspace's hooks file when trusted.
func (s *Server) workspaceHooks() (hooks.Config, error) {
	s.hookConf.mu.Lock()
	trusted := s.hookConf.trusted
	s.hookConf.mu.Unlock()
	proj, err := s.project()
	if !trusted || err != nil {
		return hooks.Config{}, nil
	}
	c, err := hooks.LoadWorkspace(proj.Root())
	if err != nil {
		return hooks.Config{}, err
	}
	return c, nil
}

// hookRunner returns the hooks of a task in root (task.NewHooks), or nil
// when none is configured. A malformed workspace file is logged and skipped
// (config/hooks reports it as workspaceError).
func (s *Server) hookRunner(root string, sandboxed bool) *hooks.Runner {
	s.hookConf.mu.Lock()
	conf := task.HookConfig{User: s.hookConf.user, WorkspaceTrusted: s.hookConf.trusted}
	s.hookConf.mu.Unlock()
	r, err := task.NewHooks(conf, task.HookOptions{Root: root, Sandboxed: sandboxed, Secrets: s.secrets.List(), Logger: s.log})
	if err != nil {
		s.log.Warn("workspace hooks not loaded", "err", err)
	}
	return r
}

// sandboxOn is initialize's sandbox setting.
func (s *Server) sandboxOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sandbox
}
