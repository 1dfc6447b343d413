package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/task-x/task-x-runtime/internal/graph"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// firstRequestBudget is the token budget of the repository excerpts given
// to the agent's first request (addendum §3: about 3000-8000 tokens).
const firstRequestBudget = 6000

// ExcerptsHeading starts the repository excerpts block appended to the
// agent's system text, so compaction can find and drop it.
const ExcerptsHeading = "## Repository excerpts"

// retrievalState is the server's retrieval cache: one index per workspace
// snapshot, built during workspace/open and refresh (graphReady) and again
// in the background after filesChanged.
type retrievalState struct {
	once       sync.Once
	cache      *retrieve.Cache
	rebuilding atomic.Bool // a background rebuild after filesChanged is pending
}

func (s *Server) retrievalIndex(ctx context.Context) (*workspace.Workspace, *retrieve.Index, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, nil, err
	}
	s.retrieval.once.Do(func() {
		s.retrieval.cache = retrieve.NewCache(&retrieve.BuildOptions{Skip: builtin.IsSecretPath})
	})
	ix, err := s.retrieval.cache.Index(ctx, ws.Snapshot())
	if err != nil {
		return nil, nil, err
	}
	return ws, ix, nil
}

// neighbours is the graph boost of retrieval: the files a file depends on
// and the files that use it, from the open workspace's graph (built on first
// use, like graph/file).
func (s *Server) neighbours() func(rel string) []retrieve.Neighbour {
	var g *graph.Graph
	return func(rel string) []retrieve.Neighbour {
		if g == nil {
			var err error
			if g, _, err = s.currentGraph(); err != nil {
				return nil
			}
		}
		deps, err := g.File(rel)
		if err != nil {
			return nil
		}
		out := make([]retrieve.Neighbour, 0, len(deps.DependsOn)+len(deps.UsedBy))
		for _, d := range deps.DependsOn {
			rel := "imported by"
			if d.Kind == graph.KindReference {
				rel = "used by"
			}
			out = append(out, retrieve.Neighbour{Path: d.Path, Relation: rel})
		}
		for _, d := range deps.UsedBy {
			rel := "imports"
			if d.Kind == graph.KindReference {
				rel = "uses"
			}
			out = append(out, retrieve.Neighbour{Path: d.Path, Relation: rel})
		}
		return out
	}
}

type retrieveParams struct {
	Query        string   `json:"query"`
	BudgetTokens *int     `json:"budgetTokens"`
	FocusPaths   []string `json:"focusPaths"`
}

// retrieveResult is context/retrieve's result.
type retrieveResult struct {
	Retrieval    retrieve.Result         `json:"retrieval"`
	Instructions []workspace.Instruction `json:"instructions"`
}

// contextRetrieve: context/retrieve {query, budgetTokens?, focusPaths?} →
// {retrieval, instructions}. -32004 without a workspace; -32602 for an
// empty query or a budget outside 1..200000.
func (s *Server) contextRetrieve(ctx context.Context, params json.RawMessage) (any, error) {
	var p retrieveParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if _, err := s.workspace(); err != nil {
		return nil, err
	}
	q, err := retrieveQuery(p.Query, p.BudgetTokens)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	q.FocusPaths = p.FocusPaths
	res, ws, err := s.retrieve(ctx, q)
	if err != nil {
		return nil, err
	}
	return retrieveResult{Retrieval: res, Instructions: instructionsFor(ws.Snapshot(), res.Snippets)}, nil
}

// retrieveQuery validates a query and budget (nil: the default).
func retrieveQuery(query string, budget *int) (retrieve.Query, error) {
	if strings.TrimSpace(query) == "" {
		return retrieve.Query{}, errors.New("query must not be empty")
	}
	q := retrieve.Query{Text: query}
	if budget != nil {
		if *budget <= 0 || *budget > retrieve.MaxBudgetTokens {
			return retrieve.Query{}, fmt.Errorf("budgetTokens must be between 1 and %d, got %d", retrieve.MaxBudgetTokens, *budget)
		}
		q.BudgetTokens = *budget
	}
	return q, nil
}

func (s *Server) retrieve(ctx context.Context, q retrieve.Query) (retrieve.Result, *workspace.Workspace, error) {
	ws, ix, err := s.retrievalIndex(ctx)
	if err != nil {
		return retrieve.Result{}, nil, err
	}
	q.Neighbours = s.neighbours()
	res, err := retrieve.Search(ctx, ix, q)
	if errors.Is(err, retrieve.ErrEmptyQuery) || errors.Is(err, retrieve.ErrBudget) {
		return res, nil, invalidParams("%v", err)
	}
	return res, ws, err
}

// instructionsFor returns the instructions that apply to the snippets'
// paths, each once, in the snapshot's order (user, workspace, directories
// from shallow to deep).
func instructionsFor(snap *workspace.Snapshot, snippets []retrieve.Snippet) []workspace.Instruction {
	want := map[string]bool{}
	for _, sn := range snippets {
		for _, in := range snap.InstructionsFor(sn.Path) {
			want[in.Source] = true
		}
	}
	out := []workspace.Instruction{}
	for _, in := range snap.Instructions() {
		if want[in.Source] {
			out = append(out, in)
		}
	}
	return out
}

