package syntax

// The tree is copied by one C function instead of ~10 cgo calls per node
// through go-tree-sitter's API (which made the copy cost more than the
// parse). The declarations below mirror tree_sitter/api.h of the
// tree-sitter 0.25 runtime that github.com/tree-sitter/go-tree-sitter
// v0.25.0 compiles and links into the binary; TestMirrorMatchesAPI checks
// the copy against go-tree-sitter's own accessors.

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif
#include "arena.h"

typedef struct { uint32_t row; uint32_t column; } tsx_point;
typedef struct { uint32_t context[4]; const void *id; const void *tree; } tsx_node;
typedef struct { const void *tree; const void *id; uint32_t context[3]; } tsx_cursor;

typedef struct {
	void *payload;
	const char *(*read)(void *payload, uint32_t byte_index, tsx_point position, uint32_t *bytes_read);
	int encoding; // TSInputEncodingUTF8 = 0
	void *decode;
} tsx_input;
typedef struct { void *payload; uint32_t current_byte_offset; bool has_error; } tsx_parse_state;
typedef struct { void *payload; bool (*progress_callback)(tsx_parse_state *state); } tsx_parse_options;

void *ts_parser_new(void);
void ts_parser_delete(void *);
bool ts_parser_set_language(void *, const void *);
void ts_parser_reset(void *);
void *ts_parser_parse_with_options(void *, const void *old_tree, tsx_input, tsx_parse_options);
typedef struct { tsx_point start_point; tsx_point end_point; uint32_t start_byte; uint32_t end_byte; } tsx_range;
bool ts_parser_set_included_ranges(void *, const tsx_range *, uint32_t);
tsx_node ts_tree_root_node(const void *);
void ts_tree_delete(void *);
bool ts_node_has_error(tsx_node);
tsx_cursor ts_tree_cursor_new(tsx_node);
void ts_tree_cursor_delete(tsx_cursor *);
bool ts_tree_cursor_goto_first_child(tsx_cursor *);
bool ts_tree_cursor_goto_next_sibling(tsx_cursor *);
bool ts_tree_cursor_goto_parent(tsx_cursor *);
tsx_node ts_tree_cursor_current_node(const tsx_cursor *);
uint16_t ts_tree_cursor_current_field_id(const tsx_cursor *);
uint16_t ts_node_symbol(tsx_node);
void ts_set_allocator(void *(*)(size_t), void *(*)(size_t, size_t), void *(*)(void *, size_t), void (*)(void *));

// go-tree-sitter routes every tree-sitter allocation through a Go callback
// (go_malloc -> C.malloc); that crossing cost as much as the parse itself.
// arena.c's allocator is libc malloc outside tsx_parse (go-tree-sitter's
// API, the tests) and the parse's arena inside it.
static void tsx_use_arena_allocator(void) { ts_set_allocator(tsa_malloc, tsa_calloc, tsa_realloc, tsa_free); }

// tsx_limit_arenas caps glibc's malloc arenas (default 8 per core). Parse
// trees are allocated and freed on whatever threads the Go scheduler runs
// the parses on; each arena keeps its freed memory, so many arenas meant
// ~40 MB more peak RSS on GOROOT/src. One arena per core keeps parses from
// contending. No-op outside glibc.
static void tsx_limit_arenas(int n) {
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, n);
#endif
}
// tsx_trim returns the free memory of every malloc arena to the system
// (glibc's malloc_trim also releases free pages inside an arena, not only
// at its top). No-op outside glibc.
static void tsx_trim(void) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}
bool ts_node_is_named(tsx_node);
uint32_t ts_node_start_byte(tsx_node);
uint32_t ts_node_end_byte(tsx_node);
tsx_point ts_node_start_point(tsx_node);
tsx_point ts_node_end_point(tsx_node);

// tsx_flat is one named node; the Go side reads the array in place as
// []node (tree.go, same layout: TestNodeLayout).
typedef struct {
	uint32_t start, end, start_row, end_row;
	int32_t parent, first, next; // nearest named ancestor, first named child, next named sibling; -1 if none
	uint16_t symbol, field;
} tsx_flat;

// tsx_now_ns is the calling thread's CPU time: a parse's budget counts the
// work it did, so a loaded machine (other processes taking the cores) does
// not stop parses that would finish in time. The whole parse runs in one
// cgo call, on one OS thread.
static int64_t tsx_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct { int64_t deadline; volatile int32_t *cancel; uint32_t calls; } tsx_progress;

