package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// taskKinds are the task kinds of routes (addendum §10).
var taskKinds = []string{"question", "codeModification", "bugFix", "refactoring", "testing", "documentation", "review", "planning"}

// loopParams are the agent/run params the long-task loop reads: limits,
// routes ([{ kinds, provider }]), fallbacks (ProviderConfig[]) and prices
// ([{ model, inputPerMtok, outputPerMtok }]).
type loopParams struct {
	Limits *agent.Limits `json:"limits"`
	Routes []struct {
		Kinds    []string        `json:"kinds"`
		Provider json.RawMessage `json:"provider"`
	} `json:"routes"`
	Fallbacks []json.RawMessage `json:"fallbacks"`
	Prices    []agent.Price     `json:"prices"`
	// Validation is addendum §12 `validation` (checked by validate.Config).
	Validation *validate.Config `json:"validation"`
}

// loopConfig is loopParams validated: providers built, -32602 otherwise.
type loopConfig struct {
	limits     agent.Limits
	routes     []agent.Route
	fallbacks  []provider.Provider
	prices     []agent.Price
	validation validate.Config
}

func (s *Server) parseLoopParams(params json.RawMessage) (loopConfig, error) {
	var lp loopParams
	var c loopConfig
	if err := decodeParams(params, &lp); err != nil {
		return c, err
	}
	if lp.Limits != nil {
		if err := lp.Limits.Validate(); err != nil {
			return c, invalidParams("%v", err)
		}
		c.limits = *lp.Limits
	}
	for i, rt := range lp.Routes {
		if len(rt.Kinds) == 0 {
			return c, invalidParams("routes[%d].kinds must list at least one task kind", i)
		}
		for _, k := range rt.Kinds {
			if !slices.Contains(taskKinds, k) {
				return c, invalidParams("routes[%d].kinds: unknown task kind %q (one of %v)", i, k, taskKinds)
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
			return c, invalidParams("prices[%d] needs a model prefix and prices of 0 or more per million tokens", i)
		}
	}
	c.prices = lp.Prices
	if lp.Validation != nil {
		if err := lp.Validation.Validate(); err != nil {
			return c, invalidParams("%v", err)
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

type steerParams struct {
	TaskID string `json:"taskId"`
	Text   string `json:"text"`
}

// agentSteer: agent/steer { taskId, text } → true when the running task
// queued the message, false when no such task runs or its queue (10) is
// full. Text is 1..=100 000 characters after trimming, else -32602.
func (s *Server) agentSteer(ctx context.Context, params json.RawMessage) (any, error) {
	var p steerParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	text, ok := agent.ValidSteerText(p.Text)
	if !ok {
		return nil, invalidParams("text must be 1 to %d characters after trimming", agent.MaxSteerChars)
	}
	return s.runner.Steer(p.TaskID, text), nil
}

type cancelToolParams struct {
	TaskID string `json:"taskId"`
	CallID string `json:"callId"`
}

// agentCancelTool: agent/cancelTool { taskId, callId } → true when a running
// built-in tool call or background command of that task was stopped. A
// Claude Code Bash call may take seconds to become stoppable (the CLI
// reports its task first): the call runs asynchronously meanwhile.
func (s *Server) agentCancelTool(ctx context.Context, params json.RawMessage) (any, error) {
	var p cancelToolParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	jsonrpc.Async(ctx)
	return s.runner.CancelTool(p.TaskID, p.CallID), nil
}
