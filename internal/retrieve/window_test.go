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
