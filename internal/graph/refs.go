package graph

import "strings"

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
func linkReferences(g *Graph, goImports map[int32]map[string]bool, add addFunc) {
	type def struct {
		file     int32
		exported bool
	}
	defs := map[string]map[string][]def{} // family → name → defining files
	for i, n := range g.nodes {
		fam := family(n.lang)
		m := defs[fam]
		if m == nil {
			m = map[string][]def{}
			defs[fam] = m
		}
		for _, s := range n.info.Symbols {
			if s.Name == "" {
				continue
			}
			list := m[s.Name]
			if k := len(list); k > 0 && list[k-1].file == int32(i) {
				list[k-1].exported = list[k-1].exported || s.Exported
				continue
			}
			if len(list) > MaxDefiningFiles {
				continue // already too common; keep the list short
			}
			m[s.Name] = append(list, def{file: int32(i), exported: s.Exported})
		}
	}
	for i, n := range g.nodes {
		m := defs[family(n.lang)]
		if len(m) == 0 || len(n.info.Refs) == 0 {
			continue
		}
		own := make(map[string]bool, len(n.info.Symbols))
		for _, s := range n.info.Symbols {
			own[s.Name] = true
		}
		dir := dirOf(n.path)
		for _, ref := range n.info.Refs {
			if own[ref] {
				continue
			}
			list := m[ref]
			if len(list) == 0 || len(list) > MaxDefiningFiles {
				continue
			}
			for _, d := range list {
				if d.file == int32(i) {
					continue
				}
				t := &g.nodes[d.file]
				if n.lang == "go" && t.lang == "go" && dirOf(t.path) != dir &&
					(!d.exported || !goImports[int32(i)][dirOf(t.path)] || strings.HasSuffix(t.path, "_test.go")) {
					continue
				}
				add(int32(i), d.file, KindReference, ref)
			}
		}
	}
}
