package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fixture builds the graph of testdata/<name>: with real, through
// workspace.Open and syntax.Parse (the runtime's path, Build); else from
// the hand-made parse results of fixtureInfo (BuildFrom), files without
// one being indexed non-nodes.
func fixture(t testing.TB, name string, real bool) *Graph {
	t.Helper()
	dir := filepath.Join("testdata", name)
	if real {
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := workspace.Open(context.Background(), abs, &workspace.Options{Home: "-", Parse: realParse})
		if err != nil {
			t.Fatal(err)
		}
		return Build(ws.Snapshot())
	}
	var in []Input
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		fi := fixtureInfo[name][rel]
		lang := ""
		if fi != nil {
			lang = fi.Language
		}
		in = append(in, Input{Path: rel, Language: lang, Info: fi})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range fixtureInfo[name] {
		if !slices.ContainsFunc(in, func(x Input) bool { return x.Path == rel }) {
			t.Fatalf("fixture %s: %s has parse data but no file", name, rel)
		}
	}
	return BuildFrom(in, func(rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	})
}

// realParse is the workspace parser of the runtime: syntax.Parse for the
// supported languages.
func realParse(ctx context.Context, abs string, f *workspace.File) (workspace.ParseResult, error) {
	if !syntax.Supported(f.Language) {
		return workspace.ParseResult{}, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	info, err := syntax.Parse(ctx, f.Language, src, nil)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	return workspace.ParseResult{Symbols: len(info.Symbols), Data: info}, nil
}

// both runs a check on the hand-made and on the real parse of a fixture.
func both(t *testing.T, name string, check func(t *testing.T, g *Graph)) {
	for _, real := range []bool{false, true} {
		label := "handmade"
		if real {
			label = "parsed"
		}
		t.Run(label, func(t *testing.T) { check(t, fixture(t, name, real)) })
	}
}

// golden is what a fixture's golden file holds.
type golden struct {
	Stats Stats      `json:"stats"`
	Files []FileDeps `json:"files"`
}

func TestFixturesGolden(t *testing.T) {
	for _, name := range []string{"rust", "ts", "python", "go", "c"} {
		t.Run(name, func(t *testing.T) {
			g := fixture(t, name, true)
			got := golden{Stats: g.Stats()}
			got.Stats.BuildMs = 0
			for _, n := range g.nodes {
				fd, err := g.File(n.path)
				if err != nil {
					t.Fatal(err)
				}
				got.Files = append(got.Files, fd)
			}
			data, _ := json.MarshalIndent(got, "", "  ")
			data = append(data, '\n')
			path := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("graph of %s differs from %s (run with -update after checking):\n%s", name, path, data)
			}
		})
	}
}

// edgeSet lists a graph's edges as "from -> to kind".
func edgeSet(g *Graph) []string {
	var out []string
	for _, e := range g.edges {
		out = append(out, g.nodes[e.from].path+" -> "+g.nodes[e.to].path+" "+e.kind())
	}
	return out
}

func mustHave(t *testing.T, g *Graph, edges ...string) {
	t.Helper()
	have := edgeSet(g)
	for _, e := range edges {
		if !slices.Contains(have, e) {
			t.Errorf("missing edge %q; have:\n%s", e, strings.Join(have, "\n"))
		}
	}
}

func mustNotHave(t *testing.T, g *Graph, edges ...string) {
	t.Helper()
	have := edgeSet(g)
	for _, e := range edges {
		if slices.Contains(have, e) {
			t.Errorf("unexpected edge %q", e)
		}
	}
}

func TestRustResolution(t *testing.T) {
	both(t, "rust", func(t *testing.T, g *Graph) {
		mustHave(t, g,
			"src/lib.rs -> src/net/mod.rs import",               // mod net; → net/mod.rs
			"src/lib.rs -> src/util.rs import",                  // mod util; → util.rs
			"src/lib.rs -> src/net/client.rs import",            // use crate::net::client::Client
			"src/net/mod.rs -> src/net/client.rs import",        // pub mod client;
			"src/net/client.rs -> src/net/client/tcp.rs import", // mod tcp; in a non-mod.rs file
			"src/net/client.rs -> src/net/mod.rs import",        // use super::Conn
			"src/net/client.rs -> src/util.rs import",           // use crate::util::{helper, Config}
			"src/util.rs -> src/net/client.rs import",
		)
		// self::inner::Socket names no file: inner is an inline module of the
		// file itself, which is no edge and not unresolved.
		mustNotHave(t, g, "src/net/client/tcp.rs -> src/net/client/tcp.rs import")
		st := g.Stats()
		if st.UnresolvedImports != 1 { // mod missing; serde is another crate
			t.Errorf("unresolved = %d, want 1", st.UnresolvedImports)
		}
		want := []string{"src/net/client.rs", "src/net/mod.rs", "src/util.rs"}
		if len(st.ImportCycles) != 1 || !slices.Equal(st.ImportCycles[0], want) {
			t.Errorf("importCycles = %v, want [%v]", st.ImportCycles, want)
		}
	})
}

