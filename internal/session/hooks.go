package session

import (
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

// HooksResult is config/hooks' result (fields in the wire's key order).
type HooksResult struct {
	Hooks          hooks.Config `json:"hooks"`
	WorkspaceError string       `json:"workspaceError,omitempty"`
	WorkspaceHooks hooks.Config `json:"workspaceHooks"`
}

// ConfigureHooks is config/hooks: conf is Claude Code's hooks object
// (addendum §8), replacing the earlier one; a malformed one is invalid
// params. The result's workspaceHooks is the open workspace's
// .task-x/hooks.json when trusted ({} otherwise; it is read again at each
// run); workspaceError (additive) says why that file was not used.
func (s *Session) ConfigureHooks(conf json.RawMessage, workspaceTrusted bool) (HooksResult, error) {
	user := hooks.Config{}
	if len(conf) > 0 && string(conf) != "null" {
		c, err := hooks.Parse(conf)
		if err != nil {
			return HooksResult{}, Invalid("%v", err)
		}
		user = c
	}
	s.hooks.mu.Lock()
	s.hooks.user, s.hooks.trusted = user, workspaceTrusted
	s.hooks.mu.Unlock()
	ws, werr := s.workspaceHooks()
	out := HooksResult{Hooks: user, WorkspaceHooks: ws}
	if werr != nil {
		out.WorkspaceError = werr.Error()
	}
	return out, nil
}

// workspaceHooks loads the open workspace's hooks file when trusted.
func (s *Session) workspaceHooks() (hooks.Config, error) {
	s.hooks.mu.Lock()
	trusted := s.hooks.trusted
	s.hooks.mu.Unlock()
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
func (s *Session) hookRunner(root string, sandboxed bool) *hooks.Runner {
	s.hooks.mu.Lock()
	conf := task.HookConfig{User: s.hooks.user, WorkspaceTrusted: s.hooks.trusted}
	s.hooks.mu.Unlock()
	r, err := task.NewHooks(conf, task.HookOptions{Root: root, Sandboxed: sandboxed, Secrets: s.secrets.List(), Logger: s.log})
	if err != nil {
		s.log.Warn("workspace hooks not loaded", "err", err)
	}
	return r
}
