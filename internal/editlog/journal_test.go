package editlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bigText is a text of about n bytes whose lines are numbered.
func bigText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %05d %s\n", i, strings.Repeat("y", 40))
	}
	return b.String()
}

func TestBlobsDeltaRoundTrip(t *testing.T) {
	d := newDirBlobs(t.TempDir())
	base := []byte(bigText(20_000))
	versions := [][]byte{base}
	hashes := []string{hashOf(base)}
	if err := d.put(hashes[0], base, "", nil); err != nil {
		t.Fatal(err)
	}
	// A chain longer than maxDeltaDepth, with edits at the start, the end,
	// the middle, growing and shrinking the text.
	cur := base
	for i := range maxDeltaDepth + 10 {
		var next []byte
		switch i % 4 {
		case 0:
			next = append([]byte(fmt.Sprintf("head %d\n", i)), cur...)
		case 1:
			next = append(bytes.Clone(cur), fmt.Sprintf("tail %d\n", i)...)
		case 2:
			next = bytes.Replace(cur, []byte("yyyy"), []byte(fmt.Sprintf("<%d>", i)), 1)
		default:
			next = bytes.Clone(cur[:len(cur)-30])
		}
		h := hashOf(next)
		if err := d.put(h, next, hashes[len(hashes)-1], cur); err != nil {
			t.Fatal(err)
		}
		versions, hashes, cur = append(versions, next), append(hashes, h), next
	}
	var whole, deltas int
	var total int64
	for i, h := range hashes {
		got, err := d.get(h)
		if err != nil || !bytes.Equal(got, versions[i]) {
			t.Fatalf("version %d: %v (%d bytes, want %d)", i, err, len(got), len(versions[i]))
		}
		fi, _ := os.Stat(d.path(h))
		total += fi.Size()
		if data, _ := os.ReadFile(d.path(h)); data[len(blobMagic)] == 'F' {
			whole++
		} else {
			deltas++
		}
	}
	// One whole blob at the start and one more past the depth limit.
	if whole != 2 || deltas != len(hashes)-2 {
		t.Fatalf("%d whole blobs and %d deltas", whole, deltas)
	}
	if total > int64(3*len(base)) {
		t.Fatalf("%d versions of a %d-byte text take %d bytes", len(hashes), len(base), total)
	}
	// A fresh store (another runtime) reads the depths from the headers.
	d2 := newDirBlobs(d.dir)
	if got, err := d2.get(hashes[40]); err != nil || !bytes.Equal(got, versions[40]) {
		t.Fatalf("fresh store: %v", err)
	}
	// A damaged middle is found by the hash check.
	p := d.path(hashes[3])
	data, _ := os.ReadFile(p)
	data[len(data)-1] ^= 1
	os.WriteFile(p, data, 0o600)
	if _, err := newDirBlobs(d.dir).get(hashes[5]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged delta read as %v", err)
	}
	data[len(data)-1] ^= 1
	os.WriteFile(p, data, 0o600)
	// gc keeps the bases of what is live and removes the rest.
	live := map[string]bool{hashes[10]: true}
	os.WriteFile(filepath.Join(d.dir, ".x.tmp-0123456789abcdef"), nil, 0o600)
	if err := d.gc(live); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(d.dir)
	if len(left) != 11 {
		t.Fatalf("after gc %d files, want the 11 of the chain", len(left))
	}
	if got, err := newDirBlobs(d.dir).get(hashes[10]); err != nil || !bytes.Equal(got, versions[10]) {
		t.Fatalf("after gc: %v", err)
	}
	if _, err := d.get(hashes[11]); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("collected blob: %v", err)
	}
}

