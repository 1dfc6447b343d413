package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/team"
)

// TeamParams are the agent/run params of team mode: roleProviders ([{
// role, provider }]); limits.maxParallel is in LoopParams' Limits.
type TeamParams struct {
	RoleProviders []RoleProvider `json:"roleProviders"`
}

// RoleProvider is one entry of roleProviders.
type RoleProvider struct {
	Role     string          `json:"role"`
	Provider json.RawMessage `json:"provider"`
}

// teamConfig is TeamParams checked: a provider per role, maxParallel.
type teamConfig struct {
	roles       map[team.Role]provider.Provider
	maxParallel int
}

// parseTeam checks roleProviders (a known role once each, a valid
// provider) and limits.maxParallel (1 to 8). They are checked in every
// chat mode, used in team mode.
func (s *Session) parseTeam(tp *TeamParams, limits *Limits) (teamConfig, error) {
	c := teamConfig{roles: map[team.Role]provider.Provider{}}
	if limits != nil && limits.MaxParallel != nil {
		mp := limits.MaxParallel
		if *mp < 1 || *mp > team.MaxParallelCap {
			return c, Invalid("limits.maxParallel must be between 1 and %d, got %d", team.MaxParallelCap, *mp)
		}
		c.maxParallel = *mp
	}
	for i, rp := range tp.RoleProviders {
		role, err := team.ParseRole(rp.Role)
		if err != nil {
			return c, Invalid("roleProviders[%d].role: %v", i, err)
		}
		if _, dup := c.roles[role]; dup {
			return c, Invalid("roleProviders[%d].role: %s has a provider already", i, role)
		}
		p, err := s.parseProvider(rp.Provider)
		if err != nil {
			return c, fieldPrefix(err, fmt.Sprintf("roleProviders[%d].", i))
		}
		c.roles[role] = p
	}
	return c, nil
}

// roleEngines gives each role's subagents the agent loop with the role's
// provider (roleProviders), else the lead's provider with its routes; the
// lead's fallbacks, prices, limits and validation either way.
func (s *Session) roleEngines(lead provider.Provider, loop loopConfig, tc teamConfig) team.RoleEngine {
	return func(role team.Role) (task.Engine, string, string) {
		eng := s.agentEngine(lead, loop, subagent)
		if p, ok := tc.roles[role]; ok {
			eng.Provider, eng.Routes = p, nil
		}
		cfg := eng.Provider.Config()
		return eng, string(cfg.Kind), cfg.Model
	}
}

// CancelSubagent is agent/cancelSubagent: true when a running subagent (of
// a team-mode lead or a best-of) was stopped: its model call and command
// trees end, its plan goes on and skips the steps that depend on it.
func (s *Session) CancelSubagent(ctx context.Context, taskID string) bool {
	s.team.mu.Lock()
	r := s.team.runner
	s.team.mu.Unlock()
	if r == nil || taskID == "" {
		return false
	}
	return r.Cancel(taskID)
}
