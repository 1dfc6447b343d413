package retrieve

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// Posting packing: a posting is fileID<<tfBits | min(tf, maxTF).
const (
	tfBits   = 12
	maxTF    = 1<<tfBits - 1
	maxFiles = 1 << (32 - tfBits) // 1 048 576 files
)

// Index is an inverted index over one workspace snapshot: identifier terms
// of file contents (with term frequencies), path segment terms and symbol
// definition terms. It is immutable once built and safe for concurrent use.
// File contents are not kept: snippets read the file again.
type Index struct {
	snap    *workspace.Snapshot
	paths   []string // file id → root-relative path, sorted (Search looks paths up by binary search)
	files   []*workspace.File
	docLen  []uint32 // terms per file
	avgLen  float64
	terms   *binx.Strings // content terms, sorted: a term's id is its index
	offsets []uint32      // postings of term t are postings[offsets[t]:offsets[t+1]]
	posts   []uint32
	pathTrm idLists // path term → file ids
	defs    idLists // symbol name or name part → file ids (keys sorted, for prefix look-ups)
	bytes   int64
	elapsed time.Duration
	// nt holds the name table (nametable.go): built by Build, and in the
	// background after a load that needs it built again; a copy of the
	// index for the same files shares it.
	nt *nameHolder
}

// BuildOptions tune Build. A nil *BuildOptions means defaults.
type BuildOptions struct {
	// Skip leaves out files (root-relative path) that must never be
	// retrieved, such as secret-looking files; default none.
	Skip func(rel string) bool
	// Workers bounds parallel reading; default GOMAXPROCS.
	Workers int
}

// Build indexes every file of snap. Excluded files are not in a snapshot,
// so they are never indexed. A file that cannot be read (deleted since the
// scan) is indexed by its path only. Build stops with ctx's error when ctx
// ends.
func Build(ctx context.Context, snap *workspace.Snapshot, opts *BuildOptions) (*Index, error) {
	start := time.Now()
	var o BuildOptions
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	ix := newIndex(snap, &o)
	n := len(ix.paths)
	ix.docLen = make([]uint32, n)

	// One pass over the files: each worker keeps its own dictionary and,
	// per file, the (local term id, term frequency) pairs it holds,
	// varint-coded (shard.pairs). The merge then makes one sorted term
	// table and turns each worker's per-term counts into the place of its
	// next posting in one exactly sized postings array, and each worker
	// copies its pairs there, dropping them chunk by chunk. Two passes
	// (the second read and tokenized every file again to place the
	// postings) spared the pairs but cost ~1.3 CPU-s of GOROOT/src's cold
	// open; the pairs add ~1.5 MB to the mixed tree's cold peak
	// (docs/index.md "Issue 39").
	workers := make([]*shard, o.Workers)
	bufs := make([][]byte, o.Workers)
	for w := range workers {
		workers[w] = newShard()
	}
	ix.readFiles(ctx, o.Workers, func(w, id int, data []byte) {
		sh := workers[w]
		sh.bytes += int64(len(data))
		bufs[w] = sh.add(uint32(id), data, bufs[w])
		ix.docLen[id] = sh.last
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bufs = nil
	for _, sh := range workers {
		sh.tf, sh.touched = nil, nil // the merge and the placement need df and the pairs
		ix.bytes += sh.bytes
	}
	ix.merge(workers)
	ix.place(workers)
	workers = nil
	// The path and definition terms need no file. Built after the
	// placement, not beside the merge: their transient then no longer
	// adds to the pairs'.
	ix.finish()
	// The name table is built here, not in the background as after a
	// load: a workspace/open's first requests otherwise ran beside it
	// (GOROOT/src: ~110 ms), and refreshes there took 40-70 ms against
	// 15-25 (docs/index.md "Memory: tenth pass").
	ix.nt = builtNameTable(ix.buildNameTable())
	ix.elapsed = time.Since(start)
	return ix, nil
}

// readFiles calls f with the id and bytes of every file, on workers
// goroutines (w is the worker's number, 0 to workers-1), each file once,
// in no set order, until ctx ends; a file that cannot be read (deleted
// since the scan) is left out.
func (ix *Index) readFiles(ctx context.Context, workers int, f func(w, id int, data []byte)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	root := ix.snap.Root()
	n := len(ix.paths)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var data []byte
			for ctx.Err() == nil {
				id := int(next.Add(1) - 1)
				if id >= n {
					return
				}
				var err error
				data, err = ix.read(data[:0], root, id)
				if err != nil {
					continue
				}
				f(w, id, data)
			}
		}()
	}
	wg.Wait()
}