// tsx_progress_cb is tree-sitter's progress callback: true stops the parse
// (deadline passed or the Go side set *cancel when its context ended).
// tree-sitter calls it every 100 parse operations; the thread's CPU clock
// is a system call (no vDSO for CLOCK_THREAD_CPUTIME_ID), which at that
// rate was ~4% of a cold open's CPU, so it is read on every 16th call
// (tens of microseconds of parsing apart).
static bool tsx_progress_cb(tsx_parse_state *s) {
	tsx_progress *p = s->payload;
	if (*p->cancel != 0) return true;
	return (++p->calls & 15) == 0 && tsx_now_ns() > p->deadline;
}

typedef struct { const char *src; uint32_t len; } tsx_source;

static const char *tsx_read(void *payload, uint32_t i, tsx_point pos, uint32_t *n) {
	tsx_source *s = payload;
	if (i >= s->len) { *n = 0; return ""; }
	*n = s->len - i;
	return s->src + i;
}

static int tsx_flatten(tsx_node *root, int64_t budget_ns, tsx_flat **out, uint32_t *count);

// tsx_parse parses src as language with a new parser in arena and
// flattens the tree, all within budget_ns. The parser and the tree are
// arena memory, dropped at once by tsa_reset instead of freed node by node
// (ts_tree_delete, ts_parser_delete); the external scanner's state, which a
// grammar may allocate with libc, is freed by ts_parser_reset, which the
// parse runs on its way out (and this function when there is no tree).
// *out is libc memory. With nranges > 0 only those ranges of src are
// parsed (ts_parser_set_included_ranges; the tree keeps src's offsets).
// Returns 0, 1 (stopped: deadline or cancel), 2 (out of memory), 3 (no
// tree for another reason), 4 (grammar ABI not supported) or 5 (ranges
// refused).
static int tsx_parse(const void *language, tsa_arena *arena, const char *src, uint32_t len, int64_t budget_ns,
		volatile int32_t *cancel, const tsx_range *ranges, uint32_t nranges, tsx_flat **out, uint32_t *count, bool *has_error) {
	int64_t start = tsx_now_ns();
	tsx_source s = { src, len };
	tsx_input in = { &s, tsx_read, 0, NULL };
	tsx_progress pr = { start + budget_ns, cancel, 0 };
	tsx_parse_options opts = { &pr, tsx_progress_cb };
	*out = NULL; *count = 0; *has_error = false;
	int rc = 0;
	tsa_begin(arena);
	void *parser = ts_parser_new();
	if (!ts_parser_set_language(parser, language)) {
		rc = 4;
		goto done;
	}
	if (nranges > 0 && !ts_parser_set_included_ranges(parser, ranges, nranges)) {
		rc = 5;
		goto done;
	}
	void *tree = ts_parser_parse_with_options(parser, NULL, in, opts);
	if (!tree) {
		ts_parser_reset(parser); // frees the scanner's state
		rc = (*cancel != 0 || tsx_now_ns() > pr.deadline) ? 1 : 3;
		goto done;
	}
	tsx_node root = ts_tree_root_node(tree);
	*has_error = ts_node_has_error(root);
	int64_t left = pr.deadline - tsx_now_ns();
	rc = left <= 0 ? 1 : tsx_flatten(&root, left, out, count);
done:
	tsa_end();
	tsa_reset(arena);
	return rc;
}

// tsx_flatten writes the named nodes under root in document order into a
// malloc'd array (*out, *count). parent is the index of the nearest named
// ancestor (-1 for the root). Returns 0, 1 when budget_ns ran out, 2 when
// out of memory. The caller frees *out.
static int tsx_flatten(tsx_node *root, int64_t budget_ns, tsx_flat **out, uint32_t *count) {
	int64_t deadline = tsx_now_ns() + budget_ns;
	uint32_t cap = 1024, n = 0, depth = 0, scap = 64;
	tsx_flat *nodes = malloc(cap * sizeof(tsx_flat));
	int32_t *named = malloc(scap * sizeof(int32_t)); // nearest named ancestor at depth
	int rc = 0;
	if (!nodes || !named) { rc = 2; goto done; }
	tsx_cursor c = ts_tree_cursor_new(*root);
	uint64_t steps = 0;
	int32_t anc = -1;
	for (;;) {
		if ((++steps & 4095) == 0 && tsx_now_ns() > deadline) { rc = 1; break; }
		tsx_node node = ts_tree_cursor_current_node(&c);
		int32_t self = -1;
		if (ts_node_is_named(node)) {
			if (n == cap) {
				cap *= 2;
				tsx_flat *grown = realloc(nodes, cap * sizeof(tsx_flat));
				if (!grown) { rc = 2; break; }
				nodes = grown;
			}
			tsx_point sp = ts_node_start_point(node), ep = ts_node_end_point(node);
			tsx_flat f = { ts_node_start_byte(node), ts_node_end_byte(node), sp.row, ep.row,
				anc, -1, -1, ts_node_symbol(node), ts_tree_cursor_current_field_id(&c) };
			nodes[n] = f;
			self = (int32_t)n++;
		}
		if (ts_tree_cursor_goto_first_child(&c)) {
			if (depth + 1 >= scap) {
				scap *= 2;
				int32_t *n2 = realloc(named, scap * sizeof(int32_t));
				if (!n2) { rc = 2; break; }
				named = n2;
			}
			named[depth] = anc;
			depth++;
			if (self >= 0) anc = self;
			continue;
		}
		bool end = false;
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (depth == 0 || !ts_tree_cursor_goto_parent(&c)) { end = true; break; }
			depth--;
			anc = named[depth];
		}
		if (end) break;
	}
	ts_tree_cursor_delete(&c);
	if (rc == 0 && n > 0) {
		// Child links: a node's children follow it in document order, so
		// one pass with the last child linked per node (reusing named as
		// that array) sets first and next.
		int32_t *last = realloc(named, n * sizeof(int32_t));
		if (!last) { rc = 2; goto done; }
		named = last;
		for (uint32_t i = 0; i < n; i++) {
			last[i] = -1;
			int32_t p = nodes[i].parent;
			if (p < 0 || p >= (int32_t)i) continue;
			if (last[p] >= 0) nodes[last[p]].next = (int32_t)i; else nodes[p].first = (int32_t)i;
			last[p] = (int32_t)i;
		}
	}
