package retrieve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

func TestScopeOf(t *testing.T) {
	for _, c := range []struct {
		subject string
		want    []string
	}{
		{"fix(runtime-dom): set css vars", []string{"runtime", "dom"}},
		{"ignore/types: add LLVM", []string{"ignore", "type"}},
		{"printer: finish removal", []string{"printer"}},
		{"feat(types)!: internal options", []string{"type"}},
		{"fix: binding time", nil},
		{"pr checks: fix error message", []string{"pr", "check"}},
		{"cmd/go, runtime: drop the flag", []string{"cmd", "go", "runtime"}},
		{"fix bug: it crashes", nil},
		{"the parser: crashes", nil},
		{"Run view: prints", nil},
		{"Fix the bug: it crashes", nil},
		{"where is the config loaded", nil},
	} {
		if got := scopeOf(c.subject); !slices.Equal(got, c.want) {
			t.Errorf("scopeOf(%q) = %v, want %v", c.subject, got, c.want)
		}
	}
}

func TestDropTypePrefixes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fix: binding time", ": binding time"},
		{"feat(editor): laser tool\n\n* fix(editor): copy\n* chore: Trigger build\n- style", "(editor): laser tool\n\n* (editor): copy\n* : Trigger build\n- style"},
		{"printer: finish removal", "printer: finish removal"},
		{"Fix: the crash", ": the crash"},
		{"where is the config: loaded", "where is the config: loaded"},
		{"fix:this", "fix:this"},
	} {
		if got := dropTypePrefixes(c.in); got != c.want {
			t.Errorf("dropTypePrefixes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDropFences(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"why does this panic\n```go\nfunc (t *Transport) RoundTrip(req *Request) error\n```\nafter",
			"why does this panic\nafter"},
		{"Speed up GetPage\n\n```\nname old time/op new time/op delta\nGetPage-10 1.2ms 0.9ms -25%\n```",
			"Speed up GetPage\n"},
		{"a `retry_policy` and no fence", "a `retry_policy` and no fence"},
	} {
		if got := dropFences(c.in); got != c.want {
			t.Errorf("dropFences(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Terms(dropFences("x\n```go\nfunc main() { var m map[string]int }\n```")); slices.Contains(got, "go") || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, " ") }) {
		t.Errorf("terms of a fenced block = %v: the tag is a term or the block one phrase", got)
	}
}

func TestPlaceTypesStayTerms(t *testing.T) {
	for in, want := range map[string]string{
		"docs: explain proxy options": "docs: explain proxy options",
		"ci: cache the modules":       "ci: cache the modules",
		"test(parser): empty input":   "test(parser): empty input",
		"refactor: split the loader":  ": split the loader",
	} {
		if got := dropTypePrefixes(in); got != want {
			t.Errorf("dropTypePrefixes(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShapeHeadAndTicks(t *testing.T) {
	sh := shapeOf("retry: back off longer\n\nThe `parseConfig` helper and the loader change too.")
	if !sh.multiLine || !sh.head["back"] || sh.head["loader"] {
		t.Errorf("head terms %v (multiLine %v)", sh.head, sh.multiLine)
	}
	if !sh.ticked["parseconfig"] || !sh.ticked["parse"] || sh.ticked["loader"] {
		t.Errorf("ticked %v", sh.ticked)
	}
}

// TestMapSection checks that a budget too small for every file's snippet
// ends with one-line map entries of further files, within the budget.
func TestMapSection(t *testing.T) {
	_, ix := fixture(t)
	res, err := Search(context.Background(), ix, Query{Text: "user login store", BudgetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	if res.UsedTokens > 400 {
		t.Fatalf("used %d tokens of 400", res.UsedTokens)
	}
	full, mapped := 0, 0
	seen := map[string]bool{}
	for _, s := range res.Snippets {
		if strings.HasPrefix(s.Reason, "map entry") {
			mapped++
			if s.StartLine != s.EndLine || strings.Contains(s.Text, "\n") {
				t.Errorf("map entry %s:%d-%d is not one line: %q", s.Path, s.StartLine, s.EndLine, s.Text)
			}
			if seen[s.Path] {
				t.Errorf("map entry for %s, which already has a snippet", s.Path)
			}
		} else {
			if mapped > 0 {
				t.Errorf("full snippet %s after the map section", s.Path)
			}
			full++
		}
		seen[s.Path] = true
	}
	if full == 0 || mapped == 0 {
		t.Fatalf("%d full snippets and %d map entries, want both: %+v", full, mapped, res.Snippets)
	}
}

func TestKebabWords(t *testing.T) {
	got := kebabWords("Change `gh repo set-default --view` in runtime-dom, not a - b or --")
	if want := []string{"set-default", "runtime-dom"}; !slices.Equal(got, want) {
		t.Errorf("kebabWords = %v, want %v", got, want)
	}
}

// TestMapFillsBudget checks that the map goes past the scored candidates
// (maxContentCandidates) and the old 200-entry cap while the budget has
// room: 700 files mention the term, each map line costs a few tokens, so
// an 8000-token budget holds far more than 230 files and is nearly used up.
func TestMapFillsBudget(t *testing.T) {
	dir := t.TempDir()
	for i := range 700 {
		rel := filepath.Join(fmt.Sprintf("pkg%02d", i/50), fmt.Sprintf("f%03d.go", i))
		body := fmt.Sprintf("package p\n\nfunc Helper%d() {\n\t// widget %s\n}\n", i, strings.Repeat("x", i%7))
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(context.Background(), dir, &workspace.Options{Home: "-", Parse: testParser})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Build(context.Background(), ws.Snapshot(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Search(context.Background(), ix, Query{Text: "widget", BudgetTokens: 8000})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, s := range res.Snippets {
		if files[s.Path] {
			t.Errorf("%s twice", s.Path)
		}
		files[s.Path] = true
	}
	if len(files) <= maxContentCandidates || len(files) <= 230 {
		t.Errorf("%d files for 700 matching ones within 8000 tokens (used %d)", len(files), res.UsedTokens)
	}
	if res.UsedTokens > 8000 || res.UsedTokens < 7900 && len(files) < 700 {
		t.Errorf("used %d of 8000 tokens with %d of 700 files", res.UsedTokens, len(files))
	}
}

// TestScopeNamesALanguage: in a repository with Rust and Python sides,
// `fix(python): ...` points at the Python files, whose paths need not hold
// the word (py-polars/polars/...).
func TestScopeNamesALanguage(t *testing.T) {
	for _, c := range []struct {
		rel   string
		scope []string
		want  int
	}{
		{"py-polars/polars/functions/as_datatype.py", []string{"python"}, 1},
		{"crates/polars-core/src/series/mod.rs", []string{"python"}, 0},
		{"crates/polars-core/src/series/mod.rs", []string{"rust"}, 1},
		{"packages/vite/src/node/server/index.ts", []string{"ts"}, 1},
		{"Makefile", []string{"go"}, 0},
		{"internal/python/parse.go", []string{"python"}, 1}, // by the path word
	} {
		if got := scopeHits(c.rel, c.scope); got != c.want {
			t.Errorf("scopeHits(%q, %v) = %d, want %d", c.rel, c.scope, got, c.want)
		}
	}
}

func TestShapeQuestion(t *testing.T) {
	for q, want := range map[string]bool{
		"where are TLS certificates verified":       true,
		"How does the scheduler steal work":         true,
		"is the cache cleared on refresh?":          true,
		"gzip writer":                               false,
		"fix(css): keep the order of imports":       false,
		"where clause\n\nThe planner drops it now.": false,
	} {
		if got := shapeOf(q).question; got != want {
			t.Errorf("%q: question %v, want %v", q, got, want)
		}
	}
}
