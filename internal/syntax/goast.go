package syntax

import (
	"bytes"
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"sort"
)

// Every Go file go/parser accepts (up to maxGoAST bytes) is read with
// go/parser, Go's reference grammar, instead of tree-sitter, and turned into
// the FileInfo the tree-sitter walk gives: the same symbols, imports, refs
// and package. go/parser costs ~1/6 of tree-sitter's CPU per byte and
// reads valid Go tree-sitter misparses (ERROR nodes in valid files, `map`,
// `func` or `type` read as identifiers) as the compiler does.
// TestGoASTMatchesTreeSitter compares the two on every Go fixture and
// TestGoASTMatchesTreeSitterOnTree on every Go file of a tree, naming the
// side at fault for each difference. A file go/parser reports an error in
// goes to tree-sitter, whose error recovery the symbols of a broken file
// depend on.

// parseGoAST extracts src with go/parser; ok is false when the file has a
// syntax error (then the caller parses it with tree-sitter).
func parseGoAST(src []byte) (info *FileInfo, ok bool) {
	fset := token.NewFileSet()
	// No ParseComments: comments are skipped by the scanner (specRange
	// finds the one it needs in src), which spares go/parser a comment
	// and a group per comment, ~4.5% of its allocations.
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil || f == nil {
		return nil, false
	}
	x := &goAST{
		src: src, file: fset.File(f.Package), f: f,
		info:     &FileInfo{Language: "go", Symbols: []Symbol{}, Imports: []Import{}, Refs: []Name{}},
		defNames: map[token.Pos]bool{},
		notRef:   map[token.Pos]bool{},
		keyword:  map[token.Pos]bool{},
		in:       getInternCache(),
	}
	defer putInternCache(x.in)
	if x.file == nil {
		return nil, false
	}
	x.extract()
	x.collectRefs()
	info = x.info
	info = settle(info)
	sort.SliceStable(info.Imports, func(i, j int) bool { return info.Imports[i].Line < info.Imports[j].Line })
	return info, true
}

// goAST is extractGo's rules over a go/ast file. Identifiers tree-sitter
// gives another kind than identifier, type_identifier or field_identifier
// (package names, labels, `nil`, `true`, `false`, `iota`) are not refs.
type goAST struct {
	src      []byte
	file     *token.File
	f        *ast.File
	info     *FileInfo
	defNames map[token.Pos]bool // name identifiers of recorded symbols
	notRef   map[token.Pos]bool // package_identifier and label_name positions
	keyword  map[token.Pos]bool // nil, true, false, iota as expressions
	in       internCache
}

func (x *goAST) off(p token.Pos) int { return x.file.Offset(p) }

// line is the 1-based line of p (tree-sitter's row + 1).
// (//line directives are not applied, as tree-sitter knows none).
func (x *goAST) line(p token.Pos) int { return x.file.PositionFor(p, false).Line }

// def records a symbol spanning [from, to) named by id, as extractor.def.
func (x *goAST) def(from, to token.Pos, id *ast.Ident, kind SymbolKind, container string) {
	if id == nil || id.Name == "" || len(x.info.Symbols) >= maxSymbols {
		return
	}
	x.defNames[id.Pos()] = true
	x.info.Symbols = append(x.info.Symbols, Symbol{
		Name: x.in.name(id.Name), Kind: kind,
		StartLine: int32(x.line(from)), EndLine: int32(x.line(to)),
		StartByte: int32(x.off(from)), EndByte: int32(x.off(to)),
		Container: x.in.name(container), Exported: upperFirst(id.Name),
	})
}

func (x *goAST) extract() {
	x.info.Package = x.f.Name.Name
	x.defNames[x.f.Name.Pos()] = true
	for _, d := range x.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			kind, container := KindFunction, ""
			if d.Recv != nil {
				kind, container = KindMethod, goASTReceiver(d.Recv)
			}
			x.def(d.Pos(), d.End(), d.Name, kind, container)
		case *ast.GenDecl:
			x.genDecl(d)
		}
	}
}

func (x *goAST) genDecl(d *ast.GenDecl) {
	switch d.Tok {
	case token.IMPORT:
		for _, s := range d.Specs {
			s := s.(*ast.ImportSpec)
			if s.Name != nil {
				x.notRef[s.Name.Pos()] = true
			}
			x.imp(s)
		}
	case token.TYPE:
		for _, s := range d.Specs {
			s := s.(*ast.TypeSpec)
			kind := KindType
			if !s.Assign.IsValid() {
				switch s.Type.(type) {
				case *ast.StructType:
					kind = KindStruct
				case *ast.InterfaceType:
					kind = KindInterface
				}
			}
			from, to := x.specRange(d, s)
			x.def(from, to, s.Name, kind, "")
			x.members(s.Type, s.Name.Name)
		}
	case token.CONST, token.VAR:
		kind := KindVariable
		if d.Tok == token.CONST {
			kind = KindConstant
		}
		for _, s := range d.Specs {
			s := s.(*ast.ValueSpec)
			from, to := x.specRange(d, s)
			for _, n := range s.Names {
				x.def(from, to, n, kind, "")
			}
		}
	}
}

