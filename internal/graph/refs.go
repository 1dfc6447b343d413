package graph

import (
	"strings"

	"github.com/task-x/task-x-runtime/internal/syntax"
)

// family groups languages whose files can use each other's definitions:
// TypeScript, TSX and JavaScript; C and C++; every other language alone.
func family(lang string) string {
	switch lang {
	case "typescript", "tsx", "javascript":
		return "js"
	case "c", "cpp":
		return "c"
	}
	return lang
}

// linkReferences adds reference edges: file A to file B when A's Refs hold
// a name B defines, A does not define it itself, both are of the same
// language family, and the name is defined in at most MaxDefiningFiles
// files of that family. Between Go files of different package folders, a
// reference links only when the using file imports the defining package
// (goImports) and the name is exported: Go refs are bare identifiers, so
// this keeps x.Name from linking to an unrelated package's Name.
//
// With only set, only the references of the files it marks are linked
// (Update); the definitions are those of every file either way.
func linkReferences(g *Graph, goImports map[int32]map[string]bool, add addFunc, only []bool) {
	// defs: family → name → its defining files, kept in place (no slice
	// per name) up to one past MaxDefiningFiles, which marks a name too
	// common to link; the maps are sized from the symbol counts up front
	// (their growth was a third of this function).
	perFamily := map[string]int{}
	for _, n := range g.nodes {
		perFamily[family(n.lang)] += len(n.info.Symbols)
	}
	defs := make(map[string]map[syntax.Name]defList, len(perFamily))
	for fam, k := range perFamily {
		defs[fam] = make(map[syntax.Name]defList, k/2)
	}
	for i, n := range g.nodes {
		m := defs[family(n.lang)]
		for _, s := range n.info.Symbols {
			if s.Name == 0 {
				continue
			}
			list := m[s.Name]
			if k := int(list.n); k > 0 && list.d[k-1].file == int32(i) {
				if s.Exported && !list.d[k-1].exported {
					list.d[k-1].exported = true
					m[s.Name] = list
				}
				continue
			}
			if int(list.n) > MaxDefiningFiles {
				continue // already too common; keep the list short
			}
			list.d[list.n] = def{file: int32(i), exported: s.Exported}
			list.n++
			m[s.Name] = list
		}
	}
	for i, n := range g.nodes {
		if only != nil && !only[i] {
			continue
		}
		m := defs[family(n.lang)]
		if len(m) == 0 || len(n.info.Refs) == 0 {
			continue
		}
		dir := dirOf(n.path)
	refs:
		for _, id := range n.info.Refs {
			l := m[id]
			if l.n == 0 || int(l.n) > MaxDefiningFiles {
				continue
			}
			list := l.d[:l.n]
			// A list of at most MaxDefiningFiles is every file of the
			// family defining ref: the file defines it itself when it
			// is in the list, and then ref links nowhere.
			for _, d := range list {
				if d.file == int32(i) {
					continue refs
				}
			}
			for _, d := range list {
				t := &g.nodes[d.file]
				if n.lang == "go" && t.lang == "go" && dirOf(t.path) != dir &&
					(!d.exported || !goImports[int32(i)][dirOf(t.path)] || strings.HasSuffix(t.path, "_test.go")) {
					continue
				}
				add(int32(i), d.file, KindReference, id)
			}
		}
	}
}

// def is one file defining a name; exported when any of its definitions
// of the name is.
type def struct {
	file     int32
	exported bool
}

// defList holds the first n files defining a name, in file order; n is
// at most MaxDefiningFiles+1.
type defList struct {
	n uint8
	d [MaxDefiningFiles + 1]def
}
