package team

import (
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
)

func TestTallyAddsSubagentsToTheLead(t *testing.T) {
	var tally Tally
	subs := []task.Summary{
		{Usage: &provider.Usage{InputTokens: 1000, OutputTokens: 200}, Metrics: &task.Metrics{CostUSD: 0.25}},
		{Usage: &provider.Usage{InputTokens: 300, OutputTokens: 50}, Metrics: &task.Metrics{UnpricedTokens: 350}},
		{Usage: &provider.Usage{InputTokens: 10, OutputTokens: 5}, Metrics: &task.Metrics{CostUSD: 0.5, SubagentTokens: 85, SubagentCostUSD: 0.1}},
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Add(1)
		go func() { defer wg.Done(); tally.Add(SpendOf(s)) }()
	}
	wg.Wait()
	lead := task.Metrics{CostUSD: 1, UnpricedTokens: 7}
	tally.Apply(&lead)
	want := task.Metrics{CostUSD: 1.75, UnpricedTokens: 357, Subagents: 3, SubagentCostUSD: 0.75, SubagentTokens: 1200 + 350 + 100}
	if lead != want || tally.Count() != 3 {
		t.Errorf("lead metrics %+v\nwant %+v", lead, want)
	}
}
