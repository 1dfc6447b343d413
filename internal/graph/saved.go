package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// SavedEdge is one edge of a saved graph: From and To are node indexes
// (file nodes in path order), Kind KindImport or KindReference, Symbols
// the linked names, sorted and distinct.
type SavedEdge struct {
	From, To int32
	Kind     string
	Symbols  []string
}

// Saved is what a saved index keeps of a graph (Graph.Saved, Restore):
// the node count, the edges in graph order and the unresolved imports.
// A decoder adds the edges with AddEdge (NewSaved) instead of listing
// them in Edges.
type Saved struct {
	Nodes      int
	Edges      []SavedEdge
	Unresolved int

	// added are the edges AddEdge took, in the graph's own form and
	// checked as they came (Restore and Update use them as they are);
	// addErr is the first one it refused.
	added  []edge
	addErr error
}

// NewSaved returns a saved graph of nodes nodes and unresolved
// unresolved imports to which about edges edges will be added (AddEdge).
func NewSaved(nodes, unresolved, edges int) *Saved {
	return &Saved{Nodes: nodes, Unresolved: unresolved, added: make([]edge, 0, edges)}
}

// AddEdge appends an edge to s (after the edges added before it; Edges
// must be empty), checked as Restore checks edges as far as it can be
// without the snapshot: node indexes below s.Nodes, the kind, no self
// reference, in order after the edge before, symbols in order. The first
// edge that fails is kept as the error Restore and Update return (the
// graph is then built); the edges are then dropped. The symbols slice is
// kept (not copied). Adding on the decoder's goroutine spares Restore, on
// the reopen's critical path, a check and a copy of every edge.
func (s *Saved) AddEdge(from, to int32, kind string, symbols []string) {
	if s.addErr != nil {
		return
	}
	var prev *edge
	if n := len(s.added); n > 0 {
		prev = &s.added[n-1]
	}
	e, err := checkEdge(len(s.added), SavedEdge{From: from, To: to, Kind: kind, Symbols: symbols}, prev, int32(min(s.Nodes, math.MaxInt32)))
	if err != nil {
		s.added, s.addErr = nil, err
		return
	}
	s.added = append(s.added, e)
}

// SavedEdges returns the edges of s: Edges, or the edges AddEdge took.
func (s *Saved) SavedEdges() []SavedEdge {
	if len(s.added) == 0 {
		return s.Edges
	}
	out := make([]SavedEdge, len(s.added))
	for i, e := range s.added {
		out[i] = SavedEdge{From: e.from, To: e.to, Kind: e.kind, Symbols: e.symbols}
	}
	return out
}

// Saved returns g's edges for a saved index. The symbol slices are
// shared: do not modify.
func (g *Graph) Saved() *Saved {
	s := &Saved{Nodes: len(g.nodes), Edges: make([]SavedEdge, len(g.edges)), Unresolved: g.stats.UnresolvedImports}
	for i, e := range g.edges {
		s.Edges[i] = SavedEdge{From: e.from, To: e.to, Kind: e.kind, Symbols: e.symbols}
	}
	return s
}

// Restore returns the graph of snap from the edges Saved returned for a
// snapshot with exactly the same files (same paths and parse results);
// only the caller can know that (a saved index whose every record passed
// its stamp check). The edges are not trusted: node indexes out of range,
// an unknown kind, a self reference, edges out of order or repeated, and
// symbols out of order or repeated are errors, and the graph must then be
// built (Build). Nodes, cycles and stats are computed as Build does.
func Restore(snap *workspace.Snapshot, s *Saved) (*Graph, error) {
	start := time.Now()
	if s == nil {
		return nil, errors.New("no saved graph")
	}
	paths := snap.Files()
	g := &Graph{byPath: make(map[string]int32, len(paths))}
	for _, p := range paths {
		f, _ := snap.File(p)
		if info, _ := f.Parsed.(*syntax.FileInfo); info != nil {
			g.nodes = append(g.nodes, fileNode{path: p, lang: f.Language, symbols: len(info.Symbols), info: info})
		}
	}
	slices.SortFunc(g.nodes, func(a, b fileNode) int {
		switch {
		case a.path < b.path:
			return -1
		case a.path > b.path:
			return 1
		}
		return 0
	})
	for i, n := range g.nodes {
		g.byPath[n.path] = int32(i)
	}
	if s.Nodes != len(g.nodes) {
		return nil, fmt.Errorf("saved graph has %d nodes, the snapshot %d", s.Nodes, len(g.nodes))
	}
	if s.Unresolved < 0 {
		return nil, errors.New("negative unresolved count")
	}
	edges, err := savedEdges(s, int32(len(g.nodes)))
	if err != nil {
		return nil, err
	}
	g.edges = edges
	g.finish(s.Unresolved)
	g.snap = snap
	g.snapVersion = snap.Version()
	g.indexed = func(rel string) bool { _, ok := snap.File(rel); return ok }
	g.stats.BuildMs = time.Since(start).Milliseconds()
	return g, nil
}