done:
	free(named);
	if (rc == 2 || rc == 1) { free(nodes); nodes = NULL; n = 0; }
	*out = nodes;
	*count = n;
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"
)

func init() {
	// After go-tree-sitter's own init (imported package), before any parse.
	C.tsx_use_arena_allocator()
	C.tsx_limit_arenas(C.int(max(runtime.NumCPU(), 2)))
}

var errTreeTooLarge = errors.New("syntax: out of memory copying the tree")

// trimEvery is how many parsed source bytes pass between two malloc_trim
// calls. A parse's tree (tens of bytes per node, tens of MB for a 1 MB
// file) is freed right after its walk, but glibc keeps freed chunks
// resident inside its arenas, so the C heap's RSS stayed at the peak
// footprint of each arena (127 MB of C memory at the peak of GOROOT/src's
// cold open, under the Go heap's growth). One trim per MiB parsed costs
// well under 1% of the parse.
const trimEvery = 1 << 20

var trimDebt atomic.Int64

// releaseCMemory counts n parsed bytes and trims the C heap every
// trimEvery bytes (at once after a file of that size).
func releaseCMemory(n int) {
	if trimDebt.Add(int64(n)) >= trimEvery {
		trimDebt.Store(0)
		C.tsx_trim()
	}
}

// arenaKeep is how many bytes of its chunks a parse arena keeps mapped
// between parses: the tree of a source file of a few tens of KB, so the
// usual file is parsed without mapping (and faulting in) new memory.
const arenaKeep = 2 << 20

// cParser is a parse arena (arena.c) with the cancel flag the progress
// callback reads; each parse makes its own TSParser in the arena. It is
// used by one goroutine at a time.
type cParser struct {
	arena  *C.tsa_arena
	cancel *C.int32_t // C memory: the Go side writes it when ctx ends
}

func newCParser() (*cParser, error) {
	a := C.tsa_new(arenaKeep)
	if a == nil {
		return nil, errTreeTooLarge
	}
	return &cParser{arena: a, cancel: (*C.int32_t)(C.calloc(1, 4))}, nil
}

func (cp *cParser) close() {
	C.tsa_delete(cp.arena)
	C.free(unsafe.Pointer(cp.cancel))
}

