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
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
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

	r, err := startRuntime(bin)
	if err != nil {
		return err
	}
	defer r.stop()
	if _, err := r.call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "editbench"},
		"dataDir": dataDir, "sandbox": false}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if _, err := r.call("workspace/open", map[string]any{"root": root}); err != nil {
		return fmt.Errorf("workspace/open: %w", err)
	}
	lat := make([]time.Duration, 0, edits)
	for i := range edits {
		old := fmt.Sprintf("line %06d: ", i*7)
		start := time.Now()
		if _, err := r.call("tools/call", map[string]any{"name": "replace_text",
			"input": map[string]any{"path": name, "oldText": old, "newText": fmt.Sprintf("LINE %06d! ", i*7)}}); err != nil {
			return fmt.Errorf("edit %d: %w", i+1, err)
		}
		lat = append(lat, time.Since(start))
	}
	cpBytes, cpFiles := dirSize(filepath.Join(dataDir, "checkpoints"))
	start := time.Now()
	if _, err := r.call("edits/revert", map[string]any{"paths": []string{name}}); err != nil {
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

// rt is a runtime driven over stdio.
type rt struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startRuntime(bin string) (*rt, error) {
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &rt{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (r *rt) call(method string, params any) (json.RawMessage, error) {
	r.next++
	id := r.next
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	for {
		l, err := r.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("the runtime closed its output: %w", err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(l, &m) != nil || m.ID == nil || m.Method != "" || *m.ID != id {
			continue // notifications and requests from the runtime
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%d %s", m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	}
}

func (r *rt) stop() {
	r.call("shutdown", nil)
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	r.in.Write(append(line, '\n'))
	r.in.Close()
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}
