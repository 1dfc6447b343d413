package retrieve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// TestShardPairs: a shard lists the same postings with chunks of the
// least size (one pair each: a pair is never split) and of a few pairs as
// with the usual 64 KiB, and every term's postings in file order with the
// term frequencies tokenizeASCII counts.
func TestShardPairs(t *testing.T) {
	ws, _ := fixture(t)
	snap := ws.Snapshot()
	lists := func() map[string][]uint32 {
		sh := newShard()
		for id, rel := range snap.Files() {
			data, err := os.ReadFile(filepath.Join(snap.Root(), filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			sh.add(uint32(id), data, nil)
		}
		out := map[string][]uint32{}
		for lid, ps := range sh.lists() {
			out[string(sh.dict.term(int32(lid)))] = ps
		}
		return out
	}
	defer func(c int) { pairChunk = c }(pairChunk)
	want := lists()
	if len(want) < 50 {
		t.Fatalf("only %d terms in the fixture", len(want))
	}
	for term, ps := range want {
		for i, p := range ps {
			if p&maxTF == 0 || i > 0 && p>>tfBits <= ps[i-1]>>tfBits {
				t.Fatalf("term %q: postings %x", term, ps)
			}
		}
	}
	for id, rel := range snap.Files() {
		data, err := os.ReadFile(filepath.Join(snap.Root(), filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		terms, _ := tokenizeTerms(data)
		for term, tf := range terms {
			if !slices.Contains(want[term], uint32(id)<<tfBits|tf) {
				t.Errorf("%s: term %q tf %d missing from %x", rel, term, tf, want[term])
			}
		}
	}
	for _, chunk := range []int{1, maxPairLen + 1, 3 * maxPairLen} {
		pairChunk = chunk
		got := lists()
		pairChunk = 1 << 16
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunk %d: the postings differ", chunk)
		}
	}
}

// indexTerms is every file's terms with their frequencies, read from ix's
// postings, after checking their layout: offsets increasing, no hole (a
// posting of frequency 0), each term's file ids strictly increasing.
func indexTerms(t *testing.T, ix *Index) map[string]map[string]uint32 {
	t.Helper()
	out := map[string]map[string]uint32{}
	if len(ix.offsets) != ix.terms.Len()+1 || int(ix.offsets[ix.terms.Len()]) != len(ix.posts) {
		t.Fatalf("%d offsets for %d terms, the last %d for %d postings", len(ix.offsets), ix.terms.Len(), ix.offsets[len(ix.offsets)-1], len(ix.posts))
	}
	for r := range ix.terms.Len() {
		if ix.offsets[r] > ix.offsets[r+1] {
			t.Fatalf("term %d: offsets %d > %d", r, ix.offsets[r], ix.offsets[r+1])
		}
		last := -1
		for _, p := range ix.posts[ix.offsets[r]:ix.offsets[r+1]] {
			id, tf := int(p>>tfBits), p&maxTF
			if tf == 0 || id <= last || id >= len(ix.paths) {
				t.Fatalf("term %q: posting %#x after file %d", ix.terms.At(r), p, last)
			}
			last = id
			m := out[ix.paths[id]]
			if m == nil {
				m = map[string]uint32{}
				out[ix.paths[id]] = m
			}
			m[ix.terms.At(r)] = tf
		}
	}
	return out
}

// TestWriteSaved: WriteSaved writes AppendSaved's bytes, in chunks or
// at once, and stops at the first failed write with its error.
func TestWriteSaved(t *testing.T) {
	_, ix := fixture(t)
	want := ix.AppendSaved(nil)
	defer func(n int) { savedChunk = n }(savedChunk)
	for _, chunk := range []int{1, 64, 1 << 20} {
		savedChunk = chunk
		var buf bytes.Buffer
		w := &countingWriter{w: &buf}
		n, err := ix.WriteSaved(w)
		if err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("chunk %d: WriteSaved = %d, %v; %d bytes, equal %v; want %d", chunk, n, err, buf.Len(), bytes.Equal(buf.Bytes(), want), len(want))
		}
		if chunk == 1 && w.writes < 10 {
			t.Errorf("chunk 1: %d writes, want one per part", w.writes)
		}
	}
	savedChunk = 1
	full := errors.New("disk full")
	fw := &countingWriter{w: io.Discard, failAfter: 3, err: full}
	if _, err := ix.WriteSaved(fw); !errors.Is(err, full) || fw.writes != 3 {
		t.Errorf("a failing writer: err %v after %d writes, want %v after 3", err, fw.writes, full)
	}
}

type countingWriter struct {
	w         io.Writer
	writes    int
	failAfter int
	err       error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	if c.err != nil && c.writes >= c.failAfter {
		return 0, c.err
	}
	return c.w.Write(p)
}

// TestSavedRoundTrip: an index loaded from its saved bytes is the built
// one (same postings, names and answers); bytes of another file set or
// cut short are refused.
func TestSavedRoundTrip(t *testing.T) {
	ws, ix := fixture(t)
	data := ix.AppendSaved(nil)
	skipEnv := &BuildOptions{Skip: func(rel string) bool { return strings.HasPrefix(filepath.Base(rel), ".env") }}
	got, err := LoadSaved(data, ws.Snapshot(), skipEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]any{
		"paths": {ix.paths, got.paths}, "docLen": {ix.docLen, got.docLen}, "avgLen": {ix.avgLen, got.avgLen},
		"terms": {tableOf(ix.terms), tableOf(got.terms)}, "offsets": {ix.offsets, got.offsets}, "posts": {ix.posts, got.posts},
		"pathTrm": {listsOf(&ix.pathTrm), listsOf(&got.pathTrm)}, "defs": {listsOf(&ix.defs), listsOf(&got.defs)},
		"bytes": {ix.bytes, got.bytes},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s differs after LoadSaved", name)
		}
	}
	// The saved name table is the built one, there at once (not built
	// again in the background).
	ix.waitNameTable()
	if got.nameTable() == nil {
		t.Error("no name table right after LoadSaved")
	} else if !reflect.DeepEqual(got.nameTable(), ix.nameTable()) {
		t.Errorf("name table differs after LoadSaved:\n%+v\nbuilt\n%+v", got.nameTable(), ix.nameTable())
	}
	for _, q := range []string{"retry backoff", "load config", "server"} {
		a, _ := Search(context.Background(), ix, Query{Text: q})
		b, _ := Search(context.Background(), got, Query{Text: q})
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%q answers differently after LoadSaved", q)
		}
	}
	// Other options are another file set.
	if _, err := LoadSaved(data, ws.Snapshot(), &BuildOptions{Skip: func(string) bool { return true }}, nil); !errors.Is(err, ErrSavedMismatch) {
		t.Errorf("other file set: %v", err)
	}
	for _, n := range []int{0, 1, len(data) / 2, len(data) - 1} {
		if _, err := LoadSaved(data[:n], ws.Snapshot(), skipEnv, nil); err == nil {
			t.Errorf("cut at %d of %d bytes: loaded", n, len(data))
		}
	}
}

