package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

// retrieval is context/retrieve's result as printed (protocol.md).
type retrieval struct {
	Retrieval struct {
		Terms    []string `json:"terms"`
		Snippets []struct {
			Path      string  `json:"path"`
			StartLine int     `json:"startLine"`
			EndLine   int     `json:"endLine"`
			Text      string  `json:"text"`
			Score     float64 `json:"score"`
			Reason    string  `json:"reason"`
		} `json:"snippets"`
		FilesConsidered int `json:"filesConsidered"`
		BudgetTokens    int `json:"budgetTokens"`
		UsedTokens      int `json:"usedTokens"`
	} `json:"retrieval"`
	Instructions []struct {
		Source string `json:"source"`
	} `json:"instructions"`
}

// cmdRetrieve: task-x retrieve [--budget N] [--focus PATH]... [--json]
// [--no-text] [DIR] "query" prints the ranked snippets with scores and
// reasons.
func cmdRetrieve(args []string) int {
	fs := flag.NewFlagSet("retrieve", flag.ContinueOnError)
	budget := fs.Int("budget", 0, "token budget (characters / 4); default the runtime's 8000")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	noText := fs.Bool("no-text", false, "print only the ranked list, not the snippets' text")
	var focus multiFlag
	fs.Var(&focus, "focus", "a root-relative path to rank first (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var dirArg, query string
	switch fs.NArg() {
	case 1:
		query = fs.Arg(0)
	case 2:
		dirArg, query = fs.Arg(0), fs.Arg(1)
	default:
		fmt.Fprintln(os.Stderr, `usage: task-x retrieve [--budget N] [--focus PATH] [--json] [--no-text] [DIR] "query"`)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, _, code := openWorkspace(ctx, dirArg, nil, nil, nil)
	if c == nil {
		return code
	}
	defer c.close()
	params := map[string]any{"query": query}
	if *budget != 0 {
		params["budgetTokens"] = *budget
	}
	if len(focus) > 0 {
		params["focusPaths"] = []string(focus)
	}
	var raw json.RawMessage
	if err := c.call(ctx, "context/retrieve", params, &raw); err != nil {
		fmt.Fprintln(os.Stderr, "task-x: context/retrieve:", rpcMessage(err))
		return 1
	}
	if *asJSON {
		var v any
		json.Unmarshal(raw, &v)
		out, _ := json.MarshalIndent(v, "", "  ")
		fmt.Println(string(out))
		return 0
	}
	var r retrieval
	if err := json.Unmarshal(raw, &r); err != nil {
		fmt.Fprintln(os.Stderr, "task-x: unreadable result:", err)
		return 1
	}
	rr := r.Retrieval
	fmt.Printf("terms: %s\n", strings.Join(rr.Terms, ", "))
	fmt.Printf("%d snippets from %d files considered, %d of %d tokens\n", len(rr.Snippets), rr.FilesConsidered, rr.UsedTokens, rr.BudgetTokens)
	for i, s := range rr.Snippets {
		fmt.Printf("\n%2d. %s:%d-%d  score %.2f\n    %s\n", i+1, s.Path, s.StartLine, s.EndLine, s.Score, s.Reason)
		if !*noText {
			for _, l := range strings.Split(s.Text, "\n") {
				fmt.Printf("    │ %s\n", l)
			}
		}
	}
	if len(r.Instructions) > 0 {
		var src []string
		for _, in := range r.Instructions {
			src = append(src, in.Source)
		}
		fmt.Printf("\ninstructions: %s\n", strings.Join(src, ", "))
	}
	return 0
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
