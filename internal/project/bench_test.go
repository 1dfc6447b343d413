package project

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReopenGoSource measures what a reopen of $(go env GOROOT)/src
// (or TASK_X_BENCH_DIR) from a saved index does before workspace/open
// answers and the first query: load and revalidate, the graph build and
// the retrieval index. The cold open and save happen once, untimed.
func BenchmarkReopenGoSource(b *testing.B) {
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
	b.ResetTimer()
	for b.Loop() {
		p, err := Open(ctx, src, &Options{DataDir: data, Home: "-"})
		if err != nil {
			b.Fatal(err)
		}
		p.Graph()
		p.BuildRetrieval(ctx)
		p.Close()
	}
}
