package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// maxModelsBody bounds a /models response (OpenRouter's list is a few MiB).
const maxModelsBody = 32 << 20

// ListModels lists the endpoint's models with GET /models
// (https://platform.openai.com/docs/api-reference/models/list: data[].id).
// ContextWindow comes from the first field present of loaded_context_length
// (LM Studio, preferred over its trained maximum), context_length,
// max_context_length, context_window, max_model_len (vLLM), max_token_size,
// top_provider.context_length (OpenRouter); else, for kind openai, from
// provider.EstimateWindow; else 0. Capabilities come from OpenRouter's
// supported_parameters and architecture.input_modalities, LM Studio's type
// and capabilities, provider.FamilyCapabilities for kind openai, and
// "embedding" for ids containing "embed"; in the order tools, vision,
// thinking, embedding. A 404, 405 or 501 from an openaiCompatible endpoint
// is provider.ErrCannotList; other errors are *provider.Error.
func (c *Client) ListModels(ctx context.Context) ([]provider.ModelInfo, error) {
	req, err := c.newRequest(ctx, "GET", "/models", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.do(ctx, req)
	if err != nil {
		if pe, ok := err.(*provider.Error); ok && c.cfg.Kind == provider.OpenAICompatible {
			switch pe.Status {
			case 404, 405, 501:
				return nil, provider.ErrCannotList
			}
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody+1))
	if err != nil {
		return nil, c.streamError(ctx, err)
	}
	if len(body) > maxModelsBody {
		return nil, &provider.Error{Kind: provider.KindProtocol, Message: "the model list exceeds 32 MiB"}
	}
	entries, err := parseModelList(body)
	if err != nil {
		if c.cfg.Kind == provider.OpenAICompatible && !json.Valid(body) {
			// An endpoint that answers /models with an HTML page or similar
			// has no model list.
			return nil, provider.ErrCannotList
		}
		return nil, &provider.Error{Kind: provider.KindProtocol, Message: err.Error()}
	}
	out := make([]provider.ModelInfo, 0, len(entries))
	for _, e := range entries {
		if e.ID == "" {
			continue
		}
		out = append(out, c.modelInfo(e))
	}
	return out, nil
}

// Describe lists the models and returns the configured one. Errors are those
// of ListModels (provider.ErrCannotList passes through) or kind notFound when
// the list does not hold the model.
func (c *Client) Describe(ctx context.Context) (provider.ModelInfo, error) {
	models, err := c.ListModels(ctx)
	if err != nil {
		return provider.ModelInfo{}, err
	}
	for _, m := range models {
		if m.ID == c.cfg.Model {
			return m, nil
		}
	}
	return provider.ModelInfo{}, &provider.Error{Kind: provider.KindNotFound, Message: fmt.Sprintf("model %q is not in the endpoint's model list", c.cfg.Model)}
}

// modelEntry is one element of a /models data array, with the fields of
// every server we read. Numbers are kept raw: servers send ints, floats,
// strings or null.
type modelEntry struct {
	ID                  string          `json:"id"`
	Type                string          `json:"type"` // LM Studio: llm, vlm, embeddings
	LoadedContextLength json.RawMessage `json:"loaded_context_length"`
	ContextLength       json.RawMessage `json:"context_length"`
	MaxContextLength    json.RawMessage `json:"max_context_length"`
	ContextWindow       json.RawMessage `json:"context_window"`
	MaxModelLen         json.RawMessage `json:"max_model_len"`
	MaxTokenSize        json.RawMessage `json:"max_token_size"`
	TopProvider         *struct {
		ContextLength json.RawMessage `json:"context_length"`
	} `json:"top_provider"`
	SupportedParameters []string `json:"supported_parameters"`
	Architecture        *struct {
		InputModalities []string `json:"input_modalities"`
	} `json:"architecture"`
	Capabilities json.RawMessage `json:"capabilities"` // LM Studio: ["tool_use"]
}

// parseModelList reads {"data": [...]} or, from a few servers, a bare array.
func parseModelList(body []byte) ([]modelEntry, error) {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		var list []modelEntry
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, fmt.Errorf("malformed model list: %v", err)
		}
		return list, nil
	}
	var top struct {
		Data   []modelEntry `json:"data"`
		Models []modelEntry `json:"models"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("malformed model list: %v", err)
	}
	if top.Data == nil && top.Models == nil {
		return nil, fmt.Errorf("malformed model list: no data array")
	}
	return append(top.Data, top.Models...), nil
}

func (c *Client) modelInfo(e modelEntry) provider.ModelInfo {
	info := provider.ModelInfo{ID: e.ID, ContextWindow: contextWindow(e)}
	if info.ContextWindow == 0 && c.cfg.Kind == provider.OpenAI {
		info.ContextWindow = provider.EstimateWindow(provider.OpenAI, e.ID)
	}
	var tools, vision, thinking, embedding bool
	for _, p := range e.SupportedParameters {
		switch p {
		case "tools", "tool_choice":
			tools = true
		case "reasoning", "include_reasoning":
			thinking = true
		}
	}
	if e.Architecture != nil {
		for _, m := range e.Architecture.InputModalities {
			if m == "image" {
				vision = true
			}
		}
	}
	switch e.Type {
	case "vlm":
		vision = true
	case "embeddings", "embedding":
		embedding = true
	}
	var lmCaps []string
	if json.Unmarshal(e.Capabilities, &lmCaps) == nil {
		for _, cp := range lmCaps {
			switch cp {
			case "tool_use", "tools":
				tools = true
			case "vision":
				vision = true
			case "reasoning", "thinking":
				thinking = true
			}
		}
	}
	if c.cfg.Kind == provider.OpenAI {
		for _, cp := range provider.FamilyCapabilities(provider.OpenAI, e.ID) {
			switch cp {
			case provider.CapTools:
				tools = true
			case provider.CapVision:
				vision = true
			case provider.CapThinking:
				thinking = true
			case provider.CapEmbedding:
				embedding = true
			}
		}
	}
	if strings.Contains(strings.ToLower(e.ID), "embed") {
		embedding = true
	}
	info.Capabilities = []provider.Capability{}
	for _, cp := range []struct {
		on   bool
		name provider.Capability
	}{{tools, provider.CapTools}, {vision, provider.CapVision}, {thinking, provider.CapThinking}, {embedding, provider.CapEmbedding}} {
		if cp.on {
			info.Capabilities = append(info.Capabilities, cp.name)
		}
	}
	return info
}

// contextWindow is the first positive context field of e (see ListModels).
func contextWindow(e modelEntry) int {
	fields := []json.RawMessage{e.LoadedContextLength, e.ContextLength, e.MaxContextLength, e.ContextWindow, e.MaxModelLen, e.MaxTokenSize}
	if e.TopProvider != nil {
		fields = append(fields, e.TopProvider.ContextLength)
	}
	for _, f := range fields {
		if n := positiveInt(f); n > 0 {
			return n
		}
	}
	return 0
}

// positiveInt reads a JSON number or numeric string as a positive int; 0 for
// anything else (null, negative, fractional garbage, absurdly large).
func positiveInt(raw json.RawMessage) int {
	s := scalarText(raw)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 1 || f > math.MaxInt32 {
		return 0
	}
	return int(f)
}
