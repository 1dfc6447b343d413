// Package ollama owns the Ollama adapter of task-x-runtime: a small client of
// Ollama's documented native API (not its Go module) that implements
// provider.Provider.
//
//   - Stream posts /api/chat with stream true and folds the NDJSON reply
//     (message.content, message.thinking, message.tool_calls, the final
//     done line with done_reason, prompt_eval_count and eval_count) into
//     provider events and a provider.Result.
//   - ListModels reads /api/tags, then /api/show for the first 100 models,
//     8 at a time, for context windows, capabilities and details.
//   - Describe reads /api/show for the configured model.
//
// Source: https://github.com/ollama/ollama/blob/main/docs/api.md ("Generate a
// chat completion", "List Local Models", "Show Model Information"), and
// ../../../shared/spec/protocol.md (chat/send, provider/models, Context
// compression, Errors) with addendum §10.
package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// DefaultBaseURL is the address of a local Ollama server (addendum §10).
const DefaultBaseURL = "http://127.0.0.1:11434"

// Limits on what the server may make us hold in memory.
const (
	// MaxLineBytes caps one NDJSON line of a /api/chat stream (32 MiB).
	MaxLineBytes = 32 << 20
	// maxBodyBytes caps a whole /api/tags or /api/show body (32 MiB).
	maxBodyBytes = 32 << 20
	// maxErrorBodyBytes caps the part of an error body that is read.
	maxErrorBodyBytes = 64 << 10
	// maxToolCalls caps the tool calls of one response.
	maxToolCalls = 1024
	// showLimit is how many models ListModels asks /api/show about
	// (protocol.md provider/models).
	showLimit = 100
	// showParallel is how many /api/show requests run at once.
	showParallel = 8
)

// Options are the optional dependencies of New. A nil *Options is allowed.
type Options struct {
	// HTTPClient sends every request. Default:
	// provider.NewHTTPClient(cfg.Timeout()), which applies the header and
	// idle-gap timeout.
	HTTPClient *http.Client
	// Logger receives debug records (endpoint paths, statuses, timings;
	// never a key, a prompt or model output). Default: discard.
	Logger *slog.Logger
}

// client is the provider.Provider for one Ollama endpoint.
type client struct {
	cfg    provider.Config
	base   *url.URL
	http   *http.Client
	log    *slog.Logger
	apiKey string
}

// New returns a provider.Provider for the Ollama server at cfg.BaseURL (like
// http://127.0.0.1:11434, no path; empty means DefaultBaseURL). cfg.APIKey,
// when set, is sent as "Authorization: Bearer <key>" (Ollama behind a proxy,
// ollama.com). Errors are *provider.Error of kind invalidConfig.
func New(cfg provider.Config, opts *Options) (provider.Provider, error) {
	if cfg.Kind != "" && cfg.Kind != provider.Ollama {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "kind",
			Message: fmt.Sprintf("ollama adapter given kind %q", cfg.Kind)}
	}
	cfg.Kind = provider.Ollama
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl",
			Message: "baseUrl must be an http or https URL with a host"}
	}
	if u.User != nil {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl",
			Message: "baseUrl must not contain credentials"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = provider.NewHTTPClient(cfg.Timeout())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &client{cfg: cfg, base: u, http: o.HTTPClient, log: o.Logger, apiKey: cfg.APIKey}, nil
}

// Config returns the configuration New was given, with the default base URL
// filled in.
func (c *client) Config() provider.Config { return c.cfg }

// endpoint joins the base URL (which may carry a proxy path prefix) and p.
func (c *client) endpoint(p string) string {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + p
	u.RawPath = ""
	return u.String()
}

// do sends one request and returns the response when its status is 2xx.
// Any other status becomes a *provider.Error built from Ollama's
// {"error": "..."} body (KindForStatus, RetryAfter). Transport failures are
// classified by provider.ClassifyTransportError.
func (c *client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, &provider.Error{Kind: provider.KindInvalidRequest,
				Message: "encoding the request: " + err.Error()}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path), rd)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl",
			Message: c.redact(err.Error())}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/x-ndjson")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		pe := provider.ClassifyTransportError(ctx, err)
		pe.Message = c.redact(pe.Message)
		c.log.DebugContext(ctx, "ollama request failed", "path", path, "kind", pe.Kind)
		return nil, pe
	}
	c.log.DebugContext(ctx, "ollama response", "path", path, "status", resp.StatusCode,
		"elapsed", time.Since(start))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	msg := errorText(raw)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return nil, &provider.Error{
		Kind:       provider.KindForStatus(resp.StatusCode),
		Message:    c.redact(msg),
		Status:     resp.StatusCode,
		RetryAfter: provider.RetryAfter(resp.Header, time.Now()),
	}
}

// readJSON decodes a whole (capped) JSON body into v. A body over the cap or
// not matching v is kind protocol; a read failure goes through
// ClassifyTransportError.
func (c *client) readJSON(ctx context.Context, resp *http.Response, v any) error {
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		pe := provider.ClassifyTransportError(ctx, err)
		pe.Message = c.redact(pe.Message)
		return pe
	}
	if len(raw) > maxBodyBytes {
		return provider.Errorf(provider.KindProtocol, "response body over %d bytes", maxBodyBytes)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return provider.Errorf(provider.KindProtocol, "malformed response: %v", err)
	}
	return nil
}

// errorText extracts the message of an Ollama error body {"error": "..."};
// for any other body it returns the body itself, trimmed and shortened.
func errorText(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var s string
		if json.Unmarshal(body.Error, &s) == nil {
			return s
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		return string(body.Error)
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}

// redact removes the configured API key from s with provider.Redact (addendum §11: every key is
// redacted from everything the runtime emits, a body echoing it included).
func (c *client) redact(s string) string {
	return provider.Redact(s, c.apiKey)
}
