package retrieve

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// savedVersion changes whenever the saved layout or the content terms
// (tokenizing, splitting, stemming) change: a saved index of another
// version is rebuilt.
// 4: the total posting count, the name table. 5: the content terms are
// saved sorted (a term's id is its rank), the id lists' keys as tables.
const savedVersion = 5

// ErrSavedMismatch is LoadSaved's error for a saved index that is not of
// the snapshot's files (or of this version).
var ErrSavedMismatch = errors.New("retrieve: saved index does not match the snapshot")

// AppendSaved appends the index to b, for LoadSaved: the indexed paths,
// the file lengths, the content postings (what Build reads files for),
// the path and symbol-definition terms and the name table (derived from
// the paths and the parse results, saved because deriving them costs more
// than reading them).
func (ix *Index) AppendSaved(b []byte) []byte {
	return ix.appendSaved(b, func(b []byte) []byte { return b })
}

// savedChunk is about how many bytes WriteSaved buffers before it writes
// (a variable for tests).
var savedChunk = 256 << 10

// WriteSaved writes AppendSaved's bytes to w in chunks of about
// savedChunk (the largest single table, the content terms' string table,
// is written whole), so a save holds no copy of the whole index (~25 MB
// for Go's source tree). It returns the bytes written.
func (ix *Index) WriteSaved(w io.Writer) (int64, error) {
	var n int64
	var err error
	flush := func(b []byte) []byte {
		if len(b) < savedChunk || err != nil {
			return b
		}
		var k int
		k, err = w.Write(b)
		n += int64(k)
		return b[:0]
	}
	b := ix.appendSaved(make([]byte, 0, savedChunk+savedChunk/2), flush)
	if err == nil {
		var k int
		k, err = w.Write(b)
		n += int64(k)
	}
	return n, err
}

