package syntax

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRefs(t *testing.T) {
	src := []byte(`package p

import "fmt"

type Local struct{ n int }

func Use(s Store) error {
	x := helper(s.Items)
	fmt.Println(x, len(s.Items))
	return nil
}
`)
	info, err := Parse(context.Background(), "go", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Store", "helper", "Items", "Println"} {
		if !slices.Contains(Names(info.Refs), want) {
			t.Errorf("refs %v lack %q", info.Refs, want)
		}
	}
	// Definition names at their definition site, predeclared names and
	// keywords are not references.
	for _, bad := range []string{"Local", "Use", "len", "error", "nil", "return", "p"} {
		if slices.Contains(Names(info.Refs), bad) {
			t.Errorf("refs %v contain %q", info.Refs, bad)
		}
	}
	if info.Package != "p" {
		t.Errorf("package = %q", info.Package)
	}
}

func TestRefsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\nfunc f() {\n")
	for i := 0; i < MaxRefs+500; i++ {
		fmt.Fprintf(&b, "\tcall%d()\n", i)
	}
	b.WriteString("}\n")
	info, err := Parse(context.Background(), "go", []byte(b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Refs) != MaxRefs {
		t.Fatalf("refs = %d, want cap %d", len(info.Refs), MaxRefs)
	}
}

func TestSyntaxErrorsKeepSymbols(t *testing.T) {
	src := []byte("def ok():\n    pass\n\nprint(1 +)\n\nclass Later:\n    def m(self): pass\n")
	info, err := Parse(context.Background(), "python", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !info.HasErrors {
		t.Error("HasErrors = false for broken source")
	}
	var names []string
	for _, s := range info.Symbols {
		names = append(names, s.Name.String())
	}
	if !slices.Contains(names, "ok") || !slices.Contains(names, "Later") {
		t.Errorf("symbols %v lack ok/Later", names)
	}
}

func TestEmptyAndBinaryInput(t *testing.T) {
	for _, lang := range Languages() {
		for _, src := range [][]byte{nil, {0xff, 0xfe, 0x00, 0x80}, []byte("\x00\x00((((")} {
			if _, err := Parse(context.Background(), lang, src, nil); err != nil {
				t.Errorf("%s %q: %v", lang, src, err)
			}
		}
	}
}

// TestTimeout parses a large Go file (over maxGoAST, so tree-sitter reads
// it) with a tiny time limit: the parse stops through the progress callback, reports TimedOut and the
// pooled parser still works for the next file.
func TestTimeout(t *testing.T) {
	var b strings.Builder
	b.WriteString("package big\n")
	for i := 0; b.Len() < 8<<20; i++ {
		fmt.Fprintf(&b, "func f%d(a, b int) int { if a > b { return a*%d + b } ; return g(a, b, %d) }\n", i, i, i)
	}
	start := time.Now()
	info, err := Parse(context.Background(), "go", []byte(b.String()), &Options{Timeout: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !info.TimedOut || len(info.Symbols) != 0 {
		t.Fatalf("TimedOut = %v, symbols = %d", info.TimedOut, len(info.Symbols))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopping took %v", d)
	}
	info, err = Parse(context.Background(), "go", []byte("package p\nfunc A() {}\n"), nil)
	if err != nil || info.TimedOut || len(info.Symbols) != 1 {
		t.Fatalf("after timeout: %+v, %v", info, err)
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Parse(ctx, "go", []byte("package p"), nil); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestParallel parses every fixture from many goroutines at once (run with
// -race): pooled parsers are never shared and results match a serial parse.
func TestParallel(t *testing.T) {
	type fixture struct {
		lang string
		src  []byte
		want int
	}
	var fx []fixture
	for _, lang := range Languages() {
		files, _ := filepath.Glob(filepath.Join("testdata", lang, "*"))
		for _, f := range files {
			if strings.HasSuffix(f, ".golden") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			info, err := Parse(context.Background(), lang, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			fx = append(fx, fixture{lang, src, len(info.Symbols)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 4*runtime.GOMAXPROCS(0)+4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < 10; r++ {
				f := fx[(g+r)%len(fx)]
				info, err := Parse(context.Background(), f.lang, f.src, nil)
				if err != nil {
					errs <- err
					return
				}
				if len(info.Symbols) != f.want {
					errs <- fmt.Errorf("%s: %d symbols, want %d", f.lang, len(info.Symbols), f.want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkParseGoSource parses $GOROOT/src/net/http/*.go per iteration
// and reports throughput in MB/s.
func BenchmarkParseGoSource(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	if len(files) == 0 {
		b.Skip("no GOROOT sources")
	}
	var srcs [][]byte
	var total int64
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, src)
		total += int64(len(src))
	}
	b.SetBytes(total)
	b.ResetTimer()
	for b.Loop() {
		for _, src := range srcs {
			if _, err := Parse(context.Background(), "go", src, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestStoppedParseDoesNotPoisonPool stops parses at many points near their
// end (balancing, the last step of a tree-sitter parse, included) and
// parses a small file after each: a stopped parser must not be reused
// (tree-sitter 0.25 keeps canceled_balancing across ts_parser_reset and
// then aborts the process on the next parse).
func TestStoppedParseDoesNotPoisonPool(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var b strings.Builder
	b.WriteString("package big\n")
	for i := 0; b.Len() < 256<<10; i++ {
		fmt.Fprintf(&b, "func f%d(a, b int) int { return a*%d + b }\n", i, i)
	}
	src := []byte(b.String())
	small := func(after time.Duration) {
		t.Helper()
		info, err := Parse(context.Background(), "go", []byte("package p\nfunc A() {}\n"), nil)
		if err != nil || info.TimedOut || len(info.Symbols) != 1 {
			t.Fatalf("after a parse stopped at %v: %+v, %v", after, info, err)
		}
	}
	stopped := 0
	try := func(limit time.Duration) bool {
		t.Helper()
		// tree-sitter's parse (Parse reads valid Go of this size with
		// go/parser, which is not stopped).
		info, err := parseTreeSitter(context.Background(), grammars["go"], "go", src, &Options{Timeout: limit})
		if err != nil {
			t.Fatal(err)
		}
		if info.TimedOut {
			stopped++
		}
		small(limit)
		return !info.TimedOut
	}
	// Timeout is the parse's own CPU time: find by bisection the least
	// limit that lets the parse and the tree copy finish, then stop parses
	// over the last half of that time, where tree-sitter balances the
	// finished tree (before the copy, which takes ~15% of it).
	lo, hi := time.Millisecond, 100*time.Millisecond
	for !try(hi) {
		lo, hi = hi, 2*hi
	}
	for range 10 {
		if mid := (lo + hi) / 2; try(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	for i := range 48 {
		try(hi/2 + hi*time.Duration(i)/96)
	}
	full := hi
	t.Logf("least limit to finish %v, %d parses stopped", full, stopped)
	if stopped == 0 {
		t.Error("no parse was stopped: the test did not exercise stopped parsers")
	}
}
