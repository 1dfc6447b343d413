package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// write creates files under root: path → content.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func open(t *testing.T, root string, opts *Options) *Workspace {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Home == "" {
		opts.Home = "-"
	}
	w, err := Open(context.Background(), root, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return w
}

func TestExcludeSemantics(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		".gitignore":               "*.log\n!keep.log\n/only-root.txt\nbuild-out/\nsecret/\n!secret/allowed.txt\ndocs/**/*.tmp\n",
		"a.log":                    "x",
		"keep.log":                 "x",
		"only-root.txt":            "x",
		"sub/only-root.txt":        "x",
		"sub/.gitignore":           "*.gen\n!a.log\n/local\n",
		"sub/x.gen":                "x",
		"sub/a.log":                "x", // re-included by the deeper file
		"sub/local/f.go":           "package f",
		"sub/deep/local/f.go":      "package f",
		"x.gen":                    "x", // sub's rules do not apply at the root
		"build-out/o.txt":          "x",
		"build-out.txt":            "x",
		"secret/allowed.txt":       "x", // parent excluded: cannot be re-included
		"docs/a/b/c.tmp":           "x",
		"docs/c.tmp":               "x",
		"info.txt":                 "x",
		".ignore":                  "ignored-by-dotignore.txt\n",
		"ignored-by-dotignore.txt": "x",
		".task-xignore":            "private/\n",
		"private/p.go":             "package p",
		"node_modules/m/i.js":      "x",
		"vendor/v/v.go":            "package v",
		"go/build/build.go":        "package build",
		"web/package.json":         `{"name":"web"}`,
		"web/dist/app.js":          "x",
		"web/src/app.js":           "x",
		"app.min.js":               "x",
		"req/skip.txt":             "x",
		"req/deep/keep.txt":        "x",
		"z.bak":                    "x",
		"zz/y.bak":                 "x",
		"main.go":                  "package main",
	})
	write(t, root, map[string]string{".git/info/exclude": "info.txt\n", ".git/HEAD": "ref: refs/heads/main\n"})
	w := open(t, root, &Options{Exclude: []string{"req/*.txt", "*.bak"}})
	s := w.Snapshot()
	want := []string{
		".gitignore", ".ignore", ".task-xignore", "go/build/build.go", "keep.log", "main.go",
		"req/deep/keep.txt", "sub/.gitignore", "sub/a.log", "sub/deep/local/f.go", "sub/only-root.txt",
		"vendor/v/v.go", "web/package.json", "web/src/app.js", "x.gen", "build-out.txt",
	}
	slices.Sort(want)
	if got := s.Files(); !slices.Equal(got, want) {
		t.Errorf("Files() =\n%q\nwant\n%q", got, want)
	}
	excluded := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"a.log", false, true},
		{"keep.log", false, false},
		{"secret/allowed.txt", false, true},
		{"secret", true, true},
		{"sub/local", true, true},
		{"sub/local/f.go", false, true},
		{"build-out", true, true},
		{"build-out", false, false},
		{".git/config", false, true},
		{"node_modules", true, true},
		{"private/new.go", false, true},
		{"info.txt", false, true},
		{"web/dist/x.js", false, true},
		{"dist/x.js", false, false}, // no manifest at the root
		{"new/z.bak", false, true},
		{"req/a.txt", false, true},
		{"main.go", false, false},
		{"./main.go", false, false},
	}
	for _, tc := range excluded {
		if got := s.Excluded(tc.rel, tc.isDir); got != tc.want {
			t.Errorf("Excluded(%q, %v) = %v, want %v", tc.rel, tc.isDir, got, tc.want)
		}
	}
	st := w.Summary().Stats
	// 11 excluded files (a.log, only-root.txt, sub/x.gen, info.txt,
	// ignored-by-dotignore.txt, 2 docs .tmp, app.min.js, req/skip.txt, 2 .bak)
	// and 7 excluded folders (.git, node_modules, sub/local, build-out,
	// secret, private, web/dist). Folders do not count in Files.
	if st.Skipped.Excluded != 18 || st.IndexedFiles != len(want) || st.Files != len(want)+11 {
		t.Errorf("stats = %+v", st)
	}
}

func TestBinaryLargeAndCap(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"a.go":    "package a",
		"bin.dat": "ab\x00cd",
		"big.txt": strings.Repeat("x", MaxFileSize+1),
		"ok.txt":  strings.Repeat("y", MaxFileSize),
		// NUL after the first 8 KiB: not binary.
		"late.txt": strings.Repeat("z", BinarySniffSize) + "\x00",
	})
	w := open(t, root, nil)
	st := w.Summary().Stats
	if st.Skipped.Binary != 1 || st.Skipped.TooLarge != 1 || st.IndexedFiles != 3 || st.Files != 5 || st.Truncated {
		t.Errorf("stats = %+v", st)
	}
	if st.Bytes != int64(len("package a")+MaxFileSize+BinarySniffSize+1) {
		t.Errorf("bytes = %d", st.Bytes)
	}
	w2 := open(t, root, &Options{MaxFiles: 2})
	st = w2.Summary().Stats
	if !st.Truncated || st.IndexedFiles > 2 {
		t.Errorf("capped stats = %+v", st)
	}
}

func TestOddEntriesDoNotStopScan(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, root, map[string]string{"a/f.go": "package a", "gone.txt": "x", "real/r.go": "package r"})
	write(t, outside, map[string]string{"o.go": "package o", "od/x.go": "package x"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("..", filepath.Join(root, "a", "loop")))                      // loop to the root
	must(os.Symlink(filepath.Join(outside, "o.go"), filepath.Join(root, "o.go"))) // file outside
	must(os.Symlink(filepath.Join(outside, "od"), filepath.Join(root, "od")))     // folder outside
	must(os.Symlink("real/r.go", filepath.Join(root, "link.go")))                 // file inside
	must(os.Symlink("self", filepath.Join(root, "self")))                         // ELOOP
	must(os.Symlink("missing", filepath.Join(root, "broken")))
	must(os.WriteFile(filepath.Join(root, "bad\xffname.go"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(root, "secret.txt"), []byte("x"), 0o000))

	testHookBeforeRead = func(rel string) {
		if rel == "gone.txt" {
			os.Remove(filepath.Join(root, "gone.txt"))
		}
	}
	defer func() { testHookBeforeRead = nil }()
	w := open(t, root, nil)
	sk := w.Summary().Stats.Skipped
	if sk.SymlinkLoop < 2 || sk.OutsideRoot != 2 || sk.InvalidName != 1 || sk.Vanished != 1 || sk.Unreadable < 1 {
		t.Errorf("skipped = %+v", sk)
	}
	files := w.Snapshot().Files()
	for _, want := range []string{"a/f.go", "link.go", "real/r.go"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s not indexed: %q", want, files)
		}
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: the unreadable-file case cannot be observed")
	} else if slices.Contains(files, "secret.txt") {
		t.Errorf("unreadable file indexed")
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "b.go": "package b"})
	if err := os.Chmod(filepath.Join(root, "b.go"), 0); err != nil {
		t.Fatal(err)
	}
	w := open(t, root, nil)
	if st := w.Summary().Stats; st.Skipped.Unreadable != 1 || st.IndexedFiles != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestOpenInvalidRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	write(t, dir, map[string]string{"f": "x"})
	for _, root := range []string{"", "relative/path", filepath.Join(dir, "missing"), file} {
		_, err := Open(context.Background(), root, nil)
		if !errors.Is(err, ErrInvalidRoot) {
			t.Errorf("Open(%q) = %v, want ErrInvalidRoot", root, err)
		}
	}
	if _, err := Open(context.Background(), dir, &Options{Exclude: []string{"[bad"}}); err == nil {
		t.Errorf("invalid glob accepted")
	}
}

func TestOpenCancelled(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, root, &Options{Home: "-"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context = %v", err)
	}
}

