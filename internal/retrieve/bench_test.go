package retrieve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// benchTerms are bench/indexbench's retrieve terms.
var benchTerms = []string{"buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
	"request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline"}

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

// BenchmarkSearchGoSource measures one Search (bench/indexbench's terms in
// turn) over $(go env GOROOT)/src (or $RETRIEVE_BENCH_ROOT) parsed with
// tree-sitter. With
// RETRIEVE_DUMP=FILE it writes every term's result as JSON lines to FILE
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
	b.ResetTimer()
	i := 0
	for b.Loop() {
		res, err := Search(ctx, ix, Query{Text: benchTerms[i%len(benchTerms)]})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
