package project

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/task-x/task-x-runtime/internal/binx"
)

// TestMappedIndexShrunkWhileRead: the index file is mapped; should
// another process truncate it while it is decoded (the runtime only ever
// replaces it by rename), the reads past its new end fault, and that is
// a decode error (a rebuild), not a crash.
func TestMappedIndexShrunkWhileRead(t *testing.T) {
	root := copyTree(t, "../retrieve/testdata/repo")
	data := t.TempDir()
	saveAndClose(t, open(t, root, data))
	path := IndexPath(data, open(t, root, "").p.Root())
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int64{0, int64(headerLen + mainLenLen + 3)} {
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapIndex(f, int64(len(good)), false)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, keep); err != nil {
			t.Fatal(err)
		}
		var started *savedIndex
		ix, err := decodeMapped(m, engineKey(true), open(t, root, "").p.Root(), &started)
		if err == nil {
			err = ix.waitResults()
		}
		if started != nil && started.rdone != nil {
			<-started.rdone
		}
		m.unmap()
		// The fault surfaces as a runtime error, recovered by the decoder.
		if err == nil || !strings.Contains(err.Error(), "decoder panic") {
			t.Errorf("kept %d bytes: err %v, want the fault as a decoder panic", keep, err)
		} else {
			t.Logf("kept %d bytes: %v", keep, err)
		}
	}
}

// bigTree writes a Go tree of files×funcs functions, each calling the
// next file's (refs, graph edges, postings): its saved index spans many
// binx.ReleaseSteps in every part.
func bigTree(t *testing.T, files, funcs int) string {
	t.Helper()
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\nimport \"example.com/m/p%d\"\n\n", i, (i+1)%files)
		for k := range funcs {
			fmt.Fprintf(&b, "// Func%d_%d computes widget %d of batch %d.\nfunc Func%d_%d(x int) int { return p%d.Func%d_%d(x + %d) }\n\n",
				i, k, k, i, i, k, (i+1)%files, (i+1)%files, k, k)
		}
		dir := filepath.Join(root, fmt.Sprintf("p%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "f.go")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, old, old) // no ambiguous stamps: every record reused
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(root, "go.mod"), old, old)
	return root
}

// presentPages counts the pages of b (a mapping of this process) that
// are in its page tables (/proc/self/pagemap bit 63): in its RSS.
func presentPages(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip("no pagemap:", err)
	}
	defer f.Close()
	ps := uintptr(os.Getpagesize())
	first := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / ps
	n := (uintptr(len(b)) + ps - 1) / ps
	entries := make([]byte, 8*n)
	if _, err := f.ReadAt(entries, int64(first*8)); err != nil {
		t.Skip("pagemap not readable:", err)
	}
	present := 0
	for i := range n {
		if binary.LittleEndian.Uint64(entries[8*i:])>>63 == 1 {
			present++
		}
	}
	return present
}

// TestIndexPagesReleased: the checksum pass and each decoder (string
// table and stamps, parse results, graph, retrieval part) release the
// pages of the mapped index file behind them, so once decoded (still
// mapped) almost none of the file is in the process's RSS; and no
// decoder reads a part after releasing it: with the released parts made
// unreadable (Options.protectReleased) the reopen decodes all the same
// and answers as the cold open.
func TestIndexPagesReleased(t *testing.T) {
	root := bigTree(t, 250, 100)
	data := t.TempDir()
	first := open(t, root, data)
	first.p.Graph()
	saveAndClose(t, first)
	want := cold(t, root)
	path := IndexPath(data, first.p.Root())
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pages := int(fi.Size()) / os.Getpagesize()
	if fi.Size() < 6*binx.ReleaseStep {
		t.Fatalf("index file of %d bytes: too small to tell", fi.Size())
	}
	for _, protect := range []bool{false, true} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapIndex(f, fi.Size(), protect)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var started *savedIndex
		ix, err := decodeMapped(m, engineKey(true), first.p.Root(), &started)
		if err == nil {
			err = ix.waitResults()
		}
		if err == nil {
			_, err = ix.retrievalSaved()
		}
		if err != nil {
			m.unmap()
			t.Fatalf("protect %v: %v", protect, err)
		}
		// Left unreleased: per part (the header and the string table
		// with the stamps, two chunks of parse results, the graph, the
		// retrieval part) the page it shares with the next part and,
		// unprotected, the rest of its last fault-around block.
		slack := 5 * 2 * os.Getpagesize()
		if !protect {
			slack = 5 * (faultAround + os.Getpagesize())
		}
		if got := m.released.Load(); got < fi.Size()-int64(slack) {
			t.Errorf("protect %v: decoders released %d of the file's %d bytes, want all but %d", protect, got, fi.Size(), slack)
		}
		if !protect {
			// Not asserted: a fault in a large page-cache folio maps all
			// of it, so a part's first fault maps again the pages of the
			// part before it released in the same folio (up to a folio,
			// 1-2 MiB, per part edge: most of this small file).
			t.Logf("%d of the file's %d pages in the RSS after decoding", presentPages(t, m.data), pages)
		}
		m.unmap()
	}
	o := openWith(t, root, data, func(o *Options) { o.protectReleased = true })
	if log := o.log.String(); !strings.Contains(log, "saved index loaded") || strings.Contains(log, "ignored") {
		t.Fatalf("reopen with released parts unreadable did not use the saved index:\n%s", log)
	}
	if got := answers(t, o.p); got != want {
		t.Fatalf("reopen differs from cold: %s", diff(got, want))
	}
}
