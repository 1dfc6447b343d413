package retrieve

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSavedMutations: saved bytes with random bytes overwritten or cut
// short load (when still well-formed) or fail, never panic, and a loaded
// index answers queries. (How fast a corrupt file is refused is a benchmark's
// question, not a test's: wall time under -race on a loaded machine says
// nothing.)
func TestLoadSavedMutations(t *testing.T) {
	ws, ix := fixture(t)
	data := ix.AppendSaved(nil)
	rng := rand.New(rand.NewPCG(1, 1))
	ok := 0
	for range 3000 {
		b := append([]byte(nil), data...)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		if rng.IntN(3) == 0 {
			b = b[:rng.IntN(len(b))]
		}
		got, err := LoadSaved(b, ws.Snapshot(), &BuildOptions{Skip: func(rel string) bool { return strings.HasPrefix(filepath.Base(rel), ".env") }}, nil)
		if err == nil {
			ok++
		}
		if err == nil {
			Search(context.Background(), got, Query{Text: "retry config"})
		}
	}
	if ok == 0 {
		t.Error("no mutation loaded: the test checks nothing of Search")
	}
}
