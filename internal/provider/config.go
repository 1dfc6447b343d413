package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Config is a validated protocol.md ProviderConfig. BaseURL is filled with the
// kind's default and normalised per addendum §10 (no trailing slash; an
// openaiCompatible URL with an empty path gets "/v1"). Timeout is the clamped
// timeoutMs (default 120000, 1000-600000) and applies to the wait for headers
// and to each idle gap of a stream.
type Config struct {
	Kind      Kind   `json:"kind"`
	Model     string `json:"model"`
	BaseURL   string `json:"baseUrl,omitempty"`
	APIKey    string `json:"-"`
	TimeoutMs int    `json:"timeoutMs"`
}

// ProviderConfig limits and defaults (protocol.md ProviderConfig, addendum §10).
const (
	DefaultTimeoutMs = 120000
	MinTimeoutMs     = 1000
	MaxTimeoutMs     = 600000
	MaxModelLength   = 256 // characters (runes)

	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultOllamaBaseURL    = "http://127.0.0.1:11434"
)

// Timeout is TimeoutMs as a duration. A Config built by hand with TimeoutMs
// <= 0 gets the default 120 s; ParseConfig has already clamped the value, so
// only hand-built configs (tests) can go below 1000 ms.
func (c Config) Timeout() time.Duration {
	if c.TimeoutMs <= 0 {
		return DefaultTimeoutMs * time.Millisecond
	}
	return time.Duration(c.TimeoutMs) * time.Millisecond
}

// String describes c without its API key, so that a Config printed with %v
// or %+v never leaks the key.
func (c Config) String() string {
	key := "none"
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("{kind:%s model:%q baseUrl:%q apiKey:%s timeoutMs:%d}", c.Kind, c.Model, c.BaseURL, key, c.TimeoutMs)
}

// GoString is String, for %#v.
func (c Config) GoString() string { return c.String() }

// LogValue makes slog print c without its API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("kind", string(c.Kind)),
		slog.String("model", c.Model),
		slog.String("baseUrl", c.BaseURL),
		slog.Bool("apiKey", c.APIKey != ""),
		slog.Int("timeoutMs", c.TimeoutMs),
	)
}

// RequiresAPIKey reports whether kind needs an apiKey (protocol.md
// ProviderConfig: anthropic, openai and openaiCompatible; not ollama).
func RequiresAPIKey(kind Kind) bool {
	switch kind {
	case Anthropic, OpenAI, OpenAICompatible:
		return true
	}
	return false
}

// DefaultBaseURL is the base URL used when a config has none (addendum §10);
// "" for openaiCompatible, which has no default.
func DefaultBaseURL(kind Kind) string {
	switch kind {
	case Anthropic:
		return DefaultAnthropicBaseURL
	case OpenAI:
		return DefaultOpenAIBaseURL
	case Ollama:
		return DefaultOllamaBaseURL
	}
	return ""
}

// IsLoopbackHost reports whether host (a URL's Hostname, without brackets or
// port) is loopback per addendum §11: "localhost", an address in 127.0.0.0/8,
// or ::1.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func configError(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidConfig, Field: field, Message: fmt.Sprintf(format, args...)}
}

var configFields = map[string]bool{"kind": true, "model": true, "baseUrl": true, "apiKey": true, "timeoutMs": true}

