package retrieve

import (
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// readWhole reads the file at abs into buf (reused across files, so a
// build makes no garbage per file) and returns it. size is the file's
// size as scanned, to size buf: the file is read to its end whatever it
// holds now. It is open(2), read(2) and close(2), without the *os.File,
// its cleanup, fstat and the poller's set-up os.Open does for each file.
func readWhole(buf []byte, abs string, size int64) ([]byte, error) {
	var fd int
	for {
		var err error
		fd, err = unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return buf, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
	}
	defer unix.Close(fd)
	// One byte more than the size, to see the end without growing.
	if want := int(min(size, 1<<30)) + 1; cap(buf)-len(buf) < want {
		buf = slices.Grow(buf, want)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, &fs.PathError{Op: "read", Path: abs, Err: err}
		}
		if n <= 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