func TestRefreshReusesUnchanged(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "b.go": "package b", "c.bin": "\x00"})
	var parsed sync.Map
	parse := func(_ context.Context, _ string, f *File) (ParseResult, error) {
		n, _ := parsed.LoadOrStore(f.Path, new(int))
		*n.(*int)++
		if f.Path == "b.go" {
			return ParseResult{}, errors.New("bad syntax")
		}
		return ParseResult{Symbols: 2, Data: "tree"}, nil
	}
	w := open(t, root, &Options{Parse: parse})
	st := w.Summary().Stats
	if st.Symbols != 2 || st.ParseErrors != 1 {
		t.Errorf("stats = %+v", st)
	}
	if f, _ := w.Snapshot().File("a.go"); f.Parsed != "tree" || f.Language != "go" {
		t.Errorf("a.go = %+v", f)
	}
	before := w.contentReads.Load()
	old, _ := w.Snapshot().File("a.go")
	write(t, root, map[string]string{"b.go": "package b // changed"})
	sum, err := w.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if reads := w.contentReads.Load() - before; reads != 1 {
		t.Errorf("refresh read %d files, want 1 (b.go)", reads)
	}
	if f, _ := w.Snapshot().File("a.go"); f != old {
		t.Errorf("a.go entry not reused")
	}
	if n, _ := parsed.Load("a.go"); *n.(*int) != 1 {
		t.Errorf("a.go parsed %d times", *n.(*int))
	}
	if w.Snapshot().Version() != 2 || sum.Stats.IndexedFiles != 2 || sum.Stats.Skipped.Binary != 1 {
		t.Errorf("version %d, stats %+v", w.Snapshot().Version(), sum.Stats)
	}
}

// TestUnchangedRefreshSharesFiles: a refresh that finds every file
// unchanged keeps the last snapshot's files (the same map, not a copy);
// one that finds a change, an added or a removed file does not.
func TestUnchangedRefreshSharesFiles(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "d/b.go": "package b"})
	w := open(t, root, nil)
	ctx := context.Background()
	first := w.Snapshot()
	if _, err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	second := w.Snapshot()
	if second == first || !second.SameFiles(first) || reflect.ValueOf(second.files).UnsafePointer() != reflect.ValueOf(first.files).UnsafePointer() {
		t.Errorf("an unchanged refresh built a new file map")
	}
	for _, change := range []func(){
		func() { write(t, root, map[string]string{"c.go": "package c"}) },
		func() { os.Remove(filepath.Join(root, "d/b.go")) },
		func() { write(t, root, map[string]string{"a.go": "package a // longer"}) },
	} {
		before := w.Snapshot()
		beforeFiles := before.Files()
		change()
		if _, err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		after := w.Snapshot()
		if after.SameFiles(before) || reflect.ValueOf(after.files).UnsafePointer() == reflect.ValueOf(before.files).UnsafePointer() {
			t.Errorf("a refresh after a change kept the map: %v -> %v", beforeFiles, after.Files())
		}
		if !slices.Equal(before.Files(), beforeFiles) {
			t.Errorf("the last snapshot's files changed: %v -> %v", beforeFiles, before.Files())
		}
	}
	if got := w.Snapshot().Files(); !slices.Equal(got, []string{"a.go", "c.go"}) {
		t.Errorf("files %v", got)
	}
}

// TestUnchangedRefreshAllocations: a refresh that finds nothing changed
// allocates little per file (the GC that a refresh's garbage calls for
// right after an open, with the heap at its limit, made GOROOT/src's
// refreshes slower than git status): no FileInfo, C string or file map
// per file (this tree: 169 bytes a file before, 18 after).
func TestUnchangedRefreshAllocations(t *testing.T) {
	if runtime.GOOS != "linux" || raceEnabled {
		t.Skip("fstatat without allocations is linux only; the race detector's instrumentation allocates")
	}
	root := t.TempDir()
	files := map[string]string{}
	for d := range 40 {
		for f := range 50 {
			files[fmt.Sprintf("dir%02d/file%02d.go", d, f)] = "package p\n"
		}
	}
	write(t, root, files)
	// Folders listed within racyListing of their modification are listed
	// again on every scan: make them old.
	old := time.Now().Add(-time.Hour)
	for d := range 40 {
		os.Chtimes(filepath.Join(root, fmt.Sprintf("dir%02d", d)), old, old)
	}
	os.Chtimes(root, old, old)
	w := open(t, root, nil)
	ctx := context.Background()
	if _, err := w.Refresh(ctx); err != nil { // warms the batch pool
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 5
	for range runs {
		if _, err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perFile := float64(after.TotalAlloc-before.TotalAlloc) / runs / float64(len(files))
	t.Logf("%.0f bytes allocated per file and refresh", perFile)
	if perFile > 60 {
		t.Errorf("an unchanged refresh allocated %.0f bytes per file", perFile)
	}
}

// TestFilesChangedFolderBecameFile: a folder replaced by a regular file,
// then reported by filesChanged, takes its old files out of the index (QA
// of session 30: they stayed, found by find_symbols and the graph).
func TestFilesChangedFolderBecameFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"main.go": "package main", "d/p.go": "package main", "d/q.go": "package main"})
	w := open(t, root, nil)
	if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"d": "now a file"})
	if _, err := w.FilesChanged(context.Background(), []string{"d"}); err != nil {
		t.Fatal(err)
	}
	if got := w.Snapshot().Files(); !slices.Equal(got, []string{"d", "main.go"}) {
		t.Errorf("files %v, want [d main.go]", got)
	}
}

func TestFilesChanged(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "d/b.go": "package b", "d/e/c.go": "package c", "keep.go": "x"})
	w := open(t, root, nil)
	first := w.Snapshot()
	ctx := context.Background()

	write(t, root, map[string]string{"new.go": "package n", "a.go": "package a // more", "nd/x/y.py": "print(1)"})
	if _, err := w.FilesChanged(ctx, []string{filepath.Join(root, "new.go"), "a.go", "nd"}); err != nil {
		t.Fatal(err)
	}
	s := w.Snapshot()
	if f, ok := s.File("a.go"); !ok || f.Size != int64(len("package a // more")) {
		t.Errorf("a.go = %+v", f)
	}
	for _, p := range []string{"new.go", "nd/x/y.py"} {
		if _, ok := s.File(p); !ok {
			t.Errorf("%s not added", p)
		}
	}
	if _, ok := first.File("new.go"); ok {
		t.Errorf("old snapshot changed")
	}
	// Delete a folder and a file; exclude another by a new .gitignore line.
	os.RemoveAll(filepath.Join(root, "d"))
	os.Remove(filepath.Join(root, "new.go"))
	write(t, root, map[string]string{".gitignore": "keep.go\n"})
	sum, err := w.FilesChanged(ctx, []string{"d", "new.go", ".gitignore", filepath.Join(root, "..", "elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	got := w.Snapshot().Files()
	want := []string{".gitignore", "a.go", "nd/x/y.py"}
	if !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
	if sum.Stats.IndexedFiles != 3 || sum.Stats.Skipped.Excluded != 1 || w.Snapshot().Version() != 3 {
		t.Errorf("stats = %+v version %d", sum.Stats, w.Snapshot().Version())
	}
	// A path that is now excluded by the request globs' equivalent: an ignore file in place.
	write(t, root, map[string]string{"nd/.gitignore": "*.py\n"})
	if _, err := w.FilesChanged(ctx, []string{"nd/.gitignore", "nd/x/y.py"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Snapshot().File("nd/x/y.py"); ok {
		t.Errorf("now-excluded file still indexed")
	}
}

func TestProgressThrottled(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[filepath.Join("d", strings.Repeat("x", i%7+1), time.Duration(i).String()+".go")] = "package x"
	}
	write(t, root, files)
	var mu sync.Mutex
	var times []time.Time
	var active, overlap int
	slow := func(_ context.Context, _ string, _ *File) (ParseResult, error) {
		time.Sleep(3 * time.Millisecond)
		return ParseResult{}, nil
	}
	open(t, root, &Options{Parse: slow, Progress: func(p Progress) {
		mu.Lock()
		active++
		if active > 1 {
			overlap++
		}
		times = append(times, time.Now())
		mu.Unlock()
		if p.Phase != "indexing" {
			t.Errorf("phase %q", p.Phase)
		}
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		active--
		mu.Unlock()
	}})
	mu.Lock()
	defer mu.Unlock()
	if len(times) < 2 {
		t.Fatalf("only %d progress calls", len(times))
	}
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < ProgressInterval {
			t.Errorf("calls %d and %d are %v apart", i-1, i, d)
		}
	}
	if overlap != 0 {
		t.Errorf("concurrent progress calls")
	}
}

// TestProgressTotal: a first scan knows no total; a refresh sends the
// previous scan's entry count as the total the files seen move towards.
func TestProgressTotal(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 120 {
		files[fmt.Sprintf("d/f%03d.go", i)] = "package x"
	}
	write(t, root, files)
	var mu sync.Mutex
	var got []Progress
	// About 360 ms of parsing per scan whatever the number of workers, so
	// each scan reports progress at least once.
	slow := func(_ context.Context, _ string, _ *File) (ParseResult, error) {
		time.Sleep(time.Duration(runtime.NumCPU()) * 3 * time.Millisecond)
		return ParseResult{}, nil
	}
	w := open(t, root, &Options{Parse: slow, Progress: func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}})
	mu.Lock()
	first := got
	got = nil
	mu.Unlock()
	if len(first) == 0 {
		t.Fatal("no progress during the first scan")
	}
	for _, p := range first {
		if p.Total != 0 {
			t.Fatalf("first scan: total %d, want none", p.Total)
		}
	}
	entries := w.Summary().Stats.Files
	for rel := range files {
		files[rel] = "package x // changed"
	}
	write(t, root, files) // changed sizes: every file is read and parsed again
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress during the refresh")
	}
	for _, p := range got {
		if p.Total != entries || p.Files > p.Total {
			t.Fatalf("refresh: progress %+v, want total %d", p, entries)
		}
	}
}

