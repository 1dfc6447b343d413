package project

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestReopenProbe (TASK_X_REOPEN_PROBE=DIR) measures reopens of DIR from
// its saved index in process: TASK_X_REOPEN_DATA is the data folder (kept
// between runs of the same test binary, so the cold open that fills it
// happens once), TASK_X_REOPEN_N the number of reopens (default 5),
// TASK_X_REOPEN_CPUPROF a CPU profile of the reopens only, with
// TASK_X_REOPEN_TOUCH=1 every 100th indexed file gets a new modification
// time before each reopen (1% of the files parsed again). Each reopen is
// project.Open + Graph + BuildRetrieval (what workspace/open and the
// first graph/project do); it logs wall time and CPU time (user+system)
// per reopen.
func TestReopenProbe(t *testing.T) {
	dir := os.Getenv("TASK_X_REOPEN_PROBE")
	if dir == "" {
		t.Skip("TASK_X_REOPEN_PROBE=DIR runs it")
	}
	data := os.Getenv("TASK_X_REOPEN_DATA")
	if data == "" {
		data = t.TempDir()
	}
	n, _ := strconv.Atoi(os.Getenv("TASK_X_REOPEN_N"))
	if n <= 0 {
		n = 5
	}
	ctx := context.Background()
	cpuNow := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	open := func() {
		p, err := Open(ctx, dir, &Options{DataDir: data, Home: "-"})
		if err != nil {
			t.Fatal(err)
		}
		p.Graph()
		p.BuildRetrieval(ctx)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(IndexPath(data, dir)); err != nil {
		start, c0 := time.Now(), cpuNow()
		open()
		t.Logf("cold: wall %v, cpu %v", time.Since(start).Round(time.Millisecond), (cpuNow() - c0).Round(time.Millisecond))
	}
	if f := os.Getenv("TASK_X_REOPEN_CPUPROF"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		pprof.StartCPUProfile(out)
		defer func() {
			pprof.StopCPUProfile()
			out.Close()
		}()
	}
	var touched []string
	if os.Getenv("TASK_X_REOPEN_TOUCH") != "" {
		p, err := Open(ctx, dir, &Options{Home: "-", NoParse: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, rel := range p.Snapshot().Files() {
			if i%100 == 0 {
				touched = append(touched, filepath.Join(dir, filepath.FromSlash(rel)))
			}
		}
		p.Close()
	}
	var walls, cpus []time.Duration
	var allocs, gcs []string
	for k := range n {
		for _, abs := range touched {
			at := time.Now().Add(time.Duration(k+1) * time.Second)
			os.Chtimes(abs, at, at)
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start, c0 := time.Now(), cpuNow()
		open()
		walls, cpus = append(walls, time.Since(start)), append(cpus, cpuNow()-c0)
		runtime.ReadMemStats(&m1)
		allocs = append(allocs, fmt.Sprintf("%.0fMB/%dk", float64(m1.TotalAlloc-m0.TotalAlloc)/1e6, (m1.Mallocs-m0.Mallocs)/1000))
		gcs = append(gcs, fmt.Sprint(m1.NumGC-m0.NumGC))
	}
	t.Logf("reopen wall %v", walls)
	t.Logf("reopen cpu  %v", cpus)
	t.Logf("reopen allocated %v, GCs %v", allocs, gcs)
}
