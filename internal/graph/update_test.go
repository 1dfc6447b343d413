package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// inputsOf returns g's files as BuildFrom inputs (every indexed path; the
// fixtures' non-node files too).
func inputsOf(t *testing.T, name string) ([]Input, func(string) ([]byte, error)) {
	t.Helper()
	dir := filepath.Join("testdata", name)
	var in []Input
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
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
	return in, func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))) }
}

// mutate returns a new parse result for a file of language lang: symbols,
// imports and references drawn from the fixture's own (so they resolve and
// link) and a few new names.
func mutate(rng *rand.Rand, lang string, in []Input) *syntax.FileInfo {
	var syms []syntax.Symbol
	var imps []syntax.Import
	var refs []string
	for _, x := range in {
		if x.Info == nil || family(x.Language) != family(lang) {
			continue
		}
		syms = append(syms, x.Info.Symbols...)
		imps = append(imps, x.Info.Imports...)
		refs = append(refs, syntax.Names(x.Info.Refs)...)
		for _, s := range x.Info.Symbols {
			refs = append(refs, s.Name.String())
		}
	}
	extra := []string{"Zeta", "zeta", "Alpha", "New", "run"}
	info := &syntax.FileInfo{Language: lang, Package: "main"}
	if lang == "go" {
		info.Package = []string{"main", "util", "server"}[rng.IntN(3)]
	}
	for range rng.IntN(5) {
		var s syntax.Symbol
		if len(syms) > 0 && rng.IntN(3) > 0 {
			s = syms[rng.IntN(len(syms))]
		} else {
			s = sym(extra[rng.IntN(len(extra))], "function", rng.IntN(2) == 0)
		}
		if rng.IntN(4) == 0 {
			s.Exported = !s.Exported
		}
		if rng.IntN(5) == 0 {
			s.Container = syntax.InternName("T")
		}
		info.Symbols = append(info.Symbols, s)
	}
	for range rng.IntN(4) {
		if len(imps) > 0 {
			info.Imports = append(info.Imports, imps[rng.IntN(len(imps))])
		}
	}
	for range rng.IntN(6) {
		if len(refs) > 0 && rng.IntN(4) > 0 {
			info.Refs = append(info.Refs, syntax.InternName(refs[rng.IntN(len(refs))]))
		} else {
			info.Refs = append(info.Refs, syntax.InternName(extra[rng.IntN(len(extra))]))
		}
	}
	return info
}

