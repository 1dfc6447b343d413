package graph

import (
	"encoding/json"
	"slices"
	"testing"
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
			if !slices.EqualFunc(a.SavedEdges(), g.Saved().Edges, func(x, y SavedEdge) bool {
				return x.From == y.From && x.To == y.To && x.Kind == y.Kind && slices.Equal(x.Symbols, y.Symbols)
			}) {
				t.Fatal("SavedEdges of the added edges differ")
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
	base := g.Saved()
	if len(base.Edges) < 2 {
		t.Fatal("fixture too small")
	}
	withSymbols := slices.IndexFunc(base.Edges, func(e SavedEdge) bool { return len(e.Symbols) > 0 })
	if withSymbols < 0 {
		t.Fatal("no edge with symbols")
	}
	mutations := map[string]func(s *Saved){
		"node count":       func(s *Saved) { s.Nodes++ },
		"unresolved":       func(s *Saved) { s.Unresolved = -1 },
		"kind":             func(s *Saved) { s.Edges[0].Kind = "call" },
		"from range":       func(s *Saved) { s.Edges[len(s.Edges)-1].From = int32(s.Nodes) },
		"negative to":      func(s *Saved) { s.Edges[0].To = -1 },
		"to range":         func(s *Saved) { s.Edges[0].To = int32(s.Nodes) },
		"self reference":   func(s *Saved) { s.Edges[0].Kind, s.Edges[0].To = KindReference, s.Edges[0].From },
		"order":            func(s *Saved) { s.Edges[0], s.Edges[1] = s.Edges[1], s.Edges[0] },
		"repeated edge":    func(s *Saved) { s.Edges[1] = s.Edges[0] },
		"repeated symbol":  func(s *Saved) { e := &s.Edges[withSymbols]; e.Symbols = append(e.Symbols, e.Symbols[len(e.Symbols)-1]) },
		"unsorted symbols": func(s *Saved) { e := &s.Edges[withSymbols]; e.Symbols = append([]string{"~"}, e.Symbols...) },
	}
	for name, mutate := range mutations {
		s := &Saved{Nodes: base.Nodes, Unresolved: base.Unresolved, Edges: make([]SavedEdge, len(base.Edges))}
		for i, e := range base.Edges {
			e.Symbols = slices.Clone(e.Symbols)
			s.Edges[i] = e
		}
		if _, err := Restore(g.snap, s); err != nil {
			t.Fatalf("%s: unmutated copy rejected: %v", name, err)
		}
		mutate(s)
		if _, err := Restore(g.snap, s); err == nil {
			t.Errorf("%s: accepted", name)
		}
		// Added one by one (AddEdge checks as they come), the same.
		if _, err := Restore(g.snap, added(s)); err == nil {
			t.Errorf("%s: accepted when added", name)
		}
	}
	both := added(base)
	both.Edges = base.Edges
	if _, err := Restore(g.snap, both); err == nil {
		t.Error("edges both added and listed: accepted")
	}
	if _, err := Restore(g.snap, nil); err == nil {
		t.Error("nil accepted")
	}
}

// added is s with its edges added one by one (NewSaved, AddEdge), as the
// saved index's decoder makes it.
func added(s *Saved) *Saved {
	a := NewSaved(s.Nodes, s.Unresolved, len(s.Edges))
	for _, e := range s.Edges {
		a.AddEdge(e.From, e.To, e.Kind, e.Symbols)
	}
	return a
}
