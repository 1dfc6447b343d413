package editlog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pendingOf returns the pending entry of rel, nil when it is not listed.
func pendingOf(t *testing.T, l *Log, rel string) *Pending {
	t.Helper()
	for _, p := range mustPending(t, l) {
		if p.Path == rel {
			return &p
		}
	}
	return nil
}

// edits/pending's current is the disk now; a file the user changed after the
// agent stays listed with ChangedOutside (QA finding 4).
func TestPendingCurrentIsDisk(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "one\n")
	write(t, root, "b.txt", "bee\n")
	write(t, root, "c.txt", "sea\n")
	l, err := Open(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, l, modify("a.txt", "one\n", "two\n"), modify("b.txt", "bee\n", "bee2\n"), modify("c.txt", "sea\n", "sea2\n"), create("n.txt", "new\n"))

	p := pendingOf(t, l, "a.txt")
	if p == nil || *p.Current != "two\n" || p.ChangedOutside || p.Added != 1 || p.Removed != 1 {
		t.Fatalf("untouched: %+v", p)
	}
	write(t, root, "a.txt", "two\nuser line\nmore\n")
	p = pendingOf(t, l, "a.txt")
	if p == nil || *p.Current != "two\nuser line\nmore\n" || !p.ChangedOutside || *p.Original != "one\n" || p.Added != 3 || p.Removed != 1 {
		t.Fatalf("changed by the user: %+v", p)
	}
	// Deleted by the user: current null.
	os.Remove(filepath.Join(root, "b.txt"))
	if p = pendingOf(t, l, "b.txt"); p == nil || p.Current != nil || !p.ChangedOutside || p.Removed != 1 {
		t.Fatalf("deleted by the user: %+v", p)
	}
	// Changed back to the original by the user: still listed (the agent's
	// change is not settled), no line changes.
	write(t, root, "c.txt", "sea\n")
	if p = pendingOf(t, l, "c.txt"); p == nil || !p.ChangedOutside || p.Added != 0 || p.Removed != 0 {
		t.Fatalf("changed back by the user: %+v", p)
	}
	// A created file the user emptied.
	write(t, root, "n.txt", "")
	if p = pendingOf(t, l, "n.txt"); p == nil || p.Original != nil || p.Current == nil || *p.Current != "" || !p.ChangedOutside {
		t.Fatalf("created then emptied: %+v", p)
	}
	// The agent's created-then-deleted file is still left out when nobody
	// touched it since.
	apply(t, l, create("tmp.txt", "x"))
	apply(t, l, del("tmp.txt", "x"))
	if p = pendingOf(t, l, "tmp.txt"); p != nil {
		t.Fatalf("net-nothing file listed: %+v", p)
	}
	// ...and listed when the user recreated it.
	write(t, root, "tmp.txt", "user\n")
	if p = pendingOf(t, l, "tmp.txt"); p == nil || !p.ChangedOutside || *p.Current != "user\n" {
		t.Fatalf("recreated by the user: %+v", p)
	}
	// Revert leaves every outside-changed file as a conflict, still pending.
	reverted, conflicts, err := l.Revert(nil)
	if err != nil || len(reverted) != 0 || !slices.Equal(conflicts, []string{"a.txt", "b.txt", "c.txt", "n.txt", "tmp.txt"}) {
		t.Fatalf("revert %v %v %v", reverted, conflicts, err)
	}
	if n := len(mustPending(t, l)); n != 5 {
		t.Fatalf("pending after conflicting revert: %d", n)
	}
}

// After an undo that restored one file and found a conflict on another, the
// conflicting file stays pending (docs/edits.md; QA finding 4).
func TestPartialUndoKeepsConflictPending(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "a\n")
	write(t, root, "b.txt", "b\n")
	l, err := Open(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	op := apply(t, l, modify("a.txt", "a\n", "a2\n"), modify("b.txt", "b\n", "b2\n"))
	write(t, root, "b.txt", "user\n")
	restored, conflicts, err := l.Undo(op.ID)
	if err != nil || !slices.Equal(restored, []string{"a.txt"}) || !slices.Equal(conflicts, []string{"b.txt"}) {
		t.Fatalf("undo %v %v %v", restored, conflicts, err)
	}
	mustContent(t, root, "a.txt", "a\n")
	mustContent(t, root, "b.txt", "user\n")
	p := mustPending(t, l)
	if len(p) != 1 || p[0].Path != "b.txt" || *p[0].Original != "b\n" || *p[0].Current != "user\n" || !p[0].ChangedOutside ||
		!slices.Equal(p[0].Operations, []string{op.ID}) {
		t.Fatalf("pending after a partial undo: %+v", p)
	}
	// The user resolves it: put the agent's content back, then revert works.
	write(t, root, "b.txt", "b2\n")
	reverted, conflicts, err := l.Revert([]string{"b.txt"})
	if err != nil || !slices.Equal(reverted, []string{"b.txt"}) || len(conflicts) != 0 {
		t.Fatalf("revert %v %v %v", reverted, conflicts, err)
	}
	mustContent(t, root, "b.txt", "b\n")
	if p := mustPending(t, l); len(p) != 0 {
		t.Fatalf("pending after revert: %+v", p)
	}
	// Keep settles a conflicting file of an undone operation too.
	op = apply(t, l, modify("a.txt", "a\n", "a3\n"), modify("b.txt", "b\n", "b3\n"))
	write(t, root, "a.txt", "mine\n")
	if _, c, _ := l.Undo(op.ID); !slices.Equal(c, []string{"a.txt"}) {
		t.Fatalf("second undo conflicts %v", c)
	}
	if kept, err := l.Keep(nil); err != nil || !slices.Equal(kept, []string{"a.txt"}) || len(mustPending(t, l)) != 0 {
		t.Fatalf("keep %v %v", kept, err)
	}
}

// Options.Redact hides a key in the stored diff and in Pending's contents;
// the bytes kept for revert stay exact.
func TestRedactDiffAndPending(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "one\n")
	const key = "sk-editlog-key-42"
	l, err := Open(root, filepath.Join(t.TempDir(), "cp.json"), &Options{Redact: func(s string) string {
		return strings.ReplaceAll(s, key, "[redacted]")
	}})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, l, modify("a.txt", "one\n", "one\nk="+key+"\n"))
	p := pendingOf(t, l, "a.txt")
	if p == nil || strings.Contains(*p.Current, key) || *p.Current != "one\nk=[redacted]\n" {
		t.Fatalf("pending %+v", p)
	}
	ops := l.List()
	if len(ops) != 1 || strings.Contains(ops[0].Diff, key) || !strings.Contains(ops[0].Diff, "+k=[redacted]") {
		t.Fatalf("diff %q", ops[0].Diff)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one\nk="+key+"\n" {
		t.Fatalf("file = %q, want the key written exactly", b)
	}
}
