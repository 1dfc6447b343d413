package project

import (
	"os"
	"syscall"
	"unsafe"
)

// mapIndex maps the size bytes of the index file f read-only (no copy
// into the heap). Its pages are read in as the checksum pass and the
// decoders touch them and released behind them (mappedIndex.drop,
// mappedIndex.done), so the file does not sit in the process's RSS
// whole while the decoded records grow beside it; unmap releases the
// mapping, after which nothing decoded from it may be read (the decoders
// copy what they keep). The file is replaced by rename, never written in
// place; should another process truncate it anyway, a read past its new
// end faults, which the decoders turn into an error
// (debug.SetPanicOnFault).
// faultAround is the kernel's default fault-around window
// (fault_around_bytes).
const faultAround = 64 << 10

func mapIndex(f *os.File, size int64, protect bool) (*mappedIndex, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	m := &mappedIndex{data: b, unmap: func() { syscall.Munmap(b) }}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	ps := uintptr(os.Getpagesize())
	block := uintptr(faultAround)
	if protect {
		block = ps // nothing is read again: tests count every page
	}
	// pages returns the pages of p to release, which must lie in b (nil
	// when it does not or holds none), and how many bytes of p end with
	// them: whole pages, ending at a faultAround boundary (a later fault
	// in the block a release ended in would map its released pages
	// again: the kernel maps the pages around a faulting one that are
	// in the page cache, 64 KiB by default).
	pages := func(p []byte) ([]byte, int) {
		if len(p) == 0 {
			return nil, 0
		}
		addr := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		if addr < base || addr+uintptr(len(p)) > base+uintptr(len(b)) {
			return nil, 0 // not part of the mapping: never madvise the heap
		}
		lo := (addr + ps - 1) / ps * ps
		hi := (addr + uintptr(len(p))) / block * block
		if hi <= lo {
			return nil, 0
		}
		return p[lo-addr : hi-addr], int(hi - addr)
	}
	// A shared read-only file mapping: MADV_DONTNEED only drops the
	// pages from the process (they stay in the page cache); a later read
	// faults them in again with the same bytes.
	m.drop = func(p []byte) int {
		whole, n := pages(p)
		if whole == nil || syscall.Madvise(whole, syscall.MADV_DONTNEED) != nil {
			return 0
		}
		return n
	}
	m.done = func(p []byte) int {
		n := m.drop(p)
		m.released.Add(int64(n))
		return n
	}
	if protect {
		// Tests: a part a decoder is done with becomes unreadable, so a
		// read of it after its release faults (a decode error) instead
		// of silently reading it in again.
		m.done = func(p []byte) int {
			whole, n := pages(p)
			if whole == nil || syscall.Mprotect(whole, syscall.PROT_NONE) != nil {
				return 0
			}
			m.released.Add(int64(n))
			return n
		}
	}
	return m, nil
}
