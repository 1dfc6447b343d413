package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

func listEnv(t *testing.T) *tool.Env {
	return workspace(t, map[string]string{
		"README.md":              "# demo\nTODO: write docs\n",
		"go.mod":                 "module demo\n",
		"cmd/main.go":            "package main\n// TODO main\n",
		"internal/a/a.go":        "package a\nfunc A() {} // todo lower\n",
		"internal/a/a_test.go":   "package a\n",
		"internal/b/deep/b.go":   "package deep\n",
		"vendor/x/x.go":          "package x // TODO vendored\n",
		"build/out.txt":          "TODO build output\n",
		"secret/ignored.txt":     "TODO ignored file\n",
		"data/blob.bin":          "TODO\x00binary\n",
		"docs/guide/intro.md":    "intro\n",
		"docs/guide/tutorial.md": "tutorial\n",
		"internal/a/notes.txt":   "Todo: mixed case\n",
	}, "vendor/", "build/", "secret/ignored.txt")
}

func entries(t *testing.T, env *tool.Env, in map[string]any) []string {
	t.Helper()
	return runOK(t, env, "list_files", in).Data.(listFilesData).Entries
}

func TestListFiles(t *testing.T) {
	env := listEnv(t)
	got := entries(t, env, map[string]any{})
	want := []string{"README.md", "cmd/", "data/", "docs/", "go.mod", "internal/"} // secret/ holds only an excluded file
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("root: %v, want %v", got, want)
	}
	got = entries(t, env, map[string]any{"path": "internal", "recursive": true})
	want = []string{"internal/a/", "internal/a/a.go", "internal/a/a_test.go", "internal/a/notes.txt",
		"internal/b/", "internal/b/deep/", "internal/b/deep/b.go"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recursive: %v", got)
	}
	got = entries(t, env, map[string]any{"glob": "**/*_test.go"})
	if !reflect.DeepEqual(got, []string{"internal/a/a_test.go"}) {
		t.Fatalf("glob: %v", got)
	}
	got = entries(t, env, map[string]any{"path": "internal/a", "glob": "*.go"})
	if !reflect.DeepEqual(got, []string{"internal/a/a.go", "internal/a/a_test.go"}) {
		t.Fatalf("glob in folder: %v", got)
	}
	got = entries(t, env, map[string]any{"path": "docs", "glob": "*"})
	if !reflect.DeepEqual(got, []string{"docs/guide/"}) {
		t.Fatalf("glob dirs: %v", got)
	}
	// Excluded entries are never listed, even recursively or by glob.
	all := entries(t, env, map[string]any{"recursive": true})
	for _, e := range all {
		if strings.HasPrefix(e, "vendor") || strings.HasPrefix(e, "build") || e == "secret/ignored.txt" {
			t.Fatalf("excluded entry listed: %s", e)
		}
	}
	_, err := run(t, env, "list_files", map[string]any{"path": "vendor"})
	wantKind(t, err, tool.ErrExcluded)
	_, err = run(t, env, "list_files", map[string]any{"path": "go.mod"})
	wantKind(t, err, tool.ErrInvalidInput, "read_file")
	_, err = run(t, env, "list_files", map[string]any{"path": "nope"})
	wantKind(t, err, tool.ErrNotFound)
	_, err = run(t, env, "list_files", map[string]any{"glob": "[a-"})
	wantKind(t, err, tool.ErrInvalidInput, "glob")
	_, err = run(t, env, "list_files", map[string]any{"path": "../"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	res := runOK(t, env, "list_files", map[string]any{"glob": "*.rs"})
	if !strings.Contains(res.Content, "no entries") {
		t.Fatalf("empty glob: %q", res.Content)
	}
}

func TestListFilesCap(t *testing.T) {
	files := map[string]string{}
	for i := range 1200 {
		files[fmt.Sprintf("f/%04d.txt", i)] = ""
	}
	env := workspace(t, files)
	res := runOK(t, env, "list_files", map[string]any{"path": "f"})
	d := res.Data.(listFilesData)
	if len(d.Entries) != 1000 || !d.Truncated || d.Total != 1200 || !strings.Contains(res.Content, "200 more entries") {
		t.Fatalf("cap: %d %v %d", len(d.Entries), d.Truncated, d.Total)
	}
}

func matches(t *testing.T, env *tool.Env, in map[string]any) searchTextData {
	t.Helper()
	return runOK(t, env, "search_text", in).Data.(searchTextData)
}

func TestSearchText(t *testing.T) {
	env := listEnv(t)
	d := matches(t, env, map[string]any{"query": "todo"})
	var got []string
	for _, m := range d.Matches {
		got = append(got, fmt.Sprintf("%s:%d: %s", m.Path, m.Line, m.Text))
	}
	want := []string{
		"README.md:2: TODO: write docs",
		"cmd/main.go:2: // TODO main",
		"internal/a/a.go:2: func A() {} // todo lower",
		"internal/a/notes.txt:1: Todo: mixed case",
	}
	if !reflect.DeepEqual(got, want) || d.Truncated {
		t.Fatalf("case-insensitive literal:\n%v\nwant\n%v", got, want)
	}
	res := runOK(t, env, "search_text", map[string]any{"query": "todo"})
	if !strings.HasPrefix(res.Content, "README.md:2: TODO: write docs\n") {
		t.Fatalf("content: %q", res.Content)
	}

	d = matches(t, env, map[string]any{"query": "TODO", "caseSensitive": true})
	if len(d.Matches) != 2 {
		t.Fatalf("case-sensitive: %+v", d.Matches)
	}
	d = matches(t, env, map[string]any{"query": `^func \w+\(`, "regex": true})
	if len(d.Matches) != 1 || d.Matches[0].Path != "internal/a/a.go" {
		t.Fatalf("regex: %+v", d.Matches)
	}
	// A literal query with regex metacharacters is literal.
	d = matches(t, env, map[string]any{"query": "A() {}"})
	if len(d.Matches) != 1 {
		t.Fatalf("literal metachars: %+v", d.Matches)
	}
	d = matches(t, env, map[string]any{"query": "todo", "glob": "*.go"})
	if len(d.Matches) != 2 {
		t.Fatalf("glob by name: %+v", d.Matches)
	}
	d = matches(t, env, map[string]any{"query": "todo", "glob": "internal/**"})
	if len(d.Matches) != 2 {
		t.Fatalf("glob by path: %+v", d.Matches)
	}
	d = matches(t, env, map[string]any{"query": "todo", "maxResults": 3})
	if len(d.Matches) != 3 || !d.Truncated {
		t.Fatalf("maxResults: %+v", d)
	}
	res = runOK(t, env, "search_text", map[string]any{"query": "zzz-not-there"})
	if len(res.Data.(searchTextData).Matches) != 0 || !strings.Contains(res.Content, "No matches") {
		t.Fatalf("no match: %q", res.Content)
	}

	_, err := run(t, env, "search_text", map[string]any{"query": ""})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "search_text", map[string]any{"query": "(", "regex": true})
	wantKind(t, err, tool.ErrInvalidInput, "regular expression")
	_, err = run(t, env, "search_text", map[string]any{"query": "x", "maxResults": -1})
	wantKind(t, err, tool.ErrInvalidInput)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = runCtx(t, ctx, env, "search_text", map[string]any{"query": "todo"})
	wantKind(t, err, tool.ErrCancelled)
}