// Many edits of a large file: the checkpoint grows by about the size of the
// changes, and after a reopen every operation still undoes to the exact
// content (through chains of deltas).
func TestLargeFileEditsUndoAfterReopen(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	text := bigText(100_000)
	write(t, root, "big.txt", text)
	l, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	const edits = 90
	versions := []string{text}
	var ops []Operation
	for i := range edits {
		next := strings.Replace(versions[i], fmt.Sprintf("line %05d", i*3), fmt.Sprintf("LINE %05d", i*3), 1)
		ops = append(ops, apply(t, l, modify("big.txt", versions[i], next)))
		versions = append(versions, next)
	}
	var size int64
	filepath.Walk(filepath.Dir(cp), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	// The file twice whole (start, past the delta depth) and small records.
	if size > int64(2*len(text)+edits*2_000) {
		t.Fatalf("%d edits of a %d-byte file: checkpoint of %d bytes", edits, len(text), size)
	}
	l2, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := edits - 1; i >= 0; i-- {
		if r, c, err := l2.Undo(ops[i].ID); err != nil || len(r) != 1 || len(c) != 0 {
			t.Fatalf("undo %d: %v %v %v", i, r, c, err)
		}
		mustContent(t, root, "big.txt", versions[i])
	}
}

func journalOf(t *testing.T, cp string) string {
	t.Helper()
	b, err := os.ReadFile(strings.TrimSuffix(cp, ".json") + ".journal")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A torn last record (a crash in the middle of an append) is cut off; the
// records before it stand, and the next append starts on a clean line.
func TestJournalTornTail(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	write(t, root, "a.txt", "a\n")
	l, _ := Open(root, cp, nil)
	op := apply(t, l, modify("a.txt", "a\n", "b\n"))
	j := strings.TrimSuffix(cp, ".json") + ".journal"
	f, _ := os.OpenFile(j, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"settle":[{"op":"` + op.ID + `","pa`)
	f.Close()
	l2, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := mustPending(t, l2); len(p) != 1 || p[0].Path != "a.txt" {
		t.Fatalf("pending %+v", p)
	}
	if strings.HasSuffix(journalOf(t, cp), `"pa`) {
		t.Fatal("torn tail left in the journal")
	}
	write(t, root, "c.txt", "c\n")
	apply(t, l2, modify("c.txt", "c\n", "d\n"))
	if got := ids(mustOpen(t, root, cp).List()); len(got) != 2 {
		t.Fatalf("after the next append: %v", got)
	}
}

func mustOpen(t *testing.T, root, cp string) *Log {
	t.Helper()
	l, err := Open(root, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Compaction rewrites the snapshot and starts a new journal; a journal left
// of the old generation (a compaction stopped between its renames) is
// ignored, not replayed twice.
func TestCompaction(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	write(t, root, "a.txt", "0")
	l := mustOpen(t, root, cp)
	prev := "0"
	var first Operation
	for i := 1; i <= 20; i++ {
		next := fmt.Sprint(i)
		op := apply(t, l, modify("a.txt", prev, next))
		if i == 1 {
			first = op
		}
		prev = next
	}
	oldJournal := journalOf(t, cp)
	l.mu.Lock()
	release, _ := l.begin()
	err := l.compact()
	release()
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if j := journalOf(t, cp); strings.Count(j, "\n") != 1 || !strings.Contains(j, `"generation":1`) {
		t.Fatalf("journal after compaction: %q", j)
	}
	// Put the old journal back, as if the second rename never happened.
	os.WriteFile(strings.TrimSuffix(cp, ".json")+".journal", []byte(oldJournal), 0o600)
	l2 := mustOpen(t, root, cp)
	if n := len(l2.List()); n != 20 {
		t.Fatalf("%d operations after reopening", n)
	}
	// first's file changed since (later edits): a conflict, nothing written.
	if r, c, err := l2.Undo(first.ID); err != nil || len(r) != 0 || !slices.Equal(c, []string{"a.txt"}) {
		t.Fatalf("undo %v %v %v", r, c, err)
	}
	if _, err := l2.Keep(nil); err != nil {
		t.Fatal(err)
	}
	if p := mustPending(t, mustOpen(t, root, cp)); len(p) != 0 {
		t.Fatalf("pending after keep, reopened: %+v", p)
	}
}

// A revert saved as an intent whose process died after writing some files
// (the crash of issue 13 item 15): on load the restored files are settled
// (not pending, not changed outside) and the others stay pending, so a
// second revert finishes the job without conflicts.
func TestRevertInterrupted(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	write(t, root, "a.txt", "a\n")
	write(t, root, "b.txt", "b\n")
	l := mustOpen(t, root, cp)
	apply(t, l, modify("a.txt", "a\n", "A\n"), modify("b.txt", "b\n", "B\n"))
	apply(t, l, create("new.txt", "n\n"))

	// What Revert does, stopped after its first write.
	l.mu.Lock()
	release, _ := l.begin()
	var files []restore
	for _, p := range l.pending() {
		content, _ := l.content(p.first.BeforeHash)
		files = append(files, restore{intentFile{Path: p.path, From: p.last.AfterHash, To: p.first.BeforeHash, Mode: p.first.Mode, Settle: p.opIDs}, content})
	}
	if err := l.do(&record{Intent: &intent{ID: "revert-x-1", Kind: "revert", Files: []intentFile{files[0].intentFile, files[1].intentFile, files[2].intentFile}}}, true); err != nil {
		t.Fatal(err)
	}
	root1, _ := os.OpenRoot(root)
	l.writeContent(root1, "a.txt", files[0].To, files[0].content, 0o644)
	l.writeContent(root1, "new.txt", "", nil, 0)
	root1.Close()
	release()
	l.mu.Unlock()
	// b.txt still holds the agent's write: it must stay pending.

	l2 := mustOpen(t, root, cp)
	p := mustPending(t, l2)
	if len(p) != 1 || p[0].Path != "b.txt" || p[0].ChangedOutside {
		t.Fatalf("pending after the interrupted revert: %+v", p)
	}
	if r, c, err := l2.Revert(nil); err != nil || !slices.Equal(r, []string{"b.txt"}) || len(c) != 0 {
		t.Fatalf("second revert %v %v %v", r, c, err)
	}
	mustContent(t, root, "a.txt", "a\n")
	mustContent(t, root, "b.txt", "b\n")
	mustAbsent(t, root, "new.txt")
	if len(l2.LoadConflicts()) != 0 {
		t.Fatalf("conflicts %v", l2.LoadConflicts())
	}
}

// An undo interrupted the same way: its restored file is settled and the
// operation is marked undone.
func TestUndoInterrupted(t *testing.T) {
	root := newRoot(t)
	cp := CheckpointPath(t.TempDir(), root)
	write(t, root, "a.txt", "a\n")
	l := mustOpen(t, root, cp)
	op := apply(t, l, modify("a.txt", "a\n", "A\n"))
	l.mu.Lock()
	release, _ := l.begin()
	f := op.Files[0]
	if err := l.do(&record{Intent: &intent{ID: "undo-x-1", Kind: "undo", Undo: op.ID,
		Files: []intentFile{{Path: "a.txt", From: f.AfterHash, To: f.BeforeHash, Mode: f.Mode, Settle: []string{op.ID}}}}}, true); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "a\n")
	release()
	l.mu.Unlock()
	l2 := mustOpen(t, root, cp)
	if p := mustPending(t, l2); len(p) != 0 {
		t.Fatalf("pending %+v", p)
	}
	if _, _, err := l2.Undo(op.ID); !errors.Is(err, ErrAlreadyUndone) {
		t.Fatalf("undo again: %v", err)
	}
}

// Temp files a crash left are removed when the log opens: next to logged
// files in the workspace, and in the log's own folders; workspace writes
// keep their temp files out of the tree.
func TestOpenRemovesCrashTemps(t *testing.T) {
	root := newRoot(t)
	dataDir := t.TempDir()
	cp := CheckpointPath(dataDir, root)
	write(t, root, "sub/a.txt", "a\n")
	l := mustOpen(t, root, cp)
	apply(t, l, modify("sub/a.txt", "a\n", "b\n"))
	id := WorkspaceID(root)
	leftovers := []string{
		filepath.Join(root, "sub", ".a.txt.tmp-0123456789abcdef"),
		filepath.Join(dataDir, "checkpoints", "."+id+".json.tmp-0123456789abcdef"),
		filepath.Join(dataDir, "checkpoints", "."+id+".journal.tmp-0123456789abcdef"),
		filepath.Join(dataDir, "checkpoints", id+".blobs", ".00.tmp-0123456789abcdef"),
		filepath.Join(dataDir, "checkpoints", id+".tmp", ".a.txt.tmp-0123456789abcdef"),
	}
	kept := []string{
		filepath.Join(root, "sub", ".other.txt.tmp-0123456789abcdef"),                 // not a logged file's
		filepath.Join(root, "sub", ".a.txt.tmp-notahexsuffix00"),                      // not a temp name
		filepath.Join(dataDir, "checkpoints", ".ffff.json.tmp-0123456789abcdef"),      // another workspace's
		filepath.Join(dataDir, "checkpoints", id+".blobs", "not-a-blob-but-kept.txt"), // not ours to judge
	}
	for _, p := range append(slices.Clone(leftovers), kept...) {
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustOpen(t, root, cp)
	for _, p := range leftovers {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("left over: %s", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("removed: %s", p)
		}
	}
}
