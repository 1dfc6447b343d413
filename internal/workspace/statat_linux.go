//go:build linux

package workspace

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// statAt is lstat of name inside the open folder dirfd (fstatat with
// AT_SYMLINK_NOFOLLOW): the kernel resolves one name instead of the whole
// absolute path, and no path string is built. It gives the mode, size and
// modification time os.Lstat would give, the inode and the inode change
// time.
func statAt(dirfd int, name string) (fs.FileInfo, error) {
	fi := new(statInfo)
	if err := statAtInto(dirfd, name, fi, nil); err != nil {
		return nil, err
	}
	return fi, nil
}

// statAtInto is statAt into fi, allocating nothing when scratch can hold
// name and its NUL (a worker's read buffer, free while it stats): an
// unchanged refresh of GOROOT/src allocated ~1.3 of its 2.3 MB in the
// FileInfo and the name's C string, and the GC that garbage called for
// right after an open (a tight heap goal) made every other refresh slower.
func statAtInto(dirfd int, name string, fi *statInfo, scratch []byte) error {
	var st unix.Stat_t
	for {
		err := fstatat(dirfd, name, &st, scratch)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "fstatat", Path: name, Err: err}
		}
		break
	}
	*fi = statInfo{name: name, size: st.Size, modTime: time.Unix(st.Mtim.Unix()), mode: fs.FileMode(st.Mode & 0o777), ino: st.Ino,
		dev: uint64(st.Dev), ctime: st.Ctim.Nano()}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		fi.mode |= fs.ModeDir
	case unix.S_IFLNK:
		fi.mode |= fs.ModeSymlink
	default:
		fi.mode |= fs.ModeIrregular
	}
	return nil
}

// lstatPath is os.Lstat(abs) without os's larger FileInfo: the walk
// needs only the mode, size and modification time.
func lstatPath(abs string) (fs.FileInfo, error) {
	return statAt(unix.AT_FDCWD, abs)
}

// statInfo is the fs.FileInfo of statAt.
type statInfo struct {
	name    string
	size    int64
	modTime time.Time
	mode    fs.FileMode
	ino     uint64
	dev     uint64
	ctime   int64 // inode change time, ns
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.size }
func (s *statInfo) Mode() fs.FileMode  { return s.mode }
func (s *statInfo) ModTime() time.Time { return s.modTime }
func (s *statInfo) IsDir() bool        { return s.mode.IsDir() }
func (s *statInfo) Sys() any           { return nil }
func (s *statInfo) inode() uint64      { return s.ino }
func (s *statInfo) changeTime() int64  { return s.ctime }
func (s *statInfo) fileID() fileID     { return fileID{dev: s.dev, ino: s.ino} }

// openDirPath opens the folder abs for statAt only (O_PATH: the folder is
// not read), so the files of a reused listing are stated relative to it
// and their absolute paths are never built.
func openDirPath(abs string) (int, error) {
	for {
		fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

func closeFD(fd int) { unix.Close(fd) }

// openDir opens the folder abs for listing without the runtime poller's
// set-up: os.Open of a folder costs an openat, four fcntl and an
// epoll_ctl that fails (a folder cannot be polled), os.NewFile of the
// descriptor one fcntl (~35 ms of a reopen's CPU on the mixed tree's
// 1 869 folders).
func openDir(abs string) (*os.File, error) {
	for {
		fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		return os.NewFile(uintptr(fd), abs), nil
	}
}

// readFile is a file open for reading without the runtime poller's set-up
// (os.Open's fcntl and epoll registration, which a regular file does not
// use): a scan opens every file it indexes.
type readFile struct{ fd int }

func openRead(abs string) (readFile, error) {
	for {
		fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			return readFile{fd}, nil
		}
		if err != unix.EINTR {
			return readFile{-1}, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
	}
}

// read is read(2): 0 bytes and no error at the end of the file.
func (f readFile) read(b []byte) (int, error) {
	for {
		n, err := unix.Read(f.fd, b)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

func (f readFile) close() { unix.Close(f.fd) }
