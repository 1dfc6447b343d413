package agent

import (
	"net/url"
	"strings"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// Price is one protocol.md agent/run `prices` entry: USD per million input
// and output tokens for every model id that starts with Model.
type Price struct {
	Model         string  `json:"model"`
	InputPerMtok  float64 `json:"inputPerMtok"`
	OutputPerMtok float64 `json:"outputPerMtok"`
}

// anthropicPrices are Anthropic's first-party list prices in USD per million
// tokens (platform.claude.com "Models & pricing"), matched by model-id
// prefix, longest first. Cache reads and writes are not priced apart: the
// providers report them inside inputTokens.
var anthropicPrices = []Price{
	{"claude-opus-5-5", 4, 20},
	{"claude-opus-5", 5, 25},
	{"claude-sonnet-5", 2, 10},
	{"claude-opus-4-7", 5, 25},
	{"claude-opus-4-6", 5, 25},
	{"claude-opus-4-5", 5, 25},
	{"claude-opus-4", 15, 75}, // claude-opus-4-0, claude-opus-4-1, claude-opus-4-20250514
	{"claude-sonnet-4", 3, 15},
	{"claude-haiku-4-5", 1, 5},
	{"claude-3-7-sonnet", 3, 15},
	{"claude-3-5-sonnet", 3, 15},
	{"claude-3-5-haiku", 0.8, 4},
	{"claude-3-opus", 15, 75},
	{"claude-3-haiku", 0.25, 1.25},
}

// pricer prices the calls of one provider configuration.
type pricer struct {
	local bool
	price *Price
}

// newPricer picks the price of cfg: free for a local provider (ollama, or
// openaiCompatible on a loopback host, addendum §11), else the longest
// matching prefix of prices, else the built-in Anthropic rate (kind
// anthropic only), else none (the tokens count as unpriced).
func newPricer(cfg provider.Config, prices []Price) pricer {
	if cfg.Kind == provider.Ollama {
		return pricer{local: true}
	}
	if cfg.Kind == provider.OpenAICompatible {
		if u, err := url.Parse(cfg.BaseURL); err == nil && provider.IsLoopbackHost(u.Hostname()) {
			return pricer{local: true}
		}
	}
	if p := longestPrefix(prices, cfg.Model); p != nil {
		return pricer{price: p}
	}
	if cfg.Kind == provider.Anthropic {
		if p := longestPrefix(anthropicPrices, cfg.Model); p != nil {
			return pricer{price: p}
		}
	}
	return pricer{}
}

func longestPrefix(prices []Price, model string) *Price {
	var best *Price
	for i := range prices {
		p := &prices[i]
		if p.Model != "" && strings.HasPrefix(model, p.Model) && (best == nil || len(p.Model) > len(best.Model)) {
			best = p
		}
	}
	return best
}

// cost returns the USD cost of u and the tokens left unpriced.
func (p pricer) cost(u provider.Usage) (usd float64, unpriced int) {
	switch {
	case p.local:
		return 0, 0
	case p.price == nil:
		return 0, u.InputTokens + u.OutputTokens
	}
	return (float64(u.InputTokens)*p.price.InputPerMtok + float64(u.OutputTokens)*p.price.OutputPerMtok) / 1e6, 0
}