// specRange is goSpecRange: the whole declaration when spec is its only
// named child in tree-sitter's tree (one spec, no comment beside it inside
// the parentheses; a parenthesised var block has a var_spec_list between),
// else the spec.
func (x *goAST) specRange(d *ast.GenDecl, s ast.Spec) (token.Pos, token.Pos) {
	if len(d.Specs) != 1 {
		return s.Pos(), s.End()
	}
	if !d.Lparen.IsValid() {
		return d.Pos(), d.End()
	}
	if d.Tok == token.VAR {
		return s.Pos(), s.End()
	}
	// Between the parentheses and the one spec there is only white space,
	// the spec's semicolon and comments, so a '/' there starts a comment.
	if bytes.IndexByte(x.src[x.off(d.Lparen)+1:x.off(s.Pos())], '/') >= 0 ||
		bytes.IndexByte(x.src[x.off(s.End()):x.off(d.Rparen)], '/') >= 0 {
		return s.Pos(), s.End()
	}
	return d.Pos(), d.End()
}

func (x *goAST) imp(s *ast.ImportSpec) {
	path := unquote(s.Path.Value)
	if path == "" {
		return
	}
	x.info.Imports = append(x.info.Imports, Import{Path: path, Kind: "import", Line: x.line(s.Pos())})
}

// members records struct fields and interface methods, as goMembers.
func (x *goAST) members(typ ast.Expr, owner string) {
	switch t := typ.(type) {
	case *ast.StructType:
		for _, fl := range t.Fields.List {
			for _, n := range fl.Names {
				x.def(fl.Pos(), fl.End(), n, KindField, owner)
			}
		}
	case *ast.InterfaceType:
		for _, fl := range t.Methods.List {
			if _, ok := fl.Type.(*ast.FuncType); ok && len(fl.Names) == 1 {
				x.def(fl.Pos(), fl.End(), fl.Names[0], KindMethod, owner)
			}
		}
	}
}

// goASTReceiver is goReceiver over go/ast: the base type name of the first
// receiver.
func goASTReceiver(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	typ := recv.List[0].Type
	for typ != nil {
		switch t := typ.(type) {
		case *ast.Ident:
			return t.Name
		case *ast.StarExpr:
			typ = t.X
		case *ast.ParenExpr:
			typ = t.X
		case *ast.IndexExpr:
			typ = t.X
		case *ast.IndexListExpr:
			typ = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		default:
			return ""
		}
	}
	return ""
}

// collectRefs is extractor.collectRefs over the file's identifiers in
// source order.
func (x *goAST) collectRefs() {
	var ids []*ast.Ident
	// Two walkers, shared by the whole walk (a walker holds no state of
	// its own): typ and expr switch to the other instead of allocating
	// one per call.
	r := &refWalker{x: x, ids: &ids}
	r.peer = &refWalker{x: x, ids: &ids, inType: true, peer: r}
	ast.Walk(r, x.f)
	slices.SortFunc(ids, func(a, b *ast.Ident) int { return cmp.Compare(a.Pos(), b.Pos()) })
	seen := getSeenSet()
	defer putSeenSet(seen)
	for _, id := range ids {
		name := id.Name
		if len(name) < 2 || len(name) > 128 || x.defNames[id.Pos()] || x.notRef[id.Pos()] {
			continue
		}
		if seen[name] || goStop[name] || x.keyword[id.Pos()] || !isIdent(name) {
			continue
		}
		n := x.in.name(name)
		if n == 0 { // the name table is full
			continue
		}
		seen[name] = true // the set is emptied before the tree is dropped
		x.info.Refs = append(x.info.Refs, n)
		if len(x.info.Refs) >= MaxRefs {
			return
		}
	}
}

// goKeywordNode reports the identifiers tree-sitter-go parses as nodes of their
// own kind in an expression (in a type, `case nil:` of a type switch, they
// are type_identifier; after a dot, field_identifier).
func goKeywordNode(name string) bool {
	switch name {
	case "nil", "true", "false", "iota":
		return true
	}
	return false
}

// refWalker gathers identifiers, marking the ones tree-sitter reads as a
// package_identifier (the package of a qualified type) or a label_name.
// Its fields never change during a walk; peer is the walker with the
// other inType.
type refWalker struct {
	x      *goAST
	ids    *[]*ast.Ident
	inType bool
	peer   *refWalker
}

func (r *refWalker) typ(e ast.Expr) {
	if e != nil {
		w := r
		if !r.inType {
			w = r.peer
		}
		ast.Walk(w, e)
	}
}

