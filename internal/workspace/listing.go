package workspace

import (
	"io/fs"
	"time"
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
	entries []fs.DirEntry
	// cls[i] is entries[i]'s path and exclude answer under the ignore
	// rules identified by rules (a rulesKey); complete when every entry
	// was classified (a scan cut by MaxFiles leaves it incomplete). A
	// listing held by a snapshot is read only once complete.
	cls      []classified
	rules    uint64
	complete bool
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
func (sc *scanner) remember(d dirJob, entries []fs.DirEntry, listedAt time.Time) *dirListing {
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
