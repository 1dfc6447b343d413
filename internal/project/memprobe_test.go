package project

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/retrieve"
)

// memSample is one reading of the process's memory: RSS from
// /proc/self/statm, the Go heap's live objects, and the memory the Go
// runtime holds from the OS (mapped, not released); RSS minus that is
// mostly C (tree-sitter, glibc's arenas) and the binary.
type memSample struct{ rss, heapObjects, goHeld, file, unused, free, meta uint64 }

var memMetrics = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/metadata/other:bytes"},
	{Name: "/memory/classes/metadata/mspan/inuse:bytes"},
	{Name: "/memory/classes/metadata/mcache/inuse:bytes"},
	{Name: "/memory/classes/heap/stacks:bytes"},
}

func readMem() memSample {
	s := make([]metrics.Sample, len(memMetrics))
	copy(s, memMetrics)
	metrics.Read(s)
	var rss, file uint64
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			rss = n * uint64(os.Getpagesize())
			n, _ = strconv.ParseUint(f[2], 10, 64)
			file = n * uint64(os.Getpagesize())
		}
	}
	return memSample{rss: rss, heapObjects: s[0].Value.Uint64(), goHeld: s[1].Value.Uint64() - s[2].Value.Uint64(), file: file,
		unused: s[3].Value.Uint64(), free: s[4].Value.Uint64(), meta: s[5].Value.Uint64() + s[6].Value.Uint64() + s[7].Value.Uint64() + s[8].Value.Uint64()}
}

// memPeak samples readMem every 10 ms until stop and keeps the maxima.
type memPeak struct {
	mu     sync.Mutex
	max    memSample
	c      memSample // C-side (rss - goHeld) at the RSS peak
	lapMax uint64
	stop   chan struct{}
	done   chan struct{}
}