// TestSearchTextNeverExcluded: excluded files are skipped even when the
// index lists them, and vanished files are skipped.
func TestSearchTextNeverExcluded(t *testing.T) {
	env := listEnv(t)
	idx := env.Index.(*fakeIndex)
	idx.files = append(idx.files, "vendor/x/x.go", "build/out.txt", "secret/ignored.txt", "gone.txt")
	d := matches(t, env, map[string]any{"query": "todo", "maxResults": 1000})
	for _, m := range d.Matches {
		if strings.HasPrefix(m.Path, "vendor/") || strings.HasPrefix(m.Path, "build/") || m.Path == "secret/ignored.txt" || m.Path == "data/blob.bin" {
			t.Fatalf("searched an excluded or binary file: %+v", m)
		}
	}
	if len(d.Matches) != 4 {
		t.Fatalf("got %d matches", len(d.Matches))
	}
}

func TestSearchTextOrderAndCap(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("needle\n", 30)
	}
	long := strings.Repeat("x", 500) + " needle"
	files["zz.txt"] = long + "\n"
	env := workspace(t, files)
	d := matches(t, env, map[string]any{"query": "needle", "maxResults": 1000})
	if len(d.Matches) != 1000 || !d.Truncated {
		t.Fatalf("cap: %d %v", len(d.Matches), d.Truncated)
	}
	for i, m := range d.Matches {
		if want := fmt.Sprintf("f%02d.txt", i/30); m.Path != want || m.Line != i%30+1 {
			t.Fatalf("match %d = %+v, want %s:%d", i, m, want, i%30+1)
		}
	}
	d = matches(t, env, map[string]any{"query": "needle", "glob": "zz.txt"})
	if len(d.Matches) != 1 || len(d.Matches[0].Text) > searchMaxLineBytes+4 {
		t.Fatalf("long line: %+v", d.Matches)
	}
	// Over the maximum is clamped to it.
	d = matches(t, env, map[string]any{"query": "needle", "maxResults": 5000})
	if len(d.Matches) != searchMaxResults {
		t.Fatalf("clamp: %d", len(d.Matches))
	}
	_ = os.Remove(filepath.Join(env.Root, "f00.txt"))
	d = matches(t, env, map[string]any{"query": "needle", "maxResults": 10})
	if d.Matches[0].Path != "f01.txt" {
		t.Fatalf("vanished file not skipped: %+v", d.Matches[0])
	}
}

