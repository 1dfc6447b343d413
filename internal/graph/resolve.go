package graph

import (
	"bufio"
	"bytes"
	"path"
	"sort"
	"strings"

	"github.com/task-x/task-x-runtime/internal/syntax"
)

// resolver turns import statements into import edges.
type resolver struct {
	g     *Graph
	all   map[string]bool // every indexed path
	dirs  map[string]bool // every folder holding an indexed path, with ancestors ("" is the root)
	mods  []goModule      // sorted by module path length, longest first
	goPkg map[string][]int32
	// goImports holds, per Go node, the package folders its imports
	// resolved to (reference edges across Go packages need one).
	goImports map[int32]map[string]bool
	py        []string // Python import roots, "" first
	// goDefs caches pkgDefs per package folder.
	goDefs map[string]map[syntax.Name][]int32
	// unresolved counts local-looking imports that matched no file.
	unresolved int
	buf        []byte // pyModuleAt's scratch path
}

type goModule struct {
	dir, path string
}

type addFunc func(from, to int32, kind string, names ...syntax.Name)

func newResolver(g *Graph, all map[string]bool, readFile func(string) ([]byte, error)) *resolver {
	r := &resolver{g: g, all: all, dirs: map[string]bool{"": true}, goPkg: map[string][]int32{}, goImports: map[int32]map[string]bool{}, goDefs: map[string]map[syntax.Name][]int32{}}
	pyRoots := map[string]bool{"": true}
	for p := range all {
		for d := dirOf(p); d != "" && !r.dirs[d]; d = dirOf(d) {
			r.dirs[d] = true
		}
		base := path.Base(p)
		switch base {
		case "go.mod":
			if underSkipped(p) {
				continue
			}
			if data, err := readFile(p); err == nil {
				if mp := modulePath(data); mp != "" {
					r.mods = append(r.mods, goModule{dir: dirOf(p), path: mp})
				}
			}
		case "pyproject.toml", "setup.py", "setup.cfg":
			pyRoots[dirOf(p)] = true
		}
	}
	for d := range pyRoots {
		r.py = append(r.py, d)
		if s := join(d, "src"); r.dirs[s] {
			r.py = append(r.py, s)
		}
	}
	if r.dirs["src"] && !pyRoots["src"] {
		r.py = append(r.py, "src")
	}
	sort.Slice(r.py, func(i, j int) bool {
		if len(r.py[i]) != len(r.py[j]) {
			return len(r.py[i]) < len(r.py[j])
		}
		return r.py[i] < r.py[j]
	})
	r.py = dedupe(r.py)
	sort.Slice(r.mods, func(i, j int) bool {
		if len(r.mods[i].path) != len(r.mods[j].path) {
			return len(r.mods[i].path) > len(r.mods[j].path)
		}
		return r.mods[i].dir < r.mods[j].dir
	})
	for i, n := range g.nodes {
		if n.lang == "go" && !strings.HasSuffix(n.path, "_test.go") {
			d := dirOf(n.path)
			r.goPkg[d] = append(r.goPkg[d], int32(i))
		}
	}
	return r
}

// underSkipped reports whether p lies in a vendor or testdata folder, whose
// go.mod files do not define workspace modules.
func underSkipped(p string) bool {
	for _, part := range strings.Split(dirOf(p), "/") {
		if part == "vendor" || part == "testdata" {
			return true
		}
	}
	return false
}

// modulePath reads the module directive of a go.mod file.
func modulePath(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest = strings.TrimSpace(rest)
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = strings.TrimSpace(rest[:i])
			}
			return strings.Trim(rest, "\"`")
		}
	}
	return ""
}

// imports resolves the import statements of node i.
func (r *resolver) imports(i int32, add addFunc) {
	n := &r.g.nodes[i]
	for _, im := range n.info.Imports {
		if im.Path == "" {
			continue
		}
		switch n.lang {
		case "rust":
			r.rust(i, im.Path, im.Kind, im.Names, add)
		case "typescript", "tsx", "javascript":
			r.js(i, im.Path, im.Names, add)
		case "python":
			r.python(i, im.Path, im.Names, add)
		case "go":
			r.golang(i, im.Path, add)
		case "c", "cpp":
			r.include(i, im.Path, add)
		}
	}
}

