// Package graph owns the project graph of a workspace snapshot: import edges
// (resolved import statements), reference edges (a file to the file that
// defines a symbol it uses), import cycles (strongly connected components of
// the import edges), the module roll-up (files into their directories) and
// the focus/depth queries behind graph/project, graph/file and the
// get_dependencies tool.
//
// Source: ../shared/spec/protocol.md (graph/project, graph/file) and
// ../shared/spec/addendum.md §10 (edge kinds, importCycle, focus both ways,
// maxNodes clamp, orphans). Design decisions are in docs/index.md ("Project
// graph").
//
// A Graph is immutable and built from one *workspace.Snapshot; Cache keeps
// the graph of the latest snapshot version so it is rebuilt lazily, on its
// first use after the workspace changed. The graph reads File.Parsed
// (*syntax.FileInfo); files without one (no parser, unsupported language,
// failed parse) are not nodes. It reads go.mod files from disk to learn
// module paths.
package graph

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Version is the graph engine version reported in stats.version. It
// changes whenever resolution or linking rules change the edges produced.
const Version = "1"

// Edge kinds (addendum §10).
const (
	KindImport    = "import"
	KindReference = "reference"
)

// Limits of graph/project (protocol.md graph/project).
const (
	DefaultMaxNodes = 250
	MaxMaxNodes     = 600
	DefaultDepth    = 1
	MaxDepth        = 4
	// MaxDefiningFiles is the most files a name may be defined in and still
	// be linked by reference edges.
	MaxDefiningFiles = 3
	// hubCount is the number of hubs in stats.
	hubCount = 10
)

// ErrNotIndexed is wrapped by File when the path is not an indexed file.
var ErrNotIndexed = errors.New("file is not indexed")

// ErrInvalid is wrapped by Project for bad options (level, depth, maxNodes)
// and a focus that names no indexed file or folder.
var ErrInvalid = errors.New("invalid graph query")

// Hub is a file many others depend on: Dependents counts distinct files
// with an edge (either kind) into Path.
type Hub = protocol.GraphHub

// Stats is graph/project's stats (protocol.md). Files counts file nodes
// (indexed files with a parse result); Edges = ImportEdges +
// ReferenceEdges; Modules counts folders holding file nodes; Cycles is
// len(ImportCycles); Orphans counts file nodes of degree 0; Hubs is the top
// 10 by dependents (ties by path); ImportCycles lists each strongly
// connected component of the import edges with more than one file, and
// each file importing itself, its paths sorted, the list sorted by first
// path. BuildMs is the build time in milliseconds. UnresolvedImports
// (additive) counts import statements that look local (relative JS/TS
// specifiers, Rust mod/crate/super/self, Python relative imports or imports
// of a package found in the workspace, Go imports inside a workspace
// module) but matched no indexed file; imports of outside packages are not
// counted.
type Stats = protocol.GraphStats

// Input is one file given to BuildFrom: Path is root-relative with "/",
// Language as workspace.File.Language, Info its parse result (nil makes the
// file a non-node).
type Input struct {
	Path     string
	Language string
	Info     *syntax.FileInfo
}

// edge is one file-level edge, 16 bytes: its symbols (the linked names,
// sorted by name and distinct) are n names of its graph's one array
// (Graph.syms) from start; nk is n<<1 | 1 for a reference edge, 0 for an
// import edge (so import orders before reference, as the kinds' names).
type edge struct {
	from, to int32
	start    uint32
	nk       uint32
}

// kindBit is an edge kind's low bit of nk.
func kindBit(kind string) uint32 {
	if kind == KindReference {
		return 1
	}
	return 0
}

// kind is the edge's kind (KindImport or KindReference).
func (e *edge) kind() string {
	if e.nk&1 != 0 {
		return KindReference
	}
	return KindImport
}

// count is the number of the edge's symbols.
func (e *edge) count() int { return int(e.nk >> 1) }