// tableOf is t's entries.
func tableOf(t *binx.Strings) []string {
	out := make([]string, t.Len())
	for i := range out {
		out[i] = t.At(i)
	}
	return out
}

// listsOf is l as keys and their id lists, in order.
func listsOf(l *idLists) []any {
	var out []any
	for i := range l.len() {
		out = append(out, l.key(i), slices.Clone(l.at(i)))
	}
	return out
}

// FuzzLoadSaved: any bytes load or fail, never panic.
func FuzzLoadSaved(f *testing.F) {
	ws, ix := fixtureF(f)
	f.Add(ix.AppendSaved(nil))
	snap := ws.Snapshot()
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, err := LoadSaved(data, snap, nil, nil); err == nil {
			Search(context.Background(), got, Query{Text: "retry config"})
		}
	})
}

// fixtureF is the fixture repository (without fixture's extra files)
// for a fuzz target.
func fixtureF(f *testing.F) (*workspace.Workspace, *Index) {
	dir := f.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/repo")); err != nil {
		f.Fatal(err)
	}
	ws, err := workspace.Open(context.Background(), dir, &workspace.Options{Home: "-", Parse: testParser})
	if err != nil {
		f.Fatal(err)
	}
	ix, err := Build(context.Background(), ws.Snapshot(), nil)
	if err != nil {
		f.Fatal(err)
	}
	return ws, ix
}

// TestSavedWithChanges: loading saved bytes for a snapshot where files
// changed, were added and deleted (unchanged tells which) gives the index
// Build makes of that snapshot: same terms with the same postings, same
// names, same answers.
func TestSavedWithChanges(t *testing.T) {
	for _, front := range []bool{false, true} {
		t.Run(fmt.Sprintf("front=%v", front), func(t *testing.T) { savedWithChanges(t, front) })
	}
}