// read reads file id's bytes into buf.
func (ix *Index) read(buf []byte, root string, id int) ([]byte, error) {
	var size int64
	if f := ix.files[id]; f != nil {
		size = f.Size
	}
	return readWhole(buf, filepath.Join(root, filepath.FromSlash(ix.paths[id])), size)
}

// place writes every worker's pairs into the postings array (the merge
// made each shard's df the place of its next posting per local id), each
// shard on its own goroutine (their places are disjoint), dropping each
// chunk of pairs once read; then sorts each term's postings by file id.
func (ix *Index) place(workers []*shard) {
	ix.posts = make([]uint32, ix.offsets[ix.terms.Len()])
	var wg sync.WaitGroup
	for _, sh := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := sh.df
			sh.each(func(lid int32, posting uint32) {
				ix.posts[at[lid]] = posting
				at[lid]++
			}, func(chunk int) { sh.pairs[chunk] = nil })
			sh.df, sh.pairs, sh.runs = nil, nil, nil
		}()
	}
	wg.Wait()
	ix.sortPostings(len(workers))
}

// sortPostings sorts each term's postings by file id (each shard's
// postings of a term follow the earlier shards'), so a file's term
// frequency can be found by binary search. In parallel, over ranges of
// terms of about equal postings.
func (ix *Index) sortPostings(parts int) {
	if parts <= 1 {
		return // one worker: the files in id order
	}
	var wg sync.WaitGroup
	total := len(ix.posts)
	lo := 0
	for p := range parts {
		hi := len(ix.offsets) - 1
		if p < parts-1 {
			want := uint32(total / parts * (p + 1))
			hi = sort.Search(len(ix.offsets)-1, func(r int) bool { return ix.offsets[r] >= want })
			hi = max(hi, lo)
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for r := lo; r < hi; r++ {
				if ps := ix.posts[ix.offsets[r]:ix.offsets[r+1]]; len(ps) > 1 {
					slices.Sort(ps)
				}
			}
		}(lo, hi)
		lo = hi
	}
	wg.Wait()
}

// merge makes the shards' terms the index's: one sorted string table (a
// term's id is its rank) and, from the shards' counts, each term's range
// in the postings array (offsets), which place fills: each shard's df
// becomes, per local id, the place of the shard's first posting of it. Each shard sorts its
// own terms (in parallel) and one pass merges the sorted lists; no map of
// every term is built (GOROOT/src: 402 k terms).
func (ix *Index) merge(workers []*shard) {
	var wg sync.WaitGroup
	orders := make([][]int32, len(workers))
	for w, sh := range workers {
		sh.dict.dropTable()
		wg.Add(1)
		go func() {
			defer wg.Done()
			orders[w] = sh.dict.sorted()
		}()
	}
	wg.Wait()

	// Merge the sorted term lists, twice: the first pass counts the
	// distinct terms and their bytes, so that the second writes them into
	// exactly sized arrays the table then owns (binx.StringsOwning: no copy).
	// One pass into arrays grown by append, and the table's copy of them,
	// had the mixed tree's build at 37.3 MB live here (6 MB over the
	// shards), GOROOT/src's at 76.3 (12.4 over). The terms go to the
	// table in rank order, and each term's count of postings (the sum of
	// the shards') makes its range in offsets.
	heads := make([]int, len(workers))
	least := func() []byte {
		var t []byte
		for w, sh := range workers {
			if heads[w] < len(orders[w]) {
				if u := sh.dict.term(orders[w][heads[w]]); t == nil || bytes.Compare(u, t) < 0 {
					t = u
				}
			}
		}
		return t
	}
	// advance moves past t every head at it, calling at (when not nil)
	// with its shard and local id.
	advance := func(t []byte, at func(w int, lid int32)) {
		for w, sh := range workers {
			if heads[w] < len(orders[w]) {
				if lid := orders[w][heads[w]]; bytes.Equal(sh.dict.term(lid), t) {
					if at != nil {
						at(w, lid)
					}
					heads[w]++
				}
			}
		}
	}
	nTerms, nBytes := 0, 0
	for t := least(); t != nil; t = least() {
		nTerms++
		nBytes += len(t)
		advance(t, nil)
	}
	clear(heads)
	all := make([]byte, 0, nBytes)
	ends := make([]uint32, 0, nTerms)
	offsets := make([]uint32, 1, nTerms+1)
	for t := least(); t != nil; t = least() {
		all = append(all, t...)
		ends = append(ends, uint32(len(all)))
		c := offsets[len(offsets)-1]
		advance(t, func(w int, lid int32) {
			df := workers[w].df
			n := df[lid]
			df[lid] = c
			c += n
		})
		offsets = append(offsets, c)
	}
	orders = nil
	ix.terms = binx.StringsOwning(all, ends)
	all, ends = nil, nil
	ix.offsets = offsets
	for _, sh := range workers {
		sh.dict = nil
	}
}