// appendSaved appends the saved index to b, calling flush (which returns
// the buffer to go on with) between its parts.
func (ix *Index) appendSaved(b []byte, flush func([]byte) []byte) []byte {
	b = binx.AppendUint(b, savedVersion)
	b = binx.AppendStrings(b, ix.paths)
	for _, l := range ix.docLen {
		b = binx.AppendUint(b, uint64(l))
	}
	b = binx.AppendUint(b, uint64(ix.bytes))
	b = flush(b)
	b = binx.AppendTableFlushed(b, ix.terms, savedChunk, flush)
	b = flush(b)
	b = binx.AppendUint(b, uint64(len(ix.posts)))
	for g := range ix.terms.Len() {
		ps := ix.posts[ix.offsets[g]:ix.offsets[g+1]]
		b = binx.AppendUint(b, uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps { // sorted: store the gaps
			b = binx.AppendUint(b, uint64(p-prev))
			prev = p
		}
		b = flush(b)
	}
	b = appendIDLists(b, &ix.pathTrm, flush)
	b = appendIDLists(b, &ix.defs, flush)
	// The name table (built in the background: waited for here, as the
	// save runs in the background too).
	ix.waitNameTable()
	t := ix.nameTable()
	b = binx.AppendBool(b, t != nil)
	if t != nil {
		b = t.appendSaved(b, flush)
	}
	return b
}

// appendIDLists appends the sorted keys of l and each key's increasing
// id list as gaps.
func appendIDLists(b []byte, l *idLists, flush func([]byte) []byte) []byte {
	b = binx.AppendTableFlushed(b, l.keys, savedChunk, flush)
	b = flush(b)
	for i := range l.len() {
		b = appendIncreasing(b, l.at(i))
		b = flush(b)
	}
	return b
}

// readIDLists reads what appendIDLists wrote: keys strictly increasing,
// ids strictly increasing and below n.
func readIDLists(r *binx.Reader, n int) idLists {
	keys := r.ReadStrings()
	if r.Err() != nil || !keys.Sorted() {
		r.Fail(nil)
		return idLists{}
	}
	l := idLists{keys: keys, off: make([]uint32, keys.Len()+1)}
	// The ids are counted first on a copy of the reader (a pass over
	// varints), so the array is allocated at its size: sized by the
	// bytes left (each id takes at least one), it was up to 4x the rest
	// of the retrieval part (~30 MB of garbage on a GOROOT/src reopen).
	l.ids = make([]uint32, 0, countIDs(*r, keys.Len()))
	for i := range keys.Len() {
		cnt := r.Count(1)
		if cnt > n {
			r.Fail(nil)
		}
		var prev uint64
		for k := range cnt {
			d := r.Uint()
			id := prev + d
			if (k > 0 && d == 0) || id >= uint64(n) {
				r.Fail(nil)
			}
			if r.Err() != nil {
				return idLists{}
			}
			l.ids = append(l.ids, uint32(id))
			prev = id
		}
		l.off[i+1] = uint32(len(l.ids))
		r.Release(false)
	}
	return l
}

// countIDs returns how many ids the n id lists r starts with hold (r is a
// copy: the caller's reader does not move); a list that does not decode
// ends the count (readIDLists then fails on it).
func countIDs(r binx.Reader, n int) int {
	total := 0
	for range n {
		cnt := r.Count(1)
		for range cnt {
			r.Uint()
		}
		if r.Err() != nil {
			break
		}
		total += cnt
	}
	return total
}

// Saved is a decoded saved index (DecodeSaved), not yet checked against a
// snapshot: Load makes the index of one.
type Saved struct {
	paths    *binx.Strings
	oldLen   []uint32
	oldBytes int64
	terms    *binx.Strings // sorted
	offsets  []uint32
	posts    []uint32
	pathTrm  idLists
	defs     idLists
	nt       *nameTable // nil when not saved
	used     bool
	// Previous, when set, returns the entry a file (root-relative path)
	// had when the index was saved: a Load with changed files then keeps
	// the saved path and definition terms and name table when the paths
	// are the same and every changed file's symbols have the names they
	// had (a touched file, code moved within a file).
	Previous func(rel string) *workspace.File
}

// LoadSaved restores the index of snap from data written by AppendSaved:
// DecodeSaved, then Load.
func LoadSaved(data []byte, snap *workspace.Snapshot, opts *BuildOptions, unchanged func(rel string) bool) (*Index, error) {
	s, err := DecodeSaved(data)
	if err != nil {
		return nil, err
	}
	return s.Load(snap, opts, unchanged)
}

// DecodeSaved decodes data written by AppendSaved without a snapshot (so
// it can run while the workspace is scanned). Everything in data is
// checked for form (counts against the bytes left, ids in range, postings
// and keys in order, no duplicate term); an error means the saved bytes
// are not to be used.
func DecodeSaved(data []byte) (*Saved, error) { return DecodeSavedReleasing(data, nil) }

// DecodeSavedReleasing is DecodeSaved handing the bytes it has decoded
// to release as it goes (binx.Reader.SetRelease; nil: none): data is a
// mapped file whose pages are dropped once read. Nothing it returns
// refers to data.
func DecodeSavedReleasing(data []byte, release func([]byte) int) (*Saved, error) {
	r := binx.NewReader(data)
	if release != nil {
		r.SetRelease(release)
		defer r.Release(true)
	}
	if v := r.Uint(); r.Err() == nil && v != savedVersion {
		return nil, fmt.Errorf("%w: version %d", ErrSavedMismatch, v)
	}
	s := &Saved{paths: r.ReadStrings()}
	oldN := s.paths.Len()
	s.oldLen = make([]uint32, oldN)
	for i := range s.oldLen {
		s.oldLen[i] = uint32(r.Max(1<<32 - 1))
	}
	s.oldBytes = int64(r.Max(1 << 62))
	r.Release(false)
	s.terms = r.ReadStrings()
	r.Release(false)
	// The total posting count sizes the array exactly (each posting
	// takes at least one byte, which bounds it).
	total := r.Count(1)
	if r.Err() != nil {
		return nil, fmt.Errorf("%w: %v", ErrSavedMismatch, r.Err())
	}
	nt := s.terms.Len()
	s.offsets = make([]uint32, nt+1)
	s.posts = make([]uint32, 0, total)
	for g := range nt {
		cnt := r.Count(1)
		if cnt > oldN || cnt > total-len(s.posts) {
			r.Fail(nil)
		}
		var prev uint64
		for k := 0; k < cnt && r.Err() == nil; k++ {
			d := r.Uint()
			p := prev + d
			if (k > 0 && d == 0) || p > 1<<32-1 || p>>tfBits >= uint64(oldN) || p&maxTF == 0 {
				r.Fail(nil)
				break
			}
			s.posts = append(s.posts, uint32(p))
			prev = p
		}
		if r.Err() != nil {
			break
		}
		s.offsets[g+1] = uint32(len(s.posts))
		r.Release(false)
	}
	if r.Err() == nil && len(s.posts) != total {
		r.Fail(nil)
	}
	s.pathTrm = readIDLists(r, oldN)
	s.defs = readIDLists(r, oldN)
	if r.Bool() {
		s.nt = readNameTable(r, oldN, s.defs.len())
	}
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(nil)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSavedMismatch, err)
	}
	if !s.terms.Sorted() { // strictly increasing: no duplicate either
		return nil, fmt.Errorf("%w: terms out of order", ErrSavedMismatch)
	}
	return s, nil
}

