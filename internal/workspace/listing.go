package workspace

import (
	"io/fs"
	"time"
	"unsafe"
)

// racyListing is how long after a folder's modification time its listing
// is not reused: timestamps are coarse (a clock tick), so an entry added
// right after the listing could leave the folder's modification time as it
// was. A folder modified within this time is listed again on each scan
// (git's "racily clean" entries follow the same idea).
const racyListing = 2 * time.Second

// dirListing is the sorted listing of one folder and the folder's lstat
// when it was listed. A folder whose modification time, size and inode are
// unchanged has the same names with the same types (creating, removing or
// renaming an entry updates the folder's modification time), so a refresh
// reuses the listing instead of opening and reading the folder. The files'
// own sizes and modification times are still checked one by one.
type dirListing struct {
	modTime time.Time
	size    int64
	id      fileID
	entries []listEntry
	// cls[i] is entries[i]'s path and exclude answer under the ignore
	// rules identified by rules (a rulesKey); complete when every entry
	// was classified (a scan cut by MaxFiles leaves it incomplete). A
	// listing held by a snapshot is read only once complete.
	cls      []classified
	rules    uint64
	complete bool
}

// listEntry is one entry of a listed folder: its name and type bits. A
// listing keeps its folder's entries in two allocations (compactEntries)
// for as long as the folder is unchanged, rather than os.ReadDir's
// fs.DirEntry values (an interface, a 64-byte object and a name string
// each): on the mixed tree (~12 k entries kept) ~1 MB of live heap in
// small objects, which the parse's garbage of the same sizes around them
// left in half-used spans (docs/index.md "Memory: tenth pass").
type listEntry struct {
	name string
	typ  fs.FileMode
}

// compactEntries copies the names and types of entries into the scan's
// slabs (carve).
func (sc *scanner) compactEntries(entries []fs.DirEntry) []listEntry {
	n := 0
	for _, e := range entries {
		n += len(e.Name())
	}
	names := carve(&sc.slabBytes, n)
	out := carve(&sc.slabEntries, len(entries))
	at := 0
	for i, e := range entries {
		l := copy(names[at:], e.Name())
		out[i] = listEntry{name: bytesString(names[at : at+l]), typ: e.Type()}
		at += l
	}
	return out
}

// joinRel is dir + "/" + name carved from the scan's slabs: the paths of a
// folder's entries, kept by its listing and the files, side by side.
func (sc *scanner) joinRel(dir, name string) string {
	b := carve(&sc.slabBytes, len(dir)+1+len(name))
	n := copy(b, dir)
	b[n] = '/'
	copy(b[n+1:], name)
	return bytesString(b)
}

// bytesString is b as a string without a copy; b is never written again
// (a slab's carved bytes are only ever written before this).
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// slabSize is the size of a scan's slabs: the listings' entries, names,
// classifications and paths live as long as the folder's listing does,
// and the parse's garbage allocated between them left the spans of
// separate small allocations part empty (mixed tree: ~0.5-1 MB of free
// slots); carved side by side from 32 KiB slabs they fill their spans. A
// slab stays alive while anything carved from it does: a refresh that
// lists a changed folder again leaves the old listing's bytes in its slab
// until the slab's other folders change too (bounded by the bytes of the
// listings replaced).
const slabSize = 32 << 10

// carve returns n zero Ts from the free tail of the slab *free (a new slab
// when they do not fit), with its capacity ending with them; n over a
// quarter of a slab gets an exact array of its own.
func carve[T any](free *[]T, n int) []T {
	var t T
	per := max(1, slabSize/max(1, int(unsafe.Sizeof(t))))
	if n > per/4 {
		return make([]T, n)
	}
	if cap(*free)-len(*free) < n {
		*free = make([]T, 0, per)
	}
	i := len(*free)
	*free = (*free)[:i+n]
	return (*free)[i : i+n : i+n]
}

// classified is one entry of a listing as the walk classified it: its
// root-relative path and, for a folder or regular file, whether the rules
// exclude it (known set once asked).
type classified struct {
	rel             string
	known, excluded bool
}

// excludedSelf is r.excludedSelf(rel, isDir), answered from c when known
// and recorded in c otherwise; c may be nil (no cache).
func (c *classified) excludedSelf(r *rules, rel string, isDir bool) bool {
	if c != nil && c.known {
		return c.excluded
	}
	ex := r.excludedSelf(rel, isDir)
	if c != nil {
		c.known, c.excluded = true, ex
	}
	return ex
}

// remember keeps the listing of d for the next scan when the folder was
// last modified well before it was listed (racyListing), and returns it
// (nil when not kept).
func (sc *scanner) remember(d dirJob, entries []listEntry, listedAt time.Time) *dirListing {
	if d.fi == nil || !d.fi.ModTime().Before(listedAt.Add(-racyListing)) {
		return nil
	}
	id, ok := idOf(d.fi)
	if !ok {
		return nil
	}
	l := &dirListing{modTime: d.fi.ModTime(), size: d.fi.Size(), id: id, entries: entries}
	sc.listings[d.rel] = l
	return l
}

// oldListing returns the previous scan's listing of d when the folder's
// lstat, taken when the walk found it, shows it unchanged; else nil.
func (sc *scanner) oldListing(d dirJob) *dirListing {
	if sc.old == nil || d.fi == nil {
		return nil
	}
	l := sc.old.listings[d.rel]
	if l == nil || !l.modTime.Equal(d.fi.ModTime()) || l.size != d.fi.Size() {
		return nil
	}
	if id, ok := idOf(d.fi); !ok || id != l.id {
		return nil
	}
	return l
}