// finish derives what Build does not read files for: the average file
// length, the path terms and the symbol-definition terms.
func (ix *Index) finish() {
	ix.setAvgLen()
	ix.names()
}

// setAvgLen sets the average file length from docLen.
func (ix *Index) setAvgLen() {
	n := len(ix.paths)
	var total uint64
	for _, l := range ix.docLen {
		total += uint64(l)
	}
	if n > 0 {
		ix.avgLen = float64(total) / float64(n)
	}
	if ix.avgLen < 1 {
		ix.avgLen = 1
	}
}

// names fills the path terms and the symbol-definition terms.
func (ix *Index) names() {
	path, defs := newIDListBuilder(), newIDListBuilder()
	var sp asciiSplit
	var buf []byte
	for id := range ix.paths {
		fid := uint32(id)
		ix.nameKeys(id, &sp, &buf, func(def bool, key []byte) {
			if def {
				defs.add(key, fid)
			} else {
				path.add(key, fid)
			}
		})
	}
	ix.pathTrm, ix.defs = path.lists(), defs.lists()
}

// nameMaps holds the path and definition terms while they are gathered.
type nameMaps struct{ path, defs map[string][]uint32 }

// addNames adds the path and symbol-definition terms of file id to nm.
func (ix *Index) addNames(nm nameMaps, id int) {
	fid := uint32(id)
	var sp asciiSplit
	var buf []byte
	ix.nameKeys(id, &sp, &buf, func(def bool, key []byte) {
		if def {
			addID(nm.defs, string(key), fid)
		} else {
			addID(nm.path, string(key), fid)
		}
	})
}

// nameKeys calls add with file id's path terms (def false: each part of
// its path of two or more bytes, stemmed), then its definition terms (def
// true: for each symbol, each name part of two or more bytes and, for a
// name of several parts, the parts joined, stemmed). sp and buf are
// scratch space.
func (ix *Index) nameKeys(id int, sp *asciiSplit, buf *[]byte, add func(def bool, key []byte)) {
	eachNameKey(ix.paths[id], false, sp, buf, func(k []byte) { add(false, k) })
	for _, s := range symbolsOf(ix.files[id]) {
		eachNameKey(s.Name.String(), true, sp, buf, func(k []byte) { add(true, k) })
	}
}

