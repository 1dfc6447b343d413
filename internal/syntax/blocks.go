package syntax

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A parse's results are carved from shared blocks. A FileInfo, its
// symbols, refs and imports live as long as the snapshot holding them,
// while the parse that made them leaves garbage of the same sizes (the
// tree's Go mirror, the extractor's scratch slices). Allocated one exact
// slice each, the long-lived records ended up spread over spans that the
// garbage's collection left mostly empty: on the mixed benchmark tree
// 16.3 MB of live records sat in spans with 8.5 MB of free slots after
// the cold open, and the heap's limit (internal/project) is sized for
// both. A block is one allocation of blockBytes, over the allocator's
// small-object sizes, so it has a span of its own, filled side by side
// with many files' slices (TestSettleCarves).
//
// A block stays alive while any slice in it does: a file parsed again
// (an edit, a refresh) leaves its old slices' bytes in their block until
// every other file there is parsed again too. A session that re-parses a
// few files keeps their old records' few KB; one that re-parses most of a
// tree (a branch switch) leaves the old blocks part full, at most the
// bytes of the records it replaced.
const blockBytes = 32 << 10

// recordBlocks holds the free tail of the current block of each kind.
type recordBlocks struct {
	mu    sync.Mutex
	syms  []Symbol
	names []Name
	imps  []Import
	strs  []string
	bytes []byte
	infos []FileInfo
}

// blockSlots holds one recordBlocks per P, for the parses running at
// once; a parse takes a free one (getBlocks). Not a sync.Pool: a pool
// drops what it holds at every other GC, and each drop abandoned the free
// tails of six blocks (~190 KiB): Go's source tree, ~190 GCs into its
// cold open, held 54 MB more than its records.
var (
	blockSlots = make([]recordBlocks, max(2, runtime.GOMAXPROCS(0)))
	nextSlot   atomic.Uint32
)

// getBlocks locks and returns a recordBlocks, a free one when there is.
func getBlocks() *recordBlocks {
	n := uint32(len(blockSlots))
	start := nextSlot.Add(1)
	for i := range n {
		if b := &blockSlots[(start+i)%n]; b.mu.TryLock() {
			return b
		}
	}
	b := &blockSlots[start%n]
	b.mu.Lock()
	return b
}

// perBlock is how many Ts a block holds.
func perBlock[T any]() int {
	var t T
	return max(1, blockBytes/int(unsafe.Sizeof(t)))
}

// carve returns a copy of src in *free, the free tail of a block (a new
// block when it does not fit), with its capacity ending with it; a src
// over a quarter of a block gets an exact array of its own. An empty src
// gives an empty, non-nil slice (JSON "[]", as before).
func carve[T any](free *[]T, src []T) []T {
	n := len(src)
	if n == 0 {
		return src[:0:0]
	}
	per := perBlock[T]()
	if n > per/4 {
		out := make([]T, n)
		copy(out, src)
		return out
	}
	if len(*free) < n {
		*free = make([]T, per)
	}
	out := (*free)[:n:n]
	copy(out, src)
	*free = (*free)[n:]
	return out
}

// str returns a copy of s in the bytes block (s itself when empty or over
// a quarter of a block).
func (b *recordBlocks) str(s string) string {
	if len(s) == 0 || len(s) > blockBytes/4 {
		return s
	}
	if len(b.bytes) < len(s) {
		b.bytes = make([]byte, blockBytes)
	}
	out := b.bytes[:len(s):len(s)]
	copy(out, s)
	b.bytes = b.bytes[len(s):]
	return unsafe.String(&out[0], len(out))
}

// settle returns a copy of info, and of its symbols, refs and imports
// (with their paths and names), carved from shared blocks. info's own
// slices are then garbage: the parse's scratch.
func settle(info *FileInfo) *FileInfo {
	b := getBlocks()
	defer b.mu.Unlock()
	out := carveOne(&b.infos)
	*out = *info
	out.Symbols = carve(&b.syms, info.Symbols)
	out.Refs = carve(&b.names, info.Refs)
	out.Imports = carve(&b.imps, info.Imports)
	for i := range out.Imports {
		im := &out.Imports[i]
		im.Path = b.str(im.Path)
		if len(im.Names) > 0 {
			im.Names = carve(&b.strs, im.Names)
			for k, n := range im.Names {
				im.Names[k] = b.str(n)
			}
		}
	}
	return out
}

// carveOne returns a pointer to one zero T from the block *free.
func carveOne[T any](free *[]T) *T {
	if len(*free) == 0 {
		*free = make([]T, perBlock[T]())
	}
	p := &(*free)[0]
	*free = (*free)[1:]
	return p
}
