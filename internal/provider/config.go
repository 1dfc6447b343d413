package provider

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