// savedWithChanges is TestSavedWithChanges; front adds a file of many new
// terms that sort before every saved one, so the merged postings cannot
// be written over the saved ones in place.
func savedWithChanges(t *testing.T, front bool) {
	ws, ix := fixture(t)
	old := ws.Snapshot()
	data := ix.AppendSaved(nil)
	root := old.Root()
	files := old.Files()
	var changed []string
	for i, rel := range files {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		switch i % 7 {
		case 1:
			os.WriteFile(abs, []byte("// rewritten: zebracorn retry config\nfunc Zebracorn() {}\n"), 0o644)
		case 3:
			os.Remove(abs)
		default:
			continue
		}
		changed = append(changed, rel)
	}
	os.WriteFile(filepath.Join(root, "zz_new.go"), []byte("package zz\n\nfunc NewlyAdded() { retry() }\n"), 0o644)
	changed = append(changed, "zz_new.go")
	if front {
		var b strings.Builder
		for i := range 400 {
			fmt.Fprintf(&b, "// aaaa%03dq\n", i)
		}
		os.WriteFile(filepath.Join(root, "aa_front.go"), []byte(b.String()), 0o644)
		changed = append(changed, "aa_front.go")
	}
	if _, err := ws.FilesChanged(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	snap := ws.Snapshot()
	skipEnv := &BuildOptions{Skip: func(rel string) bool { return strings.HasPrefix(filepath.Base(rel), ".env") }}
	want, err := Build(context.Background(), snap, skipEnv)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := DecodeSaved(data)
	if err != nil {
		t.Fatal(err)
	}
	savedPosts := sv.posts
	got, err := sv.Load(snap, skipEnv, func(rel string) bool {
		a, _ := old.File(rel)
		b, _ := snap.File(rel)
		return a != nil && a == b
	})
	if err != nil {
		t.Fatal(err)
	}
	if inPlace := &got.posts[0] == &savedPosts[0]; front && inPlace {
		t.Error("terms added before every saved one: merged in place")
	}
	if got.Terms() != want.Terms() {
		t.Errorf("%d terms, Build has %d", got.Terms(), want.Terms())
	}
	for _, term := range tableOf(want.terms) {
		if !slices.Equal(got.postings(term), want.postings(term)) {
			t.Errorf("postings of %q: %v, Build %v", term, got.postings(term), want.postings(term))
		}
	}
	for name, pair := range map[string][2]any{
		"paths": {want.paths, got.paths}, "docLen": {want.docLen, got.docLen}, "avgLen": {want.avgLen, got.avgLen},
		"pathTrm": {listsOf(&want.pathTrm), listsOf(&got.pathTrm)}, "defs": {listsOf(&want.defs), listsOf(&got.defs)},
		"bytes": {want.bytes, got.bytes}, "terms": {tableOf(want.terms), tableOf(got.terms)},
		"offsets": {want.offsets, got.offsets}, "posts": {want.posts, got.posts},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s differs from Build", name)
		}
	}
	want.waitNameTable()
	got.waitNameTable()
	if !reflect.DeepEqual(got.nameTable(), want.nameTable()) {
		t.Error("name table differs from Build")
	}
	if got.postings("zebracorn") == nil || got.postings("newly") == nil {
		t.Error("new content not indexed")
	}
	for _, q := range []string{"retry backoff", "load config", "zebracorn", "newly added"} {
		a, _ := Search(context.Background(), want, Query{Text: q})
		b, _ := Search(context.Background(), got, Query{Text: q})
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%q answers differently", q)
		}
	}
}

// TestSavedNameTableChecked: a saved name table whose per-file symbol
// counts do not match the files' symbols (well-formed otherwise) is
// refused by Load, and one with a name id out of range by DecodeSaved.
func TestSavedNameTableChecked(t *testing.T) {
	ws, ix := fixture(t)
	data := ix.AppendSaved(nil)
	skipEnv := &BuildOptions{Skip: func(rel string) bool { return strings.HasPrefix(filepath.Base(rel), ".env") }}
	s, err := DecodeSaved(data)
	if err != nil || s.nt == nil {
		t.Fatalf("decode: %v, name table %v", err, s != nil && s.nt != nil)
	}
	// Move one symbol from the first file with symbols to the next file.
	moved := false
	for id := 0; id+1 < len(s.nt.symOff)-1; id++ {
		if s.nt.symOff[id+1] > s.nt.symOff[id] {
			s.nt.symOff[id+1]--
			moved = true
			break
		}
	}
	if !moved {
		t.Fatal("fixture has no symbols")
	}
	if _, err := s.Load(ws.Snapshot(), skipEnv, nil); !errors.Is(err, ErrSavedMismatch) {
		t.Errorf("name table of other symbols: %v", err)
	}
	if _, err := s.Load(ws.Snapshot(), skipEnv, nil); err == nil {
		t.Error("a Saved loaded twice")
	}
	// A name id at the name count (the last id is names-1).
	ix.waitNameTable()
	nt := *ix.nameTable()
	nt.ids = slices.Clone(nt.ids)
	nt.ids[0] = uint32(nt.names)
	bad := *ix
	bad.nt = &nameHolder{done: make(chan struct{})}
	bad.nt.t.Store(&nt)
	close(bad.nt.done)
	if _, err := DecodeSaved(bad.AppendSaved(nil)); !errors.Is(err, ErrSavedMismatch) {
		t.Errorf("name id out of range: %v", err)
	}
	if _, err := DecodeSaved(data); err != nil {
		t.Errorf("the good bytes: %v", err)
	}
}

