package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/team"
)

// teamParams are the agent/run params of team mode: roleProviders ([{
// role, provider }]) and limits.maxParallel.
type teamParams struct {
	RoleProviders []struct {
		Role     string          `json:"role"`
		Provider json.RawMessage `json:"provider"`
	} `json:"roleProviders"`
	Limits struct {
		MaxParallel *int `json:"maxParallel"`
	} `json:"limits"`
}

// teamConfig is teamParams checked: a provider per role, maxParallel.
type teamConfig struct {
	roles       map[team.Role]provider.Provider
	maxParallel int
}

// parseTeamParams checks roleProviders (a known role once each, a valid
// provider) and limits.maxParallel (1 to 8); -32602 otherwise. They are
// checked in every chat mode, used in team mode.
func (s *Server) parseTeamParams(params json.RawMessage) (teamConfig, error) {
	var tp teamParams
	c := teamConfig{roles: map[team.Role]provider.Provider{}}
	if err := decodeParams(params, &tp); err != nil {
		return c, err
	}
	if mp := tp.Limits.MaxParallel; mp != nil {
		if *mp < 1 || *mp > team.MaxParallelCap {
			return c, invalidParams("limits.maxParallel must be between 1 and %d, got %d", team.MaxParallelCap, *mp)
		}
		c.maxParallel = *mp
	}
	for i, rp := range tp.RoleProviders {
		role, err := team.ParseRole(rp.Role)
		if err != nil {
			return c, invalidParams("roleProviders[%d].role: %v", i, err)
		}
		if _, dup := c.roles[role]; dup {
			return c, invalidParams("roleProviders[%d].role: %s has a provider already", i, role)
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
func (s *Server) roleEngines(lead provider.Provider, loop loopConfig, tc teamConfig) team.RoleEngine {
	return func(role team.Role) (task.Engine, string, string) {
		eng := &task.AgentEngine{Provider: lead, Routes: loop.routes, Fallbacks: loop.fallbacks, Prices: loop.prices,
			Limits: loop.limits, Windows: s.windows, Classify: retrieve.Classify, Validation: loop.validation,
			Redact: s.secrets.Redact}
		if p, ok := tc.roles[role]; ok {
			eng.Provider, eng.Routes = p, nil
		}
		cfg := eng.Provider.Config()
		return eng, string(cfg.Kind), cfg.Model
	}
}

// agentCancelSubagent: agent/cancelSubagent { taskId } → true when a
// running subagent (of a team-mode lead or a best-of) was stopped: its
// model call and command trees end, its plan goes on and skips the steps
// that depend on it.
func (s *Server) agentCancelSubagent(ctx context.Context, params json.RawMessage) (any, error) {
	var p taskIDParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.team.mu.Lock()
	r := s.team.runner
	s.team.mu.Unlock()
	if r == nil || p.TaskID == "" {
		return false, nil
	}
	return r.Cancel(p.TaskID), nil
}