// Load makes the index of snap from s (once: s is taken apart).
// unchanged reports whether a file (root-relative path) still has the
// content the saved index was made from (the caller knows: same entry,
// unchanged stamp); nil means every file of snap is unchanged. Files that
// changed or are new are read and tokenized again, files gone are dropped
// from the postings, the rest is taken as saved, so the result is the
// index Build would make. More than a quarter of the files changed, or
// anything that does not fit (a posting of a file that is not there, a
// saved name table of other symbols), is an error; the caller then uses
// Build.
func (s *Saved) Load(snap *workspace.Snapshot, opts *BuildOptions, unchanged func(rel string) bool) (*Index, error) {
	start := time.Now()
	if s.used {
		return nil, errors.New("retrieve: Saved.Load called twice")
	}
	s.used = true
	var o BuildOptions
	if opts != nil {
		o = *opts
	}
	ix := newIndex(snap, &o)
	n := len(ix.paths)
	paths, oldN, oldLen, oldBytes := s.paths, s.paths.Len(), s.oldLen, s.oldBytes
	nt, terms, offsets, posts := s.terms.Len(), s.terms, s.offsets, s.posts
	pathTrm, defs := s.pathTrm, s.defs

	// Saved id → new id (-1: gone or changed). Both path lists are sorted,
	// so the mapping is increasing and remapped postings stay sorted.
	mapping := make([]int32, oldN)
	fresh := make([]bool, n)
	for i := range fresh {
		fresh[i] = true
	}
	kept, j := 0, 0
	for i := range oldN {
		p := paths.At(i)
		if i > 0 && p <= paths.At(i-1) {
			return nil, fmt.Errorf("%w: paths out of order", ErrSavedMismatch)
		}
		for j < n && ix.paths[j] < p {
			j++
		}
		mapping[i] = -1
		if j < n && ix.paths[j] == p && (unchanged == nil || unchanged(p)) {
			mapping[i] = int32(j)
			fresh[j] = false
			kept++
		}
	}
	if kept == n && oldN == n {
		// Nothing changed: the saved index as it is.
		ix.docLen, ix.bytes, ix.offsets, ix.posts = oldLen, oldBytes, offsets, posts
		ix.terms = terms
		ix.pathTrm, ix.defs = clipIDs(pathTrm), clipIDs(defs)
		ix.setAvgLen()
		ix.elapsed = time.Since(start)
		if s.nt != nil {
			if err := ix.useNameTable(s.nt); err != nil {
				return nil, err
			}
			return ix, nil
		}
		ix.startNameTable()
		return ix, nil
	}
	if unchanged == nil {
		return nil, fmt.Errorf("%w: other files", ErrSavedMismatch)
	}
	if n-kept > n/4+16 {
		return nil, fmt.Errorf("%w: %d of %d files changed", ErrSavedMismatch, n-kept, n)
	}

	// Tokenize the new and changed files (ids increasing: one shard keeps
	// each term's postings sorted).
	ix.docLen = make([]uint32, n)
	for i, m := range mapping {
		if m >= 0 {
			ix.docLen[m] = oldLen[i]
			ix.bytes += ix.files[m].Size
		}
	}
	sh := newShard()
	var buf, text []byte
	root := snap.Root()
	for id, isFresh := range fresh {
		if !isFresh {
			continue
		}
		var err error
		text, err = readWhole(text[:0], filepath.Join(root, filepath.FromSlash(ix.paths[id])), ix.files[id].Size)
		if err != nil {
			continue
		}
		sh.bytes += int64(len(text))
		buf = sh.add(uint32(id), text, buf)
		ix.docLen[id] = sh.last
	}
	ix.bytes += sh.bytes

	// Merge the saved terms (sorted; their postings remapped) with the
	// shard's new terms (sorted here); terms left without postings are
	// dropped, as Build never has them.
	shardOf := make([]int32, nt) // saved term → shard term (-1: none)
	for g := range shardOf {
		shardOf[g] = -1
	}
	var added []string // shard terms not saved
	addedLid := map[string]int32{}
	shPosts := sh.lists()
	for lid := range int32(sh.dict.len()) {
		t := string(sh.dict.term(lid))
		if g, ok := terms.Find(t); ok {
			shardOf[g] = lid
		} else {
			added = append(added, t)
			addedLid[t] = lid
		}
	}
	slices.Sort(added)
	kept0 := func(ps []uint32) uint32 {
		n := uint32(0)
		for _, p := range ps {
			if mapping[p>>tfBits] >= 0 {
				n++
			}
		}
		return n
	}
	// The merged postings' count, and whether they fit in the saved
	// array in place (s is taken apart): going through the terms in the
	// merge's order, what is written so far never passes the start of
	// the saved postings not read yet (offsets[g]; offsets[nt] is the
	// array's end). A touched file's postings are its old ones, so a
	// touched reopen merges in place instead of holding a second array
	// of every posting (~20 MB on GOROOT/src).
	var total uint32
	inPlace := true
	for g, a := 0, 0; g < nt || a < len(added); {
		if a == len(added) || (g < nt && terms.At(g) < added[a]) {
			total += kept0(posts[offsets[g]:offsets[g+1]])
			if lid := shardOf[g]; lid >= 0 {
				total += uint32(len(shPosts[lid]))
			}
			g++
		} else {
			total += uint32(len(shPosts[addedLid[added[a]]]))
			a++
		}
		if total > offsets[g] {
			inPlace = false
		}
	}
	// The saved terms left without postings (their files changed and
	// the fresh ones lack them); with none and no term added (touched
	// files, code changed within the same words) the saved terms table is
	// the index's as it is, not copied.
	var dropped []int
	ix.offsets = make([]uint32, 1, nt+len(added)+1)
	var scratch []uint32 // a saved term's postings, when new ones go between them in place
	if inPlace {
		ix.posts = posts[:0]
	} else {
		ix.posts = make([]uint32, 0, total)
	}
	g, a := 0, 0
	for g < nt || a < len(added) {
		var old, add []uint32
		saved := a == len(added) || (g < nt && terms.At(g) < added[a])
		if saved {
			old = posts[offsets[g]:offsets[g+1]]
			if lid := shardOf[g]; lid >= 0 {
				add = shPosts[lid]
				if inPlace {
					// Written from before old's start (the check above),
					// possibly past where old is read: read a copy.
					scratch = append(scratch[:0], old...)
					old = scratch
				}
			}
			g++
		} else {
			add = shPosts[addedLid[added[a]]]
			a++
		}
		start := len(ix.posts)
		for len(old) > 0 || len(add) > 0 {
			if len(old) > 0 {
				m := mapping[old[0]>>tfBits]
				if m < 0 {
					old = old[1:]
					continue
				}
				p := uint32(m)<<tfBits | old[0]&maxTF
				if len(add) == 0 || p < add[0] {
					ix.posts = append(ix.posts, p)
					old = old[1:]
					continue
				}
			}
			ix.posts = append(ix.posts, add[0])
			add = add[1:]
		}
		if len(ix.posts) == start {
			if saved { // an added term has postings
				dropped = append(dropped, g-1)
			}
			continue
		}
		ix.offsets = append(ix.offsets, uint32(len(ix.posts)))
	}
	ix.offsets = slices.Clip(ix.offsets)
	if len(added) == 0 && len(dropped) == 0 {
		ix.terms = terms
	} else {
		ix.terms = mergedTerms(terms, added, dropped)
	}
	ix.setAvgLen()
	if s.sameNames(ix, fresh) {
		// The terms of the paths and definitions and the name table
		// are made of the paths and the symbols' names only.
		ix.pathTrm, ix.defs = clipIDs(pathTrm), clipIDs(defs)
		ix.elapsed = time.Since(start)
		if err := ix.useNameTable(s.nt); err != nil {
			return nil, err
		}
		return ix, nil
	}
	// Names: the saved lists remapped, the fresh files' names added.
	nm := nameMaps{path: remapIDs(pathTrm, mapping), defs: remapIDs(defs, mapping)}
	for id, isFresh := range fresh {
		if isFresh {
			ix.addNames(nm, id)
		}
	}
	for _, m := range []map[string][]uint32{nm.path, nm.defs} {
		for _, l := range m {
			if !slices.IsSorted(l) { // a fresh id appended after higher ones
				slices.Sort(l)
			}
		}
	}
	ix.setNames(nm)
	ix.elapsed = time.Since(start)
	ix.startNameTable()
	return ix, nil
}