func startPeak() *memPeak {
	p := &memPeak{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			p.observe()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *memPeak) observe() {
	s := readMem()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.rss > p.max.rss {
		p.max.rss = s.rss
		p.c = s
		p.c.rss = s.rss - min(s.goHeld+s.file, s.rss)
	}
	p.max.heapObjects = max(p.max.heapObjects, s.heapObjects)
	p.lapMax = max(p.lapMax, s.heapObjects)
	p.max.goHeld = max(p.max.goHeld, s.goHeld)
}

// lap returns the peak heap objects since the last lap and starts anew.
func (p *memPeak) lap() uint64 {
	p.observe()
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.lapMax
	p.lapMax = 0
	return v
}

func (p *memPeak) end() (memSample, memSample) {
	close(p.stop)
	<-p.done
	return p.max, p.c
}

func mb(n uint64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// TestMemoryProbe (TASK_X_MEM_PROBE=DIR) opens DIR cold with a data
// folder, builds the graph and the retrieval index and retrieves once, then
// reopens it from the saved index the same way, and logs each phase's live
// heap and the peaks of RSS, Go heap and the memory outside Go.
// TASK_X_MEM_PROBE_HEAP=FILE writes a heap profile after the first
// retrieve, TASK_X_MEM_PROBE_DUMP=FILE a heap dump (debug.WriteHeapDump)
// for bench/heapclasses, which says in which size classes the free slots
// of used spans are.
func TestMemoryProbe(t *testing.T) {
	dir := os.Getenv("TASK_X_MEM_PROBE")
	if dir == "" {
		t.Skip("TASK_X_MEM_PROBE=DIR runs it")
	}
	if v := os.Getenv("TASK_X_MEM_PROBE_LIMIT"); v != "" { // "MiB,factor[,build factor[,build MiB]]": the open's heap limit
		var base int64
		var factor float64
		build, buildBase := memLimitBuildPerByte, memLimitBuildBase>>20
		if _, err := fmt.Sscanf(v, "%d,%g,%g,%d", &base, &factor, &build, &buildBase); err != nil && !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("TASK_X_MEM_PROBE_LIMIT=%q: %v", v, err)
		}
		memLimitBase, memLimitPerByte, memLimitBuildPerByte, memLimitBuildBase = base<<20, factor, build, buildBase<<20
	}
	if r, err := strconv.Atoi(os.Getenv("TASK_X_MEM_PROBE_RATE")); err == nil && r > 0 {
		runtime.MemProfileRate = r // a finer heap profile (TASK_X_MEM_PROBE_HEAP)
	}
	data := os.Getenv("TASK_X_MEM_PROBE_DATA") // set: one open per process (cold, then reopen)
	twice := data == ""
	if twice {
		data = t.TempDir()
	}
	ctx := context.Background()
	live := func(phase string) {
		runtime.GC()
		s := readMem()
		t.Logf("%-28s live heap %s, rss %s, go held %s (free slots in used spans %s)", phase, mb(s.heapObjects), mb(s.rss), mb(s.goHeld), mb(s.unused))
	}
	run := func(name string) {
		var ru0 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		wall := time.Now()
		pk := startPeak()
		p, err := Open(ctx, dir, &Options{DataDir: data, Home: "-", BuildRetrieval: true})
		if err != nil {
			t.Fatal(err)
		}
		laps := []string{"open " + mb(pk.lap())}
		p.Graph()
		laps = append(laps, "graph "+mb(pk.lap()))
		p.BuildRetrieval(ctx)
		laps = append(laps, "retrieval "+mb(pk.lap()))
		if _, err := p.Retrieve(ctx, retrieve.Query{Text: "parse config"}); err != nil {
			t.Fatal(err)
		}
		laps = append(laps, "retrieve "+mb(pk.lap()))
		t.Logf("%s: peak heap objects by phase: %s", name, strings.Join(laps, ", "))
		m, c := pk.end()
		var ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		t.Logf("%s: wall %v, cpu %v", name, time.Since(wall).Round(time.Millisecond), cpu.Round(time.Millisecond))
		t.Logf("%s: peak rss %s (at it: C anon %s, file-backed %s, go held %s, heap objects %s); peak heap objects %s, peak go held %s",
			name, mb(m.rss), mb(c.rss), mb(c.file), mb(c.goHeld), mb(c.heapObjects), mb(m.heapObjects), mb(m.goHeld))
		t.Logf("%s: the Go heap at the rss peak: free slots in used spans %s, free pages kept %s, metadata and stacks %s",
			name, mb(c.unused), mb(c.free), mb(c.meta))
		if os.Getenv("TASK_X_MEM_PROBE_SESSION") != "" && name == "cold" {
			// indexbench's working session: a pause (its ctags run, where
			// the first save falls), 7 refreshes and 20 retrieves.
			pk := startPeak()
			time.Sleep(2 * time.Second)
			for range 7 {
				if _, err := p.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(35 * time.Millisecond)
			}
			for _, q := range []string{"buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
				"request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline"} {
				if _, err := p.Retrieve(ctx, retrieve.Query{Text: q}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(80 * time.Millisecond)
			}
			m, c := pk.end()
			t.Logf("session: peak rss %s (at it: C anon %s, file-backed %s, go held %s, heap objects %s); peak heap objects %s, peak go held %s",
				mb(m.rss), mb(c.rss), mb(c.file), mb(c.goHeld), mb(c.heapObjects), mb(m.heapObjects), mb(m.goHeld))
			t.Logf("session: the Go heap at the rss peak: free slots in used spans %s, free pages kept %s, metadata and stacks %s",
				mb(c.unused), mb(c.free), mb(c.meta))
		}
		// The first save runs in the background: wait for it (or make
		// it), so the live heap is the records and indexes, not its buffers.
		if err := p.SaveIndex(); err != nil {
			t.Fatal(err)
		}
		live(name + " after retrieve")
		if f := os.Getenv("TASK_X_MEM_PROBE_DUMP"); f != "" { // a heap dump for bench/heapclasses
			out, err := os.Create(f + "." + name)
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			debug.WriteHeapDump(out.Fd())
			out.Close()
		}
		if f := os.Getenv("TASK_X_MEM_PROBE_HEAP"); f != "" {
			out, err := os.Create(f + "." + name)
			if err != nil {
				t.Fatal(err)
			}
			pprof.Lookup("heap").WriteTo(out, 0)
			out.Close()
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		live(name + " closed")
	}
	if _, err := os.Stat(IndexPath(data, dir)); err == nil {
		run("reopen")
		return
	}
	run("cold")
	if twice {
		run("reopen")
	}
}