func TestTSResolution(t *testing.T) {
	both(t, "ts", func(t *testing.T, g *Graph) {
		mustHave(t, g,
			"src/index.ts -> src/app.tsx import",                 // extensionless
			"src/index.ts -> src/types.d.ts import",              // .d.ts
			"src/app.tsx -> src/lib/index.ts import",             // folder index
			"src/app.tsx -> src/components/Button.tsx import",    // .js written for .tsx
			"src/lib/index.ts -> src/lib/math.ts import",         // export from
			"src/lib/index.ts -> src/app.tsx import",             // ../
			"src/legacy.js -> src/lib/math.ts import",            // require with .js for .ts
			"src/app.tsx -> src/components/Button.tsx reference", // uses Button
			"src/legacy.js -> src/lib/math.ts reference",         // uses add
		)
		st := g.Stats()
		if st.UnresolvedImports != 1 { // ./nope; lodash is a package
			t.Errorf("unresolved = %d, want 1", st.UnresolvedImports)
		}
		if len(st.ImportCycles) != 1 || !slices.Equal(st.ImportCycles[0], []string{"src/app.tsx", "src/lib/index.ts"}) {
			t.Errorf("importCycles = %v", st.ImportCycles)
		}
	})
}

func TestPythonResolution(t *testing.T) {
	both(t, "python", func(t *testing.T, g *Graph) {
		mustHave(t, g,
			"src/pkg/__init__.py -> src/pkg/core.py import",     // from .core
			"src/pkg/core.py -> src/pkg/utils.py import",        // from . import utils (submodule)
			"src/pkg/core.py -> src/pkg/sub/helpers.py import",  // from .sub.helpers
			"src/pkg/utils.py -> src/pkg/core.py import",        // absolute, src layout
			"src/pkg/sub/helpers.py -> src/pkg/utils.py import", // from ..utils
			"scripts/run.py -> src/pkg/core.py import",          // import pkg.core
		)
		st := g.Stats()
		if st.UnresolvedImports != 1 { // ..missing; os and requests are outside
			t.Errorf("unresolved = %d, want 1", st.UnresolvedImports)
		}
		if len(st.ImportCycles) != 1 || !slices.Equal(st.ImportCycles[0], []string{"src/pkg/core.py", "src/pkg/sub/helpers.py", "src/pkg/utils.py"}) {
			t.Errorf("importCycles = %v", st.ImportCycles)
		}
	})
}

func TestGoResolution(t *testing.T) {
	both(t, "go", func(t *testing.T, g *Graph) {
		mustHave(t, g,
			"main.go -> store/store.go import",               // defines Open
			"main.go -> store/item.go import",                // defines Item
			"main.go -> tools/x/x.go import",                 // nested module
			"store/store.go -> store/item.go reference",      // unexported helper, same package
			"store/store_test.go -> store/item.go reference", // a test uses its package's files
			"store/store_test.go -> store/store.go reference",
		)
		mustNotHave(t, g, "main.go -> store/store_test.go import", "main.go -> store/store_test.go reference")
		fd, err := g.File("main.go")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range fd.DependsOn {
			if d.Path == "store/store.go" && d.Kind == KindImport && !slices.Equal(d.Symbols, []string{"Open"}) {
				t.Errorf("main.go → store.go symbols = %v, want [Open]", d.Symbols)
			}
		}
		if st := g.Stats(); st.UnresolvedImports != 1 || st.Cycles != 0 {
			t.Errorf("unresolved = %d cycles = %d, want 1, 0", st.UnresolvedImports, st.Cycles)
		}
	})
}

func TestCResolution(t *testing.T) {
	both(t, "c", func(t *testing.T, g *Graph) {
		mustHave(t, g,
			"main.c -> util.h import",
			"main.c -> lib/list.h import",
			"lib/list.h -> util.h import",
			"lib/list.c -> lib/list.h import",
			"lib/list.c -> include/config.h import",
			"main.c -> lib/list.c reference",
			"lib/list.c -> include/config.h reference",
		)
		if st := g.Stats(); st.UnresolvedImports != 0 {
			t.Errorf("unresolved = %d, want 0 (system headers are not counted)", st.UnresolvedImports)
		}
	})
}

func TestCacheReusesGraphWhenFilesUnchanged(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":   "module example.com/m\n",
		"a/a.go":   "package a\n\nfunc Hello() {}\n",
		"main.go":  "package main\n\nimport \"example.com/m/a\"\n\nfunc main() { a.Hello() }\n",
		"extra.go": "package main\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(context.Background(), root, &workspace.Options{Home: "-", Parse: realParse})
	if err != nil {
		t.Fatal(err)
	}
	var c Cache
	first := c.Get(ws.Snapshot())
	if _, err := ws.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Cached(ws.Snapshot()) == nil {
		t.Error("Cached: no graph for a snapshot with the same files")
	}
	second := c.Get(ws.Snapshot())
	if second.SnapshotVersion() != ws.Snapshot().Version() || second.SnapshotVersion() == first.SnapshotVersion() {
		t.Errorf("graph version %d, snapshot %d", second.SnapshotVersion(), ws.Snapshot().Version())
	}
	if &second.edges[0] != &first.edges[0] {
		t.Error("unchanged refresh rebuilt the graph")
	}
	if err := os.Remove(filepath.Join(root, "extra.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	third := c.Get(ws.Snapshot())
	if third.Stats().Files != first.Stats().Files-1 {
		t.Errorf("after a delete: %d files, want %d", third.Stats().Files, first.Stats().Files-1)
	}
	if _, err := third.File("extra.go"); err == nil {
		t.Error("deleted file still answered")
	}
}
