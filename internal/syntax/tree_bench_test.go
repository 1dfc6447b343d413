//go:build unix

package syntax

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkParseTree parses every Rust, Python, TypeScript, JavaScript and
// Go file (up to 1 MiB, as the workspace) under TASK_X_BENCH_DIR serially
// per iteration, and reports the process's CPU seconds per pass.
// TASK_X_BENCH_EVERY=n keeps every n-th file only (a sample for callgrind);
// TASK_X_BENCH_LANG=rust keeps one language's files; TASK_X_BENCH_WHOLE=1
// parses function bodies too (skip_rust.go).
func BenchmarkParseTree(b *testing.B) {
	opts := &Options{wholeBodies: os.Getenv("TASK_X_BENCH_WHOLE") == "1"}
	only := os.Getenv("TASK_X_BENCH_LANG")
	dir := os.Getenv("TASK_X_BENCH_DIR")
	if dir == "" {
		b.Skip("TASK_X_BENCH_DIR not set")
	}
	every, _ := strconv.Atoi(os.Getenv("TASK_X_BENCH_EVERY"))
	seen := 0
	type file struct {
		lang string
		src  []byte
	}
	var files []file
	var total int64
	walkParseable(dir, func(path, lang string, src []byte) {
		if only != "" && lang != only {
			return
		}
		if seen++; every > 1 && seen%every != 0 {
			return
		}
		files = append(files, file{lang, src})
		total += int64(len(src))
	})
	b.SetBytes(total)
	cpu0 := benchCPU()
	for b.Loop() {
		for _, f := range files {
			if _, err := Parse(context.Background(), f.lang, f.src, opts); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric((benchCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(files)), "files")
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
