package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/retrieve"
)

func TestRel(t *testing.T) {
	root := "/work/repo"
	for in, want := range map[string]string{
		"a/b.go":            "a/b.go",
		"./a//b.go":         "a/b.go",
		"a/../b.go":         "b.go",
		"/work/repo/a/b.go": "a/b.go",
		"/work/repo":        ".",
		".":                 ".",
		"/work/repo/x/../y": "y",
	} {
		got, err := Rel(root, in)
		if err != nil || got != want {
			t.Errorf("Rel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"../x", "a/../../x", "/work/other/x", "/work/repo/../x", "/"} {
		if got, err := Rel(root, in); !errors.Is(err, ErrOutside) {
			t.Errorf("Rel(%q) = %q, %v; want ErrOutside", in, got, err)
		}
	}
}

// TestOpenServesTools: a project opened on a folder gives its tools the
// parsed symbols, the graph and retrieval (the MCP server mode's defect:
// "no workspace is open").
func TestOpenServesTools(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package m\n\n// ParseConfig reads the config.\nfunc ParseConfig() int { return helper() }\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b.go"), []byte("package m\n\nfunc helper() int { return 1 }\n"), 0o644)
	p, err := Open(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := p.Env(false, "")
	if env.Project == nil || env.Edits == nil || env.Index == nil || env.Root != p.Root() {
		t.Fatalf("env %+v", env)
	}
	f, ok := p.Snapshot().File("a.go")
	if !ok || f.Parsed == nil {
		t.Fatalf("a.go not parsed: %+v", f)
	}
	if _, err := p.Graph().File("a.go"); err != nil {
		t.Fatalf("graph: %v", err)
	}
	res, err := p.Retrieve(context.Background(), retrieve.Query{Text: "ParseConfig"})
	if err != nil || len(res.Snippets) == 0 || res.Snippets[0].Path != "a.go" {
		t.Fatalf("retrieve = %+v, %v", res, err)
	}
	if ex := p.Excerpts(context.Background(), "ParseConfig", 1000, nil); !strings.HasPrefix(ex, retrieve.ExcerptsHeading) {
		t.Fatalf("excerpts = %q", ex)
	}
}

// TestRetrieveSkipsLinksToSecrets: retrieval leaves out a link with an
// innocent name that resolves to .env, as it leaves out .env (QA D1).
func TestRetrieveSkipsLinksToSecrets(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".env"), []byte("ROOTENV_LEAK=quokka\n"), 0o600)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("quokka notes\n"), 0o644)
	if err := os.Symlink(".env", filepath.Join(root, "envlink")); err != nil {
		t.Fatal(err)
	}
	p, err := Open(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Snapshot().File("envlink"); !ok {
		t.Fatal("envlink is not indexed: the test needs it indexed")
	}
	res, err := p.Retrieve(context.Background(), retrieve.Query{Text: "quokka ROOTENV_LEAK"})
	if err != nil || len(res.Snippets) == 0 {
		t.Fatalf("retrieve = %+v, %v", res, err)
	}
	for _, s := range res.Snippets {
		if s.Path != "notes.txt" {
			t.Errorf("retrieved %s (%q); want only notes.txt", s.Path, s.Text)
		}
	}
}

// TestReopenSkipsLinksToSecrets: a reopen from the saved index (whose
// retrieval load looks on disk only at links and changed files) leaves
// out a link to .env, one made while the runtime was down in place of an
// indexed file too, and still loads the saved retrieval index.
func TestReopenSkipsLinksToSecrets(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".env"), []byte("ROOTENV_LEAK=quokka\n"), 0o600)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("quokka notes\n"), 0o644)
	os.WriteFile(filepath.Join(root, "later.txt"), []byte("quokka later\n"), 0o644)
	if err := os.Symlink(".env", filepath.Join(root, "envlink")); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	first := open(t, root, data)
	if f, ok := first.p.Snapshot().File("envlink"); !ok || !f.Link {
		t.Fatalf("envlink: %+v, %v: want an indexed link", f, ok)
	}
	saveAndClose(t, first)
	check := func(o *opened, want ...string) {
		t.Helper()
		res, err := o.p.Retrieve(context.Background(), retrieve.Query{Text: "quokka ROOTENV_LEAK"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range res.Snippets {
			got = append(got, s.Path)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("retrieved %v; want %v", got, want)
		}
	}
	second := open(t, root, data)
	second.p.Graph() // the graph's restore logs in the background: done now
	if log := second.log.String(); !strings.Contains(log, "retrieval=true") || !strings.Contains(log, "parsed=0") {
		t.Fatalf("unchanged reopen did not load the saved retrieval index: %s", log)
	}
	check(second, "later.txt", "notes.txt")
	saveAndClose(t, second)

	// later.txt becomes a link to .env while the runtime is down.
	os.Remove(filepath.Join(root, "later.txt"))
	if err := os.Symlink(".env", filepath.Join(root, "later.txt")); err != nil {
		t.Fatal(err)
	}
	third := open(t, root, data)
	third.p.Graph()
	if f, ok := third.p.Snapshot().File("later.txt"); !ok || !f.Link {
		t.Fatalf("later.txt: %+v, %v: want an indexed link", f, ok)
	}
	if log := third.log.String(); !strings.Contains(log, "retrieval=true") {
		t.Fatalf("reopen with one changed file did not load the saved retrieval index: %s", log)
	}
	check(third, "notes.txt")
}