// mergedTerms is the sorted table of the saved terms (sorted) but the
// dropped ones (their indexes, increasing) and the added terms (sorted,
// none saved): the terms of Load's merge, in its order.
func mergedTerms(terms *binx.Strings, added []string, dropped []int) *binx.Strings {
	names := make([]string, 0, terms.Len()-len(dropped)+len(added))
	g, a := 0, 0
	for g < terms.Len() || a < len(added) {
		if a == len(added) || (g < terms.Len() && terms.At(g) < added[a]) {
			if len(dropped) > 0 && dropped[0] == g {
				dropped = dropped[1:]
			} else {
				names = append(names, terms.At(g))
			}
			g++
			continue
		}
		names = append(names, added[a])
		a++
	}
	return binx.NewStrings(names)
}

// sameNames reports whether the saved name table and name terms hold for
// ix: a saved table, the same paths, and every fresh file's symbols named
// as its previous entry's (Previous), in symbolsOf order.
func (s *Saved) sameNames(ix *Index, fresh []bool) bool {
	if s.nt == nil || s.Previous == nil || s.paths.Len() != len(ix.paths) {
		return false
	}
	for i, p := range ix.paths {
		if s.paths.At(i) != p {
			return false
		}
	}
	for id, isFresh := range fresh {
		if !isFresh {
			continue
		}
		a, b := symbolsOf(s.Previous(ix.paths[id])), symbolsOf(ix.files[id])
		if len(a) != len(b) {
			return false
		}
		for k := range a {
			if a[k].Name != b[k].Name {
				return false
			}
		}
	}
	return true
}

