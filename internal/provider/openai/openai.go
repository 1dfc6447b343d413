// Package openai owns the adapter for the official OpenAI Chat Completions API
// and for every OpenAI-compatible server (vLLM, LM Studio, llama.cpp,
// OpenRouter, Ollama's /v1): building the chat/completions request, folding
// the streamed chunks into provider events and a provider.Result, reading
// /models into provider.ModelInfo, and mapping failures to *provider.Error.
//
// It speaks HTTP with a plain net/http client rather than
// github.com/openai/openai-go/v3, after reading that SDK (v3.98.0):
//   - its ssestream.Stream ends the same way on "data: [DONE]" and on a
//     connection dropped mid-stream, while protocol.md/addendum §10 require the
//     second to be kind network;
//   - option.DefaultClientOptions reads OPENAI_API_KEY, OPENAI_BASE_URL and
//     OPENAI_CUSTOM_HEADERS from the environment, so a runtime that holds
//     several keys could send one it was not configured with;
//   - compatible servers send shapes its typed chunks and accumulator do not
//     keep (reasoning_content, a missing tool-call index, arguments as an
//     object, context_length and friends on /models), so the chunks have to be
//     decoded and folded here anyway.
//
// Wire formats followed: https://platform.openai.com/docs/api-reference/chat/create,
// https://platform.openai.com/docs/api-reference/chat-streaming and
// https://platform.openai.com/docs/api-reference/models/list; the model-list
// extensions of vLLM (max_model_len), OpenRouter (context_length,
// top_provider, supported_parameters, architecture) and LM Studio
// (loaded_context_length, max_context_length). Behaviour: protocol.md
// (chat/send, provider/models, Errors) and addendum §10.
package openai

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

// Options are the optional dependencies of New. A nil *Options is allowed.
type Options struct {
	// HTTPClient sends every request. Default:
	// provider.NewHTTPClient(cfg.Timeout()), which bounds the wait for
	// headers and each idle gap.
	HTTPClient *http.Client
	// Logger receives debug records about calls (endpoint, status, duration).
	// It never receives an API key, a prompt or model output. Default: discard.
	Logger *slog.Logger
}

// Client is a provider.Provider for kinds openai and openaiCompatible. It is
// safe for concurrent use.
type Client struct {
	cfg     provider.Config
	baseURL string
	http    *http.Client
	log     *slog.Logger
}

var _ provider.Provider = (*Client)(nil)

// New returns a Client for cfg, whose Kind must be provider.OpenAI or
// provider.OpenAICompatible. cfg.BaseURL includes the API prefix
// ("http://127.0.0.1:8000/v1"); it defaults to provider.DefaultOpenAIBaseURL for kind
// openai and is required for openaiCompatible. Errors are *provider.Error of
// kind invalidConfig, with Field set.
//
// The result is a *Client; provider/test reaches its ProbeChat through a type
// assertion.
func New(cfg provider.Config, opts *Options) (provider.Provider, error) {
	if cfg.Kind != provider.OpenAI && cfg.Kind != provider.OpenAICompatible {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "kind",
			Message: fmt.Sprintf("the openai adapter serves kinds %q and %q, not %q", provider.OpenAI, provider.OpenAICompatible, cfg.Kind)}
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "model", Message: "model is required"}
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		if cfg.Kind == provider.OpenAICompatible {
			return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl", Message: "baseUrl is required for openaiCompatible"}
		}
		base = provider.DefaultOpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl", Message: "baseUrl must be an http or https URL"}
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
	return &Client{cfg: cfg, baseURL: base, http: o.HTTPClient, log: o.Logger}, nil
}

// Config returns the configuration New was given.
func (c *Client) Config() provider.Config { return c.cfg }

// ProbeChat checks that the endpoint answers a chat call for the configured
// model: it streams a one-token completion of the user message "ping" and
// discards the answer. protocol.md provider/test uses it for
// OpenAI-compatible endpoints without /models. A reply cut short by the
// token limit is a success. Errors are *provider.Error, as from Stream.
func (c *Client) ProbeChat(ctx context.Context) error {
	req := &provider.Request{
		Messages:  []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "ping"}}}},
		MaxTokens: 1,
	}
	_, err := c.Stream(ctx, req, nil)
	return err
}

// newRequest builds a request to c.baseURL+path with the auth header when a
// key is configured.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, r)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl", Message: c.redact(err.Error())}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return req, nil
}

// do sends req and returns the response when its status is 2xx. Any other
// status is read into an *provider.Error (and the body closed); a transport
// failure is classified by provider.ClassifyTransportError.
func (c *Client) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		pe := provider.ClassifyTransportError(ctx, err)
		pe.Message = c.redact(pe.Message)
		c.log.DebugContext(ctx, "openai request failed", "path", req.URL.Path, "kind", pe.Kind, "elapsed", time.Since(start))
		return nil, pe
	}
	c.log.DebugContext(ctx, "openai response", "path", req.URL.Path, "status", resp.StatusCode, "elapsed", time.Since(start))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, c.httpError(ctx, resp)
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// maxErrorMessage bounds the provider text kept in an error message.
const maxErrorMessage = 1000

