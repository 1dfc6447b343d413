// Command editbench measures the edit log through the real runtime: it opens
// a fresh folder holding one text file of -size bytes with a dataDir, makes
// -edits one-line replace_text edits of that file with tools/call, one after
// the other, and prints the per-edit latency (first and last ten, median,
// 90th percentile, slowest) and the size of dataDir/checkpoints after the
// edits. Then it asks edits/revert of the file and times that too. It
// downloads nothing and installs nothing; bench/edits.sh builds and runs it.
//
//	editbench -runtime PATH [-edits 100] [-size 300000]
package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/bench/internal/rtclient"
)

func main() {
	runtimeBin := flag.String("runtime", "", "task-x-runtime binary")
	edits := flag.Int("edits", 100, "how many one-line edits")
	size := flag.Int("size", 300_000, "size of the edited file in bytes")
	flag.Parse()
	if *runtimeBin == "" || *edits < 1 || *size < 1000 {
		fmt.Fprintln(os.Stderr, "usage: editbench -runtime PATH [-edits N] [-size BYTES]")
		os.Exit(2)
	}
	if err := run(*runtimeBin, *edits, *size); err != nil {
		fmt.Fprintln(os.Stderr, "editbench:", err)
		os.Exit(1)
	}
}

func run(bin string, edits, size int) error {
	tmp, err := os.MkdirTemp("", "editbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, dataDir := filepath.Join(tmp, "ws"), filepath.Join(tmp, "data")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	// Lines "line 000123: ..." of 60 bytes; edit i changes line i*7.
	var b strings.Builder
	lines := 0
	for b.Len() < size {
		fmt.Fprintf(&b, "line %06d: %s\n", lines, strings.Repeat("x", 47))
		lines++
	}
	if lines < edits*7 {
		return fmt.Errorf("a file of %d bytes has too few lines for %d edits", size, edits)
	}
	const name = "big.txt"
	if err := os.WriteFile(filepath.Join(root, name), []byte(b.String()), 0o644); err != nil {
		return err
	}

	r, err := rtclient.Start(bin, nil, io.Discard)
	if err != nil {
		return err
	}
	defer r.Stop(true)
	if _, err := r.Call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "editbench"},
		"dataDir": dataDir, "sandbox": false}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if _, err := r.Call("workspace/open", map[string]any{"root": root}); err != nil {
		return fmt.Errorf("workspace/open: %w", err)
	}
	lat := make([]time.Duration, 0, edits)
	for i := range edits {
		old := fmt.Sprintf("line %06d: ", i*7)
		start := time.Now()
		if _, err := r.Call("tools/call", map[string]any{"name": "replace_text",
			"input": map[string]any{"path": name, "oldText": old, "newText": fmt.Sprintf("LINE %06d! ", i*7)}}); err != nil {
			return fmt.Errorf("edit %d: %w", i+1, err)
		}
		lat = append(lat, time.Since(start))
	}
	cpBytes, cpFiles := dirSize(filepath.Join(dataDir, "checkpoints"))
	start := time.Now()
	if _, err := r.Call("edits/revert", map[string]any{"paths": []string{name}}); err != nil {
		return fmt.Errorf("edits/revert: %w", err)
	}
	revert := time.Since(start)
	cpAfter, _ := dirSize(filepath.Join(dataDir, "checkpoints"))

	fmt.Printf("%d one-line edits of a %d-byte file through tools/call replace_text (dataDir set)\n", edits, b.Len())
	fmt.Printf("per-edit latency: first 10 mean %v, last 10 mean %v, median %v, p90 %v, max %v, total %v\n",
		mean(lat[:min(10, len(lat))]), mean(lat[max(0, len(lat)-10):]), pct(lat, 50), pct(lat, 90), pct(lat, 100), sum(lat))
	fmt.Printf("checkpoint after the edits: %s in %d files (%.1fx the edited file)\n", human(cpBytes), cpFiles, float64(cpBytes)/float64(b.Len()))
	fmt.Printf("edits/revert of the file: %v; checkpoint after it: %s\n", revert.Round(time.Microsecond), human(cpAfter))
	return nil
}

// dirSize is the total size and count of the regular files under dir.
func dirSize(dir string) (int64, int) {
	var n int64
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
				files++
			}
		}
		return nil
	})
	return n, files
}

func sum(d []time.Duration) time.Duration {
	var t time.Duration
	for _, x := range d {
		t += x
	}
	return t.Round(time.Millisecond)
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var t time.Duration
	for _, x := range d {
		t += x
	}
	return (t / time.Duration(len(d))).Round(10 * time.Microsecond)
}

// pct is the p-th percentile (nearest rank).
func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))].Round(10 * time.Microsecond)
}

func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
