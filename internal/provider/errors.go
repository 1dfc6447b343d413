package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrorKind is protocol.md ProviderError.kind.
type ErrorKind string

const (
	KindInvalidConfig    ErrorKind = "invalidConfig"
	KindInvalidRequest   ErrorKind = "invalidRequest"
	KindAuth             ErrorKind = "auth"
	KindPermissionDenied ErrorKind = "permissionDenied"
	KindNotFound         ErrorKind = "notFound"
	KindRateLimited      ErrorKind = "rateLimited"
	KindOverloaded       ErrorKind = "overloaded"
	KindServer           ErrorKind = "server"
	KindNetwork          ErrorKind = "network"
	KindTimeout          ErrorKind = "timeout"
	KindCancelled        ErrorKind = "cancelled"
	KindProtocol         ErrorKind = "protocol"
)

// Retryable reports whether errors of this kind may be retried
// (protocol.md Errors: rateLimited, overloaded, server, network, timeout).
func (k ErrorKind) Retryable() bool {
	switch k {
	case KindRateLimited, KindOverloaded, KindServer, KindNetwork, KindTimeout:
		return true
	}
	return false
}

// Error is protocol.md ProviderError. Status is the HTTP status (0 when none).
// RetryAfter is the provider's Retry-After (0 when absent); it reaches the
// wire as the additive field retryAfterMs. Field names the offending config or
// request field for invalidConfig and invalidRequest found locally.
// Message never contains an API key (callers redact with Redact).
type Error struct {
	Kind       ErrorKind
	Message    string
	Status     int
	RetryAfter time.Duration
	Field      string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (%d): %s", e.Kind, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Retryable reports e.Kind.Retryable().
func (e *Error) Retryable() bool { return e.Kind.Retryable() }

// Errorf builds an *Error of kind k.
func Errorf(k ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err as *Error, wrapping anything else as kind protocol.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Kind: KindProtocol, Message: err.Error()}
}

// KindForStatus maps an HTTP status to an ErrorKind (addendum §10):
// 400, 413, 422 → invalidRequest; 401 → auth; 403 → permissionDenied;
// 404 → notFound; 408 → timeout; 429 → rateLimited; 503, 529 → overloaded;
// other 5xx → server; anything else → protocol.
func KindForStatus(status int) ErrorKind {
	switch status {
	case 400, 413, 422:
		return KindInvalidRequest
	case 401:
		return KindAuth
	case 403:
		return KindPermissionDenied
	case 404:
		return KindNotFound
	case 408:
		return KindTimeout
	case 429:
		return KindRateLimited
	case 503, 529:
		return KindOverloaded
	}
	if status >= 500 && status <= 599 {
		return KindServer
	}
	if status >= 400 {
		return KindInvalidRequest
	}
	return KindProtocol
}

// KindForAnthropicType maps an Anthropic error type (the "type" of an error
// body or of an error SSE event, docs.anthropic.com/en/api/errors).
func KindForAnthropicType(t string) ErrorKind {
	switch t {
	case "invalid_request_error", "request_too_large":
		return KindInvalidRequest
	case "authentication_error":
		return KindAuth
	case "permission_error":
		return KindPermissionDenied
	case "not_found_error":
		return KindNotFound
	case "rate_limit_error":
		return KindRateLimited
	case "overloaded_error":
		return KindOverloaded
	case "api_error":
		return KindServer
	case "timeout_error":
		return KindTimeout
	}
	return KindServer
}

// RetryAfter parses the retry-after-ms and Retry-After headers (seconds or an
// HTTP date). It returns 0 when neither is present or valid.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