// ParseConfig decodes and validates a protocol.md ProviderConfig:
//   - unknown fields are rejected;
//   - kind is "anthropic", "openai", "openaiCompatible" or "ollama";
//   - model is 1-256 characters (runes) with no control characters;
//   - baseUrl is optional except for openaiCompatible; it must parse, use
//     http or https, name a host and carry no credentials (userinfo). It is
//     defaulted and normalised per addendum §10: a trailing slash is removed
//     and an openaiCompatible URL with an empty path gets "/v1";
//   - apiKey is required for anthropic, openai and openaiCompatible and
//     optional for ollama; it is rejected over plain http unless the host is
//     loopback (addendum §11);
//   - timeoutMs is a number (rounded to whole milliseconds), default 120000,
//     clamped to 1000-600000.
//
// Every error is *Error with Kind invalidConfig and Field naming the field.
// No message ever contains the apiKey.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var fields map[string]json.RawMessage
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Config{}, configError("", "provider config must be a JSON object")
	}
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return Config{}, configError("", "provider config is not valid JSON")
	}
	for name := range fields {
		if !configFields[name] {
			return Config{}, configError(name, "unknown field %q", truncateForMessage(name))
		}
	}

	var cfg Config
	kind, err := stringField(fields, "kind", true)
	if err != nil {
		return Config{}, err
	}
	switch k := Kind(kind); k {
	case Anthropic, OpenAI, OpenAICompatible, Ollama:
		cfg.Kind = k
	default:
		return Config{}, configError("kind", "kind must be one of anthropic, openai, openaiCompatible, ollama; got %q", truncateForMessage(kind))
	}

	model, err := stringField(fields, "model", true)
	if err != nil {
		return Config{}, err
	}
	if n := utf8.RuneCountInString(model); n < 1 || n > MaxModelLength {
		return Config{}, configError("model", "model must be 1 to %d characters, got %d", MaxModelLength, n)
	}
	if i := strings.IndexFunc(model, unicode.IsControl); i >= 0 {
		return Config{}, configError("model", "model must not contain control characters (found at byte %d)", i)
	}
	cfg.Model = model

	apiKey, err := stringField(fields, "apiKey", false)
	if err != nil {
		return Config{}, err
	}
	if RequiresAPIKey(cfg.Kind) && strings.TrimSpace(apiKey) == "" {
		return Config{}, configError("apiKey", "apiKey is required for kind %s", cfg.Kind)
	}
	if strings.IndexFunc(apiKey, unicode.IsControl) >= 0 {
		return Config{}, configError("apiKey", "apiKey must not contain control characters")
	}
	cfg.APIKey = apiKey

	baseURL, err := stringField(fields, "baseUrl", false)
	if err != nil {
		return Config{}, err
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL(cfg.Kind)
		if baseURL == "" {
			return Config{}, configError("baseUrl", "baseUrl is required for kind %s", cfg.Kind)
		}
	}
	u, err := parseBaseURL(baseURL)
	if err != nil {
		return Config{}, err
	}
	if cfg.APIKey != "" && u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) {
		return Config{}, configError("apiKey", "an apiKey is only sent over https unless the host is loopback (localhost, 127.0.0.0/8, ::1); use https for %s", u.Hostname())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	if cfg.Kind == OpenAICompatible && u.Path == "" {
		u.Path, u.RawPath = "/v1", ""
	}
	cfg.BaseURL = u.String()

	cfg.TimeoutMs, err = parseTimeout(fields["timeoutMs"])
	if err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// stringField reads fields[name] as a JSON string. A missing or null field is
// "" and an error when required.
func stringField(fields map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, ok := fields[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		if required {
			return "", configError(name, "%s is required", name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", configError(name, "%s must be a string", name)
	}
	return s, nil
}

func parseBaseURL(s string) (*url.URL, error) {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 || strings.ContainsAny(s, " ") {
		return nil, configError("baseUrl", "baseUrl must not contain spaces or control characters")
	}
	u, err := url.Parse(s)
	if err != nil {
		// url errors quote the input, which may hold credentials: say less.
		return nil, configError("baseUrl", "baseUrl is not a valid URL")
	}
	if u.User != nil {
		return nil, configError("baseUrl", "baseUrl must not contain credentials (user:password@); pass the key as apiKey")
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return nil, configError("baseUrl", "baseUrl must use http or https")
	}
	if u.Hostname() == "" {
		return nil, configError("baseUrl", "baseUrl must name a host")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return nil, configError("baseUrl", "baseUrl must not contain a fragment (#...)")
	}
	return u, nil
}

func parseTimeout(raw json.RawMessage) (int, error) {
	if raw == nil || string(bytes.TrimSpace(raw)) == "null" {
		return DefaultTimeoutMs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, configError("timeoutMs", "timeoutMs must be a number")
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, configError("timeoutMs", "timeoutMs must be a number")
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, configError("timeoutMs", "timeoutMs must be a number")
	}
	// protocol.md types timeoutMs as a number: a fraction of a millisecond
	// is rounded, then the value is clamped.
	f = math.Round(f)
	switch {
	case f < MinTimeoutMs:
		return MinTimeoutMs, nil
	case f > MaxTimeoutMs:
		return MaxTimeoutMs, nil
	}
	return int(f), nil
}

// truncateForMessage keeps user-supplied names short in error messages.
func truncateForMessage(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}