// eachNameKey calls f with stem(t) for each part t of SplitIdentifier(name)
// of two or more bytes and, when whole is set and there are several parts,
// with stem(joined(parts)). An ASCII name is split without allocating; f's
// key is valid only during the call.
func eachNameKey(name string, whole bool, sp *asciiSplit, buf *[]byte, f func(key []byte)) {
	if !sp.split(name) {
		parts := SplitIdentifier(name)
		for _, t := range parts {
			if len(t) >= 2 {
				f([]byte(stem(t)))
			}
		}
		if whole && len(parts) > 1 {
			f([]byte(stem(joined(parts))))
		}
		return
	}
	from := 0
	for _, end := range sp.ends {
		if end-from >= 2 {
			*buf = append((*buf)[:0], sp.joined[from:end]...)
			f(stemBytes(*buf))
		}
		from = end
	}
	if whole && len(sp.ends) > 1 {
		*buf = append((*buf)[:0], sp.joined...)
		f(stemBytes(*buf))
	}
}

// setNames makes nm the index's path and definition terms (flat, keys
// sorted).
func (ix *Index) setNames(nm nameMaps) {
	ix.pathTrm, ix.defs = flatIDLists(nm.path), flatIDLists(nm.defs)
}

// newIndex returns an index of snap holding only the files it indexes
// (paths and files).
func newIndex(snap *workspace.Snapshot, o *BuildOptions) *Index {
	ix := &Index{snap: snap, terms: noStrings, pathTrm: idLists{keys: noStrings, off: []uint32{0}}, defs: idLists{keys: noStrings, off: []uint32{0}}}
	for _, p := range snap.Files() {
		if o.Skip != nil && o.Skip(p) {
			continue
		}
		if len(ix.paths) == maxFiles {
			break
		}
		f, _ := snap.File(p)
		ix.paths = append(ix.paths, p)
		ix.files = append(ix.files, f)
	}
	return ix
}

// readInto reads the file at abs into buf (reused across files so the
// build makes no garbage per file) and returns it.
func readInto(buf []byte, abs string) ([]byte, error) {
	return readPrefixInto(buf, abs, -1)
}