// useNameTable installs t, a saved name table, as ix's when it names
// exactly the files' symbols (counted per file; its ids were checked
// when read).
func (ix *Index) useNameTable(t *nameTable) error {
	for id, f := range ix.files {
		if int(t.symOff[id+1]-t.symOff[id]) != len(symbolsOf(f)) {
			return fmt.Errorf("%w: name table of other symbols", ErrSavedMismatch)
		}
	}
	ix.nt = builtNameTable(t)
	return nil
}

// clipIDs returns l with its id array exactly sized.
func clipIDs(l idLists) idLists {
	if cap(l.ids) > len(l.ids)+len(l.ids)/8 {
		l.ids = slices.Clone(l.ids)
	}
	return l
}

// remapIDs returns l as a map with every id mapped (ids mapped to -1
// dropped, keys left without ids dropped).
func remapIDs(m idLists, mapping []int32) map[string][]uint32 {
	out := make(map[string][]uint32, m.len())
	for i := range m.len() {
		k, ids := m.key(i), m.at(i)
		var l []uint32
		for _, id := range ids {
			if nid := mapping[id]; nid >= 0 {
				l = append(l, uint32(nid))
			}
		}
		if len(l) > 0 {
			out[k] = l
		}
	}
	return out
}

// Current returns the cached index, nil when none (waiting for a build
// under way).
func (c *Cache) Current() *Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// Put installs ix (from LoadSaved) as the cached index.
func (c *Cache) Put(ix *Index) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = ix
}

// Snapshot is the snapshot the index answers for.
func (ix *Index) Snapshot() *workspace.Snapshot { return ix.snap }
