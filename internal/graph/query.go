package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Levels of graph/project.
const (
	LevelFile   = "file"
	LevelModule = "module"
)

// ProjectOptions are graph/project's params (protocol.md). Level is
// "file" (default) or "module" (files rolled up into their folders; the
// root folder's id is "."). Focus is a file or folder path (root-relative,
// or "" for none); Depth (default 1, clamped to 4) counts steps from the
// focus following edges both ways. MaxNodes (default 250, clamped to 600)
// caps the nodes returned: the most connected without focus, the nearest
// (then most connected) with it. ImportsOnly drops reference edges.
type ProjectOptions = protocol.GraphProjectParams

// Node is one graph/project node. ID is a file path, or a folder path at
// module level. Language is the file's language (a module's most common
// one). Symbols and Files count definitions and files (1 at file level).
// Degree counts the edges touching the node at this level and edge filter
// (before the maxNodes cap). InCycle is true for files in an import cycle,
// and for modules in a cycle of module-level import edges.
type Node = protocol.GraphNode

// ProjectEdge is one graph/project edge: From and To index Nodes; Weight
// counts linked symbols (at least 1; summed over files at module level);
// Kind is "import" or "reference".
type ProjectEdge = protocol.GraphEdge

// ProjectResult is graph/project's result. Total is the node count before
// the maxNodes cap.
type ProjectResult = protocol.GraphProjectResult

// view is the graph at one level and edge filter.
type view struct {
	nodes []Node
	edges []ProjectEdge // From/To index view.nodes
	adj   [][]int       // neighbours both ways (node indexes)
}

// Project answers graph/project. Bad options and a focus that names no
// indexed file or folder wrap ErrInvalid.
func (g *Graph) Project(o ProjectOptions) (ProjectResult, error) {
	switch o.Level {
	case "":
		o.Level = LevelFile
	case LevelFile, LevelModule:
	default:
		return ProjectResult{}, fmt.Errorf("%w: level must be %q or %q, got %q", ErrInvalid, LevelFile, LevelModule, o.Level)
	}
	switch {
	case o.Depth < 0:
		return ProjectResult{}, fmt.Errorf("%w: depth must be at least 1, got %d", ErrInvalid, o.Depth)
	case o.Depth == 0:
		o.Depth = DefaultDepth
	case o.Depth > MaxDepth:
		o.Depth = MaxDepth
	}
	switch {
	case o.MaxNodes < 0:
		return ProjectResult{}, fmt.Errorf("%w: maxNodes must be at least 1, got %d", ErrInvalid, o.MaxNodes)
	case o.MaxNodes == 0:
		o.MaxNodes = DefaultMaxNodes
	case o.MaxNodes > MaxMaxNodes:
		o.MaxNodes = MaxMaxNodes
	}
	if o.Level == LevelFile && o.Focus == "" {
		return g.topFiles(o), nil
	}
	return g.project(o)
}

// project answers graph/project for checked options through the view of
// the level.
func (g *Graph) project(o ProjectOptions) (ProjectResult, error) {
	v := g.view(o.Level, o.ImportsOnly, o.Focus != "")

	var order []int // view node indexes, in output order
	if o.Focus != "" {
		seeds, err := g.focusSeeds(v, o.Level, cleanPath(o.Focus))
		if err != nil {
			return ProjectResult{}, err
		}
		dist := make([]int, len(v.nodes))
		for i := range dist {
			dist[i] = -1
		}
		queue := append([]int{}, seeds...)
		for _, s := range seeds {
			dist[s] = 0
		}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			order = append(order, x)
			if dist[x] == o.Depth {
				continue
			}
			for _, y := range v.adj[x] {
				if dist[y] < 0 {
					dist[y] = dist[x] + 1
					queue = append(queue, y)
				}
			}
		}
		sort.SliceStable(order, func(a, b int) bool {
			x, y := order[a], order[b]
			if dist[x] != dist[y] {
				return dist[x] < dist[y]
			}
			return less(v.nodes, x, y)
		})
	} else {
		order = make([]int, len(v.nodes))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return less(v.nodes, order[a], order[b]) })
	}
	total := len(order)
	if len(order) > o.MaxNodes {
		order = order[:o.MaxNodes]
	}
	pos := make(map[int]int, len(order))
	res := ProjectResult{Nodes: make([]Node, len(order)), Edges: []ProjectEdge{}, Total: total, Stats: g.stats}
	for k, x := range order {
		pos[x] = k
		res.Nodes[k] = v.nodes[x]
	}
	for _, e := range v.edges {
		f, ok1 := pos[e.From]
		t, ok2 := pos[e.To]
		if ok1 && ok2 {
			res.Edges = append(res.Edges, ProjectEdge{From: f, To: t, Weight: e.Weight, Kind: e.Kind})
		}
	}
	return res, nil
}

