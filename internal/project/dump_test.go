package project

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
)

// TestDumpColdOpen writes what a cold open of TASK_X_BENCH_DIR gives to
// TASK_X_DUMP as JSON lines, so two builds of the open can be compared
// with cmp: every indexed file (its entry with the parsed FileInfo, in
// path order), the graph (its project view and every file's dependencies)
// and the retrieval results of a fixed set of queries at three budgets.
// Skipped without both variables.
func TestDumpColdOpen(t *testing.T) {
	dir, out := os.Getenv("TASK_X_BENCH_DIR"), os.Getenv("TASK_X_DUMP")
	if dir == "" || out == "" {
		t.Skip("TASK_X_BENCH_DIR or TASK_X_DUMP not set")
	}
	ctx := context.Background()
	p, err := Open(ctx, dir, &Options{Home: "-", BuildRetrieval: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	snap := p.Snapshot()
	for _, rel := range snap.Files() {
		fe, _ := snap.File(rel)
		if err := enc.Encode(fe); err != nil {
			t.Fatal(err)
		}
	}
	st := snap.Summary().Stats
	st.ElapsedMs = 0
	enc.Encode(st)
	g := p.Graph()
	enc.Encode(g.Stats())
	enc.Encode(g.ReadyStats())
	pr, err := g.Project(graph.ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	enc.Encode(pr)
	for _, rel := range snap.Files() {
		deps, err := g.File(rel)
		if err != nil {
			t.Fatal(err)
		}
		enc.Encode(deps)
	}
	p.BuildRetrieval(ctx)
	queries := []string{"buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
		"request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline",
		"where is the dataframe schema validated", "how are hooks run before a build", "parse a regex pattern",
		"serialize a model to json", "command line option parsing", "DataFrame", "serde", "fn new", "def __init__"}
	for _, q := range queries {
		for _, budget := range []int{0, 500, 6000} {
			res, err := p.Retrieve(ctx, retrieve.Query{Text: q, BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			enc.Encode(res)
		}
	}
}
