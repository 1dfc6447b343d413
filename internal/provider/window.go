package provider

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Built-in context-window estimates in tokens (protocol.md Context
// compression; decimal per addendum §10).
const (
	WindowClaudeLong    = 1_000_000 // Claude 4.6 and later
	WindowClaude        = 200_000
	WindowGPT41         = 1_000_000
	WindowGPT5          = 272_000
	WindowOpenAIDefault = 128_000
	WindowLocal         = 32_768 // Ollama and OpenAI-compatible endpoints
)

// Capability is one entry of ModelInfo.capabilities.
type Capability = protocol.ModelCapability

// Capability names of protocol.md ModelInfo.capabilities, in their order.
const (
	CapTools     = protocol.CapabilityTools
	CapVision    = protocol.CapabilityVision
	CapThinking  = protocol.CapabilityThinking
	CapEmbedding = protocol.CapabilityEmbedding
)

// EstimateWindow is the built-in context-window estimate for model on a
// provider of kind (protocol.md Context compression):
//   - anthropic: 1 000 000 for Claude 4.6 and later, otherwise 200 000;
//   - openai: 1 000 000 for gpt-4.1*, 272 000 for gpt-5*, otherwise 128 000;
//   - ollama and openaiCompatible: 32 768.
//
// It returns 0 for an unknown kind.
func EstimateWindow(kind Kind, model string) int {
	switch kind {
	case Anthropic:
		if v, ok := ClaudeVersion(model); ok && v.AtLeast(4, 6) {
			return WindowClaudeLong
		}
		return WindowClaude
	case OpenAI:
		m := openAIModelName(model)
		switch {
		case strings.HasPrefix(m, "gpt-4.1"):
			return WindowGPT41
		case strings.HasPrefix(m, "gpt-5"):
			return WindowGPT5
		}
		return WindowOpenAIDefault
	case Ollama, OpenAICompatible:
		return WindowLocal
	}
	return 0
}

// ModelVersion is a Claude generation such as 4.6 (Major 4, Minor 6).
type ModelVersion struct{ Major, Minor int }

// AtLeast reports whether v >= major.minor.
func (v ModelVersion) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// ClaudeVersion reads the generation out of a Claude model id. It accepts
// the current ids ("claude-opus-4-6", "claude-sonnet-4-6-20260101",
// "claude-opus-5"), the older order ("claude-3-7-sonnet-20250219",
// "claude-3-5-haiku-latest"), dotted forms ("claude-4.7-opus",
// "claude-2.1") and cloud ids ("anthropic.claude-opus-4-6-v1:0",
// "claude-opus-4-6@20260101"). A date suffix such as "20250514" is never a
// minor version, so "claude-opus-4-20250514" is 4.0. ok is false when the id
// names no Claude generation.
func ClaudeVersion(model string) (v ModelVersion, ok bool) {
	m := strings.ToLower(model)
	i := strings.Index(m, "claude")
	if i < 0 {
		return ModelVersion{}, false
	}
	tokens := strings.FieldsFunc(m[i+len("claude"):], func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for k, tok := range tokens {
		major, isNum := smallNumber(tok)
		if !isNum {
			if isClaudeFamily(tok) {
				continue
			}
			// Something other than a family word before any number
			// ("claude-v1x"): not a version we can read.
			return ModelVersion{}, false
		}
		v.Major = major
		if k+1 < len(tokens) {
			if minor, isMinor := smallNumber(tokens[k+1]); isMinor {
				v.Minor = minor
			}
		}
		return v, true
	}
	return ModelVersion{}, false
}

// smallNumber parses a 1-2 digit token; longer digit runs are dates.
func smallNumber(tok string) (int, bool) {
	if len(tok) == 0 || len(tok) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(tok)
	return n, err == nil
}

func isClaudeFamily(tok string) bool {
	switch tok {
	case "opus", "sonnet", "haiku", "instant":
		return true
	}
	return false
}

// openAIModelName lowercases model and drops an "openai/" routing prefix.
func openAIModelName(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	return strings.TrimPrefix(m, "openai/")
}

// FamilyCapabilities are the capabilities known from the model family, for
// the providers that do not report them (protocol.md ModelInfo: Anthropic
// and the official OpenAI API), in the order tools, vision, thinking,
// embedding. It returns nil when unknown (other kinds, unknown families).
//
// Anthropic: Claude 3 and later have tools and vision; 3.7 and later
// thinking. OpenAI: text-embedding-* embedding only; gpt-5* and the o-series
// (o1, o3, o4) tools, vision and thinking, except o1-mini/o1-preview
// (thinking only) and o3-mini (tools, thinking); gpt-4o*, gpt-4.1* and
// gpt-4-turbo* tools and vision; gpt-4 and gpt-3.5-turbo tools.
func FamilyCapabilities(kind Kind, model string) []Capability {
	switch kind {
	case Anthropic:
		v, ok := ClaudeVersion(model)
		if !ok || v.Major < 3 {
			return nil
		}
		caps := []Capability{CapTools, CapVision}
		if v.AtLeast(3, 7) {
			caps = append(caps, CapThinking)
		}
		return caps
	case OpenAI:
		m := openAIModelName(model)
		switch {
		case strings.HasPrefix(m, "text-embedding-"):
			return []Capability{CapEmbedding}
		case strings.HasPrefix(m, "o1-mini"), strings.HasPrefix(m, "o1-preview"):
			return []Capability{CapThinking}
		case strings.HasPrefix(m, "o3-mini"):
			return []Capability{CapTools, CapThinking}
		case strings.HasPrefix(m, "gpt-5"), isOSeries(m):
			return []Capability{CapTools, CapVision, CapThinking}
		case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4-turbo"):
			return []Capability{CapTools, CapVision}
		case m == "gpt-4" || strings.HasPrefix(m, "gpt-4-0") || strings.HasPrefix(m, "gpt-3.5-turbo"):
			return []Capability{CapTools}
		}
	}
	return nil
}

// isOSeries matches o1, o3, o4 and their variants ("o3-pro", "o4-mini-2025...").
func isOSeries(m string) bool {
	for _, p := range []string{"o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return false
}

// Window cache lifetimes. A provider answer (a window, or "not reported",
// which falls back to the estimate) lives WindowTTL (protocol.md: 5
// minutes). A failed lookup (network, auth, notFound, ...) is remembered for
// WindowFailureTTL only, so that a model being asked about every turn does not
// hammer a failing endpoint, yet a transient failure does not pin the estimate
// for 5 minutes. A lookup cut short by the caller's ctx is not cached.
const (
	WindowTTL        = 5 * time.Minute
	WindowFailureTTL = 30 * time.Second
	maxWindowEntries = 512
)

// WindowCache caches context windows per provider kind, base URL and model
// (protocol.md provider/contextWindow and limits.contextWindowTokens). It is
// safe for concurrent use; concurrent misses for the same key may each ask
// the provider. The zero value is not usable: call NewWindowCache.
type WindowCache struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[string]windowEntry
}

type windowEntry struct {
	tokens       int
	fromProvider bool
	expires      time.Time
}

// NewWindowCache returns an empty cache. now is the clock (nil: time.Now);
// tests pass a fake one.
func NewWindowCache(now func() time.Time) *WindowCache {
	if now == nil {
		now = time.Now
	}
	return &WindowCache{now: now, entries: make(map[string]windowEntry)}
}

// Lookup returns the context window of p's configured model in tokens.
// fromProvider is true when p.Describe reported it (ModelInfo.ContextWindow
// > 0); otherwise tokens is EstimateWindow(kind, model) — when Describe
// reports 0, fails, or ctx ends. See WindowTTL and WindowFailureTTL for how
// long each answer is kept.
func (c *WindowCache) Lookup(ctx context.Context, p Provider) (tokens int, fromProvider bool) {
	cfg := p.Config()
	key := string(cfg.Kind) + "\x00" + cfg.BaseURL + "\x00" + cfg.Model
	now := c.now()
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		return e.tokens, e.fromProvider
	}
	c.mu.Unlock()

	info, err := p.Describe(ctx)
	e := windowEntry{tokens: EstimateWindow(cfg.Kind, cfg.Model)}
	switch {
	case err != nil && ctx.Err() != nil:
		return e.tokens, false // cancelled: says nothing about the endpoint
	case err != nil:
		e.expires = c.now().Add(WindowFailureTTL)
	case info.ContextWindow > 0:
		e.tokens, e.fromProvider = info.ContextWindow, true
		e.expires = c.now().Add(WindowTTL)
	default:
		e.expires = c.now().Add(WindowTTL)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxWindowEntries {
		c.evictLocked(c.now())
	}
	c.entries[key] = e
	return e.tokens, e.fromProvider
}

// evictLocked drops expired entries, and everything if none had expired, so
// the map stays bounded whatever configs clients send.
func (c *WindowCache) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	if len(c.entries) >= maxWindowEntries {
		clear(c.entries)
	}
}
