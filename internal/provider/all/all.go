// Package all builds a provider.Provider from a validated provider.Config by
// dispatching on its kind to the adapters (anthropic, openai for both openai
// and openaiCompatible, ollama), and describes each kind for initialize
// (protocol.md initialize providers[]: capabilities, requiresApiKey).
package all

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/provider/anthropic"
	"github.com/task-x/task-x-runtime/internal/provider/ollama"
	"github.com/task-x/task-x-runtime/internal/provider/openai"
)

// Options are passed to whichever adapter New picks. A nil *Options is
// allowed.
type Options struct {
	// HTTPClient sends every request. Default: each adapter's own,
	// provider.NewHTTPClient(cfg.Timeout()), with the idle-gap timeout.
	HTTPClient *http.Client
	// Logger receives the adapter's debug records (never keys, prompts or
	// output). Default: discard.
	Logger *slog.Logger
}

// New returns the adapter for cfg.Kind. cfg should come from
// provider.ParseConfig. An unknown kind is an *provider.Error of kind
// invalidConfig on field "kind"; adapters report their own config errors the
// same way.
func New(cfg provider.Config, opts *Options) (provider.Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch cfg.Kind {
	case provider.Anthropic:
		return anthropic.New(cfg, &anthropic.Options{HTTPClient: o.HTTPClient, Logger: o.Logger})
	case provider.OpenAI, provider.OpenAICompatible:
		return openai.New(cfg, &openai.Options{HTTPClient: o.HTTPClient, Logger: o.Logger})
	case provider.Ollama:
		return ollama.New(cfg, &ollama.Options{HTTPClient: o.HTTPClient, Logger: o.Logger})
	}
	return nil, &provider.Error{Kind: provider.KindInvalidConfig, Field: "kind", Message: fmt.Sprintf("unknown provider kind %q", cfg.Kind)}
}

// Capabilities describes what the runtime supports for a provider kind
// (initialize providers[].capabilities); the zero value for an unknown kind.
// Every kind streams, takes tools and images, lists models and describes a
// model. Thinking means the kind serves reasoning models; their thinking is
// streamed as thinkingDelta where the API returns it (Anthropic thinking
// blocks, OpenAI-compatible reasoning fields, Ollama thinking; the official
// OpenAI Chat Completions API keeps it hidden).
// ContextWindow is true where the endpoint itself can report a model's
// window: Anthropic max_input_tokens, OpenAI-compatible model fields,
// Ollama /api/show; the official OpenAI API does not, so the runtime uses
// its built-in estimate there.
func Capabilities(kind provider.Kind) provider.Capabilities {
	switch kind {
	case provider.Anthropic, provider.OpenAICompatible, provider.Ollama:
		return provider.Capabilities{Streaming: true, Tools: true, Vision: true, Thinking: true, ListModels: true, ModelInfo: true, ContextWindow: true}
	case provider.OpenAI:
		return provider.Capabilities{Streaming: true, Tools: true, Vision: true, Thinking: true, ListModels: true, ModelInfo: true, ContextWindow: false}
	}
	return provider.Capabilities{}
}

// RequiresAPIKey reports whether kind needs an apiKey (protocol.md
// ProviderConfig): true for anthropic, openai and openaiCompatible.
func RequiresAPIKey(kind provider.Kind) bool { return provider.RequiresAPIKey(kind) }