// TestSavedTouchedKeepsNames: files touched while down (new stamps, the
// same symbols) load with the saved name terms and name table, there at
// once, equal to a Build's; a file whose symbols are renamed gets them
// built again (equal to a Build's too).
func TestSavedTouchedKeepsNames(t *testing.T) {
	for _, rename := range []bool{false, true} {
		ws, ix := fixture(t)
		old := ws.Snapshot()
		data := ix.AppendSaved(nil)
		root := old.Root()
		var touched []string
		renamed := false
		for i, rel := range old.Files() {
			abs := filepath.Join(root, filepath.FromSlash(rel))
			if rename && !renamed && strings.HasSuffix(rel, ".go") {
				src, _ := os.ReadFile(abs)
				os.WriteFile(abs, append(src, []byte("\nfunc RenamedWhileDown() {}\n")...), 0o644)
				renamed = true
			} else if i%3 != 0 {
				continue
			}
			later := time.Now().Add(time.Hour)
			os.Chtimes(abs, later, later)
			touched = append(touched, rel)
		}
		if _, err := ws.FilesChanged(context.Background(), touched); err != nil {
			t.Fatal(err)
		}
		snap := ws.Snapshot()
		skipEnv := &BuildOptions{Skip: func(rel string) bool { return strings.HasPrefix(filepath.Base(rel), ".env") }}
		want, err := Build(context.Background(), snap, skipEnv)
		if err != nil {
			t.Fatal(err)
		}
		s, err := DecodeSaved(data)
		if err != nil {
			t.Fatal(err)
		}
		s.Previous = func(rel string) *workspace.File { f, _ := old.File(rel); return f }
		savedTerms, savedPosts := s.terms, s.posts
		got, err := s.Load(snap, skipEnv, func(rel string) bool {
			a, _ := old.File(rel)
			b, _ := snap.File(rel)
			return a != nil && a == b
		})
		if err != nil {
			t.Fatal(err)
		}
		if !rename && got.nameTable() == nil {
			t.Error("touched files: the name table is built again")
		}
		// Touched: the same terms, the saved table kept (not copied);
		// renamed: a term added, a new table.
		if keep := got.terms == savedTerms; keep == rename {
			t.Errorf("rename %v: saved terms table kept %v", rename, keep)
		}
		if !rename && &got.posts[0] != &savedPosts[0] {
			t.Error("touched files: postings not merged in place")
		}
		want.waitNameTable()
		got.waitNameTable()
		if !reflect.DeepEqual(got.nameTable(), want.nameTable()) {
			t.Errorf("rename %v: name table differs from Build", rename)
		}
		for name, pair := range map[string][2]any{
			"pathTrm": {listsOf(&want.pathTrm), listsOf(&got.pathTrm)}, "defs": {listsOf(&want.defs), listsOf(&got.defs)},
			"docLen": {want.docLen, got.docLen}, "terms": {tableOf(want.terms), tableOf(got.terms)},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("rename %v: %s differs from Build", rename, name)
			}
		}
		for _, term := range tableOf(want.terms) {
			if !slices.Equal(got.postings(term), want.postings(term)) {
				t.Errorf("rename %v: postings of %q differ from Build", rename, term)
			}
		}
		if got.Terms() != want.Terms() {
			t.Errorf("rename %v: %d terms, Build %d", rename, got.Terms(), want.Terms())
		}
		if keys := tableOf(want.defs.keys); rename == reflect.DeepEqual(keys, tableOf(ix.defs.keys)) {
			t.Errorf("rename %v: definition keys changed %v", rename, !reflect.DeepEqual(keys, tableOf(ix.defs.keys)))
		}
	}
}

// TestBuildCapsTermFrequency: a term a file repeats more than maxTF times
// is counted maxTF times (the build's per-term counts saturate there, as a
// posting holds no more), by one worker or two.
func TestBuildCapsTermFrequency(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"spin.go":  "package spin\n// " + strings.Repeat("spin ", maxTF+700) + "once\n",
		"other.go": "package spin\n// spin twice twice\n",
	}
	for rel, text := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(context.Background(), dir, &workspace.Options{Home: "-", Parse: testParser})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		ix, err := Build(context.Background(), ws.Snapshot(), &BuildOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		got := indexTerms(t, ix)
		if tf := got["spin.go"]["spin"]; tf != maxTF {
			t.Errorf("%d workers: spin.go has spin %d times, want %d", workers, tf, maxTF)
		}
		if tf := got["spin.go"]["once"]; tf != 1 {
			t.Errorf("%d workers: spin.go has once %d times, want 1", workers, tf)
		}
		if tf := got["other.go"]["twice"]; tf != 2 {
			t.Errorf("%d workers: other.go has twice %d times, want 2", workers, tf)
		}
	}
}