// TestProgressTotalFromGitIndex: a first scan of a git repository's top
// folder reports git's tracked file count as its total from the first
// tick (the walk cannot know its own count early), for a main work tree
// and a linked worktree (.git a file); outside a repository's top there
// is none.
func TestProgressTotalFromGitIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d/f%02d.go", i)] = "package x"
	}
	write(t, root, files)
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git(root, "init", "-q", "-b", "trunk")
	for i := range 20 { // 10 files stay untracked
		git(root, "add", fmt.Sprintf("d/f%02d.go", i))
	}
	git(root, "commit", "-q", "-m", "init")
	wt := filepath.Join(t.TempDir(), "wt")
	git(root, "worktree", "add", "-q", wt)
	lsFiles := func(dir string) int { return len(strings.Fields(git(dir, "ls-files"))) }
	if n := gitIndexEntries(root); n != 20 || n != lsFiles(root) {
		t.Fatalf("gitIndexEntries(root) = %d, want 20 (git ls-files: %d)", n, lsFiles(root))
	}
	if n := gitIndexEntries(wt); n != lsFiles(wt) || n != 20 {
		t.Fatalf("gitIndexEntries(worktree) = %d, want %d", n, lsFiles(wt))
	}
	if n := gitIndexEntries(filepath.Join(root, "d")); n != 0 {
		t.Fatalf("gitIndexEntries(subfolder) = %d, want 0", n)
	}
	// The parse waits for the first tick, so the scan reports progress.
	for _, c := range []struct {
		dir  string
		want int
	}{{root, 20}, {wt, 20}, {filepath.Join(root, "d"), 0}} {
		var mu sync.Mutex
		var got []Progress
		ticked := make(chan struct{})
		var once sync.Once
		wait := func(ctx context.Context, _ string, _ *File) (ParseResult, error) {
			select {
			case <-ticked:
			case <-ctx.Done():
			}
			return ParseResult{}, nil
		}
		open(t, c.dir, &Options{Parse: wait, Progress: func(p Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
			once.Do(func() { close(ticked) })
		}})
		mu.Lock()
		if len(got) == 0 {
			t.Fatalf("%s: no progress", c.dir)
		}
		for _, p := range got {
			// The total is git's count until the scan passes it (an
			// untracked file): then it follows the files seen, never
			// below them.
			want := c.want
			if want > 0 && p.Files > want {
				want = p.Files
			}
			if p.Total != want {
				t.Errorf("%s: progress %+v, want total %d", c.dir, p, want)
			}
		}
		mu.Unlock()
	}
}

func TestProjectDetection(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		wantName  string
		wantKinds []string
		wantCmds  map[string]string
	}{
		{"go", map[string]string{"go.mod": "module github.com/acme/tool/v2\n", "main.go": "package main"},
			"tool", []string{"go"}, map[string]string{"build": "go build -o /dev/null ./...", "test": "go test ./...", "lint": "go vet ./..."}},
		{"node-pnpm", map[string]string{"package.json": `{"name":"@acme/web","scripts":{"build":"vite build","test":"vitest","lint":"eslint .","dev":"vite"}}`, "pnpm-lock.yaml": "lockfileVersion: 9\n", "src/a.ts": "x"},
			"@acme/web", []string{"node"}, map[string]string{"build": "pnpm run build", "test": "pnpm test", "lint": "pnpm run lint", "run": "pnpm run dev"}},
		{"rust", map[string]string{"Cargo.toml": "[package]\nname = \"crab\"\nversion = \"0.1.0\"\n", "src/main.rs": "fn main(){}"},
			"crab", []string{"rust"}, map[string]string{"build": "cargo build", "test": "cargo test", "lint": "cargo clippy", "run": "cargo run"}},
		{"python", map[string]string{"pyproject.toml": "[project]\nname = \"snake\"\n[tool.pytest.ini_options]\n", "snake/__init__.py": ""},
			"snake", []string{"python"}, map[string]string{"test": "pytest"}},
		{"node-npm-placeholder-ts", map[string]string{"package.json": `{"name":"w","scripts":{"test":"echo \"Error: no test specified\" && exit 1"},"devDependencies":{"typescript":"^5"}}`, "package-lock.json": "{}", "tsconfig.json": "{}"},
			"w", []string{"node"}, map[string]string{"build": "npx tsc --noEmit"}},
		{"node-yarn", map[string]string{"package.json": `{"name":"y","scripts":{"test":"jest","lint":"eslint ."}}`, "yarn.lock": ""},
			"y", []string{"node"}, map[string]string{"test": "yarn test", "lint": "yarn lint"}},
		{"python-uv", map[string]string{"pyproject.toml": "[project]\nname = \"u\"\n[tool.ruff]\n[tool.mypy]\n", "uv.lock": "", "tests/conftest.py": ""},
			"u", []string{"python"}, map[string]string{"test": "uv run pytest", "lint": "uv run ruff check .", "build": "uv run mypy ."}},
		{"python-tox-flake8", map[string]string{"setup.py": "", "tox.ini": "[tox]\nenvlist = py3\n[flake8]\n"},
			"python-tox-flake8", []string{"python"}, map[string]string{"test": "tox", "lint": "flake8"}},
		{"python-no-runner", map[string]string{"requirements.txt": "requests\n", "app.py": ""},
			"python-no-runner", []string{"python"}, map[string]string{}},
		{"maven-wrapper", map[string]string{"pom.xml": "<project/>", "mvnw": ""},
			"maven-wrapper", []string{"maven", "java"}, map[string]string{"build": "./mvnw -q compile", "test": "./mvnw -q test"}},
		{"gradle", map[string]string{"build.gradle.kts": ""},
			"gradle", []string{"gradle", "java"}, map[string]string{"build": "gradle assemble", "test": "gradle test"}},
		{"dotnet", map[string]string{"App.csproj": "<Project/>"},
			"dotnet", []string{"dotnet"}, map[string]string{"build": "dotnet build", "test": "dotnet test", "lint": "dotnet format --verify-no-changes"}},
		{"none", map[string]string{"README.md": "# hi\n", "notes.txt": ""},
			"none", []string{}, map[string]string{}},
		{"mixed", map[string]string{"go.mod": "module demo\n", "web/package.json": `{"name":"web","scripts":{"test":"jest"}}`, "tools/py/requirements.txt": "x", "Makefile": "test:\n\tgo test ./...\nrun:\n\tgo run .\n", "a/b/c/d/Cargo.toml": "[package]\nname=\"deep\"\n"},
			"demo", []string{"make", "go", "node", "python"}, map[string]string{"build": "go build -o /dev/null ./...", "test": "go test ./...", "lint": "go vet ./...", "run": "make run"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tc.files)
			p := open(t, root, nil).Summary().Project
			if tc.wantName == tc.name {
				tc.wantName = filepath.Base(root)
			}
			if fs := Commands(root); tc.name != "mixed" && !maps.Equal(fs, p.Commands) {
				t.Errorf("Commands(root) = %v, summary commands %v", fs, p.Commands)
			}
			if p.Name != tc.wantName || !slices.Equal(p.Kinds, tc.wantKinds) {
				t.Errorf("name %q kinds %q, want %q %q", p.Name, p.Kinds, tc.wantName, tc.wantKinds)
			}
			if len(p.Commands) != len(tc.wantCmds) {
				t.Errorf("commands = %v, want %v", p.Commands, tc.wantCmds)
			}
			for k, v := range tc.wantCmds {
				if p.Commands[k] != v {
					t.Errorf("commands[%s] = %q, want %q", k, p.Commands[k], v)
				}
			}
			if p.Git != nil {
				t.Errorf("git = %+v without a repository", p.Git)
			}
		})
	}
	t.Run("languages-and-manifests", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, map[string]string{"go.mod": "module m\n", "a.go": "", "b.go": "", "c.py": "", "web/package.json": "{}", "script": "#!/usr/bin/env python3\n"})
		p := open(t, root, nil).Summary().Project
		want := []LanguageCount{{Language: "go", Files: 2}, {Language: "python", Files: 2}, {Language: "go.mod", Files: 1}, {Language: "json", Files: 1}}
		if !slices.Equal(p.Languages, want) {
			t.Errorf("languages = %v, want %v", p.Languages, want)
		}
		if !slices.Equal(p.Manifests, []string{"go.mod", "web/package.json"}) {
			t.Errorf("manifests = %q", p.Manifests)
		}
	})
}

