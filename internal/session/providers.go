package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// maxModels caps provider/listModels and provider/models (protocol.md).
const maxModels = 500

// parseProvider validates a ProviderConfig (a *provider.Error naming the
// field on failure: -32602 with {kind, message, field}), remembers its key
// as a secret and builds the provider.
func (s *Session) parseProvider(raw json.RawMessage) (provider.Provider, error) {
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
			models[i].Capabilities = []protocol.ModelCapability{}
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

func (s *Session) listing(ctx context.Context, cfg json.RawMessage) ([]provider.ModelInfo, error) {
	p, err := s.parseProvider(cfg)
	if err != nil {
		return nil, err
	}
	detach(ctx)
	models, err := p.ListModels(ctx)
	if errors.Is(err, provider.ErrCannotList) {
		return nil, cannotList()
	}
	if err != nil {
		return nil, err
	}
	return sortedModels(models), nil
}

// ModelIDs is provider/listModels: the model ids of the provider cfg,
// sorted, at most 500.
func (s *Session) ModelIDs(ctx context.Context, cfg json.RawMessage) ([]string, error) {
	models, err := s.listing(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return modelIDs(models), nil
}

// Models is provider/models: the models of the provider cfg, sorted by id,
// at most 500.
func (s *Session) Models(ctx context.Context, cfg json.RawMessage) ([]provider.ModelInfo, error) {
	return s.listing(ctx, cfg)
}

// ContextWindow is provider/contextWindow: the model's window from the
// provider when it says (cached 5 minutes), else the built-in estimate.
func (s *Session) ContextWindow(ctx context.Context, cfg json.RawMessage) (protocol.ContextWindowResult, error) {
	p, err := s.parseProvider(cfg)
	if err != nil {
		return protocol.ContextWindowResult{}, err
	}
	detach(ctx)
	tokens, fromProvider := s.windows.Lookup(ctx, p)
	return protocol.ContextWindowResult{Tokens: tokens, FromProvider: fromProvider}, nil
}

// TestProvider is provider/test: it lists models to check the connection
// and credentials; for an OpenAI-compatible endpoint without a model list
// it sends a one-token chat. modelAvailable is null when the endpoint
// cannot list. Failure to reach or authenticate is a *provider.Error
// (-32001, addendum §10).
func (s *Session) TestProvider(ctx context.Context, raw json.RawMessage) (protocol.ProviderTestResult, error) {
	var none protocol.ProviderTestResult
	p, err := s.parseProvider(raw)
	if err != nil {
		return none, err
	}
	detach(ctx)
	cfg := p.Config()
	start := time.Now()
	models, err := p.ListModels(ctx)
	var available *bool
	ids := []string{}
	switch {
	case errors.Is(err, provider.ErrCannotList):
		if prober, ok := p.(interface{ ProbeChat(context.Context) error }); ok {
			if err := prober.ProbeChat(ctx); err != nil {
				return none, err
			}
		} else {
			return none, cannotList()
		}
	case err != nil:
		return none, err
	default:
		models = sortedModels(models)
		ids = modelIDs(models)
		found := slices.Contains(ids, cfg.Model)
		available = &found
	}
	latency := time.Since(start).Milliseconds()

	// Capabilities of the configured model: what the endpoint says about it
	// (Ollama /api/show), else the listing's entry, else the model family.
	var caps []protocol.ModelCapability
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
	return protocol.ProviderTestResult{
		LatencyMs:      latency,
		Models:         ids,
		ModelAvailable: available,
		Capabilities: protocol.ModelCapabilityFlags{
			Tools:     slices.Contains(caps, protocol.CapabilityTools),
			Vision:    slices.Contains(caps, protocol.CapabilityVision),
			Thinking:  slices.Contains(caps, protocol.CapabilityThinking),
			Embedding: slices.Contains(caps, protocol.CapabilityEmbedding),
		},
	}, nil
}
