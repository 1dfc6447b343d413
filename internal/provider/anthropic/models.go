package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// Model listing bounds: the page size the API allows at most
// (https://docs.anthropic.com/en/api/models-list, limit 1-1000), a cap on
// pages so a server that always says has_more cannot loop us forever, and a
// cap on one page's body.
const (
	modelsPageLimit = 1000
	maxModelPages   = 20
	maxModelsBody   = 16 << 20
)

// apiModel is a ModelInfo of the Models API. max_input_tokens and
// capabilities are read when present (newer API versions); older responses
// only have id, type, display_name and created_at.
type apiModel struct {
	ID             string `json:"id"`
	MaxInputTokens int    `json:"max_input_tokens"`
	Capabilities   *struct {
		ImageInput *struct {
			Supported bool `json:"supported"`
		} `json:"image_input"`
		Thinking *struct {
			Supported bool `json:"supported"`
		} `json:"thinking"`
	} `json:"capabilities"`
}

type apiModelPage struct {
	Data    []apiModel `json:"data"`
	HasMore bool       `json:"has_more"`
	LastID  string     `json:"last_id"`
}

// modelInfo converts m: ContextWindow is max_input_tokens, else the built-in
// estimate; capabilities come from the capabilities object (tool use is
// supported by every Messages API model, so "tools" is listed whenever the
// API describes the model) or, without one, from provider.FamilyCapabilities.
func modelInfo(m apiModel) provider.ModelInfo {
	info := provider.ModelInfo{ID: m.ID, ContextWindow: m.MaxInputTokens}
	if info.ContextWindow <= 0 {
		info.ContextWindow = provider.EstimateWindow(provider.Anthropic, m.ID)
	}
	if c := m.Capabilities; c != nil {
		caps := []provider.Capability{provider.CapTools}
		if c.ImageInput != nil && c.ImageInput.Supported {
			caps = append(caps, provider.CapVision)
		}
		if c.Thinking != nil && c.Thinking.Supported {
			caps = append(caps, provider.CapThinking)
		}
		info.Capabilities = caps
	} else {
		info.Capabilities = provider.FamilyCapabilities(provider.Anthropic, m.ID)
	}
	if info.Capabilities == nil {
		info.Capabilities = []provider.Capability{}
	}
	return info
}

// getJSON GETs path and decodes a 200 body into v. Errors are
// *provider.Error (HTTP errors as in Stream; an undecodable body → protocol).
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody+1))
	if err != nil {
		return c.redactErr(provider.ClassifyTransportError(ctx, err))
	}
	if len(body) > maxModelsBody {
		return &provider.Error{Kind: provider.KindProtocol, Message: "anthropic: models response too large"}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &provider.Error{Kind: provider.KindProtocol, Message: "anthropic: malformed models response"}
	}
	return nil
}

// ListModels pages through GET /v1/models (limit 1000, after_id = the last
// page's last_id while has_more) and returns every model, unsorted. It stops
// after 20 pages, or when a page repeats its cursor.
func (c *Client) ListModels(ctx context.Context) ([]provider.ModelInfo, error) {
	var out []provider.ModelInfo
	after := ""
	for page := 0; page < maxModelPages; page++ {
		q := url.Values{"limit": {strconv.Itoa(modelsPageLimit)}}
		if after != "" {
			q.Set("after_id", after)
		}
		var p apiModelPage
		if err := c.getJSON(ctx, "/v1/models?"+q.Encode(), &p); err != nil {
			return nil, err
		}
		for _, m := range p.Data {
			if m.ID != "" {
				out = append(out, modelInfo(m))
			}
		}
		if !p.HasMore || p.LastID == "" || p.LastID == after {
			break
		}
		after = p.LastID
	}
	if out == nil {
		out = []provider.ModelInfo{}
	}
	return out, nil
}

// Describe is GET /v1/models/{model}. An unknown model is a notFound error
// (the window cache then falls back to the estimate). ContextWindow is
// max_input_tokens, or 0 when the API does not report it.
func (c *Client) Describe(ctx context.Context) (provider.ModelInfo, error) {
	var m apiModel
	if err := c.getJSON(ctx, "/v1/models/"+url.PathEscape(c.cfg.Model), &m); err != nil {
		return provider.ModelInfo{}, err
	}
	if m.ID == "" {
		m.ID = c.cfg.Model
	}
	info := modelInfo(m)
	info.ContextWindow = max(m.MaxInputTokens, 0)
	return info, nil
}