func (r *refWalker) expr(e ast.Expr) {
	if e != nil {
		w := r
		if r.inType {
			w = r.peer
		}
		ast.Walk(w, e)
	}
}

func (r *refWalker) fields(fl *ast.FieldList) {
	if fl == nil {
		return
	}
	for _, f := range fl.List {
		for _, n := range f.Names {
			*r.ids = append(*r.ids, n)
		}
		r.typ(f.Type)
	}
}

func (r *refWalker) Visit(n ast.Node) ast.Visitor {
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.Ident:
		if !r.inType && goKeywordNode(n.Name) {
			r.x.keyword[n.Pos()] = true
		}
		*r.ids = append(*r.ids, n)
		return nil
	case *ast.SelectorExpr:
		if id, ok := n.X.(*ast.Ident); ok && r.inType {
			r.x.notRef[id.Pos()] = true
		}
		ast.Walk(r, n.X)
		*r.ids = append(*r.ids, n.Sel)
		return nil
	case *ast.LabeledStmt:
		r.x.notRef[n.Label.Pos()] = true
		return r
	case *ast.BranchStmt:
		if n.Label != nil {
			r.x.notRef[n.Label.Pos()] = true
		}
		return r
	case *ast.Field:
		for _, id := range n.Names {
			*r.ids = append(*r.ids, id)
		}
		r.typ(n.Type)
		return nil
	case *ast.TypeSpec:
		*r.ids = append(*r.ids, n.Name)
		r.fields(n.TypeParams)
		r.typ(n.Type)
		return nil
	case *ast.ValueSpec:
		for _, id := range n.Names {
			*r.ids = append(*r.ids, id)
		}
		r.typ(n.Type)
		for _, v := range n.Values {
			r.expr(v)
		}
		return nil
	case *ast.CompositeLit:
		r.typ(n.Type)
		for _, e := range n.Elts {
			r.expr(e)
		}
		return nil
	case *ast.TypeAssertExpr:
		r.expr(n.X)
		r.typ(n.Type)
		return nil
	case *ast.ArrayType:
		r.expr(n.Len)
		r.typ(n.Elt)
		return nil
	case *ast.MapType:
		r.typ(n.Key)
		r.typ(n.Value)
		return nil
	case *ast.ChanType:
		r.typ(n.Value)
		return nil
	case *ast.FuncType:
		r.fields(n.TypeParams)
		r.fields(n.Params)
		r.fields(n.Results)
		return nil
	case *ast.TypeSwitchStmt:
		if n.Init != nil {
			ast.Walk(r, n.Init)
		}
		ast.Walk(r, n.Assign)
		for _, c := range n.Body.List {
			c := c.(*ast.CaseClause)
			for _, e := range c.List {
				r.typ(e)
			}
			for _, st := range c.Body {
				ast.Walk(r, st)
			}
		}
		return nil
	case *ast.CallExpr:
		switch fun := n.Fun.(type) {
		case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
			r.typ(fun)
		case *ast.ParenExpr:
			// (*pkg.T[K])(x), ((pkg.T[K]))(x): with one operand
			// tree-sitter reads a parenthesised, possibly pointer,
			// generic instance as a conversion to that type (pkg is a
			// package_identifier); without brackets, or with other
			// operands, as an expression.
			if len(n.Args) == 1 && !n.Ellipsis.IsValid() && parenGeneric(fun) {
				r.typ(fun)
			} else {
				r.expr(fun)
			}
		case *ast.IndexExpr, *ast.IndexListExpr:
			// F[T](x): tree-sitter reads the brackets as type arguments,
			// and with one operand the whole as a conversion to a generic
			// type (pkg.F[T](x): pkg is a package_identifier).
			x, idx := genericParts(fun)
			if len(n.Args) == 1 && !n.Ellipsis.IsValid() {
				r.typ(x)
			} else {
				r.expr(x)
			}
			for _, e := range idx {
				r.typ(e)
			}
		default:
			r.expr(fun)
		}
		for i, a := range n.Args {
			if id, ok := n.Fun.(*ast.Ident); ok && i == 0 && (id.Name == "new" || id.Name == "make") {
				r.typ(a)
				continue
			}
			r.expr(a)
		}
		return nil
	}
	return r
}

// parenGeneric reports whether e, under its parentheses and stars, is a
// generic instance F[T].
func parenGeneric(e ast.Expr) bool {
	for {
		switch t := e.(type) {
		case *ast.ParenExpr:
			e = t.X
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr, *ast.IndexListExpr:
			return true
		default:
			return false
		}
	}
}

// genericParts splits F[A, B] into F and its brackets.
func genericParts(e ast.Expr) (ast.Expr, []ast.Expr) {
	switch e := e.(type) {
	case *ast.IndexExpr:
		return e.X, []ast.Expr{e.Index}
	case *ast.IndexListExpr:
		return e.X, e.Indices
	}
	return e, nil
}