// link adds an import edge from i to the file at p when p is a node; it
// reports whether p is an indexed file (a resolved import even when p has
// no parse result, such as a JSON module).
func (r *resolver) link(i int32, p string, add addFunc, names []string) bool {
	if !r.all[p] {
		return false
	}
	if j, ok := r.g.byPath[p]; ok {
		add(i, j, KindImport, r.defined(j, names)...)
	}
	return true
}

// defined returns the names that node j defines.
func (r *resolver) defined(j int32, names []string) []syntax.Name {
	if len(names) == 0 {
		return nil
	}
	var out []syntax.Name
	for _, s := range r.g.nodes[j].info.Symbols {
		name := s.Name.String()
		for _, n := range names {
			if name == n {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

// ---- TypeScript / JavaScript ----

var (
	jsExts      = []string{".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}
	jsRewrite   = map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}}
	jsIndexExts = jsExts
)

// js resolves a relative specifier: the exact file, the file with a
// TypeScript extension for a written .js/.jsx/.mjs/.cjs, the specifier
// with each extension, then an index file in the folder. Bare specifiers
// (packages) are outside the workspace and not counted.
func (r *resolver) js(i int32, spec string, names []string, add addFunc) {
	if k := strings.IndexAny(spec, "?#"); k >= 0 {
		spec = spec[:k]
	}
	if !(spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")) {
		return
	}
	p, ok := joinRel(dirOf(r.g.nodes[i].path), spec)
	if !ok {
		r.unresolved++
		return
	}
	for _, c := range jsCandidates(p) {
		if r.link(i, c, add, names) {
			return
		}
	}
	r.unresolved++
}

func jsCandidates(p string) []string {
	var out []string
	ext := path.Ext(p)
	if p != "" {
		out = append(out, p)
		for _, alt := range jsRewrite[ext] {
			out = append(out, strings.TrimSuffix(p, ext)+alt)
		}
		for _, e := range jsExts {
			out = append(out, p+e)
		}
	}
	for _, e := range jsIndexExts {
		out = append(out, join(p, "index"+e))
	}
	return out
}

// ---- Python ----

// python resolves `import a.b` and `from X import names`. Relative
// specifiers (leading dots) start at the file's package; absolute ones are
// tried against each import root (the workspace root, folders holding a
// pyproject.toml, setup.py or setup.cfg, their src/ folders, a top-level
// src/) and the file's own folder (a script's sys.path[0]). A module is
// mod.py, mod.pyi or mod/__init__.py; `from pkg import sub` links the
// submodule sub when it is a file, else pkg itself.
func (r *resolver) python(i int32, spec string, names []string, add addFunc) {
	dots := len(spec) - len(strings.TrimLeft(spec, "."))
	rest := spec[dots:]
	var segs []string
	if rest != "" {
		segs = strings.Split(rest, ".")
	}
	if dots > 0 {
		base := dirOf(r.g.nodes[i].path)
		for k := 1; k < dots; k++ {
			if base == "" {
				r.unresolved++
				return
			}
			base = dirOf(base)
		}
		if !r.pyFrom(i, base, segs, names, add) {
			r.unresolved++
		}
		return
	}
	if len(segs) == 0 {
		return
	}
	roots := append([]string{}, r.py...)
	if own := dirOf(r.g.nodes[i].path); !contains(roots, own) {
		roots = append(roots, own)
	}
	local := false
	for _, root := range roots {
		if r.pyFrom(i, root, segs, names, add) {
			return
		}
		top := join(root, segs[0])
		if r.dirs[top] || r.all[top+".py"] {
			local = true
		}
	}
	if local {
		r.unresolved++
	}
}

// pyFrom links the module segs under base (and the submodules of names);
// it reports whether anything resolved.
func (r *resolver) pyFrom(i int32, base string, segs, names []string, add addFunc) bool {
	modDir := join(base, strings.Join(segs, "/"))
	found := false
	for _, n := range names {
		if n == "*" {
			continue
		}
		if f := r.pyModuleAt(modDir, n); f != "" {
			r.link(i, f, add, nil)
			found = true
		}
	}
	if found {
		return true
	}
	if len(segs) == 0 {
		if f := r.pyModuleAt(base, "__init__"); f != "" {
			return r.link(i, f, add, names)
		}
		return false
	}
	// The deepest module of the dotted path that is a file.
	for k := len(segs); k >= 1; k-- {
		if f := r.pyModuleAt(base, segs[:k]...); f != "" {
			return r.link(i, f, add, names)
		}
	}
	return false
}

// pyModuleAt returns the file of module p = join(base, strings.Join(segs,
// "/")) ("a/b"): a/b.py, a/b.pyi or a/b/__init__.py (p "a/__init__":
// a/__init__.py only); "" when none is indexed. The candidates are made
// in a scratch buffer and looked up as they are (a map lookup of
// string(b) does not allocate), so only a hit allocates: building them as
// strings was the largest part of the graph build on the mixed bench tree.
func (r *resolver) pyModuleAt(base string, segs ...string) string {
	b := append(r.buf[:0], base...)
	if base != "" {
		b = append(b, '/')
	}
	mark := len(b)
	for k, seg := range segs {
		if k > 0 {
			b = append(b, '/')
		}
		b = append(b, seg...)
	}
	if len(b) == mark && base != "" {
		b = b[:mark-1] // join(base, "") is base
	}
	r.buf = b
	return r.pyModuleBuf()
}

// pyModuleBuf is pyModuleAt of the path in r.buf.
func (r *resolver) pyModuleBuf() string {
	p := r.buf
	n := len(p)
	if bytes.HasSuffix(p, []byte("/__init__")) {
		p = append(p, ".py"...)
		r.buf = p
		if r.all[string(p)] {
			return string(p)
		}
		return ""
	}
	for _, ext := range [...]string{".py", ".pyi", "/__init__.py"} {
		p = append(p[:n], ext...)
		if r.all[string(p)] {
			r.buf = p
			return string(p)
		}
	}
	r.buf = p
	return ""
}

// ---- Go ----

// golang resolves an import path through the workspace's go.mod files (the
// module with the longest matching path wins, so nested modules work) to
// the package folder's non-test files. The edge goes to the files that
// define an exported name the importing file references; when none does
// (a blank or dot import, or no references known) it goes to every
// non-test file of the package.
func (r *resolver) golang(i int32, imp string, add addFunc) {
	for _, m := range r.mods {
		var rest string
		switch {
		case imp == m.path:
		case strings.HasPrefix(imp, m.path+"/"):
			rest = imp[len(m.path)+1:]
		case m.path == "std" && !strings.Contains(firstElem(imp), "."):
			// Go's own source tree: the standard library's import paths
			// have no module prefix ($GOROOT/src/go.mod is "module std").
			if len(r.goPkg[join(m.dir, imp)]) == 0 {
				continue
			}
			rest = imp
		default:
			continue
		}
		dir := join(m.dir, rest)
		files := r.goPkg[dir]
		if len(files) == 0 {
			r.unresolved++
			return
		}
		if r.goImports[i] == nil {
			r.goImports[i] = map[string]bool{}
		}
		r.goImports[i][dir] = true
		defs := r.pkgDefs(dir, files)
		linked := false
		for _, id := range r.g.nodes[i].info.Refs {
			for _, j := range defs[id] {
				if j != i { // a //go:build ignore main file in the folder it imports
					add(i, j, KindImport, id)
					linked = true
				}
			}
		}
		if !linked {
			for _, j := range files {
				if j != i {
					add(i, j, KindImport)
				}
			}
		}
		return
	}
}

// pkgDefs returns, for the Go package in dir, the files defining each
// exported top-level name; built once per package.
func (r *resolver) pkgDefs(dir string, files []int32) map[syntax.Name][]int32 {
	if m, ok := r.goDefs[dir]; ok {
		return m
	}
	m := map[syntax.Name][]int32{}
	for _, j := range files {
		for _, s := range r.g.nodes[j].info.Symbols {
			if s.Exported && s.Container == 0 {
				if l := m[s.Name]; len(l) == 0 || l[len(l)-1] != j {
					m[s.Name] = append(l, j)
				}
			}
		}
	}
	r.goDefs[dir] = m
	return m
}

// ---- C / C++ ----

// include resolves a local include: relative to the including file, then
// to the root, then to a top-level include/ folder. Includes that resolve
// to nothing are taken as system headers and not counted.
func (r *resolver) include(i int32, spec string, add addFunc) {
	spec = strings.Trim(spec, "\"<> ")
	if spec == "" {
		return
	}
	if p, ok := joinRel(dirOf(r.g.nodes[i].path), spec); ok && r.link(i, p, add, nil) {
		return
	}
	for _, base := range []string{"", "include"} {
		if p, ok := joinRel(base, spec); ok && r.link(i, p, add, nil) {
			return
		}
	}
}

// ---- Rust ----

// rust resolves `mod x;` (x.rs or x/mod.rs in the declaring module's
// folder) and use paths from `crate` (the src/lib.rs or src/main.rs of the
// nearest Cargo.toml), `super` and `self`, linking the longest module path
// that is a file, else the base module's file. A use path that starts with
// another name is tried relative to the current module (2018 uniform
// paths) and is otherwise an outside crate, not counted.
func (r *resolver) rust(i int32, spec, kind string, names []string, add addFunc) {
	file := r.g.nodes[i].path
	if kind == "mod" {
		d := r.rustChildDir(file)
		for _, c := range []string{join(d, spec+".rs"), join(d, spec+"/mod.rs")} {
			if r.link(i, c, add, nil) {
				return
			}
		}
		r.unresolved++
		return
	}
	spec, inner := splitRustUse(spec)
	names = append(names, inner...)
	segs := strings.Split(spec, "::")
	var baseDir, baseFile string
	local := true
	switch segs[0] {
	case "crate":
		root := r.rustCrateRoot(file)
		if root == "" {
			r.unresolved++
			return
		}
		baseDir, baseFile = dirOf(root), root
		segs = segs[1:]
	case "self":
		baseDir, baseFile = r.rustChildDir(file), file
		segs = segs[1:]
	case "super":
		baseDir, baseFile = r.rustChildDir(file), file
		for len(segs) > 0 && segs[0] == "super" {
			segs = segs[1:]
			baseDir = dirOf(baseDir)
			baseFile = r.rustModuleFile(file, baseDir)
			if baseFile == "" {
				r.unresolved++
				return
			}
		}
	default:
		baseDir, baseFile = r.rustChildDir(file), ""
		local = false
	}
	var targets []string
	if len(names) == 0 {
		names = []string{""}
	}
	var used []string // the item names after the module path
	for _, n := range names {
		s := segs
		switch n {
		case "", "self", "*":
		default:
			s = append(append([]string{}, segs...), n)
		}
		if t, k := r.rustLongest(baseDir, s); t != "" {
			targets = append(targets, t)
			if k < len(s) {
				used = append(used, s[k])
			}
		}
	}
	if len(targets) == 0 {
		if !local {
			return
		}
		if baseFile == "" || baseFile == file {
			if baseFile == "" {
				r.unresolved++
			}
			return
		}
		targets = []string{baseFile}
	}
	for _, t := range dedupe(targets) {
		if t != file {
			r.link(i, t, add, append(used, names...))
		}
	}
}

// splitRustUse splits "a::b::{c, d as e}" into "a::b" and [c d]; "as"
// aliases and a trailing "::*" are dropped.
func splitRustUse(spec string) (string, []string) {
	spec = strings.TrimSpace(spec)
	var names []string
	if k := strings.Index(spec, "{"); k >= 0 {
		inner := strings.TrimSuffix(strings.TrimSpace(spec[k+1:]), "}")
		for _, n := range strings.Split(inner, ",") {
			n = strings.TrimSpace(n)
			if a, _, ok := strings.Cut(n, " as "); ok {
				n = strings.TrimSpace(a)
			}
			if n != "" && !strings.ContainsAny(n, "{}") {
				names = append(names, strings.Split(n, "::")[0])
			}
		}
		spec = strings.TrimSuffix(spec[:k], "::")
	}
	if a, _, ok := strings.Cut(spec, " as "); ok {
		spec = strings.TrimSpace(a)
	}
	spec = strings.TrimSuffix(spec, "::*")
	return spec, names
}

// rustLongest returns the file of the longest prefix of segs that is a
// module file under dir (dir/a/b.rs or dir/a/b/mod.rs) and the prefix's
// length.
func (r *resolver) rustLongest(dir string, segs []string) (string, int) {
	for k := len(segs); k >= 1; k-- {
		p := join(dir, strings.Join(segs[:k], "/"))
		for _, c := range []string{p + ".rs", p + "/mod.rs"} {
			if r.all[c] {
				return c, k
			}
		}
	}
	return "", 0
}

// rustChildDir is the folder where the module of file declares its child
// modules: its own folder for mod.rs, lib.rs and main.rs, else the folder
// named after the file.
func (r *resolver) rustChildDir(file string) string {
	switch path.Base(file) {
	case "mod.rs", "lib.rs", "main.rs":
		return dirOf(file)
	}
	return strings.TrimSuffix(file, ".rs")
}

// rustModuleFile returns the file of the module whose child folder is dir:
// the crate root when dir is the crate's src folder, else dir.rs or
// dir/mod.rs; "" when none.
func (r *resolver) rustModuleFile(file, dir string) string {
	if root := r.rustCrateRoot(file); root != "" && dirOf(root) == dir {
		return root
	}
	for _, c := range []string{dir + ".rs", join(dir, "mod.rs"), join(dir, "lib.rs"), join(dir, "main.rs")} {
		if r.all[c] {
			return c
		}
	}
	return ""
}

// rustCrateRoot returns src/lib.rs (else src/main.rs) of the nearest
// folder above file holding a Cargo.toml; "" when none.
func (r *resolver) rustCrateRoot(file string) string {
	for d := dirOf(file); ; d = dirOf(d) {
		if r.all[join(d, "Cargo.toml")] {
			for _, c := range []string{join(d, "src/lib.rs"), join(d, "src/main.rs")} {
				if r.all[c] {
					return c
				}
			}
			return ""
		}
		if d == "" {
			return ""
		}
	}
}

// ---- paths ----

// dirOf returns the folder of a root-relative path, "" at the root.
func dirOf(p string) string {
	if k := strings.LastIndexByte(p, '/'); k >= 0 {
		return p[:k]
	}
	return ""
}

// join joins root-relative parts, "" being the root.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "/" + b
}

// joinRel resolves a relative specifier against dir; false when it leaves
// the root.
func joinRel(dir, spec string) (string, bool) {
	p := path.Clean("/" + join(dir, spec))
	if strings.Contains(join(dir, spec), "..") {
		// Count the depth to detect escaping the root.
		depth := 0
		for _, part := range strings.Split(join(dir, spec), "/") {
			switch part {
			case "..":
				depth--
			case ".", "":
			default:
				depth++
			}
			if depth < 0 {
				return "", false
			}
		}
	}
	return strings.TrimPrefix(p, "/"), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// firstElem returns the first "/"-separated element of an import path.
func firstElem(p string) string {
	if k := strings.IndexByte(p, '/'); k >= 0 {
		return p[:k]
	}
	return p
}
