package graph

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// ErrNotUpdatable is Update's error when the change is not one it updates
// (the caller builds the graph instead).
var ErrNotUpdatable = errors.New("graph: change not updatable")

// Update returns the graph of snap from old, the saved graph (Saved) of
// an earlier snapshot with exactly the same indexed paths, where only the
// files in prev changed; prev holds each changed file's earlier entry.
// It is the graph Build makes of snap: the edges of the files a change can
// reach are computed again, the others' are kept (see UpdateFrom). A
// change of the path set, of a file's language or of whether it has a
// parse result, or of a go.mod file is not updated (ErrNotUpdatable), nor
// is a saved graph that fails Restore's checks: the caller then builds.
func Update(snap *workspace.Snapshot, old *Saved, prev map[string]*workspace.File) (*Graph, error) {
	in := snapshotInputs(snap)
	before := make(map[string]Input, len(prev))
	for p, f := range prev {
		if f == nil {
			return nil, fmt.Errorf("%w: %s has no earlier entry", ErrNotUpdatable, p)
		}
		info, _ := f.Parsed.(*syntax.FileInfo)
		before[p] = Input{Path: p, Language: f.Language, Info: info}
	}
	root := snap.Root()
	g, err := UpdateFrom(in, old, before, func(rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	})
	if err != nil {
		return nil, err
	}
	g.snap = snap
	g.snapVersion = snap.Version()
	g.indexed = func(rel string) bool { _, ok := snap.File(rel); return ok }
	return g, nil
}

