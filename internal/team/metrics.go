package team

import (
	"sync"

	"github.com/task-x/task-x-runtime/internal/task"
)

// Spend is what one subagent spent: its cost in USD (its own subagents
// included), its billed tokens with no price, and its tokens (input plus
// output, its own subagents' included).
type Spend struct {
	CostUSD        float64
	UnpricedTokens int
	Tokens         int
}

// SpendOf reads a finished subagent's spend from its summary.
func SpendOf(sum task.Summary) Spend {
	if sum.Usage == nil || sum.Metrics == nil { // an engine that measured nothing
		return Spend{}
	}
	return Spend{
		CostUSD:        sum.Metrics.CostUSD,
		UnpricedTokens: sum.Metrics.UnpricedTokens,
		Tokens:         sum.Usage.InputTokens + sum.Usage.OutputTokens + sum.Metrics.SubagentTokens,
	}
}

// Tally sums the subagents of one lead task (protocol.md "Costs"): each
// subagent that ran, finished or not, adds its spend. Safe for concurrent
// use; the zero value is ready.
type Tally struct {
	mu       sync.Mutex
	n        int
	usd      float64
	unpriced int
	tokens   int
}

// Add counts one subagent and its spend.
func (t *Tally) Add(s Spend) {
	t.mu.Lock()
	t.n++
	t.usd += s.CostUSD
	t.unpriced += s.UnpricedTokens
	t.tokens += s.Tokens
	t.mu.Unlock()
}

// Count is the number of subagents added so far.
func (t *Tally) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Apply adds the subagents to the lead's metrics: costUsd and
// unpricedTokens then include them, and subagents, subagentCostUsd and
// subagentTokens say how much of that was theirs.
func (t *Tally) Apply(m *task.Metrics) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m.CostUSD += t.usd
	m.UnpricedTokens += t.unpriced
	m.Subagents += t.n
	m.SubagentCostUSD += t.usd
	m.SubagentTokens += t.tokens
}
