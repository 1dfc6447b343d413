package project

import (
	"os"
	"syscall"
)

// mapIndex maps the size bytes of the index file f read-only, its pages
// populated at once from the page cache (MAP_POPULATE: no copy into the
// heap, no fault per page); unmap releases the mapping, after which
// nothing decoded from it may be read (the decoders copy what they keep).
// The file is replaced by rename, never written in place; should another
// process truncate it anyway, a read past its new end faults, which the
// decoders turn into an error (debug.SetPanicOnFault).
func mapIndex(f *os.File, size int64) (data []byte, unmap func(), err error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
