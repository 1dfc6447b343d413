package syntax

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"time"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

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
	// Timeout bounds the parse and extraction of one file; default
	// DefaultTimeout (2 s). A parse that runs longer is stopped through
	// tree-sitter's progress callback and reported as FileInfo.TimedOut.
	Timeout time.Duration
}

// pooledParser is one tree-sitter parser set to a grammar. The cancellation
// state lives here, and opts is built once, because go-tree-sitter v0.25
// registers the ParseOptions in a global handle table on every parse and
// never releases it: reusing one *ParseOptions per parser keeps that to a
// few bytes per parse instead of a closure per parse.
type pooledParser struct {
	p        *sitter.Parser
	deadline time.Time
	done     <-chan struct{}
	stopped  bool
	opts     sitter.ParseOptions
}

func newPooledParser(g *grammar) *pooledParser {
	p := sitter.NewParser()
	if err := p.SetLanguage(g.lang); err != nil {
		// The grammars are pinned in go.mod; an ABI mismatch is a build
		// error, not an input error.
		p.Close()
		panic(fmt.Sprintf("syntax: grammar %s: %v", g.name, err))
	}
	pp := &pooledParser{p: p}
	pp.opts.ProgressCallback = pp.progress
	// sync.Pool drops idle entries at GC without telling us: free the C
	// parser when the wrapper becomes unreachable.
	runtime.AddCleanup(pp, func(p *sitter.Parser) { p.Close() }, p)
	return pp
}

// progress is tree-sitter's progress callback: true stops the parse.
func (pp *pooledParser) progress(sitter.ParseState) bool {
	if pp.stopped {
		return true
	}
	select {
	case <-pp.done:
		pp.stopped = true
	default:
		if time.Now().After(pp.deadline) {
			pp.stopped = true
		}
	}
	return pp.stopped
}

// Parse parses src as language (an internal/workspace language id, see
// Supported) and returns its symbols, imports, references and, for Go, the
// package name. src is UTF-8 source of any size (the workspace passes files
// of at most 1 MiB); invalid UTF-8 or syntax errors never fail the call: the
// tree then has ERROR nodes (FileInfo.HasErrors) and what could be read is
// kept. A parse that runs past opts.Timeout stops with FileInfo.TimedOut set
// and no symbols. Errors: ErrUnsupported (wrapped) for an unknown language,
// ctx.Err() when ctx ends first. Parse is safe for concurrent use.
func Parse(ctx context.Context, language string, src []byte, opts *Options) (*FileInfo, error) {
	g, ok := grammars[language]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnsupported, language)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := DefaultTimeout
	if opts != nil && opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	g.init()

	pp, _ := g.pool.Get().(*pooledParser)
	if pp == nil {
		pp = newPooledParser(g)
	}
	pp.deadline, pp.done, pp.stopped = deadline, ctx.Done(), false
	n := len(src)
	tree := pp.p.ParseWithOptions(func(i int, _ sitter.Point) []byte {
		if i < n {
			return src[i:]
		}
		return []byte{}
	}, nil, &pp.opts)
	stopped := pp.stopped
	pp.done = nil
	if tree == nil {
		// A stopped parse leaves state behind for resumption; drop it so
		// the next file starts clean.
		pp.p.Reset()
	}
	g.pool.Put(pp)

	info := &FileInfo{Language: language, Symbols: []Symbol{}, Imports: []Import{}, Refs: []string{}}
	if tree == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !stopped {
			return nil, fmt.Errorf("syntax: %s parser returned no tree", language)
		}
		info.TimedOut = true
		return info, nil
	}
	t := buildTree(g, tree, src, deadline)
	tree.Close()
	if t == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info.TimedOut = true
		return info, nil
	}
	info.HasErrors = t.hasError
	x := &extractor{t: t, info: info, defNames: map[int32]bool{}}
	g.extract(x)
	x.collectRefs()
	sort.SliceStable(info.Imports, func(i, j int) bool { return info.Imports[i].Line < info.Imports[j].Line })
	return info, nil
}