// httpError turns a non-2xx response into an *provider.Error: kind from the
// status (provider.KindForStatus), message from the body's error object or
// its text, RetryAfter from the headers. The API key is redacted.
func (c *Client) httpError(ctx context.Context, resp *http.Response) *provider.Error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil && len(body) == 0 {
		if ctx.Err() != nil {
			return &provider.Error{Kind: provider.KindCancelled, Message: "request cancelled"}
		}
	}
	msg := ""
	if eb, ok := parseErrorBody(body); ok {
		msg = eb.text()
	} else {
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
		if msg == "" {
			msg = "HTTP error"
		}
	}
	return &provider.Error{
		Kind:       provider.KindForStatus(resp.StatusCode),
		Message:    c.redact(truncate(msg, maxErrorMessage)),
		Status:     resp.StatusCode,
		RetryAfter: provider.RetryAfter(resp.Header, time.Now()),
	}
}

// redact removes the API key from s, also where only its prefix is echoed
// (addendum §11: a body that echoes the key included).
func (c *Client) redact(s string) string {
	return provider.Redact(s, c.cfg.APIKey)
}

// truncate cuts s to at most n bytes at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// errorBody is what OpenAI and compatible servers put in an error response
// or an error chunk: {"error": {"message","type","code","param"}}, the
// {"error": "text"} of some servers, or vLLM's flat
// {"object":"error","message","type","code"}.
type errorBody struct {
	Message string
	Type    string
	Code    string // a string code or a number's text ("429")
}

func (e errorBody) text() string {
	switch {
	case e.Message != "" && e.Type != "":
		return e.Type + ": " + e.Message
	case e.Message != "":
		return e.Message
	case e.Type != "":
		return e.Type
	}
	return e.Code
}

type rawErrorObject struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parseErrorBody reads an error body; ok is false when b holds none of the
// known shapes.
func parseErrorBody(b []byte) (errorBody, bool) {
	var top struct {
		Error  json.RawMessage `json:"error"`
		Object string          `json:"object"`
		rawErrorObject
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return errorBody{}, false
	}
	if len(top.Error) > 0 && string(top.Error) != "null" {
		return parseErrorValue(top.Error)
	}
	if top.Object == "error" || len(top.Message) > 0 {
		e := errorBody{Message: scalarText(top.Message), Type: scalarText(top.Type), Code: scalarText(top.Code)}
		return e, e != errorBody{}
	}
	return errorBody{}, false
}

// parseErrorValue reads the value of an "error" member: an object or a string.
func parseErrorValue(raw json.RawMessage) (errorBody, bool) {
	if s := scalarText(raw); s != "" {
		return errorBody{Message: s}, true
	}
	var o rawErrorObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return errorBody{}, false
	}
	e := errorBody{Message: scalarText(o.Message), Type: scalarText(o.Type), Code: scalarText(o.Code)}
	if e == (errorBody{}) {
		e.Message = truncate(string(raw), maxErrorMessage)
	}
	return e, true
}

// scalarText is a JSON string's value or a number's text; "" otherwise.
func scalarText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
	}
	return ""
}

// kindForStreamError maps an error that arrives as a chunk after HTTP 200.
// A numeric code or status is read as an HTTP status; otherwise the type and
// code strings decide (OpenAI's rate_limit_exceeded, server_error, ...).
// Unknown errors are kind server: the provider failed mid-response.
func kindForStreamError(e errorBody) provider.ErrorKind {
	var status int
	if _, err := fmt.Sscanf(e.Code, "%d", &status); err == nil && status >= 400 && status <= 599 {
		return provider.KindForStatus(status)
	}
	s := strings.ToLower(e.Type + " " + e.Code)
	switch {
	case strings.Contains(s, "rate_limit"), strings.Contains(s, "too_many_requests"):
		return provider.KindRateLimited
	case strings.Contains(s, "overloaded"), strings.Contains(s, "unavailable"):
		return provider.KindOverloaded
	case strings.Contains(s, "timeout"):
		return provider.KindTimeout
	case strings.Contains(s, "authentication"), strings.Contains(s, "invalid_api_key"):
		return provider.KindAuth
	case strings.Contains(s, "permission"):
		return provider.KindPermissionDenied
	case strings.Contains(s, "not_found"):
		return provider.KindNotFound
	case strings.Contains(s, "invalid_request"), strings.Contains(s, "context_length_exceeded"):
		return provider.KindInvalidRequest
	}
	return provider.KindServer
}
