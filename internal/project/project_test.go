package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