// finish computes what follows from the sorted edges: the adjacency
// lists, the import cycles and the stats.
func (g *Graph) finish(unresolved int) {
	// Each node's lists are windows of two arrays of one edge index per
	// edge (counted first), not slices grown edge by edge: two
	// allocations instead of up to four per node.
	nOut := make([]int32, len(g.nodes)+1)
	nIn := make([]int32, len(g.nodes)+1)
	for _, e := range g.edges {
		nOut[e.from+1]++
		nIn[e.to+1]++
	}
	for i := range len(g.nodes) {
		nOut[i+1] += nOut[i]
		nIn[i+1] += nIn[i]
	}
	outs := make([]int32, len(g.edges))
	ins := make([]int32, len(g.edges))
	g.out = make([][]int32, len(g.nodes))
	g.in = make([][]int32, len(g.nodes))
	for i := range g.nodes {
		if a, b := nOut[i], nOut[i+1]; a < b {
			g.out[i] = outs[a:a:b]
		}
		if a, b := nIn[i], nIn[i+1]; a < b {
			g.in[i] = ins[a:a:b]
		}
	}
	for i, e := range g.edges {
		g.out[e.from] = append(g.out[e.from], int32(i))
		g.in[e.to] = append(g.in[e.to], int32(i))
	}
	g.computeCycles()
	g.computeStats(unresolved)
}

// Put makes g the cached graph (a graph Restore made for the snapshot the
// cache is about to be asked about). A nil g does nothing.
func (c *Cache) Put(g *Graph) {
	if g == nil || g.snap == nil {
		return
	}
	c.mu.Lock()
	c.g = g
	c.mu.Unlock()
}

// savedEdges checks the edges of s for a graph of n nodes (node indexes
// in range, known kinds, no self reference, edges in order and not
// repeated, symbols in order and not repeated) and returns them. Edges
// AddEdge took were checked as they came (against s.Nodes, which the
// callers compare with n first) and are returned as they are: s is not
// to be restored or updated twice.
func savedEdges(s *Saved, n int32) ([]edge, error) {
	if s.added != nil || s.addErr != nil {
		switch {
		case s.addErr != nil:
			return nil, s.addErr
		case len(s.Edges) > 0:
			return nil, errors.New("edges both added and listed")
		case int64(s.Nodes) != int64(n):
			return nil, fmt.Errorf("edges added for %d nodes, not %d", s.Nodes, n)
		}
		return s.added, nil
	}
	edges := make([]edge, len(s.Edges))
	for i, se := range s.Edges {
		var prev *edge
		if i > 0 {
			prev = &edges[i-1]
		}
		e, err := checkEdge(i, se, prev, n)
		if err != nil {
			return nil, err
		}
		edges[i] = e
	}
	return edges, nil
}

// checkEdge checks saved edge i (se, after prev, nil for the first) for
// a graph of n nodes and returns it in the graph's form.
func checkEdge(i int, se SavedEdge, prev *edge, n int32) (edge, error) {
	var kind string
	switch se.Kind {
	case KindImport:
		kind = KindImport
	case KindReference:
		kind = KindReference
	default:
		return edge{}, fmt.Errorf("edge %d: kind %q", i, se.Kind)
	}
	if se.From < 0 || se.From >= n || se.To < 0 || se.To >= n {
		return edge{}, fmt.Errorf("edge %d: node out of range", i)
	}
	if kind == KindReference && se.From == se.To {
		return edge{}, fmt.Errorf("edge %d: self reference", i)
	}
	if p := prev; p != nil {
		if p.from > se.From || p.from == se.From && (p.to > se.To || p.to == se.To && p.kind >= kind) {
			return edge{}, fmt.Errorf("edge %d: out of order", i)
		}
	}
	for k := 1; k < len(se.Symbols); k++ {
		if se.Symbols[k-1] >= se.Symbols[k] {
			return edge{}, fmt.Errorf("edge %d: symbols out of order", i)
		}
	}
	return edge{from: se.From, to: se.To, kind: kind, symbols: slices.Clip(se.Symbols)}, nil
}

// Fill makes the graph of snap with f on another goroutine and caches
// it; Get and Cached wait for it meanwhile (a restore computes the graph
// while it loads the rest). When f returns nil the cache is left as it
// was (the next Get builds).
func (c *Cache) Fill(f func() *Graph) {
	c.mu.Lock()
	go func() {
		defer c.mu.Unlock()
		if g := f(); g != nil && g.snap != nil {
			c.g = g
		}
	}()
}