// readPrefixInto is readInto reading at most limit bytes when limit >= 0:
// the first min(limit, size) bytes of the file.
func readPrefixInto(buf []byte, abs string, limit int) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	start := len(buf)
	// Grown once to the file's size (one byte more, to see EOF without
	// growing), not doubled up to it.
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		want := int(fi.Size()) + 1
		if limit >= 0 {
			want = min(want, limit)
		}
		if cap(buf)-start < want {
			buf = slices.Grow(buf, want)
		}
	}
	for {
		if limit >= 0 && len(buf)-start >= limit {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := cap(buf)
		if limit >= 0 {
			end = min(end, start+limit)
		}
		n, err := f.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// addID appends id to m[t] unless it is already the last entry (ids are
// added in increasing order per file).
func addID(m map[string][]uint32, t string, id uint32) {
	l := m[t]
	if len(l) > 0 && l[len(l)-1] == id {
		return
	}
	m[t] = append(l, id)
}

// shard is one build worker's partial index: its terms (local ids) and,
// per term, the files holding it, as one flat list of (local term id,
// term frequency) pairs file by file (runs) in chunks, in the order added
// (so each term's postings are in file order), rather than a slice per
// term: a slice header and a separate, doubling array for each of a
// shard's ~300 k terms cost more than the ~2 bytes a pair takes here.
// Build and an update of a saved index both use it.
type shard struct {
	dict *termDict // term → local id
	// pairs holds the pairs, a file's in increasing local id, each
	// uvarint(gap<<1 | tf>1) (gap: the lid less the file's previous lid,
	// or the lid itself for its first) and, when tf > 1, uvarint(tf), in
	// byte chunks of at least pairChunk (a pair is never split): ~2-3
	// bytes a posting (GOROOT/src 2.8 M), against 4 in a uint32.
	pairs   [][]byte
	runs    []shardRun
	tf      []uint16 // per local id, for the current file (at most maxTF: a posting keeps no more)
	df      []uint32 // per local id, the files (postings) holding it
	touched []int32
	count   uint32 // terms of the file being added
	last    uint32 // terms in the last file added
	bytes   int64
}

func newShard() *shard { return &shard{dict: newTermDict()} }

// shardRun is one file's pairs in a shard: the file id and the pair count.
type shardRun struct{ id, n uint32 }

// pairChunk is the least length of a shard's pair chunks (64 KiB); a
// variable for tests.
var pairChunk = 1 << 16

// maxPairLen is the most bytes a pair takes.
const maxPairLen = 2 * binary.MaxVarintLen32

// add indexes data as the content of file id; buf is scratch space,
// returned for the next file.
func (sh *shard) add(id uint32, data []byte, buf []byte) []byte {
	sh.touched = sh.touched[:0]
	sh.count = 0
	buf = sh.tokenize(data, buf)
	if len(sh.touched) > 0 {
		sh.runs = append(sh.runs, shardRun{id: id, n: uint32(len(sh.touched))})
	}
	var chunk []byte
	if k := len(sh.pairs) - 1; k >= 0 {
		chunk = sh.pairs[k]
	}
	slices.Sort(sh.touched)
	prev := int32(0)
	for _, lid := range sh.touched {
		tf := uint32(sh.tf[lid])
		if cap(chunk)-len(chunk) < maxPairLen {
			if chunk != nil {
				sh.pairs[len(sh.pairs)-1] = chunk
			}
			chunk = make([]byte, 0, max(pairChunk, maxPairLen))
			sh.pairs = append(sh.pairs, chunk)
		}
		if d := uint64(lid - prev); tf == 1 {
			chunk = binary.AppendUvarint(chunk, d<<1)
		} else {
			chunk = binary.AppendUvarint(chunk, d<<1|1)
			chunk = binary.AppendUvarint(chunk, uint64(tf))
		}
		prev = lid
		sh.tf[lid] = 0
		sh.df[lid]++
	}
	if chunk != nil {
		sh.pairs[len(sh.pairs)-1] = chunk
	}
	sh.last = sh.count
	return buf
}

// term counts one occurrence of t in the file being added.
func (sh *shard) term(t []byte) {
	sh.count++
	lid := sh.dict.id(t)
	if int(lid) == len(sh.tf) {
		sh.tf = appendDoubling(sh.tf, 0)
		sh.df = appendDoubling(sh.df, 0)
	}
	switch sh.tf[lid] {
	case 0:
		sh.touched = append(sh.touched, lid)
	case maxTF:
		return
	}
	sh.tf[lid]++
}

// tokenize is tokenizeASCII(src, buf, sh.term), with a fast path for the
// commonest identifier, one lower-case word (a keyword, a short name):
// no copy, no splitting. TestShardTokenizeMatches holds the two equal.
func (sh *shard) tokenize(src []byte, buf []byte) []byte {
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		cl := byteClass[c]
		if cl == 0 {
			i++
			continue
		}
		if cl == classDigit {
			j := i + 1
			for j < n && isDigit(src[j]) {
				j++
			}
			if (j == n || !isIdentStart(src[j])) && isNumberTerm(src[i:j]) {
				sh.term(src[i:j])
			}
			i = j
			continue
		}
		seen := cl
		j := i + 1
		for j < n {
			k := byteClass[src[j]]
			if k == 0 {
				break
			}
			seen |= k
			j++
		}
		id := src[i:j]
		i = j
		if len(id) < 2 || len(id) > maxTermLen {
			continue
		}
		if seen&(classUpper|classUnder) == 0 {
			// One part: lower-case letters and digits, starting with a
			// letter. stemBytes rewrites only an "ies" ending.
			switch m := len(id); {
			case id[m-1] != 's':
				sh.term(id) // no stem
			case m > 4 && id[m-2] == 'e' && id[m-3] == 'i':
				buf = append(buf[:0], id...)
				sh.term(stemBytes(buf))
			default:
				sh.term(stemBytes(id))
			}
			continue
		}
		buf = sh.identParts(id, buf)
	}
	return buf
}

// Byte classes of tokenize (bits, so a run's classes can be or-ed).
const (
	classLower = 1 << iota
	classDigit
	classUpper
	classUnder
)

var byteClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = classLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = classUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = classDigit
	}
	t['_'] = classUnder
	return t
}()

