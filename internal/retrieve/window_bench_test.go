package retrieve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkPassageScore times the passage score of runtime/proc.go (the
// first 256 KiB) for an eight-term question.
func BenchmarkPassageScore(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go")
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "runtime", "proc.go"))
	if err != nil {
		b.Skip("no GOROOT/src/runtime/proc.go")
	}
	data = data[:min(len(data), passageMaxBytes)]
	var units []unit
	keyUnit := map[string]int{}
	for i, t := range Terms("how does the scheduler steal work from other processors when idle") {
		units = append(units, unit{key: stem(t), display: t, weight: 1, idf: 3})
		keyUnit[stem(t)] = i
	}
	b.SetBytes(int64(len(data)))
	var buf []byte
	for b.Loop() {
		_, _, _, _, buf = passageScore(data, units, keyUnit, buf, nil)
	}
}
