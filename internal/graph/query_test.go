package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/task-x/task-x-runtime/internal/syntax"
)

// synth builds a TypeScript graph whose import edges are exactly edges
// (importer → imported paths, each ending in .ts).
func synth(t testing.TB, edges map[string][]string, extra ...string) *Graph {
	t.Helper()
	files := map[string]*syntax.FileInfo{}
	for _, p := range extra {
		files[p] = &syntax.FileInfo{Language: "typescript"}
	}
	for from, tos := range edges {
		if files[from] == nil {
			files[from] = &syntax.FileInfo{Language: "typescript"}
		}
		for _, to := range tos {
			if files[to] == nil {
				files[to] = &syntax.FileInfo{Language: "typescript"}
			}
			rel, err := filepath.Rel(filepath.Dir(from), to)
			if err != nil {
				t.Fatal(err)
			}
			spec := filepath.ToSlash(rel)
			if spec[0] != '.' {
				spec = "./" + spec
			}
			files[from].Imports = append(files[from].Imports, syntax.Import{Path: spec[:len(spec)-3], Kind: "import"})
		}
	}
	var in []Input
	for p, fi := range files {
		in = append(in, Input{Path: p, Language: "typescript", Info: fi})
	}
	return BuildFrom(in, nil)
}

func ids(r ProjectResult) []string {
	var out []string
	for _, n := range r.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestProjectFocusDepth(t *testing.T) {
	// A chain a → b → c → d → e → f, plus x → c (x reaches c backwards).
	g := synth(t, map[string][]string{
		"a.ts": {"b.ts"}, "b.ts": {"c.ts"}, "c.ts": {"d.ts"}, "d.ts": {"e.ts"}, "e.ts": {"f.ts"}, "x.ts": {"c.ts"},
	}, "lonely.ts")
	cases := []struct {
		depth int
		want  []string
	}{
		{0, []string{"c.ts", "b.ts", "d.ts", "x.ts"}}, // default depth 1, both directions
		{1, []string{"c.ts", "b.ts", "d.ts", "x.ts"}},
		{2, []string{"c.ts", "b.ts", "d.ts", "x.ts", "a.ts", "e.ts"}},
		{9, []string{"c.ts", "b.ts", "d.ts", "x.ts", "a.ts", "e.ts", "f.ts"}}, // clamped to 4
	}
	for _, c := range cases {
		r, err := g.Project(ProjectOptions{Focus: "c.ts", Depth: c.depth})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(r)
		if got[0] != "c.ts" {
			t.Errorf("depth %d: focus is not first: %v", c.depth, got)
		}
		a, b := slices.Clone(got), slices.Clone(c.want)
		sort.Strings(a)
		sort.Strings(b)
		if !slices.Equal(a, b) {
			t.Errorf("depth %d: nodes %v, want %v", c.depth, got, c.want)
		}
		if r.Total != len(c.want) {
			t.Errorf("depth %d: total %d, want %d", c.depth, r.Total, len(c.want))
		}
		for _, e := range r.Edges {
			if e.From < 0 || e.From >= len(r.Nodes) || e.To < 0 || e.To >= len(r.Nodes) || e.Kind != KindImport || e.Weight < 1 {
				t.Errorf("bad edge %+v", e)
			}
		}
	}
	// A folder focus seeds every file inside it.
	g2 := synth(t, map[string][]string{"lib/a.ts": {"lib/b.ts"}, "app.ts": {"lib/a.ts"}, "far.ts": {"app.ts"}})
	r, err := g2.Project(ProjectOptions{Focus: "lib", Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r); len(got) != 3 || slices.Contains(got, "far.ts") {
		t.Errorf("focus lib: %v", got)
	}
	if _, err := g.Project(ProjectOptions{Focus: "nope.ts"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown focus: err = %v, want ErrInvalid", err)
	}
	for _, o := range []ProjectOptions{{Level: "package"}, {Depth: -1}, {MaxNodes: -5}} {
		if _, err := g.Project(o); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err = %v, want ErrInvalid", o, err)
		}
	}
}

func TestProjectMaxNodes(t *testing.T) {
	// 700 files; hub.ts is imported by all, so it is the most connected.
	edges := map[string][]string{}
	for i := range 700 {
		edges[fmt.Sprintf("f%03d.ts", i)] = []string{"hub.ts"}
	}
	edges["f000.ts"] = append(edges["f000.ts"], "f001.ts")
	g := synth(t, edges)
	for _, c := range []struct{ max, want int }{{0, 250}, {10, 10}, {5000, 600}} {
		r, err := g.Project(ProjectOptions{MaxNodes: c.max})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Nodes) != c.want || r.Total != 701 {
			t.Errorf("maxNodes %d: %d nodes (total %d), want %d (701)", c.max, len(r.Nodes), r.Total, c.want)
		}
		if r.Nodes[0].ID != "hub.ts" || r.Nodes[0].Degree != 700 {
			t.Errorf("maxNodes %d: first node %+v, want hub.ts of degree 700", c.max, r.Nodes[0])
		}
		if r.Nodes[1].ID != "f000.ts" && r.Nodes[1].ID != "f001.ts" {
			t.Errorf("second node %s, want f000.ts or f001.ts (degree 2)", r.Nodes[1].ID)
		}
		for i := 1; i < len(r.Nodes); i++ {
			if r.Nodes[i].Degree > r.Nodes[i-1].Degree {
				t.Fatalf("nodes not sorted by degree at %d", i)
			}
		}
	}
	st := g.Stats()
	if len(st.Hubs) != 2 || st.Hubs[0] != (Hub{Path: "hub.ts", Dependents: 700}) {
		t.Errorf("hubs = %v", st.Hubs[:min(3, len(st.Hubs))])
	}
}

func TestProjectModuleLevelAndImportsOnly(t *testing.T) {
	in := []Input{
		{Path: "a/x.ts", Language: "typescript", Info: &syntax.FileInfo{Symbols: []syntax.Symbol{sym("X", "class", true)},
			Imports: []syntax.Import{imp("../b/y", "import"), imp("./z", "import")}}},
		{Path: "a/z.ts", Language: "typescript", Info: &syntax.FileInfo{Symbols: []syntax.Symbol{sym("Z", "class", true)}, Refs: syntax.InternNames([]string{"Y"})}},
		{Path: "b/y.ts", Language: "typescript", Info: &syntax.FileInfo{Symbols: []syntax.Symbol{sym("Y", "class", true), sym("Y2", "class", true)},
			Imports: []syntax.Import{imp("../a/x", "import")}}},
		{Path: "c/w.py", Language: "python", Info: &syntax.FileInfo{Refs: syntax.InternNames([]string{"Y"})}}, // another family: no link
		{Path: "README.md", Language: "markdown"},
	}
	g := BuildFrom(in, nil)
	st := g.Stats()
	if st.Files != 4 || st.Modules != 3 || st.ImportEdges != 3 || st.ReferenceEdges != 1 || st.Orphans != 1 || st.Cycles != 1 {
		t.Errorf("stats = %+v", st)
	}
	r, err := g.Project(ProjectOptions{Level: LevelModule})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Node{}
	for _, n := range r.Nodes {
		byID[n.ID] = n
	}
	if a := byID["a"]; a.Files != 2 || a.Symbols != 2 || !a.InCycle || a.Language != "typescript" {
		t.Errorf("module a = %+v", a)
	}
	if c := byID["c"]; c.InCycle || c.Degree != 0 {
		t.Errorf("module c = %+v", c)
	}
	var kinds []string
	for _, e := range r.Edges {
		kinds = append(kinds, r.Nodes[e.From].ID+">"+r.Nodes[e.To].ID+":"+string(e.Kind))
	}
	sort.Strings(kinds)
	want := []string{"a>b:import", "a>b:reference", "b>a:import"} // a/x→a/z is inside a: dropped
	if !slices.Equal(kinds, want) {
		t.Errorf("module edges %v, want %v", kinds, want)
	}
	r, _ = g.Project(ProjectOptions{Level: LevelModule, ImportsOnly: true})
	for _, e := range r.Edges {
		if e.Kind != KindImport {
			t.Errorf("importsOnly returned %+v", e)
		}
	}
	if r, _ := g.Project(ProjectOptions{Level: LevelModule, Focus: "a/x.ts", Depth: 1}); r.Nodes[0].ID != "a" || len(r.Nodes) != 2 {
		t.Errorf("module focus on a file: %v", ids(r))
	}
	// graph/file: an indexed non-node has empty lists; an unknown path fails.
	fd, err := g.File("README.md")
	if err != nil || len(fd.DependsOn)+len(fd.UsedBy) != 0 || fd.ImportCycle == nil {
		t.Errorf("README.md: %+v %v", fd, err)
	}
	if _, err := g.File("missing.ts"); !errors.Is(err, ErrNotIndexed) {
		t.Errorf("missing.ts: err = %v, want ErrNotIndexed", err)
	}
	fd, _ = g.File("./a/x.ts")
	if !slices.Equal(fd.ImportCycle, []string{"a/x.ts", "b/y.ts"}) || fd.Path != "a/x.ts" {
		t.Errorf("a/x.ts: %+v", fd)
	}
	if nb := g.Neighbours("a/z.ts"); !slices.Equal(nb, []string{"a/x.ts", "b/y.ts"}) {
		t.Errorf("neighbours = %v", nb)
	}
}

func TestReferenceLimit(t *testing.T) {
	mk := func(n int) *Graph {
		in := []Input{{Path: "use.py", Language: "python", Info: &syntax.FileInfo{Refs: syntax.InternNames([]string{"Common"})}}}
		for i := range n {
			in = append(in, Input{Path: fmt.Sprintf("d%d/def.py", i), Language: "python",
				Info: &syntax.FileInfo{Symbols: []syntax.Symbol{sym("Common", "function", true)}}})
		}
		return BuildFrom(in, nil)
	}
	if got := mk(MaxDefiningFiles).Stats().ReferenceEdges; got != MaxDefiningFiles {
		t.Errorf("%d definitions: %d reference edges, want %d", MaxDefiningFiles, got, MaxDefiningFiles)
	}
	if got := mk(MaxDefiningFiles + 1).Stats().ReferenceEdges; got != 0 {
		t.Errorf("%d definitions: %d reference edges, want 0", MaxDefiningFiles+1, got)
	}
}

// TestTarjanProperty checks the components against brute-force
// reachability on random graphs: two nodes share a component exactly when
// each reaches the other.
func TestTarjanProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		n := 1 + rng.IntN(14)
		adj := make([][]int32, n)
		for range rng.IntN(n * 3) {
			adj[rng.IntN(n)] = append(adj[rng.IntN(n)], int32(rng.IntN(n)))
		}
		reach := make([][]bool, n)
		for s := range n {
			reach[s] = make([]bool, n)
			reach[s][s] = true
			stack := []int{s}
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, w := range adj[v] {
					if !reach[s][w] {
						reach[s][w] = true
						stack = append(stack, int(w))
					}
				}
			}
		}
		comp := make([]int, n)
		for i := range comp {
			comp[i] = -1
		}
		for ci, c := range tarjan(adj) {
			for _, v := range c {
				if comp[v] != -1 {
					t.Fatalf("iter %d: node %d in two components", iter, v)
				}
				comp[v] = ci
			}
		}
		for u := range n {
			if comp[u] == -1 {
				t.Fatalf("iter %d: node %d in no component", iter, u)
			}
			for v := range n {
				if same, mutual := comp[u] == comp[v], reach[u][v] && reach[v][u]; same != mutual {
					t.Fatalf("iter %d: nodes %d,%d same component %v, mutually reachable %v (adj %v)", iter, u, v, same, mutual, adj)
				}
			}
		}
	}
}

