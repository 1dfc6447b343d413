package retrieve

import (
	"context"
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
	paths   []string // file id → root-relative path
	files   []*workspace.File
	docLen  []uint32 // terms per file
	avgLen  float64
	termIDs map[string]int32
	offsets []uint32 // postings of term t are postings[offsets[t]:offsets[t+1]]
	posts   []uint32
	pathTrm map[string][]uint32 // path term → file ids
	defs    map[string][]uint32 // symbol name or name part → file ids
	defKeys []string            // sorted keys of defs, for prefix look-ups
	bytes   int64
	elapsed time.Duration
	// nt holds the name table (nametable.go), built in the background
	// after the index; a copy of the index for the same files shares it.
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

	// Each worker keeps its own dictionary and postings; they are merged
	// into one flat, exactly sized postings array at the end.
	workers := make([]*shard, o.Workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	root := snap.Root()
	for w := range workers {
		sh := &shard{dict: map[string]int32{}}
		workers[w] = sh
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf, data []byte
			for ctx.Err() == nil {
				id := int(next.Add(1) - 1)
				if id >= n {
					return
				}
				var err error
				data, err = readInto(data[:0], filepath.Join(root, filepath.FromSlash(ix.paths[id])))
				if err != nil {
					continue
				}
				sh.bytes += int64(len(data))
				buf = sh.add(uint32(id), data, buf)
				ix.docLen[id] = sh.last
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// Merge: count postings per global term, then fill. The largest
	// shard's dictionary becomes the global one (its local ids are the
	// global ids), so the merge builds no third map of every term (~15
	// MB at the peak of GOROOT/src's build).
	big := 0
	for w, sh := range workers {
		if len(sh.terms) > len(workers[big].terms) {
			big = w
		}
	}
	ix.termIDs = workers[big].dict
	counts := make([]uint32, len(workers[big].terms), len(workers[big].terms)+len(workers[big].terms)/4)
	locals := make([][]int32, len(workers)) // local term id → global (nil: the same)
	for w, sh := range workers {
		ix.bytes += sh.bytes
		if w == big {
			for lid, ps := range sh.posts {
				counts[lid] += uint32(len(ps))
			}
			continue
		}
		locals[w] = make([]int32, len(sh.terms))
		for lid, t := range sh.terms {
			g, ok := ix.termIDs[t]
			if !ok {
				g = int32(len(counts))
				ix.termIDs[t] = g
				counts = append(counts, 0)
			}
			locals[w][lid] = g
			counts[g] += uint32(len(sh.posts[lid]))
		}
		sh.dict = nil
	}
	ix.offsets = make([]uint32, len(counts)+1)
	for i, c := range counts {
		ix.offsets[i+1] = ix.offsets[i] + c
	}
	ix.posts = make([]uint32, ix.offsets[len(counts)])
	fill := slicesClone(ix.offsets[:len(counts)])
	for w, sh := range workers {
		for lid, ps := range sh.posts {
			g := int32(lid)
			if locals[w] != nil {
				g = locals[w][lid]
			}
			copy(ix.posts[fill[g]:], ps)
			fill[g] += uint32(len(ps))
			sh.posts[lid] = nil // the GC may take it during the copy
		}
		workers[w] = nil
	}
	if len(workers) > 1 {
		// Shards interleave file ids; sort each term's postings so a file's
		// term frequency can be found by binary search.
		for g := range counts {
			slices.Sort(ix.posts[ix.offsets[g]:ix.offsets[g+1]])
		}
	}

	ix.finish()
	ix.elapsed = time.Since(start)
	ix.startNameTable()
	return ix, nil
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
	for id := range ix.paths {
		ix.addNames(id)
	}
	ix.sizeNames()
}

// addNames adds the path and symbol-definition terms of file id.
func (ix *Index) addNames(id int) {
	fid := uint32(id)
	for _, t := range SplitIdentifier(ix.paths[id]) {
		if len(t) >= 2 {
			addID(ix.pathTrm, stem(t), fid)
		}
	}
	for _, s := range symbolsOf(ix.files[id]) {
		parts := SplitIdentifier(s.Name)
		for _, t := range parts {
			if len(t) >= 2 {
				addID(ix.defs, stem(t), fid)
			}
		}
		if len(parts) > 1 {
			addID(ix.defs, stem(joined(parts)), fid)
		}
	}
}

// sizeNames sizes the id lists exactly and sorts the definition keys.
func (ix *Index) sizeNames() {
	// Exactly sized id lists: append's spare capacity was ~40% of them.
	for _, m := range []map[string][]uint32{ix.pathTrm, ix.defs} {
		for t, ids := range m {
			if cap(ids) > len(ids) {
				m[t] = slices.Clone(ids)
			}
		}
	}
	ix.defKeys = make([]string, 0, len(ix.defs))
	for t := range ix.defs {
		ix.defKeys = append(ix.defKeys, t)
	}
	sort.Strings(ix.defKeys)
}

// newIndex returns an index of snap holding only the files it indexes
// (paths and files).
func newIndex(snap *workspace.Snapshot, o *BuildOptions) *Index {
	ix := &Index{snap: snap, pathTrm: map[string][]uint32{}, defs: map[string][]uint32{}}
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

func slicesClone(s []uint32) []uint32 { return append([]uint32(nil), s...) }

// addID appends id to m[t] unless it is already the last entry (ids are
// added in increasing order per file).
func addID(m map[string][]uint32, t string, id uint32) {
	l := m[t]
	if len(l) > 0 && l[len(l)-1] == id {
		return
	}
	m[t] = append(l, id)
}

// shard is one build worker's partial index.
type shard struct {
	dict    map[string]int32 // term → local id
	terms   []string         // local id → term
	posts   [][]uint32       // local id → postings
	tf      []uint32         // per local id, for the current file
	touched []int32
	last    uint32 // terms in the last file added
	bytes   int64
}

func (sh *shard) add(id uint32, data []byte, buf []byte) []byte {
	sh.touched = sh.touched[:0]
	var count uint32
	buf = tokenizeASCII(data, buf, func(t []byte) {
		count++
		lid, ok := sh.dict[string(t)]
		if !ok {
			s := string(t)
			lid = int32(len(sh.terms))
			sh.dict[s] = lid
			sh.terms = append(sh.terms, s)
			sh.posts = append(sh.posts, nil)
			sh.tf = append(sh.tf, 0)
		}
		if sh.tf[lid] == 0 {
			sh.touched = append(sh.touched, lid)
		}
		sh.tf[lid]++
	})
	for _, lid := range sh.touched {
		tf := min(sh.tf[lid], maxTF)
		sh.posts[lid] = append(sh.posts[lid], id<<tfBits|tf)
		sh.tf[lid] = 0
	}
	sh.last = count
	return buf
}

// postings returns the postings of an index term (stemmed, lower-case).
func (ix *Index) postings(t string) []uint32 {
	g, ok := ix.termIDs[t]
	if !ok {
		return nil
	}
	return ix.posts[ix.offsets[g]:ix.offsets[g+1]]
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
		for _, id := range ix.defs[u.key] {
			out[id] = true
		}
		if len(u.key) < 3 {
			continue
		}
		for i := sort.SearchStrings(ix.defKeys, u.key); i < len(ix.defKeys) && strings.HasPrefix(ix.defKeys[i], u.key); i++ {
			for _, id := range ix.defs[ix.defKeys[i]] {
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
func (ix *Index) Terms() int { return len(ix.termIDs) }

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
