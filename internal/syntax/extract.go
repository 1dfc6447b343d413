package syntax

import (
	"strings"
	"sync"
)

// extractor turns one mirrored tree into FileInfo. Each language's extract
// function walks the definitions; collectRefs then gathers identifiers.
type extractor struct {
	t        *tree
	info     *FileInfo
	defNames map[int32]bool // name nodes of definitions (not references)
	in       internCache

	refKinds map[string]bool // node kinds that are identifiers
	stop     map[string]bool // keywords and predeclared names never refs

	// bodies are the function bodies left out of the parse (in order),
	// whose identifiers bodyIdents lexes.
	bodies     []bodySpan
	bodyIdents func(src []byte, sp bodySpan, emit func([]byte) bool)
}

// visitFunc handles node i inside container; it returns whether to walk
// i's children and the container they are in.
type visitFunc func(i int32, container string) (descend bool, inner string)

// walk calls fn on the named descendants of i (not i itself) in document
// order, descending where fn says so. ERROR nodes are always entered:
// definitions after a syntax error often end up inside one.
func (x *extractor) walk(i int32, container string, fn visitFunc) {
	for c := x.t.nodes[i].first; c >= 0; c = x.t.nodes[c].next {
		if x.t.kind(c) == "ERROR" {
			x.walk(c, container, fn)
			continue
		}
		if descend, inner := fn(c, container); descend {
			x.walk(c, inner, fn)
		}
	}
}

// def records a symbol whose whole definition is node def and whose name
// is node name (marked so it is not counted as a reference).
func (x *extractor) def(def, name int32, kind SymbolKind, container string, exported bool) {
	if name < 0 {
		return
	}
	x.defName(def, name, x.in.nameBytes(x.t.bytes(name)), kind, container, exported)
}

// internCache is a map of names (names.go) in front of the name table,
// whose look-ups take a lock: most names recur from file to file. A parse
// takes one from internCaches and puts it back, so workers never share
// one; the pool drops idle caches at GC. Its keys are the table's strings
// (a hit allocates nothing).
type internCache map[string]Name

// maxInternCache bounds a cache (it is emptied when full): about 0.3 MB.
const maxInternCache = 8192

var internCaches = sync.Pool{New: func() any { return internCache(make(map[string]Name, 1024)) }}

// seenSets are collectRefs' sets of the names kept so far, emptied and
// reused from file to file: a new map per file grew to each file's
// distinct names again (~40 MB of the mixed tree's ~310 MB allocated per
// cold open). A set grown past maxSeenSet is not kept.
var seenSets = sync.Pool{New: func() any { return map[string]bool{} }}

const maxSeenSet = 16 << 10

func getSeenSet() map[string]bool { return seenSets.Get().(map[string]bool) }

func putSeenSet(m map[string]bool) {
	if len(m) <= maxSeenSet {
		clear(m)
		seenSets.Put(m)
	}
}

func getInternCache() internCache  { return internCaches.Get().(internCache) }
func putInternCache(c internCache) { internCaches.Put(c) }

// name is InternName(s) through c.
func (c internCache) name(s string) Name {
	if v, ok := c[s]; ok {
		return v
	}
	v := InternName(s)
	if len(c) >= maxInternCache {
		clear(c)
	}
	c[v.String()] = v
	return v
}

// nameBytes is InternName(string(b)) through c; a hit allocates nothing.
func (c internCache) nameBytes(b []byte) Name {
	if v, ok := c[string(b)]; ok {
		return v
	}
	return c.name(string(b))
}

// defText is def with the name given as text (a qualified or cleaned name).
func (x *extractor) defText(def, name int32, text string, kind SymbolKind, container string, exported bool) {
	x.defName(def, name, x.in.name(text), kind, container, exported)
}

