package retrieve

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// realFixture opens testdata/repo (copied) with the tree-sitter parser, so
// symbols carry the parser's byte ranges (testParser's have none).
func realFixture(t *testing.T, extra map[string]string) (string, *Index) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/repo")); err != nil {
		t.Fatal(err)
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
	ctx := context.Background()
	w, err := workspace.Open(ctx, dir, &workspace.Options{Home: "-", Parse: syntaxParser})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Build(ctx, w.Snapshot(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, ix
}

// TestSnippetTextIsItsLines checks, with the real parser, that every
// snippet's text is its lines StartLine..EndLine from their first byte:
// a map line read from a symbol's start byte omitted what precedes the
// symbol on its line (TS `export `, Rust `pub `, a Go method's receiver
// is inside the symbol but `export default class` is not), so the text
// no longer matched its startLine.
func TestSnippetTextIsItsLines(t *testing.T) {
	dir, ix := realFixture(t, nil)
	var queries []string
	for _, c := range readQueries(t) {
		queries = append(queries, c.query)
	}
	queries = append(queries, "format relative date", "fetch attempts", "login form logged in")
	checked, exported := 0, 0
	for _, q := range queries {
		for _, budget := range []int{400, 800, 8000} { // small budgets make map lines
			res, err := Search(context.Background(), ix, Query{Text: q, BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Snippets {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Path)))
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
				if s.StartLine < 1 || s.EndLine > len(lines) || s.EndLine < s.StartLine {
					t.Fatalf("%q: %s:%d-%d outside the file's %d lines", q, s.Path, s.StartLine, s.EndLine, len(lines))
				}
				want := strings.Join(lines[s.StartLine-1:s.EndLine], "\n")
				got := s.Text
				if s.StartLine == s.EndLine {
					want, got = strings.TrimSpace(want), strings.TrimSpace(got)
				}
				if got != want {
					t.Errorf("%q: %s:%d-%d text %q, its lines are %q", q, s.Path, s.StartLine, s.EndLine, got, want)
				}
				checked++
				if strings.HasPrefix(got, "export ") {
					exported++
				}
			}
		}
	}
	if checked == 0 || exported == 0 {
		t.Fatalf("checked %d snippets, %d starting with `export `: the fixture no longer tests TS exports", checked, exported)
	}
}

var passageReasonRE = regexp.MustCompile("(the file's )?lines ([0-9]+)-([0-9]+) hold ")

// TestPassageReasonInSnippet checks that a passage reason ("lines A-B
// hold …") names lines its snippet holds, or says they are the file's:
// the passage window was named whatever the snippet showed (a definition
// at lines 13-31 with "lines 101-140 hold …").
func TestPassageReasonInSnippet(t *testing.T) {
	_, ix := realFixture(t, nil)
	inside, outside := 0, 0
	for _, c := range readQueries(t) {
		for _, budget := range []int{400, 800, 8000} {
			res, err := Search(context.Background(), ix, Query{Text: c.query, BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Snippets {
				for _, m := range passageReasonRE.FindAllStringSubmatch(s.Reason, -1) {
					from, _ := strconv.Atoi(m[2])
					to, _ := strconv.Atoi(m[3])
					switch {
					case m[1] != "":
						outside++
					case s.StartLine <= from && to <= s.EndLine:
						inside++
					default:
						t.Errorf("%q: %s:%d-%d says %q", c.query, s.Path, s.StartLine, s.EndLine, strings.TrimSpace(m[0]))
					}
				}
			}
		}
	}
	if inside == 0 || outside == 0 {
		t.Fatalf("%d passage reasons inside their snippet, %d named as the file's: the fixture no longer tests both", inside, outside)
	}
}
