package project

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms the
// runtime ships for (x86-64 and arm64 with 4 KiB pages).
const hugePage = 2 << 20

// _MADV_HUGEPAGE is madvise's MADV_HUGEPAGE (not in package syscall).
const _MADV_HUGEPAGE = 14

var hugeHeapOnce sync.Once

// hugeHeap makes the next n bytes of a fresh process's Go heap huge-page
// backed, before a saved index is decoded into it. A reopen fills a new
// heap with ~45-90 MB of decoded records, and on this kind of machine
// each first touch of a 4 KiB page is expensive: in the VM the issue's
// figures come from (paravirtual, shadow page tables) a page fault cost
// ~20 us, so 32 MB touched page by page took 190 ms of CPU and, in huge
// pages (MADV_HUGEPAGE), 2 ms; the faults were most of a reopen's kernel
// time and much of the time perf put in memmove and memclr. The heap
// cannot be asked for huge pages (the Go runtime no longer advises
// them), so a block of n bytes is allocated (fresh from the system: not
// touched, not zeroed), its whole huge pages are advised MADV_HUGEPAGE,
// and the block is freed by a collection of the small heap (~10 ms on an
// idle machine, 20-45 ms at load 7, before git's processes start): the heap's
// next spans are its pages, faulted in 2 MiB at a time. The RSS grows in
// 2 MiB steps there, so the block is sized for the decoded records only
// (project.Open), not for what the rest of the process allocates. Once per
// process, and only while the heap is small (a runtime that opens its
// first project; in a long-lived process the block could reuse freed
// pages, which the allocation would zero).
func hugeHeap(n int64) {
	n = hugeBlock(n)
	if n == 0 {
		return
	}
	hugeHeapOnce.Do(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(s)
		for _, v := range s {
			if v.Value.Kind() != metrics.KindUint64 || v.Value.Uint64() > 32<<20 {
				return
			}
		}
		adviseHuge(heapBlock(int(n)), uintptr(n))
		runtime.GC() // the block is garbage: its pages go back to the heap
	})
}

// maxHugeBlock bounds hugeHeap's block. The size comes from the saved
// index file before anything in it is checked: a file planted or grown
// to 1.4 GB asked for a 4.2 GB block, which a process with a capped
// address space (RLIMIT_AS 3 GB) could not get, and the runtime died of
// it instead of rebuilding the index. 256 MiB covers the records of an
// index file of ~85 MB (GOROOT/src's is 29 MB); past that the rest of
// the heap faults in 4 KiB pages as before.
const maxHugeBlock = 256 << 20

// hugeBlock is the block hugeHeap allocates for n bytes of records: 0
// under two huge pages, at most maxHugeBlock.
func hugeBlock(n int64) int64 {
	if n < 2*hugePage {
		return 0
	}
	return min(n, maxHugeBlock)
}

// heapBlock allocates n bytes and returns their address only (the block
// is garbage when it returns).
//
//go:noinline
func heapBlock(n int) uintptr {
	b := make([]byte, n)
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// adviseHuge advises the whole huge pages of [p, p+n) MADV_HUGEPAGE; an
// error (no transparent huge pages in this kernel) is ignored.
func adviseHuge(p, n uintptr) {
	beg := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + n) &^ (hugePage - 1)
	if beg < end {
		syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, _MADV_HUGEPAGE)
	}
}
