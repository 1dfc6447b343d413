//go:build !linux

package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// statAt is not available here: callers fall back to fs.DirEntry.Info.
func statAt(dirfd int, name string) (fs.FileInfo, error) {
	return nil, errors.ErrUnsupported
}

// statAtInto is not available here either.
func statAtInto(dirfd int, name string, fi *statInfo, scratch []byte) error {
	return errors.ErrUnsupported
}

// statInfo is what check keeps of a file's lstat.
type statInfo struct {
	size    int64
	modTime time.Time
	mode    fs.FileMode
	ino     uint64
	ctime   int64
}

// lstatPath is os.Lstat.
func lstatPath(abs string) (fs.FileInfo, error) { return os.Lstat(abs) }

// openDirPath is not available here: a reused listing's files are stated
// by path.
func openDirPath(abs string) (int, error) { return -1, errors.ErrUnsupported }

func closeFD(fd int) {}

// openDir opens the folder abs for listing (statat_linux.go spares the
// poller's set-up).
func openDir(abs string) (*os.File, error) { return os.Open(abs) }

// readFile is an *os.File here (statat_linux.go).
type readFile struct{ f *os.File }

func openRead(abs string) (readFile, error) {
	f, err := os.Open(abs)
	return readFile{f}, err
}

// read is (*os.File).Read with 0 bytes and no error at the end of the file.
func (f readFile) read(b []byte) (int, error) {
	n, err := f.f.Read(b)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (f readFile) close() { f.f.Close() }
