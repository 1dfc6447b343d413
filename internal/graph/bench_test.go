package graph

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
