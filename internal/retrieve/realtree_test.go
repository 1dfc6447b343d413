package retrieve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// realTreeIndex opens root with the tree-sitter parser and builds its
// index once per test binary run (GOROOT/src takes seconds).
var realTrees sync.Map // root → func() (*Index, error)

func realTreeIndex(t *testing.T, root string) *Index {
	t.Helper()
	f, _ := realTrees.LoadOrStore(root, sync.OnceValues(func() (*Index, error) {
		ctx := context.Background()
		w, err := workspace.Open(ctx, root, &workspace.Options{Home: "-", Parse: syntaxParser})
		if err != nil {
			return nil, err
		}
		return Build(ctx, w.Snapshot(), nil)
	}))
	ix, err := f.(func() (*Index, error))()
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func goSrc(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("indexes GOROOT/src; skipped with -short")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skip("go env GOROOT failed")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(filepath.Join(src, "runtime", "proc.go")); err != nil {
		t.Skip("GOROOT/src absent")
	}
	return src
}

// realCase is a query on a real tree and the files a developer would open
// first: each of want must rank in the top 3 (by distinct file).
type realCase struct {
	query string
	focus []string
	want  []string
}

func checkTop3(t *testing.T, ix *Index, cases []realCase) {
	t.Helper()
	checkTopN(t, ix, 3, cases)
}

// checkTopN: every wanted path is among the first n distinct paths.
func checkTopN(t *testing.T, ix *Index, n int, cases []realCase) {
	t.Helper()
	for _, c := range cases {
		res, err := Search(context.Background(), ix, Query{Text: c.query, FocusPaths: c.focus})
		if err != nil {
			t.Fatalf("%q: %v", c.query, err)
		}
		var paths []string
		for _, s := range res.Snippets {
			if !slices.Contains(paths, s.Path) {
				paths = append(paths, s.Path)
			}
		}
		top := paths[:min(len(paths), 6)]
		t.Logf("%q terms %v: %v", c.query, res.Terms, top)
		for _, w := range c.want {
			if r := slices.Index(paths, w) + 1; r == 0 || r > n {
				t.Errorf("%q: %s ranks %d (0 = absent), want top %d; top: %v", c.query, w, r, n, top)
			}
		}
	}
}

// TestRankingGoSource holds the QA queries of issue 3 on Go's own source
// (and the queries that already worked, so they keep working).
func TestRankingGoSource(t *testing.T) {
	ix := realTreeIndex(t, goSrc(t))
	checkTop3(t, ix, []realCase{
		{query: "where are TLS certificates verified", want: []string{"crypto/tls/handshake_client.go"}},
		{query: "where is the HTTP/2 frame parsed", want: []string{"net/http/h2_bundle.go"}},
		// A focus folder lifts its matching files: transport.go (gzip
		// responses) is not in the top 6 without it.
		{query: "gzip writer", focus: []string{"net/http"}, want: []string{"net/http/transport.go"}},
		{query: "json decoder token", want: []string{"encoding/json/stream.go"}},
		{query: "how does the scheduler steal work", want: []string{"runtime/proc.go"}},
		{query: "gzip writer", want: []string{"compress/gzip/gzip.go"}},
		{query: "parse a URL query string", want: []string{"net/url/url.go"}},
	})
	// A measured trade, not a goal: the passage score and the half weight
	// of definitions (issue 15's tuning on commit messages: hit@1 0.425 ->
	// 0.496, hit@3 0.690 -> 0.752 on 113 rows, confirmed held out) moved
	// these two from the top 3 to ranks 7-8. Turning both off brings them
	// back and costs the set hit@1 0.506 -> 0.458, hit@3 0.744 -> 0.685
	// (docs/index.md). They must not fall further.
	checkTopN(t, ix, 8, []realCase{
		{query: "how does the garbage collector mark roots", want: []string{"runtime/mgcmark.go"}},
		{query: "where are TLS certificates verified", want: []string{"crypto/x509/verify.go"}},
	})
}

// TestRankingPythonStdlib checks a query on Python's standard library when
// it is installed.
func TestRankingPythonStdlib(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the Python stdlib; skipped with -short")
	}
	dirs, _ := filepath.Glob("/usr/lib/python3*/json/decoder.py")
	if len(dirs) == 0 {
		t.Skip("no Python standard library under /usr/lib")
	}
	root := filepath.Dir(filepath.Dir(dirs[len(dirs)-1]))
	ix := realTreeIndex(t, root)
	checkTop3(t, ix, []realCase{{query: "json decode", want: []string{"json/decoder.py"}}})
}