func (e *edge) weight() int { return max(1, e.count()) }

// symbolsOf is e's symbols in syms (its graph's array).
func symbolsOf(syms []syntax.Name, e *edge) []syntax.Name {
	return syms[e.start : e.start+uint32(e.count()) : e.start+uint32(e.count())]
}

type fileNode struct {
	path    string
	lang    string
	symbols int
	info    *syntax.FileInfo
}

// Graph is the immutable project graph of one snapshot. It is safe for
// concurrent use.
type Graph struct {
	snap        *workspace.Snapshot
	snapVersion uint64
	nodes       []fileNode // sorted by path
	byPath      map[string]int32
	edges       []edge        // sorted by from, to, kind
	syms        []syntax.Name // the edges' symbols, edge after edge
	// lists holds each edge's names while a build adds them (adder),
	// until sortEdges sorts them into syms.
	lists   [][]syntax.Name
	out, in [][]int32
	cycleOf []int32 // import cycle index per node, -1 when none
	cycles  [][]string
	indexed func(string) bool
	stats   Stats
}

// snapshotInputs is every indexed file of snap as a build input.
func snapshotInputs(snap *workspace.Snapshot) []Input {
	paths := snap.Files()
	in := make([]Input, 0, len(paths))
	for _, p := range paths {
		f, _ := snap.File(p)
		info, _ := f.Parsed.(*syntax.FileInfo)
		in = append(in, Input{Path: p, Language: f.Language, Info: info})
	}
	return in
}

// Build builds the graph of a snapshot: every indexed file whose
// File.Parsed is a *syntax.FileInfo becomes a node. go.mod files of the
// snapshot are read from disk (under snap.Root()) for module paths.
func Build(snap *workspace.Snapshot) *Graph {
	in := snapshotInputs(snap)
	root := snap.Root()
	g := BuildFrom(in, func(rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	})
	g.snap = snap
	g.snapVersion = snap.Version()
	g.indexed = func(rel string) bool { _, ok := snap.File(rel); return ok }
	return g
}

// BuildFrom builds a graph from explicit inputs (Build's engine, also for
// tests). Every input path counts as indexed for File; inputs without Info
// are not nodes. readFile reads a root-relative file (used for go.mod);
// nil reads nothing.
func BuildFrom(files []Input, readFile func(rel string) ([]byte, error)) *Graph {
	start := time.Now()
	if readFile == nil {
		readFile = func(string) ([]byte, error) { return nil, os.ErrNotExist }
	}
	all := map[string]bool{}
	g := &Graph{byPath: map[string]int32{}}
	for _, f := range files {
		all[f.Path] = true
		if f.Info == nil {
			continue
		}
		g.nodes = append(g.nodes, fileNode{path: f.Path, lang: f.Language, symbols: len(f.Info.Symbols), info: f.Info})
	}
	sort.Slice(g.nodes, func(i, j int) bool { return g.nodes[i].path < g.nodes[j].path })
	for i, n := range g.nodes {
		g.byPath[n.path] = int32(i)
	}
	g.indexed = func(rel string) bool { return all[rel] }

	r := newResolver(g, all, readFile)
	add := g.adder()
	for i := range g.nodes {
		r.imports(int32(i), add)
	}
	linkReferences(g, r.goImports, add, nil)
	g.sortEdges()
	g.finish(r.unresolved)
	g.stats.BuildMs = time.Since(start).Milliseconds()
	return g
}

