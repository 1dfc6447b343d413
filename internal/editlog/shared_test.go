package editlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// Two Logs on one checkpoint file (two runtimes on one dataDir and one
// workspace) keep each other's operations: unique ids, a file lock around
// reload-merge-save, and a merge by id (QA finding 1).
func TestTwoLogsOneCheckpoint(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	write(t, root, "a.txt", "a\n")
	write(t, root, "b.txt", "b\n")
	la, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	opA := apply(t, la, modify("a.txt", "a\n", "a2\n"))
	opB := apply(t, lb, modify("b.txt", "b\n", "b2\n"))
	if opA.ID == opB.ID || !idPattern.MatchString(opA.ID) || !idPattern.MatchString(opB.ID) {
		t.Fatalf("ids %s %s", opA.ID, opB.ID)
	}
	// Each sees the other's operation.
	for name, l := range map[string]*Log{"a": la, "b": lb} {
		if ids := ids(l.List()); !slices.Equal(ids, []string{opA.ID, opB.ID}) {
			t.Fatalf("%s lists %v", name, ids)
		}
	}
	// A later save by A keeps B's operation on disk: after a "restart" both
	// are there and both undoable.
	write(t, root, "c.txt", "c\n")
	opA2 := apply(t, la, modify("c.txt", "c\n", "c2\n"))
	lr, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(lr.List()); !slices.Equal(got, []string{opA.ID, opB.ID, opA2.ID}) {
		t.Fatalf("after restart: %v", got)
	}
	if r, c, err := lr.Undo(opB.ID); err != nil || !slices.Equal(r, []string{"b.txt"}) || len(c) != 0 {
		t.Fatalf("undo B's op from a new runtime: %v %v %v", r, c, err)
	}
	mustContent(t, root, "b.txt", "b\n")
	// B does not know of the undo yet; its next change must not bring the
	// operation back to "not undone".
	write(t, root, "d.txt", "d\n")
	apply(t, lb, modify("d.txt", "d\n", "d2\n"))
	if _, _, err := la.Undo(opB.ID); err == nil {
		t.Fatal("the undo was lost by a later save of another Log")
	}
	if p := mustPending(t, la); slices.ContainsFunc(p, func(p Pending) bool { return p.Path == "b.txt" }) {
		t.Fatalf("b.txt still pending: %+v", p)
	}
	// Keep in one settles for all.
	if kept, err := lb.Keep([]string{"a.txt"}); err != nil || !slices.Equal(kept, []string{"a.txt"}) {
		t.Fatalf("keep %v %v", kept, err)
	}
	if p := pendingOf(t, la, "a.txt"); p != nil {
		t.Fatalf("a.txt pending in the other log after keep: %+v", p)
	}
}

// Concurrent edits through two Logs on one checkpoint: none is lost.
func TestTwoLogsConcurrent(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	const n = 15
	logs := make([]*Log, 2)
	for i := range logs {
		l, err := Open(root, cp, nil)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i, l := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				spec := OpSpec{Tool: "test", Files: []FileSpec{create(fmt.Sprintf("l%d/f%d.txt", i, j), "x")}}
				if _, err := l.Apply(context.Background(), spec); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := l.List()
	seen := map[string]bool{}
	for _, op := range got {
		seen[op.ID] = true
	}
	if len(got) != 2*n || len(seen) != 2*n {
		t.Fatalf("%d operations (%d distinct ids) after reopening, want %d", len(got), len(seen), 2*n)
	}
	if p := mustPending(t, l); len(p) != 2*n {
		t.Fatalf("%d pending files, want %d", len(p), 2*n)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cp), WorkspaceID(root)+".lock")); err != nil {
		t.Fatalf("no sidecar lock file: %v", err)
	}
}

func ids(ops []Operation) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.ID
	}
	return out
}