func TestSearchTextSkipsSecrets(t *testing.T) {
	env := workspace(t, map[string]string{".env": "TOKEN=needle-secret\n", "a.txt": "needle\n"})
	res := runOK(t, env, "search_text", map[string]any{"query": "needle"})
	d := res.Data.(searchTextData)
	if len(d.Matches) != 1 || d.Matches[0].Path != "a.txt" || strings.Contains(res.Content, "needle-secret") {
		t.Fatalf("secret searched: %+v", d.Matches)
	}
	if !strings.Contains(res.Content, "look like secrets") {
		t.Fatalf("no note: %q", res.Content)
	}
	d = runCtxOK(t, WithSecretApproved(context.Background()), env, "search_text", map[string]any{"query": "needle"}).Data.(searchTextData)
	if len(d.Matches) != 2 {
		t.Fatalf("approved: %+v", d.Matches)
	}
}

// TestSearchTextSkipsLinksToSecrets: a link with an innocent name that
// resolves to .env is searched only as .env would be (QA D1: search_text
// printed its lines without approval while it skipped .env itself).
func TestSearchTextSkipsLinksToSecrets(t *testing.T) {
	env := workspace(t, map[string]string{".env": "TOKEN=needle-secret\n", "envlink": "", "a.txt": "needle\n"})
	link := filepath.Join(env.Root, "envlink")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", link); err != nil {
		t.Fatal(err)
	}
	if !IsSecretFile(env.Root, "envlink") || IsSecretFile(env.Root, "a.txt") || !IsSecretFile("", ".env") {
		t.Fatal("IsSecretFile: want envlink and .env secret, a.txt not")
	}
	res := runOK(t, env, "search_text", map[string]any{"query": "needle"})
	if d := res.Data.(searchTextData); len(d.Matches) != 1 || d.Matches[0].Path != "a.txt" || strings.Contains(res.Content, "needle-secret") {
		t.Fatalf("a link to a secret was searched: %+v", d.Matches)
	}
	if d := runCtxOK(t, WithSecretApproved(context.Background()), env, "search_text", map[string]any{"query": "needle"}).Data.(searchTextData); len(d.Matches) != 3 {
		t.Fatalf("approved: %+v; want a.txt, .env and envlink", d.Matches)
	}
}