// UpdateFrom is Update's engine on explicit inputs (as BuildFrom): files
// are the inputs now, old the saved graph of the same paths before,
// prev the earlier inputs of the files that changed.
//
// A changed file whose parse result holds the same names, imports and
// references (sameForGraph) changes no edge. Which files' edges can differ
// from old's, given the same paths, the
// same languages and the same files with parse results (so the same
// nodes, resolver tables and module paths): those that changed; those
// with an import edge into a changed file (the names an import links are
// the target's); Go files with an import edge into the package folder of
// a changed Go file that reference a name exported by its old or new
// version (the package's definitions decide where Go imports link); and
// files referencing a name the old or new version of a changed file
// defines, when fewer than MaxDefiningFiles+1 other files of its language
// family define it (a name defined in more is linked by nobody, before and
// after). Those files' imports are resolved and their references linked
// again against every file's definitions; the unresolved import count
// takes the changed files' difference.
func UpdateFrom(files []Input, old *Saved, prev map[string]Input, readFile func(rel string) ([]byte, error)) (*Graph, error) {
	start := time.Now()
	if old == nil {
		return nil, errors.New("no saved graph")
	}
	if readFile == nil {
		readFile = func(string) ([]byte, error) { return nil, os.ErrNotExist }
	}
	all := make(map[string]bool, len(files))
	g := &Graph{}
	for _, f := range files {
		all[f.Path] = true
		if f.Info == nil {
			continue
		}
		g.nodes = append(g.nodes, fileNode{path: f.Path, lang: f.Language, symbols: len(f.Info.Symbols), info: f.Info})
	}
	slices.SortFunc(g.nodes, func(a, b fileNode) int { return strings.Compare(a.path, b.path) })
	g.byPath = make(map[string]int32, len(g.nodes))
	for i, n := range g.nodes {
		g.byPath[n.path] = int32(i)
	}
	g.indexed = func(rel string) bool { return all[rel] }
	if old.Nodes != len(g.nodes) {
		return nil, fmt.Errorf("saved graph has %d nodes, the files %d", old.Nodes, len(g.nodes))
	}
	if old.Unresolved < 0 {
		return nil, errors.New("negative unresolved count")
	}
	oldEdges, oldSyms, err := savedEdges(old, int32(len(g.nodes)))
	if err != nil {
		return nil, err
	}

	// The changed nodes, and what their old and new versions define.
	changed := make([]bool, len(g.nodes))
	var changedNodes []int32
	for p, before := range prev {
		if !all[p] {
			return nil, fmt.Errorf("%w: %s is not a file now", ErrNotUpdatable, p)
		}
		if path.Base(p) == "go.mod" {
			return nil, fmt.Errorf("%w: %s changed", ErrNotUpdatable, p)
		}
		j, isNode := g.byPath[p]
		if isNode != (before.Info != nil) {
			return nil, fmt.Errorf("%w: %s gained or lost its parse result", ErrNotUpdatable, p)
		}
		if !isNode {
			continue // no edges, no definitions, before or after
		}
		if before.Language != g.nodes[j].lang {
			return nil, fmt.Errorf("%w: %s changed language", ErrNotUpdatable, p)
		}
		if sameForGraph(before.Info, g.nodes[j].info) {
			continue // touched, or changed only where edges do not look
		}
		changed[j] = true
		changedNodes = append(changedNodes, j)
	}
	slices.Sort(changedNodes)
	if len(changedNodes) == 0 {
		g.edges, g.syms = oldEdges, oldSyms
		g.finish(old.Unresolved)
		g.stats.BuildMs = time.Since(start).Milliseconds()
		return g, nil
	}
	prevInfo := func(j int32) *syntax.FileInfo { return prev[g.nodes[j].path].Info }
	names := map[string]map[syntax.Name]bool{}    // family → names the changed files define (old or new)
	exported := map[string]map[syntax.Name]bool{} // Go package folder → exported top-level names of its changed non-test files (old or new)
	for _, j := range changedNodes {
		n := &g.nodes[j]
		fam := family(n.lang)
		if names[fam] == nil {
			names[fam] = map[syntax.Name]bool{}
		}
		goPkg := n.lang == "go" && !strings.HasSuffix(n.path, "_test.go")
		for _, info := range []*syntax.FileInfo{n.info, prevInfo(j)} {
			for _, s := range info.Symbols {
				if s.Name == 0 {
					continue
				}
				names[fam][s.Name] = true
				if goPkg && s.Exported && s.Container == 0 {
					d := dirOf(n.path)
					if exported[d] == nil {
						exported[d] = map[syntax.Name]bool{}
					}
					exported[d][s.Name] = true
				}
			}
		}
	}
	// A name defined by MaxDefiningFiles+1 unchanged files of the family
	// links nowhere before and after: references to it reach nothing.
	type seen struct {
		n    uint8
		last int32
	}
	others := map[string]map[syntax.Name]*seen{}
	for fam, m := range names {
		others[fam] = make(map[syntax.Name]*seen, len(m))
		for name := range m {
			others[fam][name] = &seen{last: -1}
		}
	}
	for i, n := range g.nodes {
		if changed[i] {
			continue
		}
		m := others[family(n.lang)]
		if m == nil {
			continue
		}
		for _, s := range n.info.Symbols {
			if c := m[s.Name]; c != nil && c.last != int32(i) && int(c.n) <= MaxDefiningFiles {
				c.n++
				c.last = int32(i)
			}
		}
	}
	linkable := map[string]map[syntax.Name]bool{}
	for fam, m := range others {
		linkable[fam] = map[syntax.Name]bool{}
		for name, c := range m {
			if int(c.n) <= MaxDefiningFiles {
				linkable[fam][name] = true
			}
		}
	}
	anyRef := func(info *syntax.FileInfo, m map[syntax.Name]bool) bool {
		if len(m) == 0 {
			return false
		}
		for _, r := range info.Refs {
			if m[r] {
				return true
			}
		}
		return false
	}
	affected := slices.Clone(changed)
	for i, n := range g.nodes {
		if !affected[i] && anyRef(n.info, linkable[family(n.lang)]) {
			affected[i] = true
		}
	}
	for _, e := range oldEdges {
		if e.kind() != KindImport || affected[e.from] {
			continue
		}
		if changed[e.to] {
			affected[e.from] = true
		} else if from := &g.nodes[e.from]; from.lang == "go" && anyRef(from.info, exported[dirOf(g.nodes[e.to].path)]) {
			affected[e.from] = true
		}
	}

	r := newResolver(g, all, readFile)
	// The changed files' unresolved imports before: their earlier parse
	// results resolved against the same tables (the Go package
	// definitions and folders this looks up are dropped after).
	oldCount := 0
	for _, j := range changedNodes {
		cur := g.nodes[j].info
		g.nodes[j].info = prevInfo(j)
		before := r.unresolved
		r.imports(j, func(int32, int32, string, ...syntax.Name) {})
		oldCount += r.unresolved - before
		g.nodes[j].info = cur
		delete(r.goImports, j)
	}
	clear(r.goDefs)
	r.unresolved = 0
	add := g.adder()
	newCount := 0
	for i := range g.nodes {
		if !affected[i] {
			continue
		}
		before := r.unresolved
		r.imports(int32(i), add)
		if changed[i] {
			newCount += r.unresolved - before
		}
	}
	linkReferences(g, r.goImports, add, affected)
	g.sortEdges()
	unresolved := old.Unresolved - oldCount + newCount
	if unresolved < 0 {
		return nil, errors.New("saved unresolved count below the changed files' own")
	}
	// The kept edges (of files no change reaches) and the new ones, in
	// order, their symbols copied after each other into one array.
	fresh, freshSyms := g.edges, g.syms
	nEdges, nSyms := len(fresh), len(freshSyms)
	for i := range oldEdges {
		if e := &oldEdges[i]; !affected[e.from] {
			nEdges++
			nSyms += e.count()
		}
	}
	g.edges = make([]edge, 0, nEdges)
	g.syms = make([]syntax.Name, 0, nSyms)
	put := func(e edge, syms []syntax.Name) {
		l := symbolsOf(syms, &e)
		e.start = uint32(len(g.syms))
		g.syms = append(g.syms, l...)
		g.edges = append(g.edges, e)
	}
	k := 0
	for _, e := range oldEdges {
		if affected[e.from] {
			continue
		}
		for k < len(fresh) && edgeLess(&fresh[k], &e) {
			put(fresh[k], freshSyms)
			k++
		}
		put(e, oldSyms)
	}
	for ; k < len(fresh); k++ {
		put(fresh[k], freshSyms)
	}
	g.finish(unresolved)
	g.stats.BuildMs = time.Since(start).Milliseconds()
	return g, nil
}

// sameForGraph reports whether a and b hold the same of what edges are
// made from: symbols' names, exported flags and containers in order,
// imports' paths, kinds and names, and references. (A file whose
// modification time changed but not its content, or whose code moved
// within it, is the same.)
func sameForGraph(a, b *syntax.FileInfo) bool {
	if len(a.Symbols) != len(b.Symbols) || len(a.Imports) != len(b.Imports) || !slices.Equal(a.Refs, b.Refs) {
		return false
	}
	for i := range a.Symbols {
		x, y := &a.Symbols[i], &b.Symbols[i]
		if x.Name != y.Name || x.Exported != y.Exported || x.Container != y.Container {
			return false
		}
	}
	for i := range a.Imports {
		x, y := &a.Imports[i], &b.Imports[i]
		if x.Path != y.Path || x.Kind != y.Kind || !slices.Equal(x.Names, y.Names) {
			return false
		}
	}
	return true
}
