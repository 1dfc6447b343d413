package project

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestHugeHeapAdvised: the block hugeHeap frees becomes a mapping the
// kernel may back with transparent huge pages (smaps: THPeligible 1);
// without the advice it is not, in the kernel's "madvise" mode.
func TestHugeHeapAdvised(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("transparent huge pages not in madvise mode (%q, %v): the advice is not observable", mode, err)
	}
	eligible := func(p uintptr) (bool, bool) {
		t.Helper()
		f, err := os.Open("/proc/self/smaps")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		in := false
		for sc.Scan() {
			line := sc.Text()
			if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") && len(strings.Fields(line)) >= 5 {
				a, err1 := strconv.ParseUint(lo, 16, 64)
				b, err2 := strconv.ParseUint(hi, 16, 64)
				in = err1 == nil && err2 == nil && uintptr(a) <= p && p < uintptr(b)
				continue
			}
			if v, ok := strings.CutPrefix(line, "THPeligible:"); ok && in {
				return strings.TrimSpace(v) == "1", true
			}
		}
		return false, false
	}
	// A mapping of its own (the heap's blocks may lie in a range an
	// earlier reopen of this test process advised already).
	const n = 8 << 20
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	inside := (p+hugePage-1)&^(hugePage-1) + hugePage/2
	if e, found := eligible(inside); !found || e {
		t.Fatalf("a mapping without the advice: eligible %v (found %v), want one not eligible", e, found)
	}
	adviseHuge(p, n)
	if e, found := eligible(inside); !found || !e {
		t.Fatalf("an advised mapping: eligible %v (found %v), want eligible", e, found)
	}
}

// TestHugeBlockBounded: the block is sized from an index file nothing has
// checked yet, so it is bounded (a 1.4 GB file asked for 4.2 GB, which
// killed a runtime whose address space was capped).
func TestHugeBlockBounded(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{0, 0}, {2*hugePage - 1, 0}, {2 * hugePage, 2 * hugePage},
		{3 * 29 << 20, 3 * 29 << 20}, {maxHugeBlock, maxHugeBlock},
		{3 * 1_400_000_000, maxHugeBlock}, {1 << 62, maxHugeBlock},
	} {
		if got := hugeBlock(c.n); got != c.want {
			t.Errorf("hugeBlock(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