// defName is def with the name given as a Name (0: no symbol).
func (x *extractor) defName(def, name int32, id Name, kind SymbolKind, container string, exported bool) {
	if id == 0 || len(x.info.Symbols) >= maxSymbols {
		return
	}
	if name >= 0 {
		x.defNames[name] = true
	}
	n := &x.t.nodes[def]
	endLine := int32(n.endRow) + 1
	if n.end > n.start && n.endRow > n.startRow && x.t.src[n.end-1] == '\n' {
		endLine-- // a #define's node ends after its newline
	}
	x.info.Symbols = append(x.info.Symbols, Symbol{
		Name: id, Kind: kind,
		StartLine: int32(n.startRow) + 1, EndLine: endLine,
		StartByte: int32(n.start), EndByte: int32(n.end),
		Container: x.in.name(container), Exported: exported,
	})
}

// imp records an import statement at node at.
func (x *extractor) imp(at int32, path, kind string, names []string) {
	x.impLine(int(x.t.nodes[at].startRow)+1, path, kind, names)
}

// impLine records an import statement at 1-based line.
func (x *extractor) impLine(line int, path, kind string, names []string) {
	if path == "" {
		return
	}
	x.info.Imports = append(x.info.Imports, Import{Path: path, Kind: kind, Names: names, Line: line})
}

// collectRefs gathers distinct identifiers of x.refKinds, in order of first
// use, skipping definition names, x.stop words and one-letter names, up to
// MaxRefs.
func (x *extractor) collectRefs() {
	if len(x.refKinds) == 0 {
		return
	}
	// By kind id, so the loop over every node does no map look-up.
	isRef := make([]bool, len(x.t.kindTab)+1)
	for id, k := range x.t.kindTab {
		isRef[id] = x.refKinds[k]
	}
	seen := getSeenSet()
	defer putSeenSet(seen)
	// add takes identifier b; false once MaxRefs are kept.
	add := func(b []byte) bool {
		if len(b) < 2 || len(b) > 128 || seen[string(b)] || x.stop[string(b)] || !isIdent(string(b)) { // no allocation
			return true
		}
		n := x.in.nameBytes(b)
		if n == 0 { // the name table is full
			return true
		}
		seen[n.String()] = true
		x.info.Refs = append(x.info.Refs, n)
		return len(x.info.Refs) < MaxRefs
	}
	// A skipped body's identifiers come right after its block node: the
	// first node that starts after the body's '{' is past its '}'.
	body := 0
	for i := range x.t.nodes {
		n := &x.t.nodes[i]
		for ; body < len(x.bodies) && x.bodies[body].open < n.start; body++ {
			if !x.lexBody(x.bodies[body], add) {
				return
			}
		}
		if !isRef[min(int(n.sym), len(x.t.kindTab))] || x.defNames[int32(i)] {
			continue
		}
		if !add(x.t.bytes(int32(i))) {
			return
		}
	}
	for ; body < len(x.bodies); body++ {
		if !x.lexBody(x.bodies[body], add) {
			return
		}
	}
}

// lexBody passes body sp's identifiers to add until it returns false;
// false then.
func (x *extractor) lexBody(sp bodySpan, add func([]byte) bool) bool {
	more := true
	x.bodyIdents(x.t.src, sp, func(b []byte) bool {
		more = add(b)
		return more
	})
	return more
}

// isIdent reports whether s looks like an identifier (letters, digits,
// '_', '$', or any non-ASCII rune), which drops odd captures such as
// Bash words with quotes.
func isIdent(s string) bool {
	for _, r := range s {
		switch {
		case r == '_' || r == '$' || r >= 0x80:
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return s != ""
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// unquote strips one pair of matching quotes or angle brackets.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 {
		switch f, l := s[0], s[len(s)-1]; {
		case (f == '"' || f == '\'' || f == '`') && l == f, f == '<' && l == '>':
			return s[1 : len(s)-1]
		}
	}
	return s
}

// upperFirst reports whether s starts with an upper-case ASCII letter (Go
// export rule; non-ASCII upper case also counts, as in the Go spec).
func upperFirst(s string) bool {
	for _, r := range s {
		return r >= 'A' && r <= 'Z' || (r >= 0x80 && strings.ToUpper(string(r)) == string(r) && strings.ToLower(string(r)) != string(r))
	}
	return false
}

// hasWord reports whether the source s contains word as a whole word.
func hasWord(s, word string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(word)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