// parse runs one parse and flatten in a single cgo call. budget is CPU
// time of the calling thread; stopped reports it ran out or done closed;
// tree is nil then. The insides of skip (function bodies, in order) are
// left out of the parse.
func (cp *cParser) parse(g *grammar, src []byte, skip []bodySpan, budget time.Duration, done <-chan struct{}) (t *tree, stopped bool, err error) {
	if budget <= 0 {
		return nil, true, nil
	}
	if len(src) >= 1<<31-1 {
		return nil, false, errors.New("syntax: source over 2 GiB") // Symbol offsets are int32
	}
	flag := (*int32)(unsafe.Pointer(cp.cancel))
	atomic.StoreInt32(flag, 0)
	if done != nil {
		// The watcher is waited for before the parser goes back to its
		// pool: one that saw done only after this parse ended (the open's
		// context ends with its scan) would otherwise set the flag during
		// the next parse on this parser, which then stops at once and
		// loses the file's symbols (a cold open after another open in
		// the same process; parse error "stopped after 2s").
		stop, exited := make(chan struct{}), make(chan struct{})
		defer func() {
			close(stop)
			<-exited
		}()
		go func() {
			defer close(exited)
			select {
			case <-done:
				atomic.StoreInt32(flag, 1)
			case <-stop:
			}
		}()
	}
	var flat *C.tsx_flat
	var count C.uint32_t
	var hasError C.bool
	var ptr *C.char
	if len(src) > 0 {
		ptr = (*C.char)(unsafe.Pointer(&src[0]))
	}
	var ranges []C.tsx_range
	if len(skip) > 0 {
		ranges = includedRanges(skip)
	}
	var rptr *C.tsx_range
	if len(ranges) > 0 {
		rptr = &ranges[0]
	}
	rc := C.tsx_parse(g.raw, cp.arena, ptr, C.uint32_t(len(src)), C.int64_t(budget), cp.cancel, rptr, C.uint32_t(len(ranges)), &flat, &count, &hasError)
	switch rc {
	case 1:
		return nil, true, nil
	case 2:
		return nil, false, errTreeTooLarge
	case 3:
		return nil, false, errors.New("syntax: parser returned no tree")
	case 4:
		return nil, false, fmt.Errorf("syntax: grammar ABI not supported by the tree-sitter runtime (%s)", g.name)
	case 5:
		return nil, false, errors.New("syntax: included ranges refused")
	}
	t = inPlace(g, flat, count, src)
	t.hasError = bool(hasError)
	return t, false, nil
}

// includedRanges is the complement of the bodies' insides: from the start
// to the first '{' (included), from each '}' to the next '{', from the
// last '}' to the end (tree-sitter's default end point).
func includedRanges(skip []bodySpan) []C.tsx_range {
	r := make([]C.tsx_range, 0, len(skip)+1)
	var from C.tsx_range
	for _, sp := range skip {
		from.end_byte = C.uint32_t(sp.open + 1)
		from.end_point = C.tsx_point{row: C.uint32_t(sp.openRow), column: C.uint32_t(sp.openCol + 1)}
		r = append(r, from)
		from = C.tsx_range{start_byte: C.uint32_t(sp.close), start_point: C.tsx_point{row: C.uint32_t(sp.closeRow), column: C.uint32_t(sp.closeCol)}}
	}
	from.end_byte = C.uint32_t(^uint32(0))
	from.end_point = C.tsx_point{row: C.uint32_t(^uint32(0)), column: C.uint32_t(^uint32(0))}
	return append(r, from)
}

// inPlace is the tree over the C array flat (count nodes), read where C
// wrote it; t.release frees it.
func inPlace(g *grammar, flat *C.tsx_flat, count C.uint32_t, src []byte) *tree {
	t := &tree{src: src, kindTab: g.kinds, fieldTab: g.fields, cmem: unsafe.Pointer(flat)}
	if count > 0 {
		t.nodes = unsafe.Slice((*node)(unsafe.Pointer(flat)), int(count))
	}
	return t
}

// release frees the C memory of a tree made by inPlace; t.nodes is gone.
func (t *tree) release() {
	if t.cmem != nil {
		C.free(t.cmem)
		t.cmem = nil
	}
	t.nodes = nil
}

// flattenNode flattens the tree under root, a pointer to a TSNode (such as
// a *sitter.Node, whose only field is one). Used to check the C walk
// against go-tree-sitter's API.
func flattenNode(g *grammar, root unsafe.Pointer, src []byte) (*tree, error) {
	var flat *C.tsx_flat
	var count C.uint32_t
	rc := C.tsx_flatten((*C.tsx_node)(root), C.int64_t(time.Minute), &flat, &count)
	if rc != 0 {
		return nil, errTreeTooLarge
	}
	t := inPlace(g, flat, count, src)
	nodes := slices.Clone(t.nodes) // a Go copy the caller may keep
	t.release()
	t.nodes = nodes
	t.hasError = bool(C.ts_node_has_error(*(*C.tsx_node)(root)))
	return t, nil
}

// Layout of tsx_flat, checked against node by TestNodeLayout.
var cFlatLayout = [...]uintptr{
	unsafe.Sizeof(C.tsx_flat{}),
	unsafe.Offsetof(C.tsx_flat{}.start), unsafe.Offsetof(C.tsx_flat{}.end),
	unsafe.Offsetof(C.tsx_flat{}.start_row), unsafe.Offsetof(C.tsx_flat{}.end_row),
	unsafe.Offsetof(C.tsx_flat{}.parent), unsafe.Offsetof(C.tsx_flat{}.first),
	unsafe.Offsetof(C.tsx_flat{}.next), unsafe.Offsetof(C.tsx_flat{}.symbol),
	unsafe.Offsetof(C.tsx_flat{}.field),
}
