package retrieve

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

var update = flag.Bool("update", false, "rewrite testdata/ranking.golden")

// defRE finds definitions in the fixture's languages. It stands in for the
// tree-sitter parser (internal/syntax) so these tests pin the ranking, not
// the parser: a definition runs to the line before the next one.
var defRE = regexp.MustCompile(`^\s*(?:export\s+)?(?:pub\s+)?(?:async\s+)?(func(?:\s*\([^)]*\))?|def|class|function|fn|type|struct)\s+([A-Za-z_][A-Za-z0-9_]*)`)

func testParser(ctx context.Context, abs string, f *workspace.File) (workspace.ParseResult, error) {
	data, err := os.ReadFile(abs)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	lines := strings.Split(string(data), "\n")
	var syms []syntax.Symbol
	for i, l := range lines {
		m := defRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		kind := syntax.KindFunction
		switch {
		case strings.HasPrefix(m[1], "func ("), strings.HasPrefix(m[1], "func("):
			kind = syntax.KindMethod
		case m[1] == "class":
			kind = syntax.KindClass
		case m[1] == "type", m[1] == "struct":
			kind = syntax.KindType
		}
		if n := len(syms); n > 0 {
			syms[n-1].EndLine = int32(i)
		}
		syms = append(syms, syntax.Symbol{Name: syntax.InternName(m[2]), Kind: kind, StartLine: int32(i + 1), EndLine: int32(len(lines))})
	}
	for i := range syms {
		for syms[i].EndLine > syms[i].StartLine && strings.TrimSpace(lines[syms[i].EndLine-1]) == "" {
			syms[i].EndLine--
		}
	}
	return workspace.ParseResult{Symbols: len(syms), Data: &syntax.FileInfo{Language: f.Language, Symbols: syms}}, nil
}

// fixture copies testdata/repo to a temp folder, adds files that must never
// be retrieved (a .gitignored folder, dependencies), opens it and builds
// the index.
func fixture(t *testing.T) (*workspace.Workspace, *Index) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/repo")); err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{
		"secret/keys.go":             "package secret\n// LoadConfig config config LoadConfig secret token\nfunc LoadConfig() {}\n",
		"node_modules/dep/config.js": "function LoadConfig() { return 'config config config' }\n",
		"web/package.json":           "{}\n", // its tools write web/coverage/ (itself excluded below: the goldens' files stay as they were)
		"web/coverage/config.js":     "function LoadConfig() { return 'config' }\n",
		".venv/lib/retry/backoff.py": "def Backoff(): pass\n",
	}
	for rel, text := range extra {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(context.Background(), dir, &workspace.Options{Home: "-", Parse: testParser, Exclude: []string{"web/package.json"}})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Build(context.Background(), ws.Snapshot(), &BuildOptions{Skip: func(rel string) bool {
		return strings.HasPrefix(filepath.Base(rel), ".env")
	}})
	if err != nil {
		t.Fatal(err)
	}
	return ws, ix
}

type rankCase struct{ query, want string }

func readQueries(t *testing.T) []rankCase {
	f, err := os.Open("testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rankCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("queries.txt: no tab in %q", line)
		}
		out = append(out, rankCase{strings.ReplaceAll(q, `\n`, "\n"), want})
	}
	return out
}

