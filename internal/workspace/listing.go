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
}

// remember keeps the listing of d for the next scan when the folder was
// last modified well before it was listed (racyListing).
func (sc *scanner) remember(d dirJob, entries []fs.DirEntry, listedAt time.Time) {
	if d.fi == nil || !d.fi.ModTime().Before(listedAt.Add(-racyListing)) {
		return
	}
	id, ok := idOf(d.fi)
	if !ok {
		return
	}
	sc.listings[d.rel] = &dirListing{modTime: d.fi.ModTime(), size: d.fi.Size(), id: id, entries: entries}
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
