package project

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// fixtures are the repositories the saved index is checked on.
var fixtures = []string{
	"../graph/testdata/go", "../graph/testdata/rust", "../graph/testdata/python",
	"../graph/testdata/ts", "../graph/testdata/c", "../retrieve/testdata/repo",
}

var queries = []string{
	"retry backoff", "parse config", "server handler", "user", "import module", "main",
}

// copyTree copies a fixture into a temp folder, every file dated an hour
// ago (so stamps are not ambiguous unless a test makes them so).
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			return err
		}
		return os.Chtimes(to, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

type opened struct {
	p        *Project
	progress []workspace.Progress
	log      *bytes.Buffer
}

func open(t *testing.T, root, dataDir string) *opened {
	t.Helper()
	return openWith(t, root, dataDir, nil)
}

// openWith is open with the options changed by set (nil: none).
func openWith(t *testing.T, root, dataDir string, set func(*Options)) *opened {
	t.Helper()
	o := &opened{log: &bytes.Buffer{}}
	var mu sync.Mutex
	opts := &Options{
		DataDir: dataDir, Home: "-",
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: o.log}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Progress: func(pr workspace.Progress) {
			mu.Lock()
			o.progress = append(o.progress, pr)
			mu.Unlock()
		},
	}
	if set != nil {
		set(opts)
	}
	p, err := Open(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	o.p = p
	t.Cleanup(func() { p.Close() })
	return o
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (o *opened) phases() []string {
	var out []string
	for _, pr := range o.progress {
		ph := pr.Phase // "indexing" with stage "loading" is "loading" here
		if pr.Stage != "" {
			ph = pr.Stage
		}
		if len(out) == 0 || out[len(out)-1] != ph {
			out = append(out, ph)
		}
	}
	return out
}

// answers is everything a client can see of the index: every file's entry
// and parse result, the summary's stats, the graph (stats and queries)
// and retrieval results, as JSON without timings.
func answers(t *testing.T, p *Project) string {
	t.Helper()
	var b strings.Builder
	snap := p.Snapshot()
	for _, rel := range snap.Files() {
		f, _ := snap.File(rel)
		js, _ := json.Marshal(f.Parsed)
		fmt.Fprintf(&b, "file %s %s %d %d %d %q %s\n", f.Path, f.Language, f.Size, f.ModTime.UnixNano(), f.Symbols, f.ParseErr, js)
	}
	st := snap.Summary().Stats
	st.ElapsedMs = 0
	js, _ := json.Marshal(st)
	fmt.Fprintf(&b, "stats %s\n", js)
	g := p.Graph()
	gs := g.Stats()
	gs.BuildMs = 0
	js, _ = json.Marshal(gs)
	fmt.Fprintf(&b, "graph %s\n", js)
	for _, o := range []graph.ProjectOptions{{}, {Level: "module"}, {ImportsOnly: true}} {
		res, err := g.Project(o)
		if err != nil {
			t.Fatal(err)
		}
		res.Stats.BuildMs = 0
		js, _ := json.Marshal(res)
		fmt.Fprintf(&b, "project %+v %s\n", o, js)
	}
	for _, rel := range snap.Files() {
		if deps, err := g.File(rel); err == nil {
			js, _ := json.Marshal(deps)
			fmt.Fprintf(&b, "deps %s\n", js)
		}
	}
	for _, q := range queries {
		res, err := p.Retrieve(context.Background(), retrieve.Query{Text: q, BudgetTokens: 2000})
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(res)
		fmt.Fprintf(&b, "retrieve %q %s\n", q, js)
	}
	return b.String()
}

// cold is the answers of an index built from scratch (no data folder).
func cold(t *testing.T, root string) string {
	t.Helper()
	return answers(t, open(t, root, "").p)
}

// saveAndClose builds the retrieval index (as workspace/open does), saves
// and closes.
func saveAndClose(t *testing.T, o *opened) {
	t.Helper()
	o.p.BuildRetrieval(context.Background())
	if err := o.p.Close(); err != nil {
		t.Fatal(err)
	}
}

func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n got  %.400s\n want %.400s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(al), len(bl))
}

