package retrieve

import (
	"errors"
	"fmt"
	"strings"
)

// ExcerptsHeading starts the repository excerpts block appended to the
// agent's system text, so compaction can find and drop it.
const ExcerptsHeading = "## Repository excerpts"

// FormatExcerpts renders retrieved snippets for a prompt: a heading, then
// each snippet as "### path:start-end (reason)" and a fenced block. It
// returns "" when there are no snippets.
func FormatExcerpts(res Result) string {
	if len(res.Snippets) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ExcerptsHeading + "\n")
	b.WriteString("Parts of the repository retrieved for this task (ranked; they may be incomplete: read files before editing them).\n")
	for _, sn := range res.Snippets {
		fence := "```"
		for strings.Contains(sn.Text, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "\n### %s:%d-%d (%s)\n%s\n%s\n%s\n", sn.Path, sn.StartLine, sn.EndLine, sn.Reason, fence, sn.Text, fence)
	}
	return b.String()
}

// NewQuery validates a query and budget (nil: the default).
func NewQuery(query string, budget *int) (Query, error) {
	if strings.TrimSpace(query) == "" {
		return Query{}, errors.New("query must not be empty")
	}
	q := Query{Text: query}
	if budget != nil {
		if *budget <= 0 || *budget > MaxBudgetTokens {
			return Query{}, fmt.Errorf("budgetTokens must be between 1 and %d, got %d", MaxBudgetTokens, *budget)
		}
		q.BudgetTokens = *budget
	}
	return q, nil
}