// firstRequestContext returns repository excerpts for the agent's first
// request: about 6000 tokens of snippets retrieved for prompt, under
// ExcerptsHeading, or "" without a workspace or a match. Errors are logged
// (without the prompt) and give "".
func (s *Server) firstRequestContext(ctx context.Context, prompt string) string {
	if strings.TrimSpace(prompt) == "" {
		return ""
	}
	if _, err := s.workspace(); err != nil {
		return ""
	}
	res, _, err := s.retrieve(ctx, retrieve.Query{Text: prompt, BudgetTokens: firstRequestBudget})
	if err != nil {
		s.log.Debug("retrieving the first request's excerpts", "err", err)
		return ""
	}
	return FormatExcerpts(res)
}

// FormatExcerpts renders retrieved snippets for a prompt: a heading, then
// each snippet as "### path:start-end (reason)" and a fenced block. It
// returns "" when there are no snippets.
func FormatExcerpts(res retrieve.Result) string {
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

// addRetrievalTools registers find_symbols and retrieve_context, which
// need the server's workspace index.
func (s *Server) addRetrievalTools(r *tool.Registry) {
	r.Add(&findSymbolsTool{s})
	r.Add(&retrieveContextTool{s})
}

// Limits of find_symbols.
const findSymbolsMax = 50

type findSymbolsTool struct{ s *Server }

var findSymbolsSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "description": "A symbol name or part of one, e.g. parseConfig, Config, retry."},
    "kind": {"type": "string", "enum": ["function", "method", "type", "interface", "class", "struct", "enum", "constant", "variable", "module", "field"], "description": "Only symbols of this kind."}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

func (*findSymbolsTool) Spec() tool.Spec {
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

func (t *findSymbolsTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		Query string `json:"query"`
		Kind  string `json:"kind"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid input: %v", err)
	}
	q := strings.ToLower(strings.TrimSpace(in.Query))
	if q == "" {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "query must not be empty")
	}
	if in.Kind != "" && !validKinds[in.Kind] {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "unknown kind %q", in.Kind)
	}
	ws, err := t.s.workspace()
	if err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
	}
	words := retrieve.SplitIdentifier(in.Query)
	snap := ws.Snapshot()
	var hits []symbolHit
	parsed := 0
	for i, rel := range snap.Files() {
		if i%1024 == 0 && ctx.Err() != nil {
			return tool.Result{}, tool.Errorf(tool.ErrCancelled, "cancelled")
		}
		if builtin.IsSecretPath(rel) {
			continue
		}
		f, _ := snap.File(rel)
		fi, _ := f.Parsed.(*syntax.FileInfo)
		if fi == nil {
			continue
		}
		parsed++
		for _, sym := range fi.Symbols {
			if in.Kind != "" && sym.Kind != in.Kind {
				continue
			}
			rank := symbolRank(strings.ToLower(sym.Name), q, words)
			if rank == 0 {
				continue
			}
			hits = append(hits, symbolHit{Name: sym.Name, Kind: sym.Kind, Path: rel, StartLine: sym.StartLine,
				EndLine: sym.EndLine, Container: sym.Container, rank: rank})
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

var validKinds = map[string]bool{
	syntax.KindFunction: true, syntax.KindMethod: true, syntax.KindType: true, syntax.KindInterface: true,
	syntax.KindClass: true, syntax.KindStruct: true, syntax.KindEnum: true, syntax.KindConstant: true,
	syntax.KindVariable: true, syntax.KindModule: true, syntax.KindField: true,
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

type retrieveContextTool struct{ s *Server }

var retrieveContextSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "description": "What you are looking for, in words or identifiers: \"where retries are configured\", parseConfig, src/api."},
    "budgetTokens": {"type": "integer", "minimum": 1, "maximum": 200000, "description": "Most tokens of code to return (characters / 4). Default 8000."}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

func (*retrieveContextTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "retrieve_context",
		Description: "Find the code most relevant to a query across the workspace, ranked: whole definitions where they fit, else the lines around the best matches, each with why it was chosen. " +
			"Use it to explore an unfamiliar area before reading whole files. Excluded and secret-looking files are never returned.",
		InputSchema: retrieveContextSchema,
		Permission:  tool.ClassRead,
	}
}

func (t *retrieveContextTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		Query        string `json:"query"`
		BudgetTokens *int   `json:"budgetTokens"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid input: %v", err)
	}
	q, err := retrieveQuery(in.Query, in.BudgetTokens)
	if err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "%v", err)
	}
	if _, err := t.s.workspace(); err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
	}
	res, _, err := t.s.retrieve(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, tool.Errorf(tool.ErrCancelled, "cancelled")
		}
		return tool.Result{}, err
	}
	text := FormatExcerpts(res)
	if text == "" {
		text = fmt.Sprintf("Nothing in the workspace matches %q (terms: %s).", in.Query, strings.Join(res.Terms, ", "))
	}
	return tool.Result{Content: text, Data: res}, nil
}