// adder returns the function that adds edges to g.edges (appending a
// new edge or the names to the existing one). Edges are added file by
// file and kind by kind (the imports of each file, then the references of
// each file), so the edge index is looked up by target in a small map of
// the current (from, kind); a (from, kind) seen before and left is looked
// up in all edges (the map by (from, to, kind) this replaces was a third
// of the build).
func (g *Graph) adder() addFunc {
	var (
		at      = map[int32]int32{} // edge index by target, for cur
		cur     = edgeKey{from: -1}
		visited = map[edgeKey]bool{} // (from, kind) phases left
	)
	return func(from, to int32, kind string, names ...syntax.Name) {
		if kind == KindReference && from == to {
			return
		}
		if from != cur.from || kind != cur.kind {
			visited[cur] = true
			cur = edgeKey{from: from, kind: kind}
			if len(at) > 256 {
				at = map[int32]int32{}
			} else {
				clear(at)
			}
			if visited[cur] { // not added this way today; kept correct
				for ei, e := range g.edges {
					if e.from == from && e.kind() == kind {
						at[e.to] = int32(ei)
					}
				}
			}
		}
		ei, ok := at[to]
		if !ok {
			ei = int32(len(g.edges))
			at[to] = ei
			g.edges = append(g.edges, edge{from: from, to: to, nk: kindBit(kind)})
			g.lists = append(g.lists, nil)
		}
		g.lists[ei] = append(g.lists[ei], names...)
	}
}

// sortEdges sorts and dedupes each edge's names (g.lists, by name),
// sorts the edges by from, to and kind, and lays their names out in that
// order in one exactly sized array (g.syms); the lists are dropped.
func (g *Graph) sortEdges() {
	total := 0
	for i, l := range g.lists {
		slices.SortFunc(l, func(a, b syntax.Name) int { return strings.Compare(a.String(), b.String()) })
		l = slices.Compact(l)
		g.lists[i] = l
		total += len(l)
	}
	order := make([]int32, len(g.edges))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return edgeCompare(&g.edges[a], &g.edges[b]) })
	edges := make([]edge, len(g.edges))
	syms := make([]syntax.Name, 0, total)
	for k, i := range order {
		e := g.edges[i]
		l := g.lists[i]
		e.start, e.nk = uint32(len(syms)), uint32(len(l))<<1|e.nk&1
		syms = append(syms, l...)
		edges[k] = e
	}
	g.edges, g.syms, g.lists = edges, syms, nil
}

// edgeCompare orders edges by from, to and kind.
func edgeCompare(a, b *edge) int {
	switch {
	case a.from != b.from:
		return int(a.from) - int(b.from)
	case a.to != b.to:
		return int(a.to) - int(b.to)
	}
	return int(a.nk&1) - int(b.nk&1)
}

// edgeLess orders edges by from, to and kind.
func edgeLess(a, b *edge) bool { return edgeCompare(a, b) < 0 }

type edgeKey struct {
	from, to int32
	kind     string
}

// computeCycles finds the import cycles with Tarjan's algorithm.
func (g *Graph) computeCycles() {
	adj := make([][]int32, len(g.nodes))
	self := make([]bool, len(g.nodes))
	for _, e := range g.edges {
		if e.kind() != KindImport {
			continue
		}
		if e.from == e.to {
			self[e.from] = true
			continue
		}
		adj[e.from] = append(adj[e.from], e.to)
	}
	g.cycleOf = make([]int32, len(g.nodes))
	for i := range g.cycleOf {
		g.cycleOf[i] = -1
	}
	var comps [][]int32
	for _, c := range tarjan(adj) {
		if len(c) > 1 || self[c[0]] {
			comps = append(comps, c)
		}
	}
	g.cycles = make([][]string, 0, len(comps))
	for _, c := range comps {
		ps := make([]string, len(c))
		for i, n := range c {
			ps[i] = g.nodes[n].path
		}
		sort.Strings(ps)
		g.cycles = append(g.cycles, ps)
	}
	sort.Slice(g.cycles, func(i, j int) bool { return g.cycles[i][0] < g.cycles[j][0] })
	for ci, c := range g.cycles {
		for _, p := range c {
			g.cycleOf[g.byPath[p]] = int32(ci)
		}
	}
}