// TestRankingGolden checks that, for each query of testdata/queries.txt,
// the file a developer would open first ranks in the top 3, and that the
// ranking with its reasons matches testdata/ranking.golden (-update).
func TestRankingGolden(t *testing.T) {
	_, ix := fixture(t)
	var golden strings.Builder
	for _, c := range readQueries(t) {
		res, err := Search(context.Background(), ix, Query{Text: c.query})
		if err != nil {
			t.Fatalf("%q: %v", c.query, err)
		}
		var paths []string
		fmt.Fprintf(&golden, "query: %s\nterms: %s\n", c.query, strings.Join(res.Terms, ", "))
		for i, s := range res.Snippets {
			if !slices.Contains(paths, s.Path) {
				paths = append(paths, s.Path)
			}
			if i < 5 {
				fmt.Fprintf(&golden, "  %d. %s:%d-%d  %.2f  %s\n", i+1, s.Path, s.StartLine, s.EndLine, s.Score, s.Reason)
			}
		}
		rank := slices.Index(paths, c.want) + 1
		if rank == 0 || rank > 3 {
			t.Errorf("%q: %s ranks %d (0 = absent), want top 3; got %v", c.query, c.want, rank, paths[:min(5, len(paths))])
		}
	}
	const name = "testdata/ranking.golden"
	if *update {
		if err := os.WriteFile(name, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != golden.String() {
		t.Errorf("ranking differs from %s (run with -update after checking):\n%s", name, golden.String())
	}
}

func TestExcludedAndSkippedNeverRetrieved(t *testing.T) {
	_, ix := fixture(t)
	for _, q := range []string{"LoadConfig config", "Backoff retry", "API_KEY", "secret token"} {
		res, err := Search(context.Background(), ix, Query{Text: q, BudgetTokens: 50000})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Snippets {
			for _, bad := range []string{"secret/", "node_modules/", "web/coverage/", ".venv/", ".env"} {
				if strings.HasPrefix(s.Path, bad) {
					t.Errorf("%q returned excluded or skipped file %s", q, s.Path)
				}
			}
		}
	}
}

func TestBudgetAndReasons(t *testing.T) {
	_, ix := fixture(t)
	for _, budget := range []int{30, 60, 120, 400, 8000} {
		for _, q := range []string{"login", "config database", "retry", "migration report date"} {
			res, err := Search(context.Background(), ix, Query{Text: q, BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for _, s := range res.Snippets {
				if s.Reason == "" {
					t.Errorf("%q: snippet %s has no reason", q, s.Path)
				}
				if s.StartLine < 1 || s.EndLine < s.StartLine {
					t.Errorf("%q: bad range %d-%d", q, s.StartLine, s.EndLine)
				}
				if n := strings.Count(s.Text, "\n") + 1; n != s.EndLine-s.StartLine+1 {
					t.Errorf("%q: %s text has %d lines for range %d-%d", q, s.Path, n, s.StartLine, s.EndLine)
				}
				used += Tokens(s.Text)
			}
			if used != res.UsedTokens || used > budget || res.BudgetTokens != budget {
				t.Errorf("%q budget %d: used %d, reported %d/%d", q, budget, used, res.UsedTokens, res.BudgetTokens)
			}
			if budget >= 400 && len(res.Snippets) == 0 {
				t.Errorf("%q budget %d: no snippets", q, budget)
			}
		}
	}
}

func TestWholeDefinitionAndReasonWords(t *testing.T) {
	_, ix := fixture(t)
	res, err := Search(context.Background(), ix, Query{Text: "LoadConfig"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snippets) == 0 {
		t.Fatal("no snippets")
	}
	s := res.Snippets[0]
	if s.Path != "config/config.go" || !strings.HasPrefix(s.Text, "func LoadConfig()") || !strings.HasSuffix(s.Text, "}") {
		t.Errorf("first snippet is not the whole LoadConfig definition: %s:%d-%d\n%s", s.Path, s.StartLine, s.EndLine, s.Text)
	}
	if !strings.Contains(s.Reason, "defines function `LoadConfig`") {
		t.Errorf("reason %q does not name the definition", s.Reason)
	}
	res, err = Search(context.Background(), ix, Query{Text: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snippets) == 0 || res.Snippets[0].Path != "docs/deploy.md" || !strings.Contains(res.Snippets[0].Reason, "path matches `deploy`") {
		t.Errorf("deploy: %+v", res.Snippets)
	}
}

func TestFocusActiveAndNeighbours(t *testing.T) {
	_, ix := fixture(t)
	q := Query{Text: "login user", ActiveFile: "server/router.go", FocusPaths: []string{"README.md"},
		Neighbours: func(rel string) []Neighbour {
			if rel == "server/router.go" {
				return []Neighbour{{Path: "store/user_store.go", Relation: "imported by"}}
			}
			return nil
		}}
	res, err := Search(context.Background(), ix, q)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, s := range res.Snippets {
		reasons[s.Path] = s.Reason
	}
	for path, want := range map[string]string{
		"server/router.go":    "the active file",
		"README.md":           "a focus path",
		"store/user_store.go": "imported by the active file",
	} {
		if !strings.Contains(reasons[path], want) {
			t.Errorf("%s: reason %q, want it to say %q", path, reasons[path], want)
		}
	}
	plain, _ := Search(context.Background(), ix, Query{Text: "login user"})
	if rankOf(res, "server/router.go") >= rankOf(plain, "server/router.go") {
		t.Errorf("the active file did not rank higher: %d vs %d", rankOf(res, "server/router.go"), rankOf(plain, "server/router.go"))
	}
}

func rankOf(r Result, path string) int {
	for i, s := range r.Snippets {
		if s.Path == path {
			return i
		}
	}
	return len(r.Snippets) + 100
}

func TestSearchErrors(t *testing.T) {
	_, ix := fixture(t)
	for _, q := range []Query{{Text: "  "}, {Text: ""}} {
		if _, err := Search(context.Background(), ix, q); err != ErrEmptyQuery {
			t.Errorf("%+v: err %v, want ErrEmptyQuery", q, err)
		}
	}
	for _, b := range []int{-1, MaxBudgetTokens + 1} {
		if _, err := Search(context.Background(), ix, Query{Text: "x", BudgetTokens: b}); err != ErrBudget {
			t.Errorf("budget %d: err %v, want ErrBudget", b, err)
		}
	}
	res, err := Search(context.Background(), ix, Query{Text: "the and of"})
	if err != nil || len(res.Terms) != 0 || len(res.Snippets) != 0 {
		t.Errorf("stop words only: %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, ix, Query{Text: "login"}); err == nil {
		t.Error("cancelled search succeeded")
	}
}

func TestCacheRebuildsOnNewSnapshot(t *testing.T) {
	ws, _ := fixture(t)
	c := NewCache(nil)
	a, err := c.Index(context.Background(), ws.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Index(context.Background(), ws.Snapshot())
	if a != b {
		t.Error("same snapshot built twice")
	}
	p := filepath.Join(ws.Root(), "newfeature.go")
	if err := os.WriteFile(p, []byte("package main\nfunc Zanzibar() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.FilesChanged(context.Background(), []string{"newfeature.go"}); err != nil {
		t.Fatal(err)
	}
	ix, _ := c.Index(context.Background(), ws.Snapshot())
	if ix == a {
		t.Fatal("index not rebuilt for a new snapshot")
	}
	res, _ := Search(context.Background(), ix, Query{Text: "zanzibar"})
	if len(res.Snippets) == 0 || res.Snippets[0].Path != "newfeature.go" {
		t.Errorf("new file not found: %+v", res.Snippets)
	}
}

func TestCacheKeepsIndexWhenFilesUnchanged(t *testing.T) {
	ws, _ := fixture(t)
	c := NewCache(nil)
	a, err := c.Index(context.Background(), ws.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := c.Index(context.Background(), ws.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if b.Version() != ws.Snapshot().Version() || b.Version() == a.Version() {
		t.Errorf("index version %d, snapshot %d (was %d)", b.Version(), ws.Snapshot().Version(), a.Version())
	}
	if &b.posts[0] != &a.posts[0] {
		t.Error("unchanged refresh rebuilt the postings")
	}
}

// TestFocusFolder checks that a focus path naming a folder boosts the
// matching files under it (addendum §3), and only those.
func TestFocusFolder(t *testing.T) {
	_, ix := fixture(t)
	plain, err := Search(context.Background(), ix, Query{Text: "retry"})
	if err != nil {
		t.Fatal(err)
	}
	for _, focus := range []string{"web", "web/", "./web/src/"} {
		res, err := Search(context.Background(), ix, Query{Text: "retry", FocusPaths: []string{focus}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Snippets) < 2 || !strings.HasPrefix(res.Snippets[0].Path, "web/") || !strings.HasPrefix(res.Snippets[1].Path, "web/") {
			t.Fatalf("focus %q: the two matching files under web/ are not first: %+v", focus, res.Snippets)
		}
		if rankOf(res, "retry/backoff.go") <= rankOf(plain, "retry/backoff.go") {
			t.Errorf("focus %q: retry/backoff.go did not drop below the web files", focus)
		}
		for _, s := range res.Snippets {
			under := strings.HasPrefix(s.Path, "web/")
			if under != strings.Contains(s.Reason, "under the focus folder `") {
				t.Errorf("focus %q: %s reason %q", focus, s.Path, s.Reason)
			}
			if s.Path == "web/src/utils/formatDate.ts" {
				t.Errorf("focus %q: a file under the folder without a match was returned", focus)
			}
		}
	}
	// A folder outside the workspace or the root itself boosts nothing.
	for _, focus := range []string{".", "../web", "nowhere"} {
		res, err := Search(context.Background(), ix, Query{Text: "retry", FocusPaths: []string{focus}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Snippets) != len(plain.Snippets) || res.Snippets[0] != plain.Snippets[0] {
			t.Errorf("focus %q changed the ranking: %+v", focus, res.Snippets)
		}
	}
}

// TestGraphFill: when every file matching a term is placed and budget is
// left, the graph neighbours of the best hits that match no term follow,
// heaviest edge first, each once, with the hit they are next to as the
// reason; files the index does not hold (skipped secrets) never appear.
func TestGraphFill(t *testing.T) {
	_, ix := fixture(t)
	nb := func(rel string) []Neighbour {
		if rel != "server/router.go" {
			return nil
		}
		return []Neighbour{
			{Path: "config/config.go", Relation: "uses", Weight: 1},
			{Path: "secret/keys.go", Relation: "imported by", Weight: 9},
			{Path: "store/user_store.go", Relation: "imported by", Weight: 3},
			{Path: "server/router.go", Relation: "uses", Weight: 1},
		}
	}
	q := Query{Text: "healthz route", Neighbours: nb}
	res, err := Search(context.Background(), ix, q)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Snippets {
		got = append(got, s.Path+": "+s.Reason)
	}
	want := []string{
		"server/router.go: mentions `healthz` once; mentions `route` once; the file's lines 1-15 hold `healthz`, `route`",
		"store/user_store.go: map entry: type `User`; imported by `server/router.go`, a hit",
		"config/config.go: map entry: type `Config`; uses `server/router.go`, a hit",
	}
	if !slices.Equal(got, want) {
		t.Errorf("snippets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	plain, err := Search(context.Background(), ix, Query{Text: "healthz route"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Snippets) != 1 || res.UsedTokens <= plain.UsedTokens {
		t.Errorf("without the graph: %d snippets, %d tokens (with: %d)", len(plain.Snippets), plain.UsedTokens, res.UsedTokens)
	}
	// A budget the matching file fills leaves nothing for the graph.
	budget := Tokens(plain.Snippets[0].Text) + 2
	res, err = Search(context.Background(), ix, Query{Text: "healthz route", Neighbours: nb, BudgetTokens: budget})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snippets) != 1 || res.UsedTokens > budget {
		t.Errorf("budget %d: %d snippets, %d tokens", budget, len(res.Snippets), res.UsedTokens)
	}
}

// TestQueryWordsTheIndexCanHold: a query of only a change type keeps it as
// its term, a scope of several words counts only where one path holds
// them, and a word with non-ASCII letters is split as the index splits it.
func TestQueryWordsTheIndexCanHold(t *testing.T) {
	_, ix := fixture(t)
	search := func(q string) Result {
		t.Helper()
		res, err := Search(context.Background(), ix, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	scoped := func(res Result) bool {
		for _, s := range res.Snippets {
			if strings.Contains(s.Reason, "subject's scope") {
				return true
			}
		}
		return false
	}
	if res := search("fix:"); !slices.Equal(res.Terms, []string{"fix"}) {
		t.Errorf(`"fix:" terms = %v, want [fix]`, res.Terms)
	}
	if res := search("fix: count logins"); slices.Contains(res.Terms, "fix") {
		t.Errorf(`"fix: count logins" terms = %v, the type is a term`, res.Terms)
	}
	if res := search("docs: deploy"); !slices.Contains(res.Terms, "docs") {
		t.Errorf(`"docs: deploy" terms = %v, want docs kept`, res.Terms)
	}
	if res := search("user store: count logins"); !scoped(res) {
		t.Errorf(`"user store:" is a scope (store/user_store.go holds both words), no snippet says so`)
	}
	if res := search("retry handler: count logins"); scoped(res) {
		t.Errorf(`"retry handler:" names no one path, yet a snippet is in the subject's scope`)
	}
	if got := Terms("café für"); !slices.Equal(got, []string{"caf"}) {
		t.Errorf(`Terms("café für") = %v, want [caf] (the index splits at non-ASCII)`, got)
	}
}