func TestReopenAnswersAsCold(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			root := copyTree(t, fx)
			data := t.TempDir()
			want := cold(t, root)
			first := open(t, root, data)
			if got := answers(t, first.p); got != want {
				t.Fatalf("first open with a data folder differs from cold: %s", diff(got, want))
			}
			saveAndClose(t, first)
			if _, err := os.Stat(IndexPath(data, first.p.Root())); err != nil {
				t.Fatal(err)
			}
			second := open(t, root, data)
			if ph := second.phases(); len(ph) == 0 || ph[0] != "loading" || strings.Contains(strings.Join(ph, " "), "indexing") {
				t.Errorf("phases of an unchanged reopen = %v, want loading and no indexing", ph)
			}
			if !strings.Contains(second.log.String(), "saved index loaded") || !strings.Contains(second.log.String(), "parsed=0") ||
				!strings.Contains(second.log.String(), "retrieval=true") || !strings.Contains(second.log.String(), "graph=true") {
				t.Errorf("log of an unchanged reopen: %s", second.log)
			}
			if got := answers(t, second.p); got != want {
				t.Fatalf("reopened index differs from cold: %s", diff(got, want))
			}
		})
	}
}

// TestReopenPicksUpChanges: files changed, added, deleted and renamed while
// the runtime was down are re-read (and only they are parsed).
func TestReopenPicksUpChanges(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	data := t.TempDir()
	first := open(t, root, data)
	first.p.Graph() // the graph is saved too, and must not be used
	saveAndClose(t, first)
	files := open(t, root, "").p.Snapshot().Files()
	var goFiles []string
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			goFiles = append(goFiles, f)
		}
	}
	if len(goFiles) < 3 {
		t.Fatalf("fixture has %d Go files", len(goFiles))
	}
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	// Changed: a function added.
	changed := abs(goFiles[0])
	src, _ := os.ReadFile(changed)
	src = append(src, []byte("\nfunc AddedWhileDown() {}\n")...)
	os.WriteFile(changed, src, 0o644)
	// Added, deleted, renamed.
	os.WriteFile(filepath.Join(filepath.Dir(changed), "added.go"), []byte("package "+pkgName(t, src)+"\n\nfunc NewWhileDown() int { return 1 }\n"), 0o644)
	os.Remove(abs(goFiles[1]))
	renamed := abs(goFiles[2]) + ".moved.go"
	if err := os.Rename(abs(goFiles[2]), renamed); err != nil {
		t.Fatal(err)
	}
	want := cold(t, root)
	o := open(t, root, data)
	if got := answers(t, o.p); got != want {
		t.Fatalf("reopen after changes differs from cold: %s", diff(got, want))
	}
	ph := o.phases()
	if len(ph) < 2 || ph[0] != "loading" || ph[len(ph)-1] != "indexing" {
		t.Errorf("phases = %v, want loading then indexing", ph)
	}
	if !strings.Contains(o.log.String(), "retrieval=true") {
		t.Errorf("the retrieval index was not taken from the saved one (changed files tokenized again): %s", o.log)
	}
	if !strings.Contains(o.log.String(), "graph=false") {
		t.Errorf("the saved graph was used though files changed: %s", o.log)
	}
	last := o.progress[len(o.progress)-1]
	if last.Parsed != 3 {
		t.Errorf("parsed %d files, want 3 (changed, added, renamed)", last.Parsed)
	}
	if !strings.Contains(answers(t, o.p), "AddedWhileDown") || !strings.Contains(want, "NewWhileDown") {
		t.Error("changes not in the index")
	}
}

// TestReopenUpdatesSavedGraph: with the same paths, files changed while
// down (content rewritten so a reference moves, or only touched) update
// the saved graph (graph.Update) rather than build it, and the reopen
// answers exactly as a cold open, on each graph fixture.
func TestReopenUpdatesSavedGraph(t *testing.T) {
	for _, fixture := range []string{"go", "python", "ts", "rust", "c"} {
		t.Run(fixture, func(t *testing.T) {
			root := copyTree(t, "../graph/testdata/"+fixture)
			data := t.TempDir()
			first := open(t, root, data)
			first.p.Graph()
			saveAndClose(t, first)
			snap := open(t, root, "").p.Snapshot()
			var parsed []string
			for _, rel := range snap.Files() {
				if f, _ := snap.File(rel); f.Parsed != nil {
					parsed = append(parsed, rel)
				}
			}
			if len(parsed) < 2 {
				t.Fatalf("fixture has %d parsed files", len(parsed))
			}
			abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
			// One file takes another's content (its definitions and
			// references move), one is only touched.
			src, err := os.ReadFile(abs(parsed[1]))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(abs(parsed[0]), src, 0o644); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(time.Hour)
			os.Chtimes(abs(parsed[len(parsed)-1]), later, later)
			want := cold(t, root)
			o := open(t, root, data)
			if got := answers(t, o.p); got != want {
				t.Fatalf("reopen after changes differs from cold: %s", diff(got, want))
			}
			if log := o.log.String(); !strings.Contains(log, "saved graph updated") || strings.Contains(log, "not updated") {
				t.Errorf("the saved graph was not updated: %s", log)
			}
		})
	}
}

