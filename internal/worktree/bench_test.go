package worktree

import (
	"context"
	"fmt"
	"testing"

	"github.com/task-x/task-x-runtime/internal/editlog"
)

// BenchmarkLifecycle: one worktree's life on a repository of 500 files:
// create, a one-file change committed, applied into the main tree through
// the edit log, undone, discarded.
func BenchmarkLifecycle(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < 500; i++ {
		files[fmt.Sprintf("pkg%02d/f%03d.go", i%20, i)] = fmt.Sprintf("package pkg%02d\n\nfunc F%d() int { return %d }\n", i%20, i, i)
	}
	root := repoB(b, files)
	m, err := Open(root, &Options{DataDir: b.TempDir(), StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	log, err := editlog.Open(root, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("b-%d", i)
		w, err := m.Create(ctx, name, nil)
		if err != nil {
			b.Fatal(err)
		}
		writeB(b, w.Dir, "pkg00/f000.go", fmt.Sprintf("package pkg00\n\nfunc F0() int { return %d }\n", -i-1))
		if _, err := m.Commit(ctx, name, "x"); err != nil {
			b.Fatal(err)
		}
		res, err := m.Apply(ctx, name, log, "")
		if err != nil || !res.Applied {
			b.Fatal(res, err)
		}
		if _, _, err := log.Undo(*res.Operation); err != nil {
			b.Fatal(err)
		}
		if err := m.Discard(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
}
