package retrieve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// benchTerms are bench/indexbench's retrieve terms.
var benchTerms = []string{"buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
	"request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline"}

// benchQuestions are bench/localize/lat.py's questions.
var benchQuestions = []string{"how does the garbage collector mark roots", "where are TLS certificates verified",
	"where is the HTTP/2 frame parsed", "json decoder token", "how does the scheduler steal work",
	"parse a URL query string", "net/http: fix a race when the client closes an idle connection",
	"runtime: reduce lock contention in the memory allocator",
	"cmd/go: module cache is not cleaned when the download fails",
	"encoding/json: Unmarshal into an embedded pointer to an unexported struct"}

// benchCommits reads bench/localize/commits.txt: commit messages, one per
// block, blocks separated by a line "----" (before the first one, comments).
func benchCommits(tb testing.TB) []string {
	data, err := os.ReadFile(filepath.Join("..", "..", "bench", "localize", "commits.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	blocks := strings.Split(string(data), "\n----\n")[1:]
	var qs []string
	for _, b := range blocks {
		if b = strings.Trim(b, "\n"); b != "" {
			qs = append(qs, b)
		}
	}
	if len(qs) < 10 {
		tb.Fatalf("commits.txt holds %d queries", len(qs))
	}
	return qs
}

// syntaxParser parses with tree-sitter like the server does.
func syntaxParser(ctx context.Context, abs string, f *workspace.File) (workspace.ParseResult, error) {
	if !syntax.Supported(f.Language) {
		return workspace.ParseResult{}, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	info, err := syntax.Parse(ctx, f.Language, src, nil)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	return workspace.ParseResult{Symbols: len(info.Symbols), Data: info}, nil
}

// BenchmarkSearchGoSource measures one Search over $(go env GOROOT)/src (or
// $RETRIEVE_BENCH_ROOT) parsed with tree-sitter, per query kind:
// bench/indexbench's terms, lat.py's questions and the commit messages of
// bench/localize/commits.txt, each in turn at the default budget. With
// RETRIEVE_DUMP=FILE it writes every query's result as JSON lines to FILE
// first, so two versions of Search can be compared on a real tree.
func BenchmarkSearchGoSource(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT failed")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if root := os.Getenv("RETRIEVE_BENCH_ROOT"); root != "" {
		src = root
	}
	if _, err := os.Stat(src); err != nil {
		b.Skip("GOROOT/src absent")
	}
	ctx := context.Background()
	w, err := workspace.Open(ctx, src, &workspace.Options{Home: "-", Parse: syntaxParser})
	if err != nil {
		b.Fatal(err)
	}
	ix, err := Build(ctx, w.Snapshot(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("RETRIEVE_BENCH_NONAMES") != "" {
		ix.nt = nil // time Search without the name table
	} else {
		ix.waitNameTable()
		nt := ix.nameTable()
		b.Logf("name table: %d names, %d symbols, %d bytes", nt.names, len(nt.ids), nt.bytes())
	}
	if dump := os.Getenv("RETRIEVE_DUMP"); dump != "" {
		f, err := os.Create(dump)
		if err != nil {
			b.Fatal(err)
		}
		enc := json.NewEncoder(f)
		for _, t := range benchTerms {
			for _, budget := range []int{0, 500, 6000, 50000} {
				res, err := Search(ctx, ix, Query{Text: t, BudgetTokens: budget})
				if err != nil {
					b.Fatal(err)
				}
				enc.Encode(res)
			}
		}
		for _, q := range []string{"parse config file", "http request timeout", "ReadFile", "sync.Mutex lock", "bufio scanner token"} {
			res, err := Search(ctx, ix, Query{Text: q, FocusPaths: []string{"net/http/client.go"}})
			if err != nil {
				b.Fatal(err)
			}
			enc.Encode(res)
		}
		for _, q := range append(slices.Clone(benchQuestions), benchCommits(b)...) {
			for _, budget := range []int{0, 500, 50000} {
				res, err := Search(ctx, ix, Query{Text: q, BudgetTokens: budget})
				if err != nil {
					b.Fatal(err)
				}
				enc.Encode(res)
			}
		}
		f.Close()
	}
	// RETRIEVE_BENCH_VARIANT names a localizeVariants tuning to time
	// instead of the default one (map200: the map capped as before).
	if v := os.Getenv("RETRIEVE_BENCH_VARIANT"); v != "" {
		saved := tune
		defer func() { tune = saved }()
		tune.on = map[string]bool{}
		for _, part := range strings.Split(v, "+") {
			if f, ok := localizeVariants[part]; ok {
				f(&tune)
			} else {
				tune.on[part] = true
			}
		}
	}
	for _, kind := range []struct {
		name    string
		queries []string
	}{{"terms", benchTerms}, {"questions", benchQuestions}, {"commits", benchCommits(b)}} {
		b.Run(kind.name, func(b *testing.B) {
			if os.Getenv("RETRIEVE_BENCH_AB") != "" {
				// Each query with and without the name table in turn:
				// the two figures share the machine's load.
				without := &Index{}
				*without = *ix
				without.nt = nil
				var with, none time.Duration
				i := 0
				for b.Loop() {
					q := Query{Text: kind.queries[i%len(kind.queries)]}
					for k, x := range []*Index{ix, without} {
						if i%2 == 1 {
							x = []*Index{without, ix}[k]
						}
						t0 := time.Now()
						if _, err := Search(ctx, x, q); err != nil {
							b.Fatal(err)
						}
						if x == ix {
							with += time.Since(t0)
						} else {
							none += time.Since(t0)
						}
					}
					i++
				}
				b.ReportMetric(float64(with.Microseconds())/1000/float64(i), "ms-table/op")
				b.ReportMetric(float64(none.Microseconds())/1000/float64(i), "ms-none/op")
				return
			}
			i := 0
			for b.Loop() {
				res, err := Search(ctx, ix, Query{Text: kind.queries[i%len(kind.queries)]})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