func pkgName(t *testing.T, src []byte) string {
	for _, l := range strings.Split(string(src), "\n") {
		if name, ok := strings.CutPrefix(l, "package "); ok {
			return strings.TrimSpace(name)
		}
	}
	t.Fatal("no package clause")
	return ""
}

// TestAmbiguousStampIsHashed: a file written again within the stamp's
// resolution (same size, same modification time, same inode) is caught by
// the content hash taken because its stamp was recent.
func TestAmbiguousStampIsHashed(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "a.go")
	os.WriteFile(p, []byte("package a\n\nfunc Before() {}\n"), 0o644)
	fi, _ := os.Stat(p)
	data := t.TempDir()
	first := open(t, root, data)
	if f, _ := first.p.Snapshot().File("a.go"); !f.Hashed {
		t.Fatal("a file modified just now has no content hash")
	}
	saveAndClose(t, first)
	// Same size, same mtime, written in place (same inode).
	if err := os.WriteFile(p, []byte("package a\n\nfunc Bafore() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	second := open(t, root, data)
	f, _ := second.p.Snapshot().File("a.go")
	if !strings.Contains(fmt.Sprint(f.Parsed), "Bafore") {
		t.Fatalf("stale entry reused: %v", f.Parsed)
	}
	if got, want := answers(t, second.p), cold(t, root); got != want {
		t.Fatal(diff(got, want))
	}
}

// TestSavedIndexFaults: a saved index that is truncated, overwritten with
// random bytes, of another format or engine, of another root, or whose
// save failed always ends in a correct index (answers as a cold one), with
// a log line saying why it was ignored.
func TestSavedIndexFaults(t *testing.T) {
	root := copyTree(t, "../retrieve/testdata/repo")
	data := t.TempDir()
	saveAndClose(t, open(t, root, data))
	want := cold(t, root)
	path := IndexPath(data, open(t, root, "").p.Root())
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decodeIndex(good, engineKey(true), open(t, root, "").p.Root())
	if err != nil {
		t.Fatal(err)
	}
	reencode := func(mod func(ix *savedIndex)) []byte {
		ix := *dec
		mod(&ix)
		return encodeIndex(&ix, sortedKeys(ix.files))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	flipped := func(n int) []byte {
		b := bytes.Clone(good)
		for range n {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		return b
	}
	random := make([]byte, len(good))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	wrongFormat := bytes.Clone(good)
	binary.LittleEndian.PutUint32(wrongFormat[len(indexMagic):], indexFormat+1)
	cases := map[string][]byte{
		"empty":        {},
		"header only":  good[:headerLen],
		"truncated":    good[:len(good)/2],
		"one byte off": good[:len(good)-1],
		"padded":       append(bytes.Clone(good), 0),
		"random bytes": random,
		"flipped byte": flipped(1),
		"flipped 50":   flipped(50),
		"format":       wrongFormat,
		"engine":       reencode(func(ix *savedIndex) { ix.engine += " other" }),
		"root":         reencode(func(ix *savedIndex) { ix.root = "/elsewhere" }),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			o := open(t, root, data)
			if !strings.Contains(o.log.String(), "saved index ignored") {
				t.Errorf("no log line for an ignored index: %s", o.log)
			}
			if ph := o.phases(); len(ph) > 0 && ph[0] == "loading" {
				t.Errorf("phases %v: an ignored index is not loaded", ph)
			}
			if got := answers(t, o.p); got != want {
				t.Fatal(diff(got, want))
			}
			// The rebuilt index is saved again and loads.
			saveAndClose(t, o)
			again := open(t, root, data)
			if ph := again.phases(); len(ph) == 0 || ph[0] != "loading" {
				t.Errorf("after the rebuild, phases %v", ph)
			}
			if got := answers(t, again.p); got != want {
				t.Fatal(diff(got, want))
			}
		})
	}

	// A saved index of another root, at this root's path (a copy of the
	// data folder, a hash collision) is not used.
	t.Run("other root's file", func(t *testing.T) {
		other := copyTree(t, "../graph/testdata/python")
		otherData := t.TempDir()
		saveAndClose(t, open(t, other, otherData))
		b, err := os.ReadFile(IndexPath(otherData, open(t, other, "").p.Root()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, b, 0o600)
		o := open(t, root, data)
		if !strings.Contains(o.log.String(), "another engine, format or root") {
			t.Errorf("log: %s", o.log)
		}
		if got := answers(t, o.p); got != want {
			t.Fatal(diff(got, want))
		}
	})
}

// TestFailedSaveKeepsOldFile: a write that fails (disk full) loses the
// save only: the previous file stays whole, no temp file is left, and the
// next open uses the previous file correctly.
func TestFailedSaveKeepsOldFile(t *testing.T) {
	root := copyTree(t, "../graph/testdata/ts")
	data := t.TempDir()
	saveAndClose(t, open(t, root, data))
	path := IndexPath(data, open(t, root, "").p.Root())
	before, _ := os.ReadFile(path)

	entries, _ := os.ReadDir(filepath.Join(root))
	var victim string
	for _, e := range entries {
		if !e.IsDir() {
			victim = filepath.Join(root, e.Name())
			break
		}
	}
	os.WriteFile(victim, []byte("export function changed() {}\n"), 0o644)

	testHookWrite = func(f *os.File, data []byte) error {
		f.Write(data[:len(data)/3])
		return &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	t.Cleanup(func() { testHookWrite = nil })
	o := open(t, root, data)
	o.p.BuildRetrieval(context.Background())
	if err := o.p.Close(); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("Close = %v, want the disk-full error", err)
	}
	testHookWrite = nil
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("a failed save changed the saved index")
	}
	left, _ := os.ReadDir(filepath.Dir(path))
	if len(left) != 1 {
		t.Errorf("index folder holds %d entries after a failed save", len(left))
	}
	want := cold(t, root)
	if got := answers(t, open(t, root, data).p); got != want {
		t.Fatal(diff(got, want))
	}
}

// TestConcurrentSaves: two runtimes saving the same root's index into one
// data folder (and a third opening it meanwhile) never leave a file that
// fails to load or answers wrongly.
func TestConcurrentSaves(t *testing.T) {
	root := copyTree(t, "../graph/testdata/rust")
	data := t.TempDir()
	want := cold(t, root)
	a, b := open(t, root, data), open(t, root, data)
	a.p.BuildRetrieval(context.Background())
	b.p.BuildRetrieval(context.Background())
	var wg sync.WaitGroup
	for _, o := range []*opened{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				o.p.saver.writeMu.Lock()
				o.p.saver.lastSnap = nil // force a write
				o.p.saver.writeMu.Unlock()
				if err := o.p.SaveIndex(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 5 {
		r := open(t, root, data)
		if strings.Contains(r.log.String(), "ignored") {
			t.Errorf("a concurrent open found a broken file: %s", r.log)
		}
		if got := answers(t, r.p); got != want {
			t.Fatal(diff(got, want))
		}
	}
	wg.Wait()
	r := open(t, root, data)
	if !strings.Contains(r.log.String(), "saved index loaded") {
		t.Errorf("log: %s", r.log)
	}
	if got := answers(t, r.p); got != want {
		t.Fatal(diff(got, want))
	}
}

// TestCodecRoundTrip: decode(encode(x)) holds exactly the same entries
// (nil and empty lists kept apart).
func TestCodecRoundTrip(t *testing.T) {
	root := copyTree(t, "../retrieve/testdata/repo")
	p := open(t, root, "").p
	snap := p.Snapshot()
	ix := &savedIndex{engine: "e", root: p.Root(), savedAt: time.Unix(0, 12345), files: map[string]*workspace.File{}, skipped: snap.SkippedFiles()}
	for _, rel := range snap.Files() {
		f, _ := snap.File(rel)
		ix.files[rel] = f
	}
	ix.retrieval = []byte{1, 2, 3}
	ix.git = &workspace.SavedGit{Stamp: "HEAD 1 2\n", Info: workspace.GitInfo{Branch: "trunk", Head: "abc1234", Dirty: 3},
		Others: map[string]uint8{"node_modules": 2, "x/.env": 1}}
	ix.graph = p.Graph().Saved()
	if ix.graph.Len() == 0 {
		t.Fatalf("fixture graph is empty: %+v", ix.graph)
	}
	got, err := decodeIndex(encodeIndex(ix, snap.Files()), "e", p.Root())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.files, ix.files) || !reflect.DeepEqual(got.skipped, ix.skipped) ||
		!bytes.Equal(got.retrieval, ix.retrieval) || !got.savedAt.Equal(ix.savedAt) || !reflect.DeepEqual(got.git, ix.git) ||
		got.graph.Nodes != ix.graph.Nodes || got.graph.Unresolved != ix.graph.Unresolved || !reflect.DeepEqual(got.graph, ix.graph) {
		t.Fatal("round trip differs")
	}
	// The decoded symbols and refs are windows of shared arrays: each
	// must end its capacity, so an append never writes into a neighbour.
	capped := func(files map[string]*workspace.File) {
		t.Helper()
		for rel, f := range files {
			if info, _ := f.Parsed.(*syntax.FileInfo); info != nil && (cap(info.Symbols) != len(info.Symbols) || cap(info.Refs) != len(info.Refs)) {
				t.Errorf("%s: symbols %d/%d, refs %d/%d (len/cap)", rel, len(info.Symbols), cap(info.Symbols), len(info.Refs), cap(info.Refs))
			}
		}
	}
	capped(got.files)
	// The symbol counts of the stamps only size the symbols' array: wrong
	// ones (a crafted file) decode the same parse results.
	wrong := &savedIndex{engine: "e", root: p.Root(), files: map[string]*workspace.File{}, skipped: ix.skipped}
	i := 0
	for rel, f := range ix.files {
		g := *f
		if g.Symbols = f.Symbols * 3; i%2 == 0 {
			g.Symbols = 0
		}
		i++
		wrong.files[rel] = &g
	}
	got, err = decodeIndex(encodeIndex(wrong, snap.Files()), "e", p.Root())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.files, wrong.files) {
		t.Fatal("round trip with wrong symbol counts differs")
	}
	capped(got.files)
}

// TestCodecUnknownKind: a saved symbol whose kind is no kind (behind a
// valid checksum) makes the whole file unusable.
func TestCodecUnknownKind(t *testing.T) {
	root := copyTree(t, "../retrieve/testdata/repo")
	p := open(t, root, "").p
	snap := p.Snapshot()
	ix := &savedIndex{engine: "e", root: p.Root(), files: map[string]*workspace.File{}}
	changed := false
	for _, rel := range snap.Files() {
		f, _ := snap.File(rel)
		if info, _ := f.Parsed.(*syntax.FileInfo); info != nil && len(info.Symbols) > 0 && !changed {
			c := *info
			c.Symbols = slices.Clone(info.Symbols)
			c.Symbols[0].Kind = 99
			g := *f
			g.Parsed = &c
			f, changed = &g, true
		}
		ix.files[rel] = f
	}
	if !changed {
		t.Fatal("no symbol in the fixture")
	}
	if _, err := decodeIndex(encodeIndex(ix, snap.Files()), "e", p.Root()); err == nil {
		t.Fatal("an unknown symbol kind was decoded")
	}
}

// TestSaveStreamsRetrieval: the file SaveIndex writes (the retrieval part
// streamed, the header put in front at the end) holds exactly the bytes
// encodeIndex makes of the same index with the retrieval part in memory.
func TestSaveStreamsRetrieval(t *testing.T) {
	root := copyTree(t, "../retrieve/testdata/repo")
	data := t.TempDir()
	o := open(t, root, data)
	o.p.Graph()
	o.p.BuildRetrieval(context.Background())
	saveAndClose(t, o)
	file, err := os.ReadFile(IndexPath(data, o.p.Root()))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := decodeIndex(file, engineKey(true), o.p.Root())
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.retrieval) == 0 {
		t.Fatal("no retrieval part saved")
	}
	rix, err := o.p.retrievalIndex(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := rix.AppendSaved(nil); !bytes.Equal(ix.retrieval, want) {
		t.Fatalf("saved retrieval part: %d bytes, AppendSaved %d, not equal", len(ix.retrieval), len(want))
	}
	if again := encodeIndex(ix, sortedKeys(ix.files)); !bytes.Equal(again, file) {
		t.Fatalf("the saved file (%d bytes) is not encodeIndex's bytes (%d)", len(file), len(again))
	}
}

// TestSavedGraphNotTrusted: a saved graph whose edges break the graph's
// invariants (behind a valid checksum, engine and root) is not used: the
// graph is built from the records and answers as a cold one.
// makeRange is lo, lo+1, ..., hi-1.
func makeRange(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestSavedGraphNotTrusted(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	data := t.TempDir()
	want := cold(t, root)
	path, ix := savedIndexOf(t, root, data)
	if ix.graph == nil || ix.graph.Len() < 2 {
		t.Fatalf("saved graph: %+v", ix.graph)
	}
	// The first two edges swapped (AddEdge keeps them as added).
	bad := graph.NewSaved(ix.graph.Nodes, ix.graph.Unresolved, ix.graph.Len())
	for _, i := range append([]int{1, 0}, makeRange(2, ix.graph.Len())...) {
		e := ix.graph.Edge(i)
		bad.AddEdge(e.From, e.To, e.Kind, e.Symbols)
	}
	ix.graph = bad
	if err := os.WriteFile(path, encodeIndex(ix, sortedKeys(ix.files)), 0o600); err != nil {
		t.Fatal(err)
	}
	o := open(t, root, data)
	if log := o.log.String(); !strings.Contains(log, "saved graph not used") || !strings.Contains(log, "graph=false") || !strings.Contains(log, "parsed=0") {
		t.Errorf("log: %s", log)
	}
	if got := answers(t, o.p); got != want {
		t.Fatalf("reopen with a bad saved graph differs from cold: %s", diff(got, want))
	}
}

// TestCorruptParseResultRebuilds: a parse result (or the graph) that
// does not decode behind a valid checksum is found while the scan is
// already taking the saved records (they decode side by side): the whole
// saved index is dropped, with a log line, and the folder indexed from
// scratch, answering as a cold open.
func TestCorruptParseResultRebuilds(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	data := t.TempDir()
	want := cold(t, root)
	path, ix := savedIndexOf(t, root, data)
	for _, part := range []int{2, 3} { // the parse results, the graph
		parts := encodeMainParts(ix, sortedKeys(ix.files))
		if len(parts[part]) < 8 {
			t.Fatalf("part %d: %d bytes", part, len(parts[part]))
		}
		for i := range 8 {
			parts[part][i] = 0xff // a varint that never ends
		}
		if err := os.WriteFile(path, withHeader(bytes.Join(append(parts, ix.retrieval), nil)), 0o600); err != nil {
			t.Fatal(err)
		}
		o := open(t, root, data)
		if log := o.log.String(); !strings.Contains(log, "saved index ignored; indexing from scratch") || !strings.Contains(log, "corrupt") {
			t.Errorf("part %d: log: %s", part, log)
		}
		if got := answers(t, o.p); got != want {
			t.Fatalf("part %d: reopen with a corrupt part differs from cold: %s", part, diff(got, want))
		}
		o.p.Close()
	}
}

// FuzzDecodeIndex: any input decodes to an index or an error, never a
// panic or an allocation far beyond its size. The corpus is in
// testdata/fuzz/FuzzDecodeIndex (a real small index among its seeds).
func FuzzDecodeIndex(f *testing.F) {
	g := graph.NewSaved(1, 2, 1)
	g.AddEdge(0, 0, graph.KindImport, syntax.InternNames([]string{"a.go"}))
	ix := &savedIndex{engine: "e", root: "/r", files: map[string]*workspace.File{
		"a.go": {Path: "a.go", Language: "go", Size: 10, ModTime: time.Unix(5, 0), Inode: 7, CTime: 11, Hashed: true, Hash: 9},
	}, skipped: map[string]workspace.SkippedFile{"b.bin": {Binary: true, Size: 3, CTime: 4}},
		graph: g, git: &workspace.SavedGit{Stamp: "s", Info: workspace.GitInfo{Branch: "b", Head: "h", Dirty: 1},
			Others: map[string]uint8{"node_modules": 2}}}
	file := encodeIndex(ix, []string{"a.go"})
	f.Add(file)
	f.Add(file[headerLen:])
	f.Fuzz(func(t *testing.T, data []byte) {
		// The checksum would stop nearly every mutation before the
		// decoder: fuzz the payload behind a valid header.
		for _, b := range [][]byte{data, withHeader(data)} {
			if ix, err := decodeIndex(b, "e", "/r"); err == nil {
				encodeIndex(ix, sortedKeys(ix.files))
			}
		}
	})
}

// withHeader wraps payload in a valid header.
func withHeader(payload []byte) []byte {
	out := []byte(indexMagic)
	out = binary.LittleEndian.AppendUint32(out, indexFormat)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = binary.LittleEndian.AppendUint32(out, crc32Checksum(payload))
	return append(out, payload...)
}

// TestWriteFuzzSeeds writes the seed corpus of FuzzDecodeIndex (a real
// index of a fixture, its payload, cut and patched variants) when
// TASK_X_WRITE_FUZZ_SEEDS is set.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("TASK_X_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set TASK_X_WRITE_FUZZ_SEEDS=1 to write testdata/fuzz/FuzzDecodeIndex")
	}
	root := copyTree(t, "../graph/testdata/python")
	data := t.TempDir()
	first := open(t, root, data)
	first.p.Graph() // saved with the index
	saveAndClose(t, first)
	good, err := os.ReadFile(IndexPath(data, open(t, root, "").p.Root()))
	if err != nil {
		t.Fatal(err)
	}
	// Seeds are decoded for root "/r" and engine "e": re-encode.
	dec, err := decodeIndex(good, engineKey(true), open(t, root, "").p.Root())
	if err != nil {
		t.Fatal(err)
	}
	dec.engine, dec.root = "e", "/r"
	file := encodeIndex(dec, sortedKeys(dec.files))
	seeds := map[string][]byte{
		"python-index":   file,
		"python-payload": file[headerLen:],
		"payload-cut":    file[headerLen : headerLen+len(file)/3],
		"header-only":    file[:headerLen],
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeIndex")
	os.MkdirAll(dir, 0o755)
	for name, b := range seeds {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenSaveWaitsForRetrievalBuild: with Options.BuildRetrieval the
// open's first save is scheduled by BuildRetrieval (after the build the
// reply waits for), not by Open; without it, by Open. The index the
// scheduled save writes holds the retrieval index.
func TestOpenSaveWaitsForRetrievalBuild(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	pending := func(p *Project) bool {
		p.saver.mu.Lock()
		defer p.saver.mu.Unlock()
		return p.saver.pending
	}
	ctx := context.Background()
	plain, err := Open(ctx, root, &Options{DataDir: t.TempDir(), Home: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if !pending(plain) {
		t.Error("Open without BuildRetrieval scheduled no save")
	}
	data := t.TempDir()
	p, err := Open(ctx, root, &Options{DataDir: data, Home: "-", BuildRetrieval: true})
	if err != nil {
		t.Fatal(err)
	}
	if pending(p) {
		t.Error("Open with BuildRetrieval scheduled a save before the build")
	}
	p.BuildRetrieval(ctx)
	if !pending(p) {
		t.Error("BuildRetrieval scheduled no save after the open")
	}
	if p.retrievalCache().Current() == nil {
		t.Fatal("no retrieval index after BuildRetrieval")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, root, &Options{DataDir: data, Home: "-", BuildRetrieval: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.retrievalCache().Current() == nil {
		t.Error("the saved index held no retrieval index")
	}
}

// savedIndexOf opens root with data as the data folder, builds the graph
// (as workspace/open does before the save), saves, and returns the saved
// file's path and its decoded index, for a test to tamper with.
func savedIndexOf(t *testing.T, root, data string) (string, *savedIndex) {
	t.Helper()
	first := open(t, root, data)
	first.p.Graph()
	saveAndClose(t, first)
	path := IndexPath(data, first.p.Root())
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := decodeIndex(file, engineKey(true), first.p.Root())
	if err != nil {
		t.Fatal(err)
	}
	return path, ix
}

// encodeMainParts returns the main part's pieces: the prefix and the
// string table, the stamps, the parse results and the tail (the graph).
func encodeMainParts(ix *savedIndex, paths []string) [][]byte {
	m := encodeMain(ix, paths)
	var body bytes.Buffer
	parts := [][]byte{binx.AppendStrings(m.prefix, m.strs.list), m.stamps, nil, m.tail}
	if err := m.writeBody(&body, nil); err != nil {
		panic(err)
	}
	parts[2] = body.Bytes()
	return parts
}

// TestSaveResultsChangedBetweenPasses: the parse results are encoded
// twice (their lengths first, then as they are written); one that
// changed in between makes the write fail rather than disagree with the
// lengths already written in the stamps.
func TestSaveResultsChangedBetweenPasses(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	_, ix := savedIndexOf(t, root, t.TempDir())
	paths := sortedKeys(ix.files)
	m := encodeMain(ix, paths)
	var changed bool
	for _, p := range paths {
		if info, _ := ix.files[p].Parsed.(*syntax.FileInfo); info != nil && len(info.Refs) > 0 {
			info.Refs = info.Refs[:len(info.Refs)-1]
			changed = true
			break
		}
	}
	if !changed {
		t.Fatal("no parse result with refs in the fixture")
	}
	if err := m.writeTo(io.Discard); err == nil {
		t.Fatal("writeTo after a parse result changed: no error")
	}
}

// TestReopenKeepsGitState: the saved index keeps the git state its files
// were saved under; an unchanged reopen reports it without running git,
// and a reopen after a tracked file changed while the runtime was down
// reports what git says now (as a cold open does).
func TestReopenKeepsGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := copyTree(t, "../graph/testdata/go")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "trunk")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	if err := os.WriteFile(filepath.Join(root, "new.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	coldGit := func() workspace.GitInfo {
		t.Helper()
		g := open(t, root, "").p.Summary().Project.Git
		if g == nil {
			t.Fatal("no git state")
		}
		return *g
	}
	want := coldGit()
	if want.Dirty != 1 {
		t.Fatalf("cold git = %+v, want 1 dirty", want)
	}
	_, saved := savedIndexOf(t, root, data)
	if saved.git == nil || saved.git.Info != want {
		t.Fatalf("saved git state = %+v, want %+v", saved.git, want)
	}
	var files []string
	t.Run("unchanged", func(t *testing.T) {
		// No git to run: the state must come from the saved index.
		t.Setenv("PATH", t.TempDir())
		reopened := open(t, root, data).p
		if g := reopened.Summary().Project.Git; g == nil || *g != want {
			t.Errorf("unchanged reopen: git = %+v, want %+v", g, want)
		}
		files = reopened.Snapshot().Files()
		reopened.Close()
	})
	// A tracked file changed while no runtime ran.
	var tracked string
	for _, rel := range files {
		if rel != "new.go" && strings.HasSuffix(rel, ".go") {
			tracked = rel
			break
		}
	}
	if err := os.WriteFile(filepath.Join(root, tracked), []byte("package main // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want = coldGit()
	if want.Dirty != 2 {
		t.Fatalf("cold git after the change = %+v, want 2 dirty", want)
	}
	if g := open(t, root, data).p.Summary().Project.Git; g == nil || *g != want {
		t.Errorf("reopen after a change: git = %+v, want %+v", g, want)
	}
}

// TestReopenKeepsTouchedParse: files touched while the runtime was down
// (a new modification time, the same content) are not parsed again: the
// reopen keeps their saved parse results, restores the saved graph and
// retrieval index, answers as a cold open, and saves their new stamps so
// the next reopen reuses every entry.
func TestReopenKeepsTouchedParse(t *testing.T) {
	root := copyTree(t, "../graph/testdata/go")
	data := t.TempDir()
	first := open(t, root, data)
	first.p.Graph()
	saveAndClose(t, first)
	files := first.p.Snapshot().Files()
	if len(files) < 3 {
		t.Fatalf("fixture has %d files", len(files))
	}
	later := time.Now().Add(-time.Minute)
	for _, rel := range files[:2] {
		if err := os.Chtimes(filepath.Join(root, rel), later, later); err != nil {
			t.Fatal(err)
		}
	}
	want := cold(t, root)
	second := open(t, root, data)
	log := second.log.String()
	if !strings.Contains(log, "parsed=0") || !strings.Contains(log, "kept=2") || !strings.Contains(log, "graph=true") ||
		!strings.Contains(log, "retrieval=true") {
		t.Errorf("log of a reopen with 2 touched files: %s", log)
	}
	if ph := second.phases(); strings.Contains(strings.Join(ph, " "), "indexing") {
		t.Errorf("phases = %v, want no indexing", ph)
	}
	if got := answers(t, second.p); got != want {
		t.Fatalf("reopen with touched files differs from cold: %s", diff(got, want))
	}
	saveAndClose(t, second)
	third := open(t, root, data)
	if log := third.log.String(); !strings.Contains(log, "kept=0") || !strings.Contains(log, fmt.Sprintf("reused=%d", len(files))) {
		t.Errorf("log of the next reopen: %s", log)
	}
}
