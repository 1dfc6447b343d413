package project

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// BenchmarkReopenGoSource measures what a reopen of $(go env GOROOT)/src
// (or TASK_X_BENCH_DIR) from a saved index does before workspace/open
// answers and the first query: load and revalidate, the graph build and
// the retrieval index. The cold open and save happen once, untimed.
func BenchmarkReopenGoSource(b *testing.B) {
	src := benchSourceDir(b)
	data := b.TempDir()
	ctx := context.Background()
	p, err := Open(ctx, src, &Options{DataDir: data, Home: "-"})
	if err != nil {
		b.Fatal(err)
	}
	p.Graph()
	p.BuildRetrieval(ctx)
	if err := p.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(IndexPath(data, p.Root()))
	b.ReportMetric(float64(fi.Size())/1e6, "MB-saved")
	reopen := func(b *testing.B) {
		p, err := Open(ctx, src, &Options{DataDir: data, Home: "-"})
		if err != nil {
			b.Fatal(err)
		}
		p.Graph()
		p.BuildRetrieval(ctx)
		p.Close()
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			reopen(b)
		}
	})
	// Every 100th indexed file gets a new modification time before each
	// reopen (set back at the end), so each one parses 1% of the files.
	b.Run("touched1pct", func(b *testing.B) {
		snap := p.Snapshot()
		var touched []*workspace.File
		for i, rel := range snap.Files() {
			if i%100 == 0 {
				f, _ := snap.File(rel)
				touched = append(touched, f)
			}
		}
		abs := func(f *workspace.File) string { return filepath.Join(src, filepath.FromSlash(f.Path)) }
		defer func() {
			for _, f := range touched {
				os.Chtimes(abs(f), f.ModTime, f.ModTime)
			}
		}()
		k := 0
		for b.Loop() {
			b.StopTimer()
			k++
			for _, f := range touched {
				t := f.ModTime.Add(time.Duration(k) * time.Second)
				os.Chtimes(abs(f), t, t)
			}
			b.StartTimer()
			reopen(b)
		}
		b.ReportMetric(float64(len(touched)), "files-touched")
	})
}

// BenchmarkColdOpen measures what a cold workspace/open does before it
// answers on TASK_X_BENCH_DIR (else $(go env GOROOT)/src), without a
// dataDir: the scan with every file parsed, the graph and the retrieval
// index. It reports the process's CPU seconds per open and, per phase,
// the wall milliseconds and the cores kept busy (CPU / wall).
func BenchmarkColdOpen(b *testing.B) {
	src := benchSourceDir(b)
	ctx := context.Background()
	var scan, graph, retrieval, scanCPU, graphCPU, retrievalCPU time.Duration
	cpu0 := processCPU()
	for b.Loop() {
		t0, c0 := time.Now(), processCPU()
		p, err := Open(ctx, src, &Options{Home: "-", BuildRetrieval: true})
		if err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), processCPU()
		p.Graph()
		t2, c2 := time.Now(), processCPU()
		p.BuildRetrieval(ctx)
		t3, c3 := time.Now(), processCPU()
		p.Close()
		scan += t1.Sub(t0)
		graph += t2.Sub(t1)
		retrieval += t3.Sub(t2)
		scanCPU += c1 - c0
		graphCPU += c2 - c1
		retrievalCPU += c3 - c2
	}
	n := float64(b.N)
	b.ReportMetric((processCPU()-cpu0).Seconds()/n, "cpu-s/op")
	b.ReportMetric(float64(scan.Milliseconds())/n, "scan-ms/op")
	b.ReportMetric(float64(graph.Milliseconds())/n, "graph-ms/op")
	b.ReportMetric(float64(retrieval.Milliseconds())/n, "retrieval-ms/op")
	// Cores kept busy per phase: CPU time over wall time.
	b.ReportMetric(scanCPU.Seconds()/scan.Seconds(), "scan-cores")
	b.ReportMetric(graphCPU.Seconds()/graph.Seconds(), "graph-cores")
	b.ReportMetric(retrievalCPU.Seconds()/retrieval.Seconds(), "retrieval-cores")
}

// benchSourceDir is TASK_X_BENCH_DIR, else $(go env GOROOT)/src; the
// benchmark is skipped when neither is there.
func benchSourceDir(b *testing.B) string {
	b.Helper()
	src := os.Getenv("TASK_X_BENCH_DIR")
	if src == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Skip("go env GOROOT:", err)
		}
		src = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	if _, err := os.Stat(src); err != nil {
		b.Skip("no source tree:", err)
	}
	return src
}

// BenchmarkSaveIndex measures a save of TASK_X_BENCH_DIR's index (else
// $(go env GOROOT)/src) with its graph and retrieval index, as the open's
// first save writes it: B/op is what the save allocates (the string
// table, the stamps, the graph's edges and the write buffers; the parse
// results are encoded a chunk at a time), and file-MB the file's size.
func BenchmarkSaveIndex(b *testing.B) {
	src := benchSourceDir(b)
	ctx := context.Background()
	p, err := Open(ctx, src, &Options{Home: "-", DataDir: b.TempDir(), BuildRetrieval: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	p.Graph()
	p.BuildRetrieval(ctx)
	if err := p.SaveIndex(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.saver.lastSnap = nil // save again
		if err := p.SaveIndex(); err != nil {
			b.Fatal(err)
		}
	}
	if fi, err := os.Stat(p.saver.path); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	}
}
