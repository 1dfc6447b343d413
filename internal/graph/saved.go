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
// the linked names, sorted by name and distinct.
type SavedEdge struct {
	From, To int32
	Kind     string
	Symbols  []syntax.Name
}

// Saved is what a saved index keeps of a graph (Graph.Saved, Restore):
// the node count, the edges in graph order (Len, Edge) and the unresolved
// imports. A decoder makes one with NewSaved and AddEdge.
type Saved struct {
	Nodes      int
	Unresolved int

	// edges and syms are the edges in the graph's own form; err is the
	// first failed check of AddEdge.
	edges []edge
	syms  []syntax.Name
	err   error
}

// NewSaved returns a saved graph of nodes nodes and unresolved
// unresolved imports to which about edges edges will be added (AddEdge).
func NewSaved(nodes, unresolved, edges int) *Saved {
	return &Saved{Nodes: nodes, Unresolved: unresolved, edges: make([]edge, 0, edges)}
}

// AddEdge appends an edge (its symbols are copied), checked as it comes:
// node indexes in [0, Nodes), a known kind, no self reference, in order
// after the edge before (by from, to, kind; not repeated), symbols in
// order and not repeated. The first edge that fails is the error Restore
// and Update return (the graph is then built); the edges are kept as
// added (an encoder writes them as they are). Checking on the decoder's
// goroutine spares Restore, on the reopen's path, a pass over every edge.
func (s *Saved) AddEdge(from, to int32, kind string, symbols []syntax.Name) {
	i := len(s.edges)
	if uint64(len(s.syms))+uint64(len(symbols)) > math.MaxUint32>>1 {
		if s.err == nil {
			s.err = fmt.Errorf("edge %d: too many symbols", i)
		}
		return // not representable
	}
	e := edge{from: from, to: to, start: uint32(len(s.syms)), nk: uint32(len(symbols))<<1 | kindBit(kind)}
	if s.err == nil {
		s.err = checkEdge(i, &e, kind, s.edges, symbols, s.Nodes)
	}
	s.edges = append(s.edges, e)
	s.syms = append(s.syms, symbols...)
}

// checkEdge checks edge i, e (of kind kind, after edges, with symbols)
// of a graph of n nodes.
func checkEdge(i int, e *edge, kind string, edges []edge, symbols []syntax.Name, n int) error {
	switch {
	case kind != KindImport && kind != KindReference:
		return fmt.Errorf("edge %d: kind %q", i, kind)
	case e.from < 0 || int64(e.from) >= int64(n) || e.to < 0 || int64(e.to) >= int64(n):
		return fmt.Errorf("edge %d: node out of range", i)
	case kind == KindReference && e.from == e.to:
		return fmt.Errorf("edge %d: self reference", i)
	case i > 0 && edgeCompare(&edges[i-1], e) >= 0:
		return fmt.Errorf("edge %d: out of order", i)
	}
	for k := 1; k < len(symbols); k++ {
		if symbols[k-1].String() >= symbols[k].String() {
			return fmt.Errorf("edge %d: symbols out of order", i)
		}
	}
	return nil
}

// Len is the number of edges.
func (s *Saved) Len() int { return len(s.edges) }

// Edge returns edge i; its Symbols share s's memory: do not modify.
func (s *Saved) Edge(i int) SavedEdge {
	e := &s.edges[i]
	return SavedEdge{From: e.from, To: e.to, Kind: e.kind(), Symbols: symbolsOf(s.syms, e)}
}

// Saved returns g's edges for a saved index (sharing g's memory).
func (g *Graph) Saved() *Saved {
	return &Saved{Nodes: len(g.nodes), Unresolved: g.stats.UnresolvedImports, edges: g.edges, syms: g.syms}
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
	edges, syms, err := savedEdges(s, int32(len(g.nodes)))
	if err != nil {
		return nil, err
	}
	g.edges, g.syms = edges, syms
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

// savedEdges returns the edges of s and their symbols for a graph of n
// nodes (AddEdge checked them against s.Nodes), or the error AddEdge
// kept.
func savedEdges(s *Saved, n int32) ([]edge, []syntax.Name, error) {
	if s.err != nil {
		return nil, nil, s.err
	}
	if int64(s.Nodes) != int64(n) {
		return nil, nil, fmt.Errorf("saved graph has %d nodes, not %d", s.Nodes, n)
	}
	return s.edges, s.syms, nil
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