func TestGitInfo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a"})
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "trunk")
	run("add", ".")
	run("commit", "-q", "-m", "init")
	write(t, root, map[string]string{"a.go": "package a // x", "b.go": "package b"})
	w := open(t, root, nil)
	g := w.Summary().Project.Git
	if g == nil || g.Branch != "trunk" || len(g.Head) < 4 || g.Dirty != 2 {
		t.Errorf("git = %+v", g)
	}

	// Refreshes: git runs only when its files or the workspace's files
	// changed, and every change is seen.
	ctx := context.Background()
	refresh := func(what string) (*GitInfo, int64) {
		t.Helper()
		before := w.gitRuns.Load()
		s, err := w.Refresh(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if s.Project.Git == nil {
			t.Fatalf("%s: git = nil", what)
		}
		return s.Project.Git, w.gitRuns.Load() - before
	}
	if g2, runs := refresh("unchanged"); runs != 0 || *g2 != *g {
		t.Errorf("unchanged refresh: git = %+v after %d runs, want %+v without running git", g2, runs, g)
	}
	write(t, root, map[string]string{"c.go": "package c"})
	if g2, runs := refresh("new file"); runs != 1 || g2.Dirty != 3 {
		t.Errorf("new file: git = %+v after %d runs, want dirty 3 after 1", g2, runs)
	}
	if err := os.Remove(filepath.Join(root, "c.go")); err != nil {
		t.Fatal(err)
	}
	if g2, runs := refresh("deleted file"); runs != 1 || g2.Dirty != 2 {
		t.Errorf("deleted file: git = %+v after %d runs, want dirty 2 after 1", g2, runs)
	}
	run("add", "a.go")
	if g2, runs := refresh("staged"); runs != 1 || g2.Dirty != 2 {
		t.Errorf("staged: git = %+v after %d runs, want dirty 2 after 1", g2, runs)
	}
	run("commit", "-q", "-m", "a")
	g2, runs := refresh("commit")
	if runs != 1 || g2.Dirty != 1 || g2.Head == g.Head || g2.Branch != "trunk" {
		t.Errorf("commit: git = %+v after %d runs, want a new head, dirty 1 after 1 run", g2, runs)
	}
	run("checkout", "-q", "-b", "topic")
	if g3, runs := refresh("branch"); runs != 1 || g3.Branch != "topic" || g3.Head != g2.Head {
		t.Errorf("new branch: git = %+v after %d runs, want branch topic at %s after 1", g3, runs, g2.Head)
	}
	if _, runs := refresh("unchanged again"); runs != 0 {
		t.Errorf("unchanged refresh ran git %d times", runs)
	}
	write(t, root, map[string]string{"a.go": "package a // changed again"})
	if s, err := w.FilesChanged(ctx, []string{"a.go"}); err != nil || s.Project.Git == nil || s.Project.Git.Dirty != 2 {
		t.Errorf("filesChanged: %v, git = %+v, want dirty 2", err, s.Project.Git)
	}
}