func (g *Graph) computeStats(unresolved int) {
	st := Stats{Files: len(g.nodes), Edges: len(g.edges), Version: Version, UnresolvedImports: unresolved}
	for _, e := range g.edges {
		if e.kind() == KindImport {
			st.ImportEdges++
		} else {
			st.ReferenceEdges++
		}
	}
	dirs := map[string]bool{}
	var hubs []Hub
	for i, n := range g.nodes {
		dirs[moduleOf(n.path)] = true
		if len(g.in[i])+len(g.out[i]) == 0 {
			st.Orphans++
		}
		if d := g.dependents(int32(i)); d > 0 {
			hubs = append(hubs, Hub{Path: n.path, Dependents: d})
		}
	}
	sort.Slice(hubs, func(i, j int) bool {
		if hubs[i].Dependents != hubs[j].Dependents {
			return hubs[i].Dependents > hubs[j].Dependents
		}
		return hubs[i].Path < hubs[j].Path
	})
	if len(hubs) > hubCount {
		hubs = hubs[:hubCount]
	}
	st.Hubs = append([]Hub{}, hubs...)
	st.Modules = len(dirs)
	st.ImportCycles = g.cycles
	st.Cycles = len(g.cycles)
	g.stats = st
}

// dependents counts the distinct files with an edge into node i.
func (g *Graph) dependents(i int32) int {
	n, last := 0, int32(-1)
	for _, ei := range g.in[i] { // in-edges are ordered by from
		if f := g.edges[ei].from; f != last && f != i {
			n++
			last = f
		}
	}
	return n
}

// Stats returns the graph's stats. Its slices are shared: do not modify.
func (g *Graph) Stats() Stats { return g.stats }

// SnapshotVersion is the version of the snapshot the graph was built from
// (0 for BuildFrom).
func (g *Graph) SnapshotVersion() uint64 { return g.snapVersion }

// moduleOf returns the module (folder) of a file path: its directory, "."
// for files at the root.
func moduleOf(p string) string {
	d := path.Dir(p)
	return d
}

// Cache holds the graph of the latest snapshot it was asked about, built
// lazily. Snapshots are compared by identity (a new workspace starts its
// versions at 1 again). It is safe for concurrent use; concurrent callers for the same
// version share one build.
type Cache struct {
	mu sync.Mutex
	g  *Graph
}

// Get returns the graph of snap, building it when the cached one is of
// another snapshot, unless that snapshot holds the same files
// (workspace.Snapshot.SameFiles: the cached graph is reused). A nil snap
// returns nil.
func (c *Cache) Get(snap *workspace.Snapshot) *Graph {
	if snap == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g != nil && c.g.snap == snap {
		return c.g
	}
	if c.g != nil && c.g.snap.SameFiles(snap) {
		// A refresh that changed no file: the edges are the same; only the
		// snapshot the graph answers for moves on.
		c.g = c.g.rebind(snap)
		return c.g
	}
	c.g = Build(snap)
	return c.g
}

// rebind returns a copy of g for snap, which holds the same files as
// g.snap (workspace.Snapshot.SameFiles); the copy shares g's nodes and
// edges, which are never modified.
func (g *Graph) rebind(snap *workspace.Snapshot) *Graph {
	ng := *g
	ng.snap = snap
	ng.snapVersion = snap.Version()
	ng.indexed = func(rel string) bool { _, ok := snap.File(rel); return ok }
	return &ng
}

// Cached returns the graph of snap when it is already built (or built for
// a snapshot with the same files), else nil.
func (c *Cache) Cached(snap *workspace.Snapshot) *Graph {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g != nil && snap != nil && c.g.snap == snap {
		return c.g
	}
	if c.g != nil && c.g.snap.SameFiles(snap) {
		c.g = c.g.rebind(snap)
		return c.g
	}
	return nil
}

// cleanPath normalises a query path: "/" separators, cleaned, no leading
// "./" or "/"; "" for the root.
func cleanPath(p string) string {
	p = filepath.ToSlash(p)
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}
