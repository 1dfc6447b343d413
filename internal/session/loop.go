package session

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// taskKinds are the task kinds of routes (addendum §10).
var taskKinds = []string{"question", "codeModification", "bugFix", "refactoring", "testing", "documentation", "review", "planning"}

// LoopParams are the params the long-task loop reads (agent/run,
// agent/bestOf, prompt/refine's routes): limits, routes ([{ kinds,
// provider }]), fallbacks (ProviderConfig[]), prices ([{ model,
// inputPerMtok, outputPerMtok }]) and validation (addendum §12).
type LoopParams struct {
	Limits     *Limits           `json:"limits"`
	Routes     []Route           `json:"routes"`
	Fallbacks  []json.RawMessage `json:"fallbacks"`
	Prices     []agent.Price     `json:"prices"`
	Validation *validate.Config  `json:"validation"` // checked by validate.Config
}

// Limits are agent/run's limits: the loop's and team mode's maxParallel.
type Limits struct {
	agent.Limits
	MaxParallel *int `json:"maxParallel"`
}

// Route is one entry of routes: the task kinds it takes and its provider.
type Route struct {
	Kinds    []string        `json:"kinds"`
	Provider json.RawMessage `json:"provider"`
}

// loopConfig is LoopParams checked: providers built.
type loopConfig struct {
	limits     agent.Limits
	routes     []agent.Route
	fallbacks  []provider.Provider
	prices     []agent.Price
	validation validate.Config
}

func (s *Session) parseLoop(lp *LoopParams) (loopConfig, error) {
	var c loopConfig
	if lp.Limits != nil {
		if err := lp.Limits.Validate(); err != nil {
			return c, Invalid("%v", err)
		}
		c.limits = lp.Limits.Limits
	}
	for i, rt := range lp.Routes {
		if len(rt.Kinds) == 0 {
			return c, Invalid("routes[%d].kinds must list at least one task kind", i)
		}
		for _, k := range rt.Kinds {
			if !slices.Contains(taskKinds, k) {
				return c, Invalid("routes[%d].kinds: unknown task kind %q (one of %v)", i, k, taskKinds)
			}
		}
		p, err := s.parseProvider(rt.Provider)
		if err != nil {
			return c, fieldPrefix(err, fmt.Sprintf("routes[%d].", i))
		}
		c.routes = append(c.routes, agent.Route{Kinds: rt.Kinds, Provider: p})
	}
	for i, raw := range lp.Fallbacks {
		p, err := s.parseProvider(raw)
		if err != nil {
			return c, fieldPrefix(err, fmt.Sprintf("fallbacks[%d].", i))
		}
		c.fallbacks = append(c.fallbacks, p)
	}
	for i, pr := range lp.Prices {
		if pr.Model == "" || pr.InputPerMtok < 0 || pr.OutputPerMtok < 0 {
			return c, Invalid("prices[%d] needs a model prefix and prices of 0 or more per million tokens", i)
		}
	}
	c.prices = lp.Prices
	if lp.Validation != nil {
		if err := lp.Validation.Validate(); err != nil {
			return c, Invalid("%v", err)
		}
		c.validation = *lp.Validation
	}
	return c, nil
}

// fieldPrefix puts prefix before the field of a config error.
func fieldPrefix(err error, prefix string) error {
	if pe, ok := err.(*provider.Error); ok {
		cp := *pe
		if cp.Field == "" {
			cp.Field = "provider"
		}
		cp.Field = prefix + cp.Field
		cp.Message = prefix + cp.Message
		return &cp
	}
	return err
}