func TestTarjanDeepChain(t *testing.T) {
	// 200 000 nodes in one cycle: the iterative algorithm must not recurse.
	n := 200_000
	adj := make([][]int32, n)
	for i := range n {
		adj[i] = []int32{int32((i + 1) % n)}
	}
	if c := tarjan(adj); len(c) != 1 || len(c[0]) != n {
		t.Fatalf("got %d components", len(c))
	}
}

func TestGoReferencesNeedAnImport(t *testing.T) {
	goFile := func(p string, imports []string, refs []string, defs ...string) Input {
		fi := &syntax.FileInfo{Language: "go", Refs: syntax.InternNames(refs)}
		for _, im := range imports {
			fi.Imports = append(fi.Imports, imp(im, "import"))
		}
		for _, d := range defs {
			fi.Symbols = append(fi.Symbols, sym(d, "function", true))
		}
		return Input{Path: p, Language: "go", Info: fi}
	}
	g := BuildFrom([]Input{
		{Path: "go.mod", Language: "go.mod"},
		goFile("a/a.go", nil, []string{"Foo"}),
		goFile("b/b.go", nil, nil, "Foo"),
		goFile("c/c.go", []string{"m/b"}, []string{"Foo"}),
	}, func(rel string) ([]byte, error) { return []byte("module m\n"), nil })
	mustHave(t, g, "c/c.go -> b/b.go import", "c/c.go -> b/b.go reference")
	mustNotHave(t, g, "a/a.go -> b/b.go reference")
}

// TestTopFilesEqualsView: graph/project at file level without a focus
// (topFiles, which makes no view) answers exactly as the view of every
// node and edge does (project), on every fixture, with and without
// reference edges, for node caps from 1 to past the file count.
func TestTopFilesEqualsView(t *testing.T) {
	for _, name := range []string{"go", "python", "rust", "ts", "c"} {
		for _, real := range []bool{false, true} {
			g := fixture(t, name, real)
			for _, importsOnly := range []bool{false, true} {
				for _, max := range []int{1, 2, 3, 5, 250, len(g.nodes) + 1} {
					o := ProjectOptions{Level: LevelFile, Depth: DefaultDepth, MaxNodes: max, ImportsOnly: importsOnly}
					want, err := g.project(o)
					if err != nil {
						t.Fatal(err)
					}
					got := g.topFiles(o)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s (real %v) importsOnly %v maxNodes %d:\n got  %+v\n want %+v", name, real, importsOnly, max, got, want)
					}
				}
			}
		}
	}
}