// TestUpdateEqualsBuild: on each fixture, with random changes to random
// files (their symbols, imports and references: added, dropped, exported
// or not, drawn from the other files so they resolve and link), the
// updated graph equals the one built from scratch: stats, graph/project at
// three settings and graph/file of every node. Files that gain or lose a
// parse result, change language, or a go.mod are not updated.
func TestUpdateEqualsBuild(t *testing.T) {
	for _, name := range []string{"rust", "ts", "python", "go", "c"} {
		t.Run(name, func(t *testing.T) {
			base, read := inputsOf(t, name)
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			updatedSome := 0
			for trial := range 300 {
				g := BuildFrom(base, read)
				saved := g.Saved()
				if trial%2 == 1 {
					saved = added(saved) // as the saved index's decoder makes it
				}
				now := slices.Clone(base)
				prev := map[string]Input{}
				for k := range 1 + rng.IntN(3) {
					i := rng.IntN(len(now))
					if now[i].Info == nil {
						continue
					}
					if _, seen := prev[now[i].Path]; !seen {
						prev[now[i].Path] = now[i]
					}
					now[i].Info = mutate(rng, now[i].Language, base)
					_ = k
				}
				// Chains: the next trial starts from this one's files.
				if trial%3 != 2 {
					base = now
				}
				want := BuildFrom(now, read)
				got, err := UpdateFrom(now, saved, prev, read)
				if err != nil {
					t.Fatalf("trial %d: %v", trial, err)
				}
				if len(prev) > 0 {
					updatedSome++
				}
				if a, b := dump(t, got), dump(t, want); a != b {
					t.Fatalf("trial %d (changed %v): updated graph differs\n got %s\nwant %s", trial, keys(prev), a, b)
				}
			}
			if updatedSome == 0 {
				t.Fatal("no trial changed a file")
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestUpdateRefuses: changes Update does not handle are errors (the
// caller builds): a path gone, a file that gained or lost its parse
// result, another language, a go.mod; and a bad saved graph.
func TestUpdateRefuses(t *testing.T) {
	in, read := inputsOf(t, "go")
	g := BuildFrom(in, read)
	saved := g.Saved()
	var node, nonNode, gomod int = -1, -1, -1
	for i, x := range in {
		switch {
		case strings.HasSuffix(x.Path, "go.mod"):
			gomod = i
		case x.Info != nil && node < 0:
			node = i
		case x.Info == nil && nonNode < 0:
			nonNode = i
		}
	}
	if node < 0 || gomod < 0 {
		t.Fatalf("fixture: node %d, go.mod %d", node, gomod)
	}
	cases := map[string]map[string]Input{
		"gone":     {"nope.go": {Path: "nope.go", Language: "go", Info: in[node].Info}},
		"lost":     {in[node].Path: {Path: in[node].Path, Language: "go"}},
		"language": {in[node].Path: {Path: in[node].Path, Language: "python", Info: in[node].Info}},
		"go.mod":   {in[gomod].Path: in[gomod]},
	}
	if nonNode >= 0 {
		cases["gained"] = map[string]Input{in[nonNode].Path: {Path: in[nonNode].Path, Language: in[nonNode].Language, Info: in[node].Info}}
	}
	for name, prev := range cases {
		if _, err := UpdateFrom(in, saved, prev, read); err == nil {
			t.Errorf("%s: updated", name)
		}
	}
	bad := *saved
	bad.Nodes++
	if _, err := UpdateFrom(in, &bad, nil, read); err == nil {
		t.Error("bad saved graph: updated")
	}
	if _, err := UpdateFrom(in, saved, nil, read); err != nil {
		t.Errorf("nothing changed: %v", err)
	}
}

// TestUpdateRealTree (TASK_X_GRAPH_UPDATE_DIR=DIR, parsed for real):
// random files get another file's parse result of the same language, and
// the updated graph's edges and stats equal the built one's.
func TestUpdateRealTree(t *testing.T) {
	dir := os.Getenv("TASK_X_GRAPH_UPDATE_DIR")
	if dir == "" {
		t.Skip("TASK_X_GRAPH_UPDATE_DIR=DIR runs it")
	}
	ws, err := workspace.Open(context.Background(), dir, &workspace.Options{Home: "-", Parse: realParse})
	if err != nil {
		t.Fatal(err)
	}
	snap := ws.Snapshot()
	var in []Input
	byLang := map[string][]*syntax.FileInfo{}
	for _, p := range snap.Files() {
		f, _ := snap.File(p)
		info, _ := f.Parsed.(*syntax.FileInfo)
		in = append(in, Input{Path: p, Language: f.Language, Info: info})
		if info != nil {
			byLang[f.Language] = append(byLang[f.Language], info)
		}
	}
	read := func(rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(snap.Root(), filepath.FromSlash(rel)))
	}
	g := BuildFrom(in, read)
	saved := g.Saved()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 3 {
		now := slices.Clone(in)
		prev := map[string]Input{}
		for range len(in) / 100 {
			i := rng.IntN(len(now))
			if now[i].Info == nil || strings.HasSuffix(now[i].Path, "go.mod") {
				continue
			}
			if _, seen := prev[now[i].Path]; !seen {
				prev[now[i].Path] = now[i]
			}
			pool := byLang[now[i].Language]
			now[i].Info = pool[rng.IntN(len(pool))]
		}
		want := BuildFrom(now, read)
		got, err := UpdateFrom(now, saved, prev, read)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := edgeDump(got), edgeDump(want); a != b {
			t.Fatalf("trial %d: updated graph differs (%d vs %d bytes)", trial, len(a), len(b))
		}
		t.Logf("trial %d: %d files changed, %d edges, update %d ms, build %d ms", trial, len(prev), len(got.edges), got.stats.BuildMs, want.stats.BuildMs)
	}
}

// edgeDump is every edge with its symbols and the stats (BuildMs left out).
func edgeDump(g *Graph) string {
	var b strings.Builder
	st := g.Stats()
	st.BuildMs = 0
	fmt.Fprintf(&b, "%+v\n", st)
	for i := range g.edges {
		e := &g.edges[i]
		fmt.Fprintf(&b, "%d %d %s %v\n", e.from, e.to, e.kind(), g.symbolNames(e))
	}
	return b.String()
}

// TestUpdateGoPackageDefinitions: a Go import links the names the
// imported package defines, which a change of one of its files moves,
// even for a name too common to link by reference (defined in more than
// MaxDefiningFiles files).
func TestUpdateGoPackageDefinitions(t *testing.T) {
	goFile := func(pkg string, syms []syntax.Symbol, imps []syntax.Import, refs ...string) *syntax.FileInfo {
		return &syntax.FileInfo{Language: "go", Package: pkg, Symbols: syms, Imports: imps, Refs: syntax.InternNames(refs)}
	}
	newSym := []syntax.Symbol{sym("New", "function", true), sym("Other", "function", true)}
	in := []Input{
		{Path: "go.mod", Language: ""},
		{Path: "main.go", Language: "go", Info: goFile("main", nil, []syntax.Import{imp("mod/a", "import")}, "New")},
	}
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		in = append(in, Input{Path: p + "/" + p + ".go", Language: "go", Info: goFile(p, newSym, nil)})
	}
	in = append(in, Input{Path: "a/a2.go", Language: "go", Info: goFile("a", []syntax.Symbol{sym("Other2", "function", true)}, nil)})
	read := func(rel string) ([]byte, error) {
		if rel == "go.mod" {
			return []byte("module mod\n"), nil
		}
		return nil, os.ErrNotExist
	}
	for _, change := range []struct {
		file string
		info *syntax.FileInfo
	}{
		{"a/a.go", goFile("a", []syntax.Symbol{sym("Other", "function", true)}, nil)}, // New leaves a/a.go
		{"a/a2.go", goFile("a", []syntax.Symbol{sym("New", "function", true)}, nil)},  // New comes to a/a2.go
		{"a/a.go", goFile("a", []syntax.Symbol{sym("New", "function", false)}, nil)},  // New unexported
	} {
		saved := BuildFrom(in, read).Saved()
		now := slices.Clone(in)
		prev := map[string]Input{}
		for i := range now {
			if now[i].Path == change.file {
				prev[now[i].Path] = now[i]
				now[i].Info = change.info
			}
		}
		want := BuildFrom(now, read)
		got, err := UpdateFrom(now, saved, prev, read)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := dump(t, got), dump(t, want); a != b {
			t.Fatalf("%s: updated graph differs\n got %s\nwant %s", change.file, a, b)
		}
	}
}
