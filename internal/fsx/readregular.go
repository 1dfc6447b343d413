package fsx

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadRegular reads at most max bytes of the regular file at path. Anything
// else there is an error, not a read: a FIFO planted in a repository's git
// folder would block the open (and the runtime with it) until a writer came,
// and a device such as /dev/zero would never end. The file is opened
// O_NONBLOCK, so a FIFO swapped in after any earlier check cannot block it
// either, and its type is checked on the open file. A file longer than max is
// an error too, so a caller never parses a silently cut file.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return buf.Bytes(), nil
}