// identParts is identParts(id, buf, sh.term), in one lower-cased copy of
// id: the parts are views of it, and the whole term is the copy itself
// (or the copy squeezed of its underscores once the parts are done), so
// nothing is copied or lower-cased per part.
func (sh *shard) identParts(id []byte, buf []byte) []byte {
	n := len(id)
	// buf: the lower-cased id, then room for a part whose stem rewrites
	// its tail ("ies" -> "y"), which must not touch the copy.
	if cap(buf) < 2*maxTermLen {
		buf = make([]byte, 2*maxTermLen)
	}
	buf = buf[:cap(buf)]
	low := buf[:n:n]
	scratch := buf[n:]
	under := false
	for k, c := range id {
		if c == '_' {
			under = true
		} else {
			c |= 0x20 // A-Z to a-z; a-z and 0-9 have the bit already
		}
		low[k] = c
	}
	parts := 0
	start := -1
	for k := 0; k <= n; k++ {
		next := -1 // the start after a split at k
		if k < n {
			c := id[k]
			switch {
			case c == '_':
			case start < 0:
				start = k
				continue
			case isUpper(c):
				prev := id[k-1]
				if !(isLower(prev) || isDigit(prev) || (isUpper(prev) && k+1 < n && isLower(id[k+1]))) {
					continue
				}
				next = k
			default:
				continue
			}
		}
		if start >= 0 && k > start {
			p := low[start:k]
			parts++
			if len(p) >= 2 && !isDigitsBytes(p) || isNumberTerm(p) {
				if m := len(p); m > 4 && p[m-1] == 's' && p[m-2] == 'e' && p[m-3] == 'i' {
					sh.term(stemBytes(append(scratch[:0], p...)))
				} else {
					sh.term(stemBytes(p))
				}
			}
		}
		start = next
	}
	if parts > 1 {
		whole := low
		if under {
			w := 0
			for _, c := range low {
				if c != '_' {
					low[w] = c
					w++
				}
			}
			whole = low[:w]
		}
		if len(whole) >= 2 {
			sh.term(stemBytes(whole))
		}
	}
	return buf
}