// TestGitProbe: Options.Git hands Open the git state StartGit read before
// it (project.Open starts git before it loads a saved index): the scan
// takes that answer and its stamp instead of running git, also in a second
// Open with the same probe (project.Open's rebuild after a late failure);
// a probe of another folder is not used.
func TestGitProbe(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := func(branch string, dirty map[string]string) string {
		t.Helper()
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		write(t, root, map[string]string{"a.go": "package a"})
		for _, args := range [][]string{{"init", "-q", "-b", branch}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
			cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		write(t, root, dirty)
		return root
	}
	a := repo("trunk", map[string]string{"b.go": "package b"})
	b := repo("topic", map[string]string{"c.go": "package c", "d.go": "package d"})
	ctx := context.Background()
	pa, pb := StartGit(ctx, a, nil), StartGit(ctx, b, nil)
	before := pa.result()
	if before == nil || before.Branch != "trunk" || before.Dirty != 1 {
		t.Fatalf("probe of a = %+v, want trunk with 1 dirty", before)
	}
	// A file made after the probe read git: a scan that ran git itself
	// would count it.
	write(t, a, map[string]string{"e.go": "package e"})
	for i := range 2 {
		w := open(t, a, &Options{Git: pa})
		if g := w.Summary().Project.Git; g == nil || *g != *before {
			t.Errorf("open %d with the probe: git = %+v, want the probe's %+v", i, g, before)
		}
		if n := w.gitRuns.Load(); n != 1 {
			t.Errorf("open %d with the probe: %d git runs, want 1", i, n)
		}
	}
	g := open(t, a, &Options{Git: pb}).Summary().Project.Git
	if g == nil || g.Branch != "trunk" || g.Dirty != 2 {
		t.Errorf("open of a with b's probe: git = %+v, want a's own (trunk, 2 dirty)", g)
	}
}

func TestInstructions(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	big := strings.Repeat("é", MaxInstructionSize) // 2 bytes each
	write(t, home, map[string]string{".task-x/instructions.md": "user rules"})
	write(t, root, map[string]string{
		"AGENTS.md":                       "root agents",
		"CLAUDE.md":                       "top\n@docs/style.md\n```\n@docs/style.md\n```\n@../outside.md\n@missing.md\n",
		"docs/style.md":                   "style\n@../CLAUDE.md\n@more.md\n",
		"docs/more.md":                    "more",
		".cursor/rules/a.mdc":             "cursor a",
		".clinerules/1.md":                "cline 1",
		".github/copilot-instructions.md": "copilot",
		"GEMINI.md":                       big,
		"svc/AGENTS.md":                   "svc agents",
		"svc/.task-x/instructions.md":     "svc taskx",
		"node_modules/x/AGENTS.md":        "excluded",
		".gitignore":                      "CLAUDE.local.md\n",
		"CLAUDE.local.md":                 "local",
	})
	w := open(t, root, &Options{Home: home})
	got := map[string]Instruction{}
	var order []string
	for _, in := range w.Summary().Instructions {
		got[in.Source] = in
		order = append(order, in.Source)
	}
	wantOrder := []string{"~/.task-x/instructions.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md",
		".github/copilot-instructions.md", ".cursor/rules/a.mdc", ".clinerules/1.md", "svc/AGENTS.md", "svc/.task-x/instructions.md"}
	if !slices.Equal(order, wantOrder) {
		t.Fatalf("order = %q\nwant    %q", order, wantOrder)
	}
	if in := got["~/.task-x/instructions.md"]; in.Scope != ScopeUser || in.Content != "user rules" {
		t.Errorf("user = %+v", in)
	}
	wantClaude := "top\nstyle\n@../CLAUDE.md\nmore\n```\n@docs/style.md\n```\n@../outside.md\n@missing.md\n"
	if c := got["CLAUDE.md"].Content; c != wantClaude {
		t.Errorf("CLAUDE.md = %q, want %q", c, wantClaude)
	}
	g := got["GEMINI.md"]
	if !g.Truncated || len(g.Content) != MaxInstructionSize || !strings.HasSuffix(g.Content, "é") {
		t.Errorf("GEMINI.md truncated=%v len=%d", g.Truncated, len(g.Content))
	}
	if in := got["svc/.task-x/instructions.md"]; in.Scope != ScopeDirectory || in.Dir != "svc" {
		t.Errorf("svc taskx = %+v", in)
	}
	if in := got["AGENTS.md"]; in.Scope != ScopeWorkspace || in.Dir != "" {
		t.Errorf("root agents = %+v", in)
	}
	forSvc := w.Snapshot().InstructionsFor("svc/main.go")
	forRoot := w.Snapshot().InstructionsFor("main.go")
	if len(forSvc) != len(wantOrder) || len(forRoot) != len(wantOrder)-2 {
		t.Errorf("InstructionsFor: svc %d, root %d", len(forSvc), len(forRoot))
	}
	if len(w.Snapshot().InstructionsFor("svcx/a.go")) != len(wantOrder)-2 {
		t.Errorf("svc instructions leak into svcx")
	}
}

func TestSummaryJSONShape(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a"})
	data, err := json.Marshal(open(t, root, nil).Summary())
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"root", "project", "stats", "instructions", "excludes"} {
		if _, ok := top[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, data)
		}
	}
	var s struct {
		Project map[string]any `json:"project"`
		Stats   map[string]any `json:"stats"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "kinds", "manifests", "languages", "commands", "git"} {
		if _, ok := s.Project[k]; !ok {
			t.Errorf("project lacks %q", k)
		}
	}
	for _, k := range []string{"files", "indexedFiles", "skipped", "bytes", "symbols", "parseErrors", "elapsedMs", "truncated"} {
		if _, ok := s.Stats[k]; !ok {
			t.Errorf("stats lacks %q", k)
		}
	}
	if string(top["instructions"]) != "[]" {
		t.Errorf("instructions = %s, want []", top["instructions"])
	}
}

func TestConcurrentReadersAndWriters(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a"})
	w := open(t, root, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				w.Refresh(ctx)
			} else {
				w.FilesChanged(ctx, []string{"a.go"})
			}
		}()
		go func() {
			defer wg.Done()
			s := w.Snapshot()
			_ = s.Files()
			_ = s.Excluded("a.go", false)
		}()
	}
	wg.Wait()
	if v := w.Snapshot().Version(); v != 5 {
		t.Errorf("version = %d, want 5", v)
	}
}

func TestDetectLanguage(t *testing.T) {
	tests := map[string]struct{ head, want string }{
		"a.go": {"", "go"}, "a.TSX": {"", "tsx"}, "Makefile": {"", "makefile"}, "x.h": {"", "c"},
		"run": {"#!/usr/bin/env -S python3.12 -u\n", "python"}, "tool": {"#!/bin/bash\n", "bash"},
		"noext": {"hello", ""}, "a.unknown": {"", ""},
	}
	for name, tc := range tests {
		if got := detectLanguage(name, []byte(tc.head)); got != tc.want {
			t.Errorf("detectLanguage(%q) = %q, want %q", name, got, tc.want)
		}
	}
}

// goSrc returns $(go env GOROOT)/src or skips.
func goSrc(b *testing.B) string {
	if dir := os.Getenv("TASK_X_BENCH_DIR"); dir != "" {
		return dir
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT failed")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("GOROOT/src absent")
	}
	return src
}

// BenchmarkRefresh measures a rescan of Go's source (or TASK_X_BENCH_DIR)
// where nothing changed: stats only, no reads.
func BenchmarkRefresh(b *testing.B) {
	w, err := Open(context.Background(), goSrc(b), &Options{Home: "-"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		if _, err := w.Refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time moves less than wall time with the machine's load.
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(w.Summary().Stats.IndexedFiles)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

func BenchmarkOpen(b *testing.B) {
	src := goSrc(b)
	var files int
	b.ResetTimer()
	for b.Loop() {
		w, err := Open(context.Background(), src, &Options{Home: "-"})
		if err != nil {
			b.Fatal(err)
		}
		files = w.Summary().Stats.IndexedFiles
	}
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// Snapshot is the tool package's Index.
var _ interface {
	Files() []string
	Excluded(rel string, isDir bool) bool
} = (*Snapshot)(nil)

func TestGoSourceSanity(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skip("no go env")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		t.Skip("GOROOT/src absent")
	}
	w := open(t, src, nil)
	s := w.Snapshot()
	if _, ok := s.File("go/build/build.go"); !ok {
		t.Errorf("go/build/build.go not indexed")
	}
	if _, ok := s.File("cmd/vendor/modules.txt"); !ok {
		t.Errorf("vendor not indexed")
	}
	if _, ok := s.File("internal/coverage/defs.go"); !ok {
		t.Errorf("internal/coverage not indexed")
	}
	st := w.Summary().Stats
	t.Logf("GOROOT/src: %+v, kinds %v", st, w.Summary().Project.Kinds)
}

func TestSameFilesAcrossUnchangedRefresh(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "b/c.go": "package c"})
	w := open(t, root, nil)
	first := w.Snapshot()
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := w.Snapshot()
	if second == first || second.Version() != first.Version()+1 {
		t.Fatalf("refresh published no new snapshot (versions %d, %d)", first.Version(), second.Version())
	}
	if !second.SameFiles(first) || !first.SameFiles(second) {
		t.Error("unchanged refresh: SameFiles = false")
	}
	write(t, root, map[string]string{"b/c.go": "package c // edited"})
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.Snapshot().SameFiles(first) {
		t.Error("edited file: SameFiles = true")
	}
	write(t, root, map[string]string{"d.go": "package d"})
	before := w.Snapshot()
	if _, err := w.FilesChanged(context.Background(), []string{"d.go"}); err != nil {
		t.Fatal(err)
	}
	if w.Snapshot().SameFiles(before) {
		t.Error("added file: SameFiles = true")
	}
	if first.SameFiles(nil) || (*Snapshot)(nil).SameFiles(first) {
		t.Error("SameFiles with nil = true")
	}
	other := open(t, root, nil).Snapshot()
	if other.SameFiles(w.Snapshot()) {
		t.Error("snapshots of two workspaces: SameFiles = true")
	}
}

// TestRefreshReusesUnchangedListings: folders last modified long before
// they were listed are not listed again while unchanged, and a refresh
// still sees every file added, removed, renamed, changed or turned into a
// folder, and a new ignore rule.
func TestRefreshReusesUnchangedListings(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "d/b.go": "package b", "d/e/c.go": "package c",
		"f/g.go": "package g", "h/i.go": "package i", "d/.gitignore": "none.txt\n"})
	old := time.Now().Add(-time.Hour)
	age := func() {
		t.Helper()
		for _, d := range []string{"", "d", "d/e", "f", "h", "h/i.go"} {
			if err := os.Chtimes(filepath.Join(root, d), old, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	age()
	w := open(t, root, nil)
	ctx := context.Background()
	var matched int64 // entries matched against the rules by the last refresh
	refresh := func() (Summary, int64) {
		t.Helper()
		before, m := w.dirReads.Load(), w.rulesMatched.Load()
		s, err := w.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		matched = w.rulesMatched.Load() - m
		return s, w.dirReads.Load() - before
	}
	if _, reads := refresh(); reads != 0 || matched != 0 {
		t.Errorf("unchanged refresh listed %d folders and matched %d entries against the rules, want 0, 0", reads, matched)
	}
	// A content change is seen through the file's own lstat.
	write(t, root, map[string]string{"d/e/c.go": "package c // longer"})
	if _, reads := refresh(); reads != 0 {
		t.Errorf("a content change listed %d folders, want 0", reads)
	}
	if f, _ := w.Snapshot().File("d/e/c.go"); f == nil || f.Size != int64(len("package c // longer")) {
		t.Errorf("changed d/e/c.go = %+v", f)
	}
	// Added, removed, renamed, replaced by a folder: their folders changed.
	write(t, root, map[string]string{"d/new.go": "package d"})
	if err := os.Remove(filepath.Join(root, "a.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "f/g.go"), filepath.Join(root, "f/g2.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "h/i.go")); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"h/i.go/j.go": "package j"})
	s, reads := refresh()
	if reads == 0 {
		t.Error("changed folders were not listed again")
	}
	want := []string{"d/.gitignore", "d/b.go", "d/e/c.go", "d/new.go", "f/g2.go", "h/i.go/j.go"}
	if got := w.Snapshot().Files(); !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
	if s.Stats.IndexedFiles != len(want) {
		t.Errorf("stats = %+v", s.Stats)
	}
	// Folders modified just now are listed on every scan (racy timestamps)
	// until they age.
	if _, reads := refresh(); reads == 0 {
		t.Error("recently modified folders were reused")
	}
	age()
	refresh() // lists the aged folders once more (their mtime changed)
	if _, reads := refresh(); reads != 0 {
		t.Errorf("aged folders listed %d times, want 0", reads)
	}
	// An ignore file rewritten in place (its folder unchanged) applies.
	write(t, root, map[string]string{"d/.gitignore": "b.go\n"})
	if _, reads := refresh(); reads != 0 {
		t.Errorf("rewriting d/.gitignore listed %d folders, want 0", reads)
	}
	if _, ok := w.Snapshot().File("d/b.go"); ok {
		t.Error("d/b.go still indexed after d/.gitignore excluded it")
	}
	if matched == 0 {
		t.Error("a rewritten d/.gitignore did not classify d's entries again")
	}
	if _, reads := refresh(); reads != 0 || matched != 0 {
		t.Errorf("unchanged refresh listed %d folders and matched %d entries, want 0, 0", reads, matched)
	}
	// A parent's ignore file and .git/info/exclude apply to folders whose
	// listings (and cached answers) are reused.
	write(t, root, map[string]string{".gitignore": "c.go\n", ".git/info/exclude": "g2.go\n"})
	refresh()
	if got, want := w.Snapshot().Files(), []string{".gitignore", "d/.gitignore", "d/new.go", "h/i.go/j.go"}; !slices.Equal(got, want) {
		t.Errorf("after the root .gitignore and info/exclude: files = %q, want %q", got, want)
	}
	age()
	refresh()                                                                    // lists the aged root once more
	write(t, root, map[string]string{".gitignore": "", ".git/info/exclude": ""}) // emptied in place: no folder changes
	if _, reads := refresh(); reads != 0 {
		t.Errorf("emptying the root ignore files listed %d folders, want 0", reads)
	}
	if got, want := w.Snapshot().Files(), []string{".gitignore", "d/.gitignore", "d/e/c.go", "d/new.go", "f/g2.go", "h/i.go/j.go"}; !slices.Equal(got, want) {
		t.Errorf("after emptying them: files = %q, want %q", got, want)
	}
	write(t, root, map[string]string{".git/info/exclude": "g2.go\n"}) // alone, in place
	if _, reads := refresh(); reads != 0 {
		t.Errorf("rewriting .git/info/exclude listed %d folders, want 0", reads)
	}
	if _, ok := w.Snapshot().File("f/g2.go"); ok {
		t.Error("f/g2.go still indexed after .git/info/exclude excluded it")
	}
}

// TestParseSourceGetsWholeFiles checks that a SourceParser gets each text
// file's whole content from the scan's one read (around the sniff size
// and past the first buffer), no binary file, the ambiguous stamp's hash
// of that content, and that a changed file is read again on refresh.
func TestParseSourceGetsWholeFiles(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"empty.txt": ""}
	for _, n := range []int{1, BinarySniffSize - 1, BinarySniffSize, BinarySniffSize + 1, 3*BinarySniffSize + 7, 300 << 10} {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		files[fmt.Sprintf("f%d.txt", n)] = b.String()[:n]
	}
	files["late.bin"] = strings.Repeat("a", BinarySniffSize+10) + "\x00" // NUL after the sniff: text
	files["bin.dat"] = "ab\x00cd"
	write(t, root, files)
	var got sync.Map
	parse := func(_ context.Context, f *File, src []byte) (ParseResult, error) {
		got.Store(f.Path, string(src))
		return ParseResult{Symbols: 1, Data: len(src)}, nil
	}
	w := open(t, root, &Options{ParseSource: parse})
	snap := w.Snapshot()
	for rel, want := range files {
		v, ok := got.Load(rel)
		if rel == "bin.dat" {
			if ok {
				t.Errorf("binary file %s was parsed", rel)
			}
			continue
		}
		if !ok || v.(string) != want {
			t.Errorf("%s: parser got %d bytes, want %d", rel, len(fmt.Sprint(v)), len(want))
		}
		f, _ := snap.File(rel)
		if f == nil || f.Parsed != len(want) {
			t.Errorf("%s: entry %+v", rel, f)
			continue
		}
		// Written just now: the stamp is ambiguous, the entry hashed.
		if !f.Hashed || f.Hash != ContentHash([]byte(want)) {
			t.Errorf("%s: hash %v %x, want the content's", rel, f.Hashed, f.Hash)
		}
	}
	write(t, root, map[string]string{"f1.txt": "changed content"})
	if _, err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Load("f1.txt"); v != "changed content" {
		t.Errorf("after refresh the parser got %q", v)
	}
}

// TestSavedGit: a first scan with a saved index's git state
// (Options.SavedGit) runs none of git's commands when git's stamp and
// every entry are the saved ones, and otherwise answers as git does: a
// changed, deleted or new file, a new excluded folder, a commit, and a
// repository with submodules each run git once.
func TestSavedGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write(t, root, map[string]string{"a.go": "package a", "big.bin": "\x00\x01"})
	run("init", "-q", "-b", "trunk")
	run("add", ".")
	run("commit", "-q", "-m", "init")
	write(t, root, map[string]string{"a.go": "package a // x", "b.go": "package b"})
	// A binary file read within AmbiguousWindow of its change is not
	// offered to a saved index (SkippedFiles): one older than that is.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "big.bin"), old, old); err != nil {
		t.Fatal(err)
	}
	base := open(t, root, nil).Snapshot()
	sg := base.SavedGit()
	if sg == nil || sg.Info.Branch != "trunk" || sg.Info.Dirty != 2 {
		t.Fatalf("saved git = %+v, want trunk with 2 dirty", sg)
	}
	saved := func(s *Snapshot) *Saved { return &Saved{Files: s.files, Skipped: s.SkippedFiles()} }
	// reopen opens root with s's saved state and returns git's answer and
	// how many times git ran; fresh is git's own answer now.
	reopen := func(s *Snapshot, g *SavedGit) (*GitInfo, int64) {
		t.Helper()
		w := open(t, root, &Options{Saved: saved(s), SavedGit: g})
		return w.Summary().Project.Git, w.gitRuns.Load()
	}
	fresh := func() GitInfo {
		t.Helper()
		g := open(t, root, nil).Summary().Project.Git
		if g == nil {
			t.Fatal("git = nil")
		}
		return *g
	}
	check := func(what string, wantRuns int64) {
		t.Helper()
		g, runs := reopen(base, sg)
		if want := fresh(); g == nil || *g != want || runs != wantRuns {
			t.Errorf("%s: git = %+v after %d runs, want %+v after %d", what, g, runs, want, wantRuns)
		}
	}
	check("unchanged", 0)
	check("unchanged again", 0)
	if g, runs := reopen(base, &SavedGit{Stamp: sg.Stamp, Info: GitInfo{Branch: "x"}, Others: sg.Others}); runs != 0 || g == nil || g.Branch != "x" {
		t.Errorf("the saved answer is the one used: git = %+v after %d runs", g, runs)
	}
	if g, runs := reopen(base, &SavedGit{Stamp: sg.Stamp + "x", Info: sg.Info, Others: sg.Others}); runs != 1 || g == nil || *g != sg.Info {
		t.Errorf("another stamp: git = %+v after %d runs, want git's answer after 1", g, runs)
	}

	write(t, root, map[string]string{"a.go": "package a"}) // back to the committed content
	check("changed file", 1)
	write(t, root, map[string]string{"a.go": "package a // x"})
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	check("deleted file", 1)
	write(t, root, map[string]string{"b.go": "package b", "c.go": "package c"})
	check("new file", 1)
	if err := os.Remove(filepath.Join(root, "c.go")); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"node_modules/m.js": "x"})
	check("new excluded folder", 1)
	if err := os.RemoveAll(filepath.Join(root, "node_modules")); err != nil {
		t.Fatal(err)
	}
	base = open(t, root, nil).Snapshot() // saved again after the changes
	sg = base.SavedGit()
	check("unchanged after a new save", 0)
	run("add", "a.go")
	run("commit", "-q", "-m", "a")
	check("commit", 1)

	// With a parser (the content hash is taken): a touched file, its
	// content the saved one, needs no git; the same file made executable
	// does (git status reports the mode).
	parse := func(ctx context.Context, f *File, src []byte) (ParseResult, error) { return ParseResult{}, nil }
	parsedBase := open(t, root, &Options{ParseSource: parse}).Snapshot()
	psg := parsedBase.SavedGit()
	reparse := func(what string, wantRuns int64) {
		t.Helper()
		w := open(t, root, &Options{ParseSource: parse, Saved: saved(parsedBase), SavedGit: psg})
		if g, want := w.Summary().Project.Git, fresh(); g == nil || *g != want || w.gitRuns.Load() != wantRuns {
			t.Errorf("%s: git = %+v after %d runs, want %+v after %d", what, g, w.gitRuns.Load(), want, wantRuns)
		}
	}
	reparse("unchanged, parsed", 0)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "a.go"), later, later); err != nil {
		t.Fatal(err)
	}
	reparse("touched", 0)
	if err := os.Chmod(filepath.Join(root, "a.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	reparse("made executable", 1)

	// With submodules git always runs: a submodule's commits move none
	// of the stamp's files.
	write(t, root, map[string]string{".gitmodules": ""})
	run("add", ".gitmodules")
	run("commit", "-q", "-m", "m")
	base = open(t, root, nil).Snapshot()
	sg = base.SavedGit()
	if sg == nil {
		t.Fatal("no saved git state")
	}
	check("submodules", 1)
}

// TestSavedContentKept: a file whose stamp is not the saved one but whose
// content is (touched, or rewritten with the same bytes) takes the saved
// entry's parse result, after the saved results are decoded
// (Saved.Decoded), without a parse; a file with new content is parsed.
func TestSavedContentKept(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a", "b.go": "package b", "c.go": "package c"})
	var parses atomic.Int64
	type parsed struct{ src string }
	parse := func(ctx context.Context, f *File, src []byte) (ParseResult, error) {
		parses.Add(1)
		return ParseResult{Symbols: 1, Data: &parsed{string(src)}}, nil
	}
	base := open(t, root, &Options{ParseSource: parse}).Snapshot()
	for _, rel := range base.Files() {
		if f, _ := base.File(rel); f.Sum != ContentHash([]byte(f.Parsed.(*parsed).src)) {
			t.Fatalf("%s: sum %x, want the content's", rel, f.Sum)
		}
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "a.go"), later, later); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"b.go": "package b", "c.go": "package x"}) // b: same bytes; c: same size, new bytes
	decoded := 0
	parses.Store(0)
	w := open(t, root, &Options{ParseSource: parse, Saved: &Saved{Files: base.files, Skipped: base.SkippedFiles(), Decoded: func() { decoded++ }}})
	s := w.Snapshot()
	if n := parses.Load(); n != 1 || decoded != 1 {
		t.Errorf("%d parses and %d waits for the decoders, want 1 (c.go) and 1", n, decoded)
	}
	for _, rel := range []string{"a.go", "b.go"} {
		f, _ := s.File(rel)
		old, _ := base.File(rel)
		if f == old || f.Parsed != old.Parsed || f.Sum != old.Sum || f.Symbols != 1 || f.ModTime.Equal(old.ModTime) && f.CTime == old.CTime {
			t.Errorf("%s: %+v, want a new entry with the saved parse result (%+v)", rel, f, old)
		}
	}
	if f, _ := s.File("c.go"); f.Parsed.(*parsed).src != "package x" {
		t.Errorf("c.go: parsed %+v, want the new content's", f.Parsed)
	}
}

// TestSavedGitLinksAndNestedRepos: QA's two cases where git's answer
// changes while every file keeps its content: a symbolic link moved to
// another file of the same bytes (git records the link's target path),
// and a repository inside the root (a gitlink without .gitmodules) whose
// own commits plain git reports. A reopen runs git for the first and
// offers no saved state for the second; a refresh after the nested commit
// reports it clean: the runtime's git never looks into a nested
// repository (issue 32, docs/sandbox.md "What the runtime's own git may
// read").
func TestSavedGitLinksAndNestedRepos(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	gitIn := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	parse := func(ctx context.Context, f *File, src []byte) (ParseResult, error) { return ParseResult{}, nil }
	old := time.Now().Add(-time.Hour)

	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"a.go": "package a", "b.go": "package a"})
	if err := os.Symlink("a.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	gitIn(root, "init", "-q", "-b", "trunk")
	gitIn(root, "add", ".")
	gitIn(root, "commit", "-q", "-m", "init")
	for _, n := range []string{"a.go", "b.go"} {
		if err := os.Chtimes(filepath.Join(root, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	base := open(t, root, &Options{ParseSource: parse}).Snapshot()
	sg := base.SavedGit()
	if sg == nil || sg.Info.Dirty != 0 {
		t.Fatalf("saved git = %+v, want a clean state", sg)
	}
	if err := os.Remove(filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	w := open(t, root, &Options{ParseSource: parse, Saved: &Saved{Files: base.files, Skipped: base.SkippedFiles()}, SavedGit: sg})
	if g := w.Summary().Project.Git; g == nil || g.Dirty != 1 || w.gitRuns.Load() != 1 {
		t.Errorf("link moved to a file of the same bytes: git = %+v after %d runs, want dirty 1 after 1", g, w.gitRuns.Load())
	}

	outer, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, outer, map[string]string{"main.go": "package main", "sub/s.go": "package s"})
	sub := filepath.Join(outer, "sub")
	gitIn(sub, "init", "-q", "-b", "trunk")
	gitIn(sub, "add", ".")
	gitIn(sub, "commit", "-q", "-m", "sub")
	gitIn(outer, "init", "-q", "-b", "trunk")
	gitIn(outer, "add", "main.go", "sub") // sub: a gitlink, no .gitmodules
	gitIn(outer, "commit", "-q", "-m", "outer")
	ow := open(t, outer, &Options{ParseSource: parse})
	if g := ow.Snapshot().SavedGit(); g != nil {
		t.Errorf("a root with a nested repository offers a saved git state: %+v", g)
	}
	// A .git file (a gitdir line) marks a nested repository too.
	gitRoot, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, gitRoot, map[string]string{"main.go": "package main", "mod/.git": "gitdir: ../.git/modules/mod\n", "mod/m.go": "package m"})
	gitIn(gitRoot, "init", "-q", "-b", "trunk")
	gitIn(gitRoot, "add", "main.go")
	gitIn(gitRoot, "commit", "-q", "-m", "init")
	if g := open(t, gitRoot, &Options{ParseSource: parse}).Snapshot().SavedGit(); g != nil {
		t.Errorf("a root with a nested .git file offers a saved git state: %+v", g)
	}
	gitIn(sub, "commit", "-q", "--allow-empty", "-m", "moved")
	s, err := ow.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Project.Git; g == nil || g.Dirty != 0 {
		t.Errorf("refresh after a commit in the nested repository: git = %+v, want dirty 0 (nested repositories are not looked into)", g)
	}
}

// TestCoverageOnlyNextToAManifest: a folder named coverage is output only
// next to a manifest whose tools write it (jest/nyc/c8 by package.json,
// pytest-cov by pyproject.toml, SimpleCov by a Gemfile, PHPUnit by
// composer.json), as target/, dist/, build/ and out/ are; elsewhere it is
// source, as Go's internal/coverage and runtime/coverage are.
func TestCoverageOnlyNextToAManifest(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"go.mod":                        "module m\n",
		"internal/coverage/cfile/cf.go": "package cfile",
		"runtime/coverage/coverage.go":  "package coverage",
		"coverage/top.go":               "package coverage", // go.mod writes no coverage folder
		"web/package.json":              `{"name":"web"}`,
		"web/coverage/lcov.info":        "TN:",
		"web/src/coverage/report.ts":    "export const r = 1",
		"py/pyproject.toml":             "[project]\nname = \"p\"\n",
		"py/coverage/index.html":        "<html></html>",
		"rb/Gemfile":                    "source \"https://rubygems.org\"\n",
		"rb/coverage/.last_run.json":    "{}",
		"php/composer.json":             "{}",
		"php/coverage/index.html":       "<html></html>",
	})
	w := open(t, root, nil)
	s := w.Snapshot()
	for _, rel := range []string{"internal/coverage/cfile/cf.go", "runtime/coverage/coverage.go", "coverage/top.go", "web/src/coverage/report.ts"} {
		if _, ok := s.File(rel); !ok {
			t.Errorf("%s not indexed: a coverage folder without a manifest beside it is source", rel)
		}
	}
	for _, rel := range []string{"web/coverage", "py/coverage", "rb/coverage", "php/coverage"} {
		if !s.Excluded(rel, true) {
			t.Errorf("%s not excluded: its manifest's tools write it", rel)
		}
	}
	if st := w.Summary().Stats; st.Skipped.Excluded != 4 {
		t.Errorf("skipped.excluded = %d, want the 4 coverage folders next to a manifest", st.Skipped.Excluded)
	}
}

// skippedOf is a snapshot's files and skipped counts without timings, for
// comparing an updated snapshot with a cold open of the same tree.
func skippedOf(w *Workspace) string {
	st := w.Summary().Stats
	return fmt.Sprintf("files %v, stats files %d indexed %d skipped %+v", w.Snapshot().Files(), st.Files, st.IndexedFiles, st.Skipped)
}

// TestFilesChangedNowIgnoredFolderCountsOnce: a .gitignore that now
// excludes a folder, reported by filesChanged (the ignore file alone, or
// with the folder), leaves the index and the skipped counts as a cold open
// of the same tree has them: the folder counted once as excluded, nothing
// below it (its files, a binary one among them) counted at all.
func TestFilesChangedNowIgnoredFolderCountsOnce(t *testing.T) {
	for _, paths := range [][]string{{".gitignore"}, {".gitignore", "gen"}, {"gen", ".gitignore"}, {"sub/.gitignore"}} {
		t.Run(strings.Join(paths, "+"), func(t *testing.T) {
			root := t.TempDir()
			write(t, root, map[string]string{
				"main.go": "package main", "gen/a.go": "package gen", "gen/b.go": "package gen", "gen/deep/c.go": "package deep",
				"gen/blob.bin": "\x00\x01", "sub/gen/d.go": "package gen", "sub/keep.go": "package sub", "sub/x.log": "x",
			})
			w := open(t, root, nil)
			ignore := map[string]string{".gitignore": "gen/\n*.log\n"}
			if paths[0] == "sub/.gitignore" {
				ignore = map[string]string{"sub/.gitignore": "gen/\n*.log\n"}
			}
			write(t, root, ignore)
			if _, err := w.FilesChanged(context.Background(), paths); err != nil {
				t.Fatal(err)
			}
			cold := open(t, root, nil)
			if got, want := skippedOf(w), skippedOf(cold); got != want {
				t.Errorf("after filesChanged %v:\n %s\nwant (cold open):\n %s", paths, got, want)
			}
			// The rule taken back: the folder and its files come back
			// with the filesChanged of the ignore file, as cold.
			for name := range ignore {
				write(t, root, map[string]string{name: "*.log\n"})
				if _, err := w.FilesChanged(context.Background(), []string{name}); err != nil {
					t.Fatal(err)
				}
			}
			cold = open(t, root, nil)
			if got, want := skippedOf(w), skippedOf(cold); got != want {
				t.Errorf("after the rule was taken back:\n %s\nwant (cold open):\n %s", got, want)
			}
			if _, ok := w.Snapshot().File("gen/deep/c.go"); paths[0] == ".gitignore" && !ok {
				t.Errorf("gen/deep/c.go did not come back")
			}
		})
	}
}

// TestFilesChangedNewManifestExcludesOutput: a manifest that appears next
// to dist/ and coverage/ (filesChanged of the manifest) makes them output,
// each counted once, as a cold open counts them; removed, they are source
// again.
func TestFilesChangedNewManifestExcludesOutput(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"web/dist/app.js": "x", "web/coverage/lcov.info": "TN:", "web/coverage/html/i.html": "x", "web/src/a.ts": "x"})
	w := open(t, root, nil)
	write(t, root, map[string]string{"web/package.json": "{}"})
	if _, err := w.FilesChanged(context.Background(), []string{"web/package.json"}); err != nil {
		t.Fatal(err)
	}
	if got, want := skippedOf(w), skippedOf(open(t, root, nil)); got != want {
		t.Errorf("after the manifest appeared:\n %s\nwant (cold open):\n %s", got, want)
	}
	if n := w.Summary().Stats.Skipped.Excluded; n != 2 {
		t.Errorf("excluded %d, want dist/ and coverage/", n)
	}
	os.Remove(filepath.Join(root, "web/package.json"))
	if _, err := w.FilesChanged(context.Background(), []string{"web/package.json"}); err != nil {
		t.Fatal(err)
	}
	if got, want := skippedOf(w), skippedOf(open(t, root, nil)); got != want {
		t.Errorf("after the manifest went:\n %s\nwant (cold open):\n %s", got, want)
	}
}

// TestFilesChangedFolderBecameOutsideLink: a folder replaced by a symbolic
// link to a folder outside the root, reported by filesChanged (the link,
// or a path below it), is skipped once as outsideRoot, as a cold open of
// the same tree counts it.
func TestFilesChangedFolderBecameOutsideLink(t *testing.T) {
	for _, changed := range []string{"d", "d/p.go"} {
		t.Run(changed, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			write(t, root, map[string]string{"main.go": "package main", "d/p.go": "package main", "d/q.go": "package main"})
			write(t, outside, map[string]string{"o.go": "package o"})
			w := open(t, root, nil)
			if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
				t.Fatal(err)
			}
			if _, err := w.FilesChanged(context.Background(), []string{changed}); err != nil {
				t.Fatal(err)
			}
			cold := open(t, root, nil)
			if got, want := skippedOf(w), skippedOf(cold); got != want {
				t.Errorf("after filesChanged [%s]:\n %s\nwant (cold open):\n %s", changed, got, want)
			}
			if n := cold.Summary().Stats.Skipped.OutsideRoot; n != 1 {
				t.Errorf("cold open: outsideRoot %d, want 1", n)
			}
		})
	}
}
