package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"context"
	"encoding/json"
	"fmt"
	"github.com/spf13/cobra"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// summary is the workspace summary of workspace/open.
type summary = protocol.WorkspaceSummary

func newOpenCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "open [DIR]",
		Short: "Open a folder and print the workspace summary",
		Example: `  task-x open .
  task-x open ~/src/project --json | jq .stats`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			// A folder that is not there is bad usage (exit 2), said
			// before the runtime starts.
			if _, err := absDir(dir); err != nil {
				return usageError(c, "%s", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			s, code := openWorkspace(ctx, dir, openOpts{})
			if s == nil {
				return exitCode(code)
			}
			defer s.close()
			raw := s.summary
			if asJSON {
				var v any
				json.Unmarshal(raw, &v)
				out, _ := json.MarshalIndent(v, "", "  ")
				fmt.Println(string(out))
				return nil
			}
			var sm summary
			if err := json.Unmarshal(raw, &sm); err != nil {
				fmt.Fprintln(os.Stderr, "task-x: the runtime sent an unreadable summary; run with --verbose and see its log")
				return exitCode(1)
			}
			printSummary(&sm)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return c
}

func printSummary(s *summary) {
	p := s.Project
	fmt.Printf("%s  %s\n", p.Name, s.Root)
	if len(p.Kinds) > 0 {
		fmt.Printf("  kinds:      %s\n", strings.Join(p.Kinds, ", "))
	}
	if len(p.Manifests) > 0 {
		fmt.Printf("  manifests:  %s\n", strings.Join(p.Manifests, ", "))
	}
	if len(p.Languages) > 0 {
		var parts []string
		for _, l := range p.Languages {
			parts = append(parts, fmt.Sprintf("%s %d", l.Language, l.Files))
		}
		fmt.Printf("  languages:  %s\n", strings.Join(parts, ", "))
	}
	for _, k := range []string{"build", "test", "lint", "run"} {
		if c := p.Commands[k]; c != "" {
			fmt.Printf("  %-11s %s\n", k+":", c)
		}
	}
	if p.Git != nil {
		fmt.Printf("  git:        %s @ %s, %d changed\n", p.Git.Branch, p.Git.Head, p.Git.Dirty)
	}
	st := s.Stats
	fmt.Printf("  files:      %d indexed of %d seen, %.1f MB, %d symbols, %d ms", st.IndexedFiles, st.Files, float64(st.Bytes)/1e6, st.Symbols, st.ElapsedMs)
	if st.Truncated {
		fmt.Print(" (truncated at the file cap)")
	}
	fmt.Println()
	var skipped []string
	sk := st.Skipped
	for k, v := range map[string]int{"binary": sk.Binary, "tooLarge": sk.TooLarge, "excluded": sk.Excluded,
		"unreadable": sk.Unreadable, "vanished": sk.Vanished, "symlinkLoop": sk.SymlinkLoop,
		"outsideRoot": sk.OutsideRoot, "invalidName": sk.InvalidName} {
		if v > 0 {
			skipped = append(skipped, fmt.Sprintf("%s %d", k, v))
		}
	}
	sort.Strings(skipped)
	if len(skipped) > 0 {
		fmt.Printf("  skipped:    %s\n", strings.Join(skipped, ", "))
	}
	for _, in := range s.Instructions {
		where := string(in.Scope)
		if in.Dir != "" {
			where += " " + in.Dir
		}
		fmt.Printf("  instructions: %s (%s)\n", in.Source, where)
	}
}
