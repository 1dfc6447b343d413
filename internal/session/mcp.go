package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/mcp"
)

// mcpState is the Server's MCP client side: the manager, created on first
// use, and the lock that keeps registry updates in order.
type mcpState struct {
	once sync.Once
	mgr  *mcp.Manager
	sync sync.Mutex
}

// mcpManager returns the server's MCP manager, creating it on first use.
// Its tools join s.tools when a server is ready and leave when it goes
// away.
func (s *Session) mcpManager() *mcp.Manager {
	s.mcp.once.Do(func() {
		s.mcp.mgr = mcp.NewManager(&mcp.Options{
			Logger:  s.log,
			Version: s.opts.Version,
			Secrets: s.secrets.List,
			Root: func() string {
				if proj, err := s.project(); err == nil {
					return proj.Root()
				}
				return ""
			},
			OnToolsChanged: s.syncMCPTools,
		})
	})
	return s.mcp.mgr
}

// syncMCPTools makes the mcp__ tools of s.tools match the manager's.
func (s *Session) syncMCPTools() {
	s.mcp.sync.Lock()
	defer s.mcp.sync.Unlock()
	current := s.mcp.mgr.Tools()
	keep := map[string]bool{}
	for _, t := range current {
		keep[t.Spec().Name] = true
	}
	var gone []string
	for _, spec := range s.tools.Specs() {
		if strings.HasPrefix(spec.Name, mcp.ToolPrefix) && !keep[spec.Name] {
			gone = append(gone, spec.Name)
		}
	}
	s.tools.Remove(gone...)
	for _, t := range current {
		s.tools.Add(t)
	}
}

// ConfigureMCP is mcp/configure: the MCP servers (a Claude or VS Code
// servers object) replace the configured ones; it answers their status
// after a bounded wait; slower servers are reported "starting" and join
// later (docs/mcp.md).
func (s *Session) ConfigureMCP(ctx context.Context, servers json.RawMessage, workspaceTrusted bool) (mcp.Status, error) {
	list, err := mcp.ParseServers(servers)
	if err != nil {
		return mcp.Status{}, Invalid("%v", err)
	}
	wait := s.mcpManager().Apply(list, workspaceTrusted)
	// Requests after this one see the new configuration; the bounded wait
	// for the starts holds up nothing else.
	detach(ctx)
	return wait(ctx), nil
}

// mcpRunWait bounds how long a task waits for MCP servers still starting
// before it offers its tools (docs/mcp.md).
const mcpRunWait = 10 * time.Second

// waitMCPTools waits up to mcpRunWait for MCP servers still starting, so
// their tools are offered to the task, and words a warning for each server
// still starting after that.
func (s *Session) waitMCPTools(ctx context.Context) []string {
	mgr := s.mcpManager() // an empty manager when none was configured
	if mgr == nil {       // after shutdown
		return nil
	}
	var warnings []string
	for _, name := range mgr.WaitStarting(ctx, mcpRunWait) {
		warnings = append(warnings, fmt.Sprintf("MCP server %q is still starting; its tools are not available to this task", name))
	}
	return warnings
}

// MCPStatus is mcp/status: the same shape as ConfigureMCP's.
func (s *Session) MCPStatus() mcp.Status { return s.mcpManager().Status() }

// closeMCP stops every MCP server with its process tree (shutdown, exit).
func (s *Session) closeMCP() {
	s.mcp.once.Do(func() {}) // no manager is created after this
	if s.mcp.mgr != nil {
		_ = s.mcp.mgr.Close()
	}
}
