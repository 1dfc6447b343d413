package syntax

import "strings"

// goStop lists Go's predeclared identifiers: every file uses them and no
// file defines them, so they would only add noise to reference edges.
var goStop = set("bool", "byte", "complex64", "complex128", "error", "float32", "float64",
	"int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16",
	"uint32", "uint64", "uintptr", "any", "comparable", "append", "cap", "clear", "close",
	"complex", "copy", "delete", "imag", "len", "make", "max", "min", "new", "panic",
	"print", "println", "real", "recover", "_")

// extractGo reads a Go source_file: package clause, imports, functions,
// methods (container: receiver type), type specs (struct, interface, other)
// with struct fields and interface methods, top-level consts and vars.
// Exported follows the Go spec (upper-case first letter).
func extractGo(x *extractor) {
	t := x.t
	x.refKinds = set("identifier", "type_identifier", "field_identifier")
	x.stop = goStop
	x.walk(0, "", func(i int32, container string) (bool, string) {
		switch t.kind(i) {
		case "package_clause":
			if n := t.childKind(i, "package_identifier"); n >= 0 {
				x.info.Package = t.text(n)
				x.defNames[n] = true
			}
		case "import_declaration", "import_spec_list":
			return true, container
		case "import_spec":
			x.imp(i, unquote(t.text(t.field(i, "path"))), "import", nil)
		case "function_declaration":
			name := t.field(i, "name")
			x.def(i, name, KindFunction, "", upperFirst(t.text(name)))
		case "method_declaration":
			name := t.field(i, "name")
			x.def(i, name, KindMethod, goReceiver(t, t.field(i, "receiver")), upperFirst(t.text(name)))
		case "type_declaration":
			return true, container
		case "type_spec", "type_alias":
			name := t.field(i, "name")
			typ := t.field(i, "type")
			kind := KindType
			switch t.kind(typ) {
			case "struct_type":
				kind = KindStruct
			case "interface_type":
				kind = KindInterface
			}
			if t.kind(i) == "type_alias" {
				kind = KindType
			}
			x.def(goSpecRange(t, i), name, kind, "", upperFirst(t.text(name)))
			if typ >= 0 {
				goMembers(x, typ, t.text(name))
			}
		case "const_declaration", "var_declaration", "var_spec_list", "const_spec_list":
			return true, container
		case "const_spec", "var_spec":
			kind := KindVariable
			if t.kind(i) == "const_spec" {
				kind = KindConstant
			}
			for _, n := range t.fields(i, "name") {
				x.def(goSpecRange(t, i), n, kind, "", upperFirst(t.text(n)))
			}
		}
		return false, container
	})
}

// goSpecRange returns the declaration node when spec is its only spec, so a
// one-spec symbol range includes the "type"/"const"/"var" keyword.
func goSpecRange(t *tree, spec int32) int32 {
	p := t.parent(spec)
	// Only child: first child and no next sibling (counting the children
	// would cost O(specs) per spec, O(n²) for a block of n specs).
	if p >= 0 && strings.HasSuffix(t.kind(p), "_declaration") && t.nodes[p].first == spec && t.nodes[spec].next < 0 {
		return p
	}
	return spec
}

// goMembers records struct fields and interface methods of a type literal.
func goMembers(x *extractor, typ int32, owner string) {
	t := x.t
	switch t.kind(typ) {
	case "struct_type":
		list := t.childKind(typ, "field_declaration_list")
		if list < 0 {
			return
		}
		for _, f := range t.children(list) {
			if t.kind(f) != "field_declaration" {
				continue
			}
			for _, n := range t.fields(f, "name") {
				x.def(f, n, KindField, owner, upperFirst(t.text(n)))
			}
		}
	case "interface_type":
		for _, m := range t.children(typ) {
			if k := t.kind(m); k == "method_elem" || k == "method_spec" {
				n := t.field(m, "name")
				x.def(m, n, KindMethod, owner, upperFirst(t.text(n)))
			}
		}
	}
}

// goReceiver returns the receiver's base type name: "T" for (t *T),
// (T), (t T[K]) and (t *pkg.T).
func goReceiver(t *tree, params int32) string {
	if params < 0 {
		return ""
	}
	decl := t.childKind(params, "parameter_declaration")
	if decl < 0 {
		return ""
	}
	typ := t.field(decl, "type")
	for typ >= 0 {
		switch t.kind(typ) {
		case "type_identifier":
			return t.text(typ)
		case "pointer_type", "parenthesized_type":
			typ = t.nodes[typ].first
		case "generic_type":
			typ = t.field(typ, "type")
		case "qualified_type":
			typ = t.field(typ, "name")
		default:
			return ""
		}
	}
	return ""
}
