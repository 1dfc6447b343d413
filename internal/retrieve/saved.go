package retrieve

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// savedVersion changes whenever the saved layout or the content terms
// (tokenizing, splitting, stemming) change: a saved index of another
// version is rebuilt.
const savedVersion = 1

// ErrSavedMismatch is LoadSaved's error for a saved index that is not of
// the snapshot's files (or of this version).
var ErrSavedMismatch = errors.New("retrieve: saved index does not match the snapshot")

// AppendSaved appends what Build reads files for (the indexed paths, the
// file lengths and the content postings) to b, for LoadSaved. Path and
// symbol terms are not saved: they are derived from the snapshot again.
func (ix *Index) AppendSaved(b []byte) []byte {
	b = binx.AppendUint(b, savedVersion)
	b = binx.AppendStrings(b, ix.paths)
	for _, l := range ix.docLen {
		b = binx.AppendUint(b, uint64(l))
	}
	b = binx.AppendUint(b, uint64(ix.bytes))
	terms := make([]string, len(ix.termIDs))
	for t, id := range ix.termIDs {
		terms[id] = t
	}
	b = binx.AppendStrings(b, terms)
	for g := range terms {
		ps := ix.posts[ix.offsets[g]:ix.offsets[g+1]]
		b = binx.AppendUint(b, uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps { // sorted: store the gaps
			b = binx.AppendUint(b, uint64(p-prev))
			prev = p
		}
	}
	return b
}

// LoadSaved restores the index of snap from data written by AppendSaved
// for a snapshot holding the very same files (the caller checks the files
// themselves: same entries, unchanged since). Anything that does not fit
// (another version, other paths, a posting of a file that is not there,
// corrupt data) is an error; the caller then uses Build.
func LoadSaved(data []byte, snap *workspace.Snapshot, opts *BuildOptions) (*Index, error) {
	start := time.Now()
	var o BuildOptions
	if opts != nil {
		o = *opts
	}
	ix := newIndex(snap, &o)
	n := len(ix.paths)
	r := binx.NewReader(data)
	if v := r.Uint(); r.Err() == nil && v != savedVersion {
		return nil, fmt.Errorf("%w: version %d", ErrSavedMismatch, v)
	}
	paths := r.ReadStrings()
	if r.Err() == nil && paths.Len() != n {
		return nil, fmt.Errorf("%w: %d files saved, %d indexed", ErrSavedMismatch, paths.Len(), n)
	}
	for i := 0; i < paths.Len() && r.Err() == nil; i++ {
		if paths.At(i) != ix.paths[i] {
			return nil, fmt.Errorf("%w: other files", ErrSavedMismatch)
		}
	}
	ix.docLen = make([]uint32, n)
	for i := range ix.docLen {
		ix.docLen[i] = uint32(r.Max(1<<32 - 1))
	}
	ix.bytes = int64(r.Max(1 << 62))
	terms := r.ReadStrings()
	if r.Err() != nil {
		return nil, fmt.Errorf("%w: %v", ErrSavedMismatch, r.Err())
	}
	nt := terms.Len()
	ix.termIDs = make(map[string]int32, nt)
	ix.offsets = make([]uint32, nt+1)
	// Each posting takes at least one byte, which bounds the array.
	ix.posts = make([]uint32, 0, min(r.Len()/2, 1<<28))
	for g := range nt {
		t := terms.At(g)
		if _, dup := ix.termIDs[t]; dup {
			r.Fail(nil)
			break
		}
		ix.termIDs[t] = int32(g)
		cnt := r.Count(1)
		if cnt > n {
			r.Fail(nil)
		}
		var prev uint64
		for k := 0; k < cnt && r.Err() == nil; k++ {
			d := r.Uint()
			p := prev + d
			if (k > 0 && d == 0) || p > 1<<32-1 || p>>tfBits >= uint64(n) || p&maxTF == 0 {
				r.Fail(nil)
				break
			}
			ix.posts = append(ix.posts, uint32(p))
			prev = p
		}
		if r.Err() != nil {
			break
		}
		ix.offsets[g+1] = uint32(len(ix.posts))
	}
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(nil)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSavedMismatch, err)
	}
	ix.posts = slices.Clip(ix.posts)
	if cap(ix.posts) > len(ix.posts)+len(ix.posts)/8 {
		ix.posts = slices.Clone(ix.posts)
	}
	ix.finish()
	ix.elapsed = time.Since(start)
	return ix, nil
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