// topFiles answers graph/project at file level without a focus (the
// default, and the first query after a workspace/open) as project does,
// without the view of every node and edge: degrees are counted in one
// array, the MaxNodes most connected files picked, and only the edges
// between them made.
func (g *Graph) topFiles(o ProjectOptions) ProjectResult {
	deg := make([]int32, len(g.nodes))
	for i := range g.edges {
		e := &g.edges[i]
		if o.ImportsOnly && e.kind() != KindImport {
			continue
		}
		deg[e.from]++
		deg[e.to]++
	}
	order := make([]int32, len(g.nodes))
	for i := range order {
		order[i] = int32(i)
	}
	// Most connected first, then by path (paths are distinct).
	byRank := func(x, y int32) int {
		if deg[x] != deg[y] {
			return int(deg[y]) - int(deg[x])
		}
		return strings.Compare(g.nodes[x].path, g.nodes[y].path)
	}
	if len(order) > o.MaxNodes {
		slices.SortFunc(order, byRank)
		order = order[:o.MaxNodes]
	} else {
		slices.SortFunc(order, byRank)
	}
	pos := make([]int32, len(g.nodes))
	for i := range pos {
		pos[i] = -1
	}
	res := ProjectResult{Nodes: make([]Node, len(order)), Edges: []ProjectEdge{}, Total: len(g.nodes), Stats: g.stats}
	for k, x := range order {
		pos[x] = int32(k)
		n := &g.nodes[x]
		res.Nodes[k] = Node{ID: n.path, Language: n.lang, Symbols: n.symbols, Files: 1, Degree: int(deg[x]), InCycle: g.cycleOf[x] >= 0}
	}
	for i := range g.edges {
		e := &g.edges[i]
		if o.ImportsOnly && e.kind() != KindImport {
			continue
		}
		if f, t := pos[e.from], pos[e.to]; f >= 0 && t >= 0 {
			res.Edges = append(res.Edges, ProjectEdge{From: int(f), To: int(t), Weight: e.weight(), Kind: protocol.EdgeKind(e.kind())})
		}
	}
	return res
}

// less orders nodes most connected first, then by id.
func less(nodes []Node, x, y int) bool {
	if nodes[x].Degree != nodes[y].Degree {
		return nodes[x].Degree > nodes[y].Degree
	}
	return nodes[x].ID < nodes[y].ID
}

// focusSeeds returns the view nodes a focus names: the file (or, at module
// level, its folder), or every node inside the folder.
func (g *Graph) focusSeeds(v view, level, focus string) ([]int, error) {
	if level == LevelModule && g.indexed(focus) {
		focus = moduleOf(focus)
	}
	var seeds []int
	for i, n := range v.nodes {
		id := n.ID
		if id == focus || focus == "" || focus == "." || strings.HasPrefix(id, focus+"/") {
			seeds = append(seeds, i)
		}
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%w: focus %q is not an indexed file or folder of the graph", ErrInvalid, focus)
	}
	return seeds, nil
}

