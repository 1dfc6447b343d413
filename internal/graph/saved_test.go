package graph

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/task-x/task-x-runtime/internal/syntax"
)

// dump is everything a client can read of g: stats (without the build
// time), graph/project at both levels and imports only, graph/file of
// every node.
func dump(t *testing.T, g *Graph) string {
	t.Helper()
	st := g.Stats()
	st.BuildMs = 0
	out, _ := json.Marshal(st)
	for _, o := range []ProjectOptions{{}, {Level: "module"}, {ImportsOnly: true}} {
		res, err := g.Project(o)
		if err != nil {
			t.Fatal(err)
		}
		res.Stats.BuildMs = 0
		js, _ := json.Marshal(res)
		out = append(append(out, '\n'), js...)
	}
	for _, n := range g.nodes {
		fd, err := g.File(n.path)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(fd)
		out = append(append(out, '\n'), js...)
	}
	return string(out)
}

func TestRestoreEqualsBuild(t *testing.T) {
	for _, name := range []string{"rust", "ts", "python", "go", "c"} {
		t.Run(name, func(t *testing.T) {
			g := fixture(t, name, true)
			r, err := Restore(g.snap, g.Saved())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := dump(t, r), dump(t, g); got != want {
				t.Fatalf("restored graph differs:\n got %s\nwant %s", got, want)
			}
			// The same edges added one by one (a decoder's way).
			a := added(g.Saved())
			if !slices.EqualFunc(edgesOf(a), edgesOf(g.Saved()), func(x, y SavedEdge) bool {
				return x.From == y.From && x.To == y.To && x.Kind == y.Kind && slices.Equal(x.Symbols, y.Symbols)
			}) {
				t.Fatal("the added edges differ")
			}
			r, err = Restore(g.snap, a)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := dump(t, r), dump(t, g); got != want {
				t.Fatalf("graph restored from added edges differs:\n got %s\nwant %s", got, want)
			}
			if r.SnapshotVersion() != g.SnapshotVersion() || len(g.edges) == 0 {
				t.Fatalf("version %d vs %d, %d edges", r.SnapshotVersion(), g.SnapshotVersion(), len(g.edges))
			}
		})
	}
}

// TestRestoreRejectsBadEdges: a saved graph is untrusted input; every
// broken invariant is an error, never a wrong graph or a panic.
func TestRestoreRejectsBadEdges(t *testing.T) {
	g := fixture(t, "rust", true)
	saved := g.Saved()
	type list struct {
		nodes, unresolved int
		edges             []SavedEdge
	}
	base := list{nodes: saved.Nodes, unresolved: saved.Unresolved, edges: edgesOf(saved)}
	if len(base.edges) < 2 {
		t.Fatal("fixture too small")
	}
	withSymbols := slices.IndexFunc(base.edges, func(e SavedEdge) bool { return len(e.Symbols) > 0 })
	if withSymbols < 0 {
		t.Fatal("no edge with symbols")
	}
	mutations := map[string]func(s *list){
		"node count":      func(s *list) { s.nodes++ },
		"unresolved":      func(s *list) { s.unresolved = -1 },
		"kind":            func(s *list) { s.edges[0].Kind = "call" },
		"from range":      func(s *list) { s.edges[len(s.edges)-1].From = int32(s.nodes) },
		"negative to":     func(s *list) { s.edges[0].To = -1 },
		"to range":        func(s *list) { s.edges[0].To = int32(s.nodes) },
		"self reference":  func(s *list) { s.edges[0].Kind, s.edges[0].To = KindReference, s.edges[0].From },
		"order":           func(s *list) { s.edges[0], s.edges[1] = s.edges[1], s.edges[0] },
		"repeated edge":   func(s *list) { s.edges[1] = s.edges[0] },
		"repeated symbol": func(s *list) { e := &s.edges[withSymbols]; e.Symbols = append(e.Symbols, e.Symbols[len(e.Symbols)-1]) },
		"unsorted symbols": func(s *list) {
			e := &s.edges[withSymbols]
			e.Symbols = append([]syntax.Name{syntax.InternName("~")}, e.Symbols...)
		},
	}
	build := func(l list) *Saved {
		s := NewSaved(l.nodes, l.unresolved, len(l.edges))
		for _, e := range l.edges {
			s.AddEdge(e.From, e.To, e.Kind, e.Symbols)
		}
		return s
	}
	for name, mutate := range mutations {
		l := base
		l.edges = slices.Clone(base.edges)
		for i := range l.edges {
			l.edges[i].Symbols = slices.Clone(l.edges[i].Symbols)
		}
		if _, err := Restore(g.snap, build(l)); err != nil {
			t.Fatalf("%s: unmutated copy rejected: %v", name, err)
		}
		mutate(&l)
		if _, err := Restore(g.snap, build(l)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Restore(g.snap, nil); err == nil {
		t.Error("nil accepted")
	}
}

// added is s with its edges added one by one (NewSaved, AddEdge), as the
// saved index's decoder makes it.
func added(s *Saved) *Saved {
	a := NewSaved(s.Nodes, s.Unresolved, s.Len())
	for _, e := range edgesOf(s) {
		a.AddEdge(e.From, e.To, e.Kind, e.Symbols)
	}
	return a
}

// edgesOf is s's edges.
func edgesOf(s *Saved) []SavedEdge {
	out := make([]SavedEdge, s.Len())
	for i := range out {
		out[i] = s.Edge(i)
	}
	return out
}
