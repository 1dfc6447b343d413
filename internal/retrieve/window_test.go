package retrieve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// tempIndex writes files (path → text) to a temp folder and indexes it
// with the test parser.
func tempIndex(t *testing.T, files map[string]string) *Index {
	t.Helper()
	dir := t.TempDir()
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
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
	return ix
}

// TestPassageRanksTermsTogether: two files of the same length mention
// "quoted", "newline" and "skip" equally often; in near.rs they meet in
// one function, in far.rs they are hundreds of lines apart. Whole-file
// BM25 cannot tell them apart; the passage score puts near.rs first and
// says which lines hold the terms.
func TestPassageRanksTermsTogether(t *testing.T) {
	filler := strings.Repeat("let value = other_value + 1;\n", 150)
	near := "fn read() {\n    // skip quoted newline\n    let quoted = skip_newline();\n}\n" + filler + filler
	far := "fn read() {\n    // skip\n    let value = skip_value();\n}\n" + filler + "// quoted\nlet quoted = 1;\n" + filler + "// newline\nlet newline = 2;\n"
	ix := tempIndex(t, map[string]string{"src/near.rs": near, "src/far.rs": far})
	res, err := Search(context.Background(), ix, Query{Text: "skip quoted newline"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snippets) < 2 || res.Snippets[0].Path != "src/near.rs" {
		t.Fatalf("snippets %+v, want src/near.rs first", res.Snippets)
	}
	if r := res.Snippets[0].Reason; !strings.Contains(r, "lines 1-40 hold `skip`, `quoted`, `newline`") {
		t.Errorf("reason %q does not name the passage", r)
	}
}

// TestFileNamedByIdentifier: a query identifier spelled as a file name
// (cluster_with_columns → cluster_with_columns.rs) counts as a file name
// match although path terms are the name's parts ("with" is a stop word,
// so "file name spelled by query terms" cannot fire).
func TestFileNamedByIdentifier(t *testing.T) {
	files := map[string]string{
		"opt/cluster_with_columns.rs": "fn optimize(schema: Schema) {\n    let columns = cluster(1);\n}\n",
		"opt/mod.rs":                  "fn run(schema: Schema) {\n    if state.cluster_with_columns { columns(); }\n}\n",
		"opt/other.rs":                "fn other() {}\n",
		"opt/more.rs":                 "fn more() {}\n",
	}
	for i := range 20 {
		files[fmt.Sprintf("opt/f%d.rs", i)] = fmt.Sprintf("fn f%d(schema: Schema, columns: Vec) {}\n", i)
	}
	ix := tempIndex(t, files)
	res, err := Search(context.Background(), ix, Query{Text: "set schemas in cluster_with_columns"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Snippets) == 0 || res.Snippets[0].Path != "opt/cluster_with_columns.rs" {
		t.Fatalf("snippets %+v, want opt/cluster_with_columns.rs first", res.Snippets)
	}
	if r := res.Snippets[0].Reason; !strings.Contains(r, "path matches `cluster`, `columns`, `cluster_with_columns`;") {
		t.Errorf("reason %q", r)
	}
}

// passageCountsSlow is the passage score's reference: every half window
// tokenized whole. passageScore's line prefilter must give the same.
func passageScoreSlow(data []byte, units []unit, keyUnit map[string]int) float64 {
	half := windowLines / 2
	bounds := []int{0}
	lines := 0
	for i, c := range data {
		if c == '\n' {
			lines++
			if lines%half == 0 {
				bounds = append(bounds, i+1)
			}
		}
	}
	bounds = append(bounds, len(data))
	nh, nu := len(bounds)-1, len(units)
	counts := make([]float64, nh*nu)
	var buf []byte
	for h := 0; h < nh; h++ {
		row := counts[h*nu : (h+1)*nu]
		buf = tokenizeASCII(data[bounds[h]:bounds[h+1]], buf, func(t []byte) {
			if k, ok := keyUnit[string(t)]; ok {
				row[k]++
			}
		})
	}
	best := 0.0
	for h := 0; h < nh; h++ {
		s := 0.0
		for k := range units {
			tf := counts[h*nu+k]
			if h+1 < nh {
				tf += counts[(h+1)*nu+k]
			}
			if tf > 0 {
				s += units[k].weight * units[k].idf * tf * (bm25K1 + 1) / (tf + bm25K1)
			}
		}
		best = max(best, s)
	}
	return best
}

// TestPassagePrefilterSame compares passageScore with the whole-window
// tokenization on the fixture's files and on text made of the query's
// words in every spelling the tokenizer splits (snake, camel, plural,
// upper case, joined).
func TestPassagePrefilterSame(t *testing.T) {
	var texts [][]byte
	filepath.WalkDir("testdata/repo", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(p); err == nil {
				texts = append(texts, b)
			}
		}
		return nil
	})
	words := []string{"retry_policy", "RetryPolicy", "retryPolicies", "RETRY", "policies", "parse_config", "ParseConfig",
		"loaded", "config", "x", "é", "_retry_", "userStore", "user_stores"}
	for i := range 400 {
		var b strings.Builder
		for j := range 1 + i%9 {
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteString([]string{" ", "\n", "(", ".", "\r\n"}[(i+j)%5])
		}
		texts = append(texts, []byte(strings.Repeat(b.String(), 1+i%13)))
	}
	nonzero := 0
	for _, q := range []string{"retry policy", "parseConfig loaded", "user store config", "RETRY_POLICY x"} {
		var units []unit
		keyUnit := map[string]int{}
		add := func(key string) {
			if _, ok := keyUnit[key]; !ok && key != "" {
				keyUnit[key] = len(units)
				units = append(units, unit{key: key, display: key, weight: 1, idf: 1 + float64(len(units))})
			}
		}
		for _, term := range Terms(q) {
			add(stem(term))
		}
		for _, id := range identifiers(q) {
			if parts := SplitIdentifier(id); len(parts) > 1 {
				add(stem(joined(parts)))
			}
		}
		for n, text := range texts {
			got, _, _, _, _ := passageScore(text, units, keyUnit, nil, nil)
			if want := passageScoreSlow(text, units, keyUnit); got != want {
				t.Fatalf("%q text %d: passageScore %v, whole-window tokenizing %v\n%s", q, n, got, want, text)
			}
			if got > 0 {
				nonzero++
			}
		}
	}
	if nonzero < 500 {
		t.Errorf("only %d of the comparisons matched anything", nonzero)
	}
}