// view builds the nodes and edges at a level, and the neighbour lists
// when adj is set (only a focus walks them).
func (g *Graph) view(level string, importsOnly, adj bool) view {
	var v view
	if level == LevelFile {
		v.nodes = make([]Node, len(g.nodes))
		for i, n := range g.nodes {
			v.nodes[i] = Node{ID: n.path, Language: n.lang, Symbols: n.symbols, Files: 1, InCycle: g.cycleOf[i] >= 0}
		}
		v.edges = make([]ProjectEdge, 0, len(g.edges))
		for _, e := range g.edges {
			if importsOnly && e.kind() != KindImport {
				continue
			}
			v.edges = append(v.edges, ProjectEdge{From: int(e.from), To: int(e.to), Weight: e.weight(), Kind: protocol.EdgeKind(e.kind())})
		}
	} else {
		idx := map[string]int{}
		langs := []map[string]int{}
		fileMod := make([]int, len(g.nodes))
		for i, n := range g.nodes {
			m := moduleOf(n.path)
			k, ok := idx[m]
			if !ok {
				k = len(v.nodes)
				idx[m] = k
				v.nodes = append(v.nodes, Node{ID: m})
				langs = append(langs, map[string]int{})
			}
			fileMod[i] = k
			v.nodes[k].Files++
			v.nodes[k].Symbols += n.symbols
			langs[k][n.lang]++
		}
		for k := range v.nodes {
			best, bn := "", -1
			for l, c := range langs[k] {
				if c > bn || (c == bn && l < best) {
					best, bn = l, c
				}
			}
			v.nodes[k].Language = best
		}
		type key struct {
			from, to int
			kind     string
		}
		w := map[key]int{}
		for _, e := range g.edges {
			if importsOnly && e.kind() != KindImport {
				continue
			}
			f, t := fileMod[e.from], fileMod[e.to]
			if f == t {
				continue
			}
			w[key{f, t, e.kind()}] += e.weight()
		}
		for k, wt := range w {
			v.edges = append(v.edges, ProjectEdge{From: k.from, To: k.to, Weight: wt, Kind: protocol.EdgeKind(k.kind)})
		}
		sort.Slice(v.edges, func(i, j int) bool {
			a, b := v.edges[i], v.edges[j]
			if a.From != b.From {
				return a.From < b.From
			}
			if a.To != b.To {
				return a.To < b.To
			}
			return a.Kind < b.Kind
		})
		adj := make([][]int32, len(v.nodes))
		self := make([]bool, len(v.nodes))
		for _, e := range g.edges {
			if e.kind() == KindImport {
				f, t := fileMod[e.from], fileMod[e.to]
				if f == t {
					if e.from == e.to {
						self[f] = true
					}
					continue
				}
				adj[f] = append(adj[f], int32(t))
			}
		}
		for _, c := range tarjan(adj) {
			if len(c) > 1 || self[c[0]] {
				for _, x := range c {
					v.nodes[x].InCycle = true
				}
			}
		}
	}
	for _, e := range v.edges {
		v.nodes[e.From].Degree++
		v.nodes[e.To].Degree++
	}
	if adj {
		v.adj = make([][]int, len(v.nodes))
		for _, e := range v.edges {
			v.adj[e.From] = append(v.adj[e.From], e.To)
			v.adj[e.To] = append(v.adj[e.To], e.From)
		}
	}
	return v
}

// Dep is one graph/file list entry: the other file, the edge kind and the
// linked symbol names (sorted; empty for an import that names nothing the
// target defines).
type Dep = protocol.GraphDep

// FileDeps is graph/file's result (protocol.md; addendum §10): the files
// Path depends on, the files that use it, and the paths of the import
// cycle it belongs to (empty when none). Lists are sorted by path then
// kind; an import and a reference edge between the same pair are two
// entries.
type FileDeps = protocol.GraphFileResult

// File answers graph/file for a root-relative path. A path that is not an
// indexed file wraps ErrNotIndexed; an indexed file that is not a graph
// node (no parse result) has empty lists.
func (g *Graph) File(p string) (FileDeps, error) {
	p = cleanPath(p)
	res := FileDeps{Path: p, DependsOn: []Dep{}, UsedBy: []Dep{}, ImportCycle: []string{}}
	if p == "" || !g.indexed(p) {
		return FileDeps{}, fmt.Errorf("%w: %q", ErrNotIndexed, p)
	}
	i, ok := g.byPath[p]
	if !ok {
		return res, nil
	}
	for _, ei := range g.out[i] {
		e := &g.edges[ei]
		res.DependsOn = append(res.DependsOn, Dep{Path: g.nodes[e.to].path, Kind: protocol.EdgeKind(e.kind()), Symbols: g.symbolNames(e)})
	}
	for _, ei := range g.in[i] {
		e := &g.edges[ei]
		res.UsedBy = append(res.UsedBy, Dep{Path: g.nodes[e.from].path, Kind: protocol.EdgeKind(e.kind()), Symbols: g.symbolNames(e)})
	}
	sortDeps(res.DependsOn)
	sortDeps(res.UsedBy)
	if c := g.cycleOf[i]; c >= 0 {
		res.ImportCycle = append(res.ImportCycle, g.cycles[c]...)
	}
	return res, nil
}

// Neighbours returns the files p depends on and the files that use it,
// through edges of either kind, sorted and without p itself; nil when p
// is not a node. Retrieval uses it for its graph boost.
func (g *Graph) Neighbours(p string) []string {
	i, ok := g.byPath[cleanPath(p)]
	if !ok {
		return nil
	}
	seen := map[int32]bool{i: true}
	var out []string
	for _, list := range [][]int32{g.out[i], g.in[i]} {
		for _, ei := range list {
			e := &g.edges[ei]
			for _, j := range []int32{e.from, e.to} {
				if !seen[j] {
					seen[j] = true
					out = append(out, g.nodes[j].path)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortDeps(d []Dep) {
	sort.Slice(d, func(a, b int) bool {
		if d[a].Path != d[b].Path {
			return d[a].Path < d[b].Path
		}
		return d[a].Kind < d[b].Kind
	})
}

// symbolNames is e's symbols as names (empty, not nil, for none).
func (g *Graph) symbolNames(e *edge) []string {
	out := make([]string, e.count())
	for i, n := range symbolsOf(g.syms, e) {
		out[i] = n.String()
	}
	return out
}