func isDigitsBytes(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// each calls f with every pair's local term id and posting, in the order
// added, and drop (when set) after each chunk's last pair.
func (sh *shard) each(f func(lid int32, posting uint32), drop func(chunk int)) {
	k := 0
	var chunk []byte
	if len(sh.pairs) > 0 {
		chunk = sh.pairs[0]
	}
	for _, r := range sh.runs {
		lid := int32(0)
		for range r.n {
			if len(chunk) == 0 {
				if drop != nil {
					drop(k)
				}
				k++
				chunk = sh.pairs[k]
			}
			v, n := binary.Uvarint(chunk)
			chunk = chunk[n:]
			tf := uint64(1)
			if v&1 != 0 {
				tf, n = binary.Uvarint(chunk)
				chunk = chunk[n:]
			}
			lid += int32(v >> 1)
			f(lid, r.id<<tfBits|uint32(tf))
		}
	}
	if drop != nil {
		for ; k < len(sh.pairs); k++ {
			drop(k)
		}
	}
}

// counts returns the number of postings per local term id.
func (sh *shard) counts() []uint32 { return sh.df }

// lists returns the postings per local term id (each in the order added).
func (sh *shard) lists() [][]uint32 {
	c := sh.counts()
	out := make([][]uint32, len(c))
	for lid, n := range c {
		out[lid] = make([]uint32, 0, n)
	}
	sh.each(func(lid int32, p uint32) { out[lid] = append(out[lid], p) }, nil)
	return out
}

// postings returns the postings of an index term (stemmed, lower-case).
func (ix *Index) postings(t string) []uint32 {
	g, ok := ix.terms.Find(t)
	if !ok {
		return nil
	}
	return ix.posts[ix.offsets[g]:ix.offsets[g+1]]
}

// hasTerm reports whether t is a content term.
func (ix *Index) hasTerm(t string) bool {
	_, ok := ix.terms.Find(t)
	return ok
}

// definers marks the files (by id) that define a symbol some unit may
// match: the files of defs[key] (a name part or a whole name stemmed to
// key) and, for keys of 3 or more bytes, of every defs key starting with
// key (a whole name key is a prefix of). matchSymbols finds nothing in a
// file left unmarked, so Search skips it there.
func (ix *Index) definers(units []unit) []bool {
	out := make([]bool, len(ix.paths))
	for _, u := range units {
		if len(u.key) < 2 {
			// Not a key the index holds parts of: no shortcut.
			for i := range out {
				out[i] = true
			}
			return out
		}
		for _, id := range ix.defs.get(u.key) {
			out[id] = true
		}
		if len(u.key) < 3 {
			continue
		}
		for i := ix.defs.search(u.key); i < ix.defs.len() && strings.HasPrefix(ix.defs.key(i), u.key); i++ {
			for _, id := range ix.defs.at(i) {
				out[id] = true
			}
		}
	}
	return out
}

// tf returns the frequency of term posts in file id (0 when absent).
func tf(posts []uint32, id uint32) int {
	i, ok := slices.BinarySearchFunc(posts, id, func(p, id uint32) int {
		return cmpU32(p>>tfBits, id)
	})
	if !ok {
		return 0
	}
	return int(posts[i] & maxTF)
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Files is the number of files indexed.
func (ix *Index) Files() int { return len(ix.paths) }

// Terms is the number of distinct content terms.
func (ix *Index) Terms() int { return ix.terms.Len() }

// Bytes is the total size of the files read.
func (ix *Index) Bytes() int64 { return ix.bytes }

// Elapsed is how long Build took.
func (ix *Index) Elapsed() time.Duration { return ix.elapsed }

// Version is the snapshot version the index was built from.
func (ix *Index) Version() uint64 { return ix.snap.Version() }

// symbolsOf returns the symbols the parser stored for f, sorted by start
// line, or nil when the file was not parsed.
func symbolsOf(f *workspace.File) []syntax.Symbol {
	if f == nil {
		return nil
	}
	var syms []syntax.Symbol
	switch d := f.Parsed.(type) {
	case *syntax.FileInfo:
		if d != nil {
			syms = d.Symbols
		}
	case syntax.FileInfo:
		syms = d.Symbols
	case interface{ FileInfo() *syntax.FileInfo }:
		if fi := d.FileInfo(); fi != nil {
			syms = fi.Symbols
		}
	}
	sorted := true
	for i := 1; i < len(syms); i++ {
		if syms[i].StartLine < syms[i-1].StartLine {
			sorted = false
			break
		}
	}
	if !sorted {
		syms = append([]syntax.Symbol(nil), syms...)
		sort.SliceStable(syms, func(i, j int) bool { return syms[i].StartLine < syms[j].StartLine })
	}
	return syms
}

// Cache holds the index of the latest snapshot it was asked about, built
// lazily on first use and rebuilt when the snapshot changes. It is safe for
// concurrent use; concurrent callers for the same snapshot share one build.
type Cache struct {
	opts BuildOptions

	mu  sync.Mutex
	cur *Index
}

// NewCache returns an empty cache whose builds use opts (nil for defaults).
func NewCache(opts *BuildOptions) *Cache {
	c := &Cache{}
	if opts != nil {
		c.opts = *opts
	}
	return c
}

// Index returns the index of snap, building it when the cached one is of
// another snapshot that does not hold the same files
// (workspace.Snapshot.SameFiles).
func (c *Cache) Index(ctx context.Context, snap *workspace.Snapshot) (*Index, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.cur.snap == snap {
		return c.cur, nil
	}
	if c.cur != nil && c.cur.snap.SameFiles(snap) {
		// Nothing changed in the files (a refresh that found no change):
		// the postings hold; only the snapshot answered for moves on.
		ix := *c.cur
		ix.snap = snap
		c.cur = &ix
		return c.cur, nil
	}
	c.cur = nil // let the old index go before the new one is built
	ix, err := Build(ctx, snap, &c.opts)
	if err != nil {
		return nil, err
	}
	c.cur = ix
	return ix, nil
}
