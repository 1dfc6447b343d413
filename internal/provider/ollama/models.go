package ollama

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// Wire shapes of GET /api/tags and POST /api/show (docs/api.md "List Local
// Models", "Show Model Information").

type modelDetails struct {
	ParameterSize     string `json:"parameter_size"`
	QuantizationLevel string `json:"quantization_level"`
}

type tagsResponse struct {
	Models []struct {
		Name    string       `json:"name"`
		Model   string       `json:"model"`
		Details modelDetails `json:"details"`
	} `json:"models"`
}

type showResponse struct {
	Details      modelDetails               `json:"details"`
	ModelInfo    map[string]json.RawMessage `json:"model_info"`
	Capabilities []string                   `json:"capabilities"`
}

// capabilityOrder is protocol.md ModelInfo.capabilities, in its order.
// Ollama's "completion" (and anything unknown) has no counterpart.
var capabilityOrder = []provider.Capability{provider.CapTools, provider.CapVision, provider.CapThinking, provider.CapEmbedding}

// ListModels implements provider.Provider: every model of /api/tags, with
// Details from its details; the first 100 are then completed from /api/show,
// 8 requests at a time (protocol.md provider/models). A failed /api/show
// leaves that model as /api/tags described it. Errors are *provider.Error:
// /api/tags failing, or ctx done (cancelled).
func (c *client) ListModels(ctx context.Context) ([]provider.ModelInfo, error) {
	resp, err := c.do(ctx, http.MethodGet, "/api/tags", nil)
	if err != nil {
		return nil, err
	}
	var tags tagsResponse
	if err := c.readJSON(ctx, resp, &tags); err != nil {
		return nil, err
	}
	models := make([]provider.ModelInfo, 0, len(tags.Models))
	for _, m := range tags.Models {
		id := m.Name
		if id == "" {
			id = m.Model
		}
		if id == "" {
			continue
		}
		models = append(models, provider.ModelInfo{
			ID:           id,
			Capabilities: []provider.Capability{},
			Details:      formatDetails(m.Details),
		})
	}

	var g errgroup.Group
	g.SetLimit(showParallel)
	for i := range models[:min(len(models), showLimit)] {
		m := &models[i]
		g.Go(func() error {
			info, err := c.show(ctx, m.ID)
			if err != nil {
				c.log.DebugContext(ctx, "ollama /api/show failed; keeping /api/tags data",
					"model", m.ID, "kind", provider.AsError(err).Kind)
				return nil
			}
			m.ContextWindow = info.ContextWindow
			m.Capabilities = info.Capabilities
			if info.Details != "" {
				m.Details = info.Details
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines never fail; a failed show is logged above
	if ctx.Err() != nil {
		return nil, provider.ClassifyTransportError(ctx, ctx.Err())
	}
	return models, nil
}

// Describe implements provider.Provider: /api/show for the configured model.
// ContextWindow is 0 when model_info has no *.context_length. Errors are
// *provider.Error (an unknown model is notFound, from Ollama's 404).
func (c *client) Describe(ctx context.Context) (provider.ModelInfo, error) {
	if c.cfg.Model == "" {
		return provider.ModelInfo{}, &provider.Error{Kind: provider.KindInvalidConfig, Field: "model",
			Message: "model is required"}
	}
	return c.show(ctx, c.cfg.Model)
}

// show asks /api/show about one model.
func (c *client) show(ctx context.Context, model string) (provider.ModelInfo, error) {
	resp, err := c.do(ctx, http.MethodPost, "/api/show", map[string]string{"model": model})
	if err != nil {
		return provider.ModelInfo{}, err
	}
	var s showResponse
	if err := c.readJSON(ctx, resp, &s); err != nil {
		return provider.ModelInfo{}, err
	}
	return provider.ModelInfo{
		ID:            model,
		ContextWindow: contextLength(s.ModelInfo),
		Capabilities:  mapCapabilities(s.Capabilities),
		Details:       formatDetails(s.Details),
	}, nil
}

// contextLength reads "<arch>.context_length" from /api/show model_info,
// preferring the architecture named by "general.architecture" and otherwise
// taking any key ending in ".context_length" (the largest, when several).
// It returns 0 when none holds a positive integer.
func contextLength(info map[string]json.RawMessage) int {
	var arch string
	if raw, ok := info["general.architecture"]; ok {
		_ = json.Unmarshal(raw, &arch)
	}
	if arch != "" {
		if n := positiveInt(info[arch+".context_length"]); n > 0 {
			return n
		}
	}
	best := 0
	for k, raw := range info {
		if strings.HasSuffix(k, ".context_length") {
			best = max(best, positiveInt(raw))
		}
	}
	return best
}

// positiveInt parses a JSON number that is a positive integer fitting an
// int32 token count; anything else is 0.
func positiveInt(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || n <= 0 || n > 1<<31-1 {
		f, ferr := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if ferr != nil || f <= 0 || f > 1<<31-1 || f != float64(int64(f)) {
			return 0
		}
		return int(f)
	}
	return int(n)
}

// mapCapabilities keeps Ollama's tools, vision, thinking and embedding, in
// protocol.md order; never nil.
func mapCapabilities(caps []string) []provider.Capability {
	out := []provider.Capability{}
	for _, want := range capabilityOrder {
		for _, c := range caps {
			if provider.Capability(c) == want {
				out = append(out, want)
				break
			}
		}
	}
	return out
}

// formatDetails renders "8.2B · Q4_K_M" from parameter_size and
// quantization_level, or whichever of them is set.
func formatDetails(d modelDetails) string {
	parts := make([]string, 0, 2)
	if s := strings.TrimSpace(d.ParameterSize); s != "" {
		parts = append(parts, s)
	}
	if s := strings.TrimSpace(d.QuantizationLevel); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}
