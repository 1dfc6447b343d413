package editlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkApplyLargeFile makes 100 one-line edits of a 300 KB file through
// a Log with a checkpoint (the figures of docs/edits.md): ns/op is the
// whole series; "ms/edit-last10" the mean of the last ten edits and
// "checkpoint-bytes" what dataDir/checkpoints holds after them.
func BenchmarkApplyLargeFile(b *testing.B) {
	const edits, size = 100, 300_000
	var sb strings.Builder
	for n := 0; sb.Len() < size; n++ {
		fmt.Fprintf(&sb, "line %06d: %s\n", n, strings.Repeat("x", 47))
	}
	orig := sb.String()
	var last10 float64
	var cpBytes int64
	for b.Loop() {
		b.StopTimer()
		root, err := filepath.EvalSymlinks(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		dataDir := b.TempDir()
		if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(orig), 0o644); err != nil {
			b.Fatal(err)
		}
		l, err := Open(root, CheckpointPath(dataDir, root), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cur := orig
		var tail int64
		for i := range edits {
			next := strings.Replace(cur, fmt.Sprintf("line %06d: ", i*7), fmt.Sprintf("LINE %06d! ", i*7), 1)
			t0 := nowNano()
			if _, err := l.Apply(context.Background(), OpSpec{Tool: "bench", Files: []FileSpec{
				{Path: "big.txt", Existed: true, Before: []byte(cur), After: []byte(next)}}}); err != nil {
				b.Fatal(err)
			}
			if i >= edits-10 {
				tail += nowNano() - t0
			}
			cur = next
		}
		b.StopTimer()
		last10 = float64(tail) / 10 / 1e6
		cpBytes = 0
		filepath.Walk(filepath.Join(dataDir, "checkpoints"), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				cpBytes += fi.Size()
			}
			return nil
		})
		b.StartTimer()
	}
	b.ReportMetric(last10, "ms/edit-last10")
	b.ReportMetric(float64(cpBytes), "checkpoint-bytes")
}

func nowNano() int64 { return time.Now().UnixNano() }
