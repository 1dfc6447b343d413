package project

import (
	"os"
	"strings"
	"testing"
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
		mapped, unmap, err := mapIndex(f, int64(len(good)))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, keep); err != nil {
			t.Fatal(err)
		}
		var started *savedIndex
		ix, err := decodeMapped(mapped, engineKey(true), open(t, root, "").p.Root(), &started)
		if err == nil {
			err = ix.waitResults()
		}
		if started != nil && started.rdone != nil {
			<-started.rdone
		}
		unmap()
		// The fault surfaces as a runtime error, recovered by the decoder.
		if err == nil || !strings.Contains(err.Error(), "decoder panic") {
			t.Errorf("kept %d bytes: err %v, want the fault as a decoder panic", keep, err)
		} else {
			t.Logf("kept %d bytes: %v", keep, err)
		}
	}
}
