package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// find_symbols and retrieve_context read the project of the Env
// (tool.Project): its parsed symbols and its ranked retrieval.

// Limits of find_symbols.
const findSymbolsMax = 50

type findSymbols struct{}

var findSymbolsSchema = tool.InputSchema[findSymbolsInput](tool.Constraints{
	"kind":  {Enum: []string{"function", "method", "type", "interface", "class", "struct", "enum", "constant", "variable", "module", "field"}},
	"query": {MinLength: tool.N(1)},
})

func (*findSymbols) Spec() tool.Spec {
	return tool.Spec{
		Name: "find_symbols",
		Description: fmt.Sprintf("Find symbol definitions (functions, methods, types, classes, constants, ...) in the workspace index by name. "+
			"Matching ignores case; exact names come first, then names starting with the query, then names containing it or one of its words. "+
			"Returns at most %d symbols as \"path:startLine-endLine kind name\". Excluded files are never searched.", findSymbolsMax),
		InputSchema: findSymbolsSchema,
		Permission:  tool.ClassRead,
	}
}

type symbolHit struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Container string `json:"container,omitempty"`
	rank      int
}

type findSymbolsInput struct {
	Query string `json:"query" jsonschema:"A symbol name or part of one, e.g. parseConfig, Config, retry."`
	Kind  string `json:"kind,omitempty" jsonschema:"Only symbols of this kind."`
}

func (t *findSymbols) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in findSymbolsInput
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid input: %v", err)
	}
	q := strings.ToLower(strings.TrimSpace(in.Query))
	if q == "" {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "query must not be empty")
	}
	kind, ok := syntax.ParseSymbolKind(in.Kind) // "": any kind
	if !ok {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "unknown kind %q", in.Kind)
	}
	if env == nil || env.Project == nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
	}
	words := retrieve.SplitIdentifier(in.Query)
	snap := env.Project.Snapshot()
	var hits []symbolHit
	parsed := 0
	for i, rel := range snap.Files() {
		if i%1024 == 0 && ctx.Err() != nil {
			return tool.Result{}, tool.Errorf(tool.ErrCancelled, "cancelled")
		}
		if IsSecretFile(env.Root, rel) {
			continue
		}
		f, _ := snap.File(rel)
		fi, _ := f.Parsed.(*syntax.FileInfo)
		if fi == nil {
			continue
		}
		parsed++
		for _, sym := range fi.Symbols {
			if kind != 0 && sym.Kind != kind {
				continue
			}
			rank := symbolRank(strings.ToLower(sym.Name.String()), q, words)
			if rank == 0 {
				continue
			}
			hits = append(hits, symbolHit{Name: sym.Name.String(), Kind: sym.Kind.String(), Path: rel, StartLine: int(sym.StartLine),
				EndLine: int(sym.EndLine), Container: sym.Container.String(), rank: rank})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].rank != hits[j].rank {
			return hits[i].rank > hits[j].rank
		}
		if len(hits[i].Name) != len(hits[j].Name) {
			return len(hits[i].Name) < len(hits[j].Name)
		}
		return hits[i].Path < hits[j].Path
	})
	truncated := len(hits) > findSymbolsMax
	hits = hits[:min(len(hits), findSymbolsMax)]
	var b strings.Builder
	for _, h := range hits {
		name := h.Name
		if h.Container != "" {
			name = h.Container + "." + h.Name
		}
		fmt.Fprintf(&b, "%s:%d-%d %s %s\n", h.Path, h.StartLine, h.EndLine, h.Kind, name)
	}
	switch {
	case len(hits) == 0 && parsed == 0:
		b.WriteString("No symbols are indexed yet (no file was parsed); use search_text instead.")
	case len(hits) == 0:
		fmt.Fprintf(&b, "No symbol matches %q.", in.Query)
	case truncated:
		fmt.Fprintf(&b, "(more than %d matches; give a longer name or a kind)", findSymbolsMax)
	}
	if hits == nil {
		hits = []symbolHit{}
	}
	return tool.Result{Content: strings.TrimRight(b.String(), "\n"), Data: map[string]any{"symbols": hits, "truncated": truncated}}, nil
}

// symbolRank: 4 exact, 3 prefix, 2 contains, 1 shares every word of the
// query (parse config → ConfigParser), 0 no match. name and q are
// lower-case.
func symbolRank(name, q string, words []string) int {
	switch {
	case name == q:
		return 4
	case strings.HasPrefix(name, q):
		return 3
	case strings.Contains(name, q):
		return 2
	}
	if len(words) < 2 {
		return 0
	}
	for _, w := range words {
		if !strings.Contains(name, w) {
			return 0
		}
	}
	return 1
}

type retrieveContext struct{}

var retrieveContextSchema = tool.InputSchema[retrieveContextInput](tool.Constraints{
	"budgetTokens": {Min: tool.N(1.0), Max: tool.N(200000.0)},
	"query":        {MinLength: tool.N(1)},
})

func (*retrieveContext) Spec() tool.Spec {
	return tool.Spec{
		Name: "retrieve_context",
		Description: "Find the code most relevant to a query across the workspace, ranked: whole definitions where they fit, else the lines around the best matches, each with why it was chosen. " +
			"Use it to explore an unfamiliar area before reading whole files. Excluded and secret-looking files are never returned.",
		InputSchema: retrieveContextSchema,
		Permission:  tool.ClassRead,
	}
}

type retrieveContextInput struct {
	Query        string `json:"query" jsonschema:"What you are looking for, in words or identifiers: \"where retries are configured\", parseConfig, src/api."`
	BudgetTokens *int   `json:"budgetTokens,omitempty" jsonschema:"Most tokens of code to return (characters / 4). Default 8000."`
}

func (t *retrieveContext) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in retrieveContextInput
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid input: %v", err)
	}
	q, err := retrieve.NewQuery(in.Query, in.BudgetTokens)
	if err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "%v", err)
	}
	if env == nil || env.Project == nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
	}
	res, err := env.Project.Retrieve(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, tool.Errorf(tool.ErrCancelled, "cancelled")
		}
		if errors.Is(err, retrieve.ErrEmptyQuery) || errors.Is(err, retrieve.ErrBudget) {
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "%v", err)
		}
		return tool.Result{}, err
	}
	text := retrieve.FormatExcerpts(res)
	if text == "" {
		text = fmt.Sprintf("Nothing in the workspace matches %q (terms: %s).", in.Query, strings.Join(res.Terms, ", "))
	}
	return tool.Result{Content: text, Data: res}, nil
}
