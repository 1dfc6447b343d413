package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// maxModels caps provider/listModels and provider/models (protocol.md).
const maxModels = 500

type providerParams struct {
	Provider json.RawMessage `json:"provider"`
}

// parseProvider validates a ProviderConfig (-32602 with {kind, message,
// field} on failure), remembers its key as a secret and builds the provider.
func (s *Server) parseProvider(raw json.RawMessage) (provider.Provider, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "provider", Message: "provider is required"}
	}
	cfg, err := provider.ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	s.secrets.Add(cfg.APIKey)
	p, err := s.opts.NewProvider(cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Server) providerFromParams(params json.RawMessage) (provider.Provider, error) {
	var p providerParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return s.parseProvider(p.Provider)
}

// sortedModels sorts by id and caps at 500.
func sortedModels(models []provider.ModelInfo) []provider.ModelInfo {
	slices.SortFunc(models, func(a, b provider.ModelInfo) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	models = slices.CompactFunc(models, func(a, b provider.ModelInfo) bool { return a.ID == b.ID })
	if len(models) > maxModels {
		models = models[:maxModels]
	}
	for i := range models {
		if models[i].Capabilities == nil {
			models[i].Capabilities = []string{}
		}
	}
	return models
}

func modelIDs(models []provider.ModelInfo) []string {
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	return ids
}

// cannotList is the error of a model listing on an endpoint without one.
func cannotList() error {
	return &provider.Error{Kind: provider.KindNotFound, Message: "this endpoint does not list models (it has no models route); enter the model id by hand"}
}

func (s *Server) listing(ctx context.Context, params json.RawMessage) ([]provider.ModelInfo, error) {
	p, err := s.providerFromParams(params)
	if err != nil {
		return nil, err
	}
	jsonrpc.Async(ctx)
	models, err := p.ListModels(ctx)
	if errors.Is(err, provider.ErrCannotList) {
		return nil, cannotList()
	}
	if err != nil {
		return nil, err
	}
	return sortedModels(models), nil
}

// listModels: provider/listModels → { models: string[] } (sorted, max 500).
func (s *Server) listModels(ctx context.Context, params json.RawMessage) (any, error) {
	models, err := s.listing(ctx, params)
	if err != nil {
		return nil, err
	}
	return map[string]any{"models": modelIDs(models)}, nil
}

// models: provider/models → { models: ModelInfo[] } (sorted by id, max 500).
func (s *Server) models(ctx context.Context, params json.RawMessage) (any, error) {
	models, err := s.listing(ctx, params)
	if err != nil {
		return nil, err
	}
	return map[string]any{"models": models}, nil
}

// contextWindow: provider/contextWindow → { tokens } from the provider when
// it says (cached 5 minutes), else the built-in estimate.
func (s *Server) contextWindow(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := s.providerFromParams(params)
	if err != nil {
		return nil, err
	}
	jsonrpc.Async(ctx)
	tokens, fromProvider := s.windows.Lookup(ctx, p)
	return map[string]any{"tokens": tokens, "fromProvider": fromProvider}, nil
}

// providerTest: provider/test lists models to check the connection and
// credentials; for an OpenAI-compatible endpoint without a model list it sends
// a one-token chat. modelAvailable is null when the endpoint cannot list.
// Failure to reach or authenticate is -32001 (addendum §10).
func (s *Server) providerTest(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := s.providerFromParams(params)
	if err != nil {
		return nil, err
	}
	jsonrpc.Async(ctx)
	cfg := p.Config()
	start := time.Now()
	models, err := p.ListModels(ctx)
	var available *bool
	ids := []string{}
	switch {
	case errors.Is(err, provider.ErrCannotList):
		if prober, ok := p.(interface{ ProbeChat(context.Context) error }); ok {
			if err := prober.ProbeChat(ctx); err != nil {
				return nil, err
			}
		} else {
			return nil, cannotList()
		}
	case err != nil:
		return nil, err
	default:
		models = sortedModels(models)
		ids = modelIDs(models)
		found := slices.Contains(ids, cfg.Model)
		available = &found
	}
	latency := time.Since(start).Milliseconds()

	// Capabilities of the configured model: what the endpoint says about it
	// (Ollama /api/show), else the listing's entry, else the model family.
	var caps []string
	if info, err := p.Describe(ctx); err == nil && len(info.Capabilities) > 0 {
		caps = info.Capabilities
	} else {
		for _, m := range models {
			if m.ID == cfg.Model {
				caps = m.Capabilities
			}
		}
		if caps == nil {
			caps = provider.FamilyCapabilities(cfg.Kind, cfg.Model)
		}
	}
	return map[string]any{
		"latencyMs":      latency,
		"models":         ids,
		"modelAvailable": available,
		"capabilities": map[string]bool{
			"tools":     slices.Contains(caps, "tools"),
			"vision":    slices.Contains(caps, "vision"),
			"thinking":  slices.Contains(caps, "thinking"),
			"embedding": slices.Contains(caps, "embedding"),
		},
	}, nil
}
