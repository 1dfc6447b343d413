package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"context"
	"encoding/json"
	"fmt"
	"github.com/spf13/cobra"
	"os"
	"os/signal"
	"strings"
)

// retrieval is context/retrieve's result.
type retrieval = protocol.RetrieveResult

func newRetrieveCmd() *cobra.Command {
	var budget int
	var asJSON, noText bool
	var focus []string
	c := &cobra.Command{
		Use:   "retrieve [DIR] QUERY",
		Short: "Print the snippets context/retrieve ranks for a query, with scores and reasons",
		Example: `  task-x retrieve . "where is the config parsed"
  task-x retrieve "retry backoff" --budget 4000 --focus internal/agent --no-text`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			var dirArg, query string
			if len(args) == 2 {
				dirArg, query = args[0], args[1]
			} else {
				query = args[0]
				if isDir(query) && !strings.Contains(query, " ") {
					return usageError(c, "%q is a folder, and a query is missing: task-x retrieve %s \"what to look for\"", query, query)
				}
			}
			return retrieve(dirArg, query, budget, focus, asJSON, noText)
		},
	}
	fl := c.Flags()
	fl.IntVar(&budget, "budget", 0, "token budget (characters / 4); default the runtime's 8000")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&noText, "no-text", false, "print only the ranked list, not the snippets' text")
	fl.StringArrayVar(&focus, "focus", nil, "a root-relative path to rank first (repeatable)")
	return c
}

func retrieve(dirArg, query string, budget int, focus []string, asJSON, noText bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, code := openWorkspace(ctx, dirArg, openOpts{})
	if c == nil {
		return exitCode(code)
	}
	defer c.close()
	params := map[string]any{"query": query}
	if budget != 0 {
		params["budgetTokens"] = budget
	}
	if len(focus) > 0 {
		params["focusPaths"] = focus
	}
	var raw json.RawMessage
	if err := c.call(ctx, "context/retrieve", params, &raw); err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", friendly(err))
		return exitCode(1)
	}
	if asJSON {
		var v any
		json.Unmarshal(raw, &v)
		out, _ := json.MarshalIndent(v, "", "  ")
		fmt.Println(string(out))
		return nil
	}
	var r retrieval
	if err := json.Unmarshal(raw, &r); err != nil {
		fmt.Fprintln(os.Stderr, "task-x: the runtime sent an unreadable result; run with --verbose and see its log")
		return exitCode(1)
	}
	rr := r.Retrieval
	fmt.Printf("terms: %s\n", strings.Join(rr.Terms, ", "))
	fmt.Printf("%d snippets from %d files considered, %d of %d tokens\n", len(rr.Snippets), rr.FilesConsidered, rr.UsedTokens, rr.BudgetTokens)
	for i, s := range rr.Snippets {
		fmt.Printf("\n%2d. %s:%d-%d  score %.2f\n    %s\n", i+1, s.Path, s.StartLine, s.EndLine, s.Score, s.Reason)
		if !noText {
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
	return nil
}
