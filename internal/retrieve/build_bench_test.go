package retrieve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// BenchmarkBuild measures Build over $RETRIEVE_BENCH_ROOT (else
// $(go env GOROOT)/src), parsed once with tree-sitter (the definition
// terms need the symbols), then built b.N times. It reports the CPU
// seconds per build. With RETRIEVE_SAVED_DUMP=FILE it writes the first
// build's AppendSaved bytes to FILE, so two versions of Build can be
// compared byte for byte on a real tree.
func BenchmarkBuild(b *testing.B) {
	src := os.Getenv("RETRIEVE_BENCH_ROOT")
	if src == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Skip("go env GOROOT failed")
		}
		src = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	if _, err := os.Stat(src); err != nil {
		b.Skip("no source tree:", err)
	}
	ctx := context.Background()
	w, err := workspace.Open(ctx, src, &workspace.Options{Home: "-", Parse: syntaxParser})
	if err != nil {
		b.Fatal(err)
	}
	snap := w.Snapshot()
	runtime.GC()
	if dump := os.Getenv("RETRIEVE_SAVED_DUMP"); dump != "" {
		ix, err := Build(ctx, snap, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dump, ix.AppendSaved(nil), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if ix, err := Build(ctx, snap, nil); err == nil {
		b.Logf("%d files, %d terms (%d bytes), %d postings", ix.Files(), ix.Terms(), ix.terms.Size(), len(ix.posts))
	}
	runtime.GC()
	// The heap's peak above what it holds before a build (run with a low
	// GOGC, e.g. 5, for the build's live transient rather than its
	// garbage): sampled every millisecond.
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := heap()
	var peak atomic.Uint64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heap(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	cpu0 := processCPU()
	var build time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		ix, err := Build(ctx, snap, nil)
		if err != nil {
			b.Fatal(err)
		}
		build += time.Since(t0)
		ix.waitNameTable()
	}
	close(stop)
	<-stopped
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/1e6, "peak-MB")
	n := float64(b.N)
	b.ReportMetric((processCPU()-cpu0).Seconds()/n, "cpu-s/op")
	b.ReportMetric(float64(build.Milliseconds())/n, "build-ms/op")
}
