package syntax

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Big files share a budget of source bytes parsing at once: a parse holds
// its tree in C (tens of bytes per source byte: ~50 MB for a 1 MB Go file)
// and its Go mirror until extraction ends, so two workers on two 1 MB
// files doubled the peak. Files under bigParse are not counted; a file
// weighs at most bigInFlight (one always fits).
const (
	bigParse    = 128 << 10
	bigInFlight = 1 << 20
)

var bigParses = semaphore.NewWeighted(bigInFlight)

// wholeAgain counts the parses redone whole because grammar.verify
// refused the skipped bodies (tests report it).
var wholeAgain atomic.Int64

// Version names the extraction rules (symbols, imports, refs): a saved
// index (internal/project) made under another version is parsed again.
// Bump it when Parse's output for some input changes.
const Version = "9"

// DefaultTimeout bounds one file's parse and extraction when
// Options.Timeout is zero.
const DefaultTimeout = 2 * time.Second

// MaxRefs caps FileInfo.Refs (distinct identifiers) per file.
const MaxRefs = 2000

// maxSymbols caps FileInfo.Symbols per file (a generated file with a million
// constants must not swamp the index).
const maxSymbols = 20000

// ErrUnsupported is returned (wrapped) by Parse for a language without a
// grammar; check with errors.Is or call Supported first.
var ErrUnsupported = errors.New("syntax: unsupported language")

// Options tunes Parse. The zero value (or nil) uses the defaults.
type Options struct {
	// Timeout bounds the CPU time of one file's parse and tree copy (the
	// parsing thread's clock, so parses are not stopped early on a loaded
	// machine); default DefaultTimeout (2 s). A parse that runs longer is
	// stopped through tree-sitter's progress callback and reported as
	// FileInfo.TimedOut. The context's deadline bounds wall time. Go files
	// go/parser accepts (at most maxGoAST bytes) are not timed: go/parser
	// is linear in its input.
	Timeout time.Duration

	// wholeBodies parses function bodies too (skip_rust.go,
	// skip_python.go): tests and benchmarks compare with it.
	wholeBodies bool
}

// pooledParser wraps a cParser for sync.Pool: the pool drops idle entries
// at GC without telling anyone, so a cleanup frees the C memory when the
// wrapper becomes unreachable.
type pooledParser struct {
	cp      *cParser
	cleanup runtime.Cleanup
}

// parsers holds idle parse arenas; any grammar parses in any of them.
var parsers sync.Pool

func newPooledParser() (*pooledParser, error) {
	cp, err := newCParser()
	if err != nil {
		return nil, err
	}
	pp := &pooledParser{cp: cp}
	pp.cleanup = runtime.AddCleanup(pp, func(cp *cParser) { cp.close() }, cp)
	return pp, nil
}

// Parse parses src as language (an internal/workspace language id, see
// Supported) and returns its symbols, imports, references and, for Go, the
// package name. src is UTF-8 source of any size (the workspace passes files
// of at most 1 MiB); invalid UTF-8 or syntax errors never fail the call: the
// tree then has ERROR nodes (FileInfo.HasErrors) and what could be read is
// kept. A parse that runs past opts.Timeout stops with FileInfo.TimedOut set
// and no symbols. Errors: ErrUnsupported (wrapped) for an unknown language,
// ctx.Err() when ctx ends first. Parse is safe for concurrent use.
// Go source that go/parser accepts (up to maxGoAST bytes) is read with
// go/parser (goast.go), Go's reference grammar, through a fast recognizer
// that gives the same answer (gofast.go) and falls back to go/parser on
// anything it is unsure of; Go with a syntax error and every other
// language with tree-sitter.
func Parse(ctx context.Context, language string, src []byte, opts *Options) (*FileInfo, error) {
	g, ok := grammars[language]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnsupported, language)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if language == "go" && len(src) <= maxGoAST {
		info, ok, err := parseGoFile(ctx, src)
		if err != nil || ok {
			return info, err
		}
	}
	return parseTreeSitter(ctx, g, language, src, opts)
}

// maxGoAST is the largest Go file read with go/parser (goast.go). go/parser
// has no time limit, but it is linear in the input, stops at a nesting
// depth of 100 000 with an error, and its tree is Go heap several times
// the source's size (not measured per byte): a bigger file goes to tree-sitter, whose parse
// Options.Timeout stops.
const maxGoAST = 4 << 20

// parseGoFile is Parse for Go with go/parser; ok is false when go/parser
// finds a syntax error (the caller then uses tree-sitter). Big files share
// bigParses with tree-sitter's, so a few of them at once bound the heap.
func parseGoFile(ctx context.Context, src []byte) (*FileInfo, bool, error) {
	if len(src) >= bigParse {
		w := int64(min(len(src), bigInFlight))
		if err := bigParses.Acquire(ctx, w); err != nil {
			return nil, false, err
		}
		defer bigParses.Release(w)
	}
	// The fast recognizer first (gofast.go); go/parser where it bails.
	info, ok := parseGoFast(src)
	if !ok {
		info, ok = parseGoAST(src)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	return info, ok, nil
}

// parseTreeSitter is Parse with tree-sitter and the lang_*.go walks.
func parseTreeSitter(ctx context.Context, g *grammar, language string, src []byte, opts *Options) (*FileInfo, error) {
	timeout := DefaultTimeout
	if opts != nil && opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	g.init()
	if len(src) >= bigParse {
		w := int64(min(len(src), bigInFlight))
		if err := bigParses.Acquire(ctx, w); err != nil {
			return nil, err
		}
		defer bigParses.Release(w)
	}
	defer releaseCMemory(len(src)) // after t.release below: the node array is C memory

	pp, _ := parsers.Get().(*pooledParser)
	if pp == nil {
		var err error
		if pp, err = newPooledParser(); err != nil {
			return nil, err
		}
	}
	// A parse stopped by the progress callback leaves its TSParser
	// half-reset (tree-sitter 0.25's ts_parser_reset does not clear
	// canceled_balancing, and the next parse on it would abort the
	// process); every parse makes a new TSParser in the arena, and the
	// arena is emptied after each, so the arena is always reusable.
	var skip []bodySpan
	if g.bodies != nil && (opts == nil || !opts.wholeBodies) {
		skip = g.bodies(src)
	}
	t, stopped, err := pp.cp.parse(g, src, skip, timeout, ctx.Done())
	if t != nil && len(skip) > 0 && g.verify != nil && !g.verify(t, skip) {
		// The bodies were misread (skip_javascript.go): parse the file whole.
		wholeAgain.Add(1)
		t.release()
		skip = nil
		t, stopped, err = pp.cp.parse(g, src, nil, timeout, ctx.Done())
	}
	parsers.Put(pp)

	info := &FileInfo{Language: language, Symbols: []Symbol{}, Imports: []Import{}, Refs: []Name{}}
	if err != nil {
		return nil, err
	}
	if stopped {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info.TimedOut = true
		return info, nil
	}
	defer t.release()
	info.HasErrors = t.hasError
	x := &extractor{t: t, info: info, defNames: map[int32]bool{}, in: getInternCache(), bodies: skip, bodyIdents: g.bodyIdents}
	defer putInternCache(x.in)
	g.extract(x)
	x.collectRefs()
	// Exactly sized and carved from shared blocks (blocks.go): the
	// FileInfo lives as long as its snapshot, append's spare capacity is
	// up to half of each slice, and one allocation each left them spread
	// over mostly empty spans.
	info = settle(info)
	sort.SliceStable(info.Imports, func(i, j int) bool { return info.Imports[i].Line < info.Imports[j].Line })
	return info, nil
}
