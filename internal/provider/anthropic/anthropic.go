// Package anthropic is the provider adapter for the Anthropic Messages API
// (https://docs.anthropic.com/en/api/messages, streaming per
// https://docs.anthropic.com/en/api/messages-streaming, errors per
// https://docs.anthropic.com/en/api/errors, models per
// https://docs.anthropic.com/en/api/models-list). It owns the request
// encoding, the SSE decoding, the fold of stream events into provider.Event
// and provider.Result, and the model list.
//
// Why net/http and not github.com/anthropics/anthropic-sdk-go/v2 (v2.15.0,
// read in its source): the SDK can take our *http.Client, a base URL and
// WithMaxRetries(0), but three things we need are awkward or lost through it.
// (1) Tool schemas: ToolInputSchemaParam only has Properties and Required
// plus an ExtraFields map, so every client JSON Schema would be decoded into
// Go maps and re-encoded instead of passed through as the raw object the
// protocol gives us. (2) In-stream errors: ssestream.Stream turns an `error`
// event into an apierror.Error whose StatusCode is the stream's 200; our kind
// mapping needs the error's "type", so the raw JSON would have to be decoded a
// second time. (3) Bounds: we must bound block indexes, the partial tool JSON
// and line sizes of an untrusted stream (the SDK's scanner allows 32 MiB
// lines) and tell a stream cut before message_stop (kind network) from a
// clean end, which the SDK reports the same way (Next() false, Err() nil).
// The wire format is small (a dozen event types), so a plain client with a
// bounded SSE decoder keeps every byte visible and testable.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// APIVersion is the anthropic-version header sent with every request.
const APIVersion = "2023-06-01"

// maxErrorBody bounds how much of a non-200 response body is read.
const maxErrorBody = 64 << 10

// Options configure a Client. A nil *Options is allowed.
type Options struct {
	// HTTPClient sends every request. Default:
	// provider.NewHTTPClient(cfg.Timeout()), which applies the idle-gap
	// timeout. A caller-supplied client should be built the same way.
	HTTPClient *http.Client
	// Logger receives debug records (status, durations, token counts; never
	// prompt or output text, never the key). Default: discard.
	Logger *slog.Logger
}

// Client is a provider.Provider for the Anthropic Messages API. It is safe
// for concurrent use.
type Client struct {
	cfg  provider.Config
	http *http.Client
	log  *slog.Logger
}

var _ provider.Provider = (*Client)(nil)

// New returns a Client for cfg, which should come from provider.ParseConfig.
// It fails with an *provider.Error of kind invalidConfig when cfg.Kind is not
// anthropic or the apiKey or model is missing. An empty BaseURL means
// https://api.anthropic.com.
func New(cfg provider.Config, opts *Options) (provider.Provider, error) {
	if cfg.Kind != provider.Anthropic {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "kind", Message: fmt.Sprintf("anthropic adapter got kind %q", cfg.Kind)}
	}
	if cfg.APIKey == "" {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "apiKey", Message: "apiKey is required for kind anthropic"}
	}
	if cfg.Model == "" {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "model", Message: "model is required"}
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = provider.DefaultAnthropicBaseURL
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
	// Never follow redirects: net/http would resend x-api-key to whatever
	// host (or plain-http URL) a redirect names, as it strips only its own
	// sensitive headers. A 3xx is reported as an error instead.
	hc := *o.HTTPClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{cfg: cfg, http: &hc, log: o.Logger}, nil
}

// Config returns the configuration the client was built with.
func (c *Client) Config() provider.Config { return c.cfg }

// newRequest builds a request to path (starting with "/v1/") with the auth
// and version headers. body nil means GET.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.BaseURL+path, r)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "baseUrl", Message: "cannot build a request from baseUrl"}
	}
	req.Header.Set("x-api-key", c.cfg.APIKey)
	req.Header.Set("anthropic-version", APIVersion)
	if body != nil {
		req.Header.Set("content-type", "application/json")
	}
	return req, nil
}

// do sends req and returns a 200 response, or an *provider.Error: a
// transport failure classified by provider.ClassifyTransportError, or an
// HTTP error decoded by httpError. The caller closes the body.
func (c *Client) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.redactErr(provider.ClassifyTransportError(ctx, err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, c.httpError(ctx, resp)
	}
	return resp, nil
}

// errorBody is an Anthropic error: {"type":"error","error":{"type","message"}}
// (https://docs.anthropic.com/en/api/errors).
type errorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// httpError turns a non-200 response into an *provider.Error: the kind from
// the error type when the body names a known one, else from the status
// (addendum §10); RetryAfter from retry-after-ms / Retry-After; the message
// from the body, redacted of the API key.
func (c *Client) httpError(ctx context.Context, resp *http.Response) *provider.Error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil && len(body) == 0 {
		if pe := provider.ClassifyTransportError(ctx, err); pe.Kind == provider.KindCancelled {
			return pe
		}
	}
	var eb errorBody
	msg := ""
	if json.Unmarshal(body, &eb) == nil && eb.Error.Message != "" {
		msg = eb.Error.Message
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	pe := &provider.Error{
		Kind:       kindFor(resp.StatusCode, eb.Error.Type),
		Status:     resp.StatusCode,
		RetryAfter: provider.RetryAfter(resp.Header, time.Now()),
		Message:    "anthropic: " + msg,
	}
	if eb.Error.Type != "" {
		pe.Message = fmt.Sprintf("anthropic %s: %s", eb.Error.Type, msg)
	}
	c.log.DebugContext(ctx, "anthropic http error", "status", resp.StatusCode, "type", eb.Error.Type, "kind", pe.Kind)
	return c.redactErr(pe)
}

// kindFor prefers a known Anthropic error type over the HTTP status.
func kindFor(status int, errType string) provider.ErrorKind {
	if knownErrorType(errType) {
		return provider.KindForAnthropicType(errType)
	}
	if status == 0 {
		return provider.KindServer
	}
	return provider.KindForStatus(status)
}

func knownErrorType(t string) bool {
	switch t {
	case "invalid_request_error", "request_too_large", "authentication_error", "permission_error",
		"not_found_error", "rate_limit_error", "overloaded_error", "api_error", "timeout_error":
		return true
	}
	return false
}

// redactErr removes the API key from e's message.
func (c *Client) redactErr(e *provider.Error) *provider.Error {
	e.Message = provider.Redact(e.Message, c.cfg.APIKey)
	return e
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}
