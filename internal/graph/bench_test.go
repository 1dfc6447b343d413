package graph

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// BenchmarkBuildGoSource builds the graph of $(go env GOROOT)/src, parsed
// once with syntax.Parse; it reports files and edges.
func BenchmarkBuildGoSource(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no Go source tree:", err)
	}
	ws, err := workspace.Open(context.Background(), src, &workspace.Options{Home: "-", Parse: realParse})
	if err != nil {
		b.Fatal(err)
	}
	snap := ws.Snapshot()
	b.ResetTimer()
	var g *Graph
	for b.Loop() {
		g = Build(snap)
	}
	st := g.Stats()
	b.ReportMetric(float64(st.Files), "files")
	b.ReportMetric(float64(st.Edges), "edges")
	b.ReportMetric(float64(st.Cycles), "cycles")
	b.Logf("import cycles: %v; unresolved imports: %d", st.ImportCycles, st.UnresolvedImports)
}

// BenchmarkOpenGoSource measures what workspace/open does before it
// answers on $(go env GOROOT)/src: the scan with a parse of every file
// (syntax.Parse, as the server's hook) and the graph build. It reports MB/s
// of source and the CPU cores kept busy (process CPU time / wall time).
func BenchmarkOpenGoSource(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no Go source tree:", err)
	}
	var bytes int64
	cpu0 := cpuTime()
	for b.Loop() {
		ws, err := workspace.Open(context.Background(), src, &workspace.Options{Home: "-", Parse: realParse})
		if err != nil {
			b.Fatal(err)
		}
		Build(ws.Snapshot())
		bytes = ws.Summary().Stats.Bytes
	}
	b.SetBytes(bytes)
	b.ReportMetric((cpuTime()-cpu0).Seconds()/b.Elapsed().Seconds(), "cores")
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
