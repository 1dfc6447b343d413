//go:build !linux

package project

import (
	"io"
	"os"
)

// mapIndex reads the size bytes of the index file f into memory (the
// Linux build maps them instead); unmap does nothing.
func mapIndex(f *os.File, size int64) (data []byte, unmap func(), err error) {
	data = make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
