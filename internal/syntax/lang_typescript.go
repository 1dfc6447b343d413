package syntax

import "strings"

// extractJS reads TypeScript, TSX and JavaScript (with JSX): function
// declarations, classes with methods and fields, interfaces with their
// members, type aliases, enums, namespaces (module), top-level
// const/let/var (`const f = () => ...` and function expressions as
// function, other const as constant, let/var as variable). Exported: the
// declaration sits in an `export` statement; class members of an exported
// class unless private. Imports: `import ... from "x"`, `import "x"`,
// `export ... from "x"`, `require("x")`, dynamic `import("x")`.
func extractJS(x *extractor) {
	t := x.t
	x.refKinds = set("identifier", "type_identifier", "property_identifier",
		"shorthand_property_identifier", "shorthand_property_identifier_pattern")
	x.stop = set("undefined", "require", "console", "arguments", "_", "$")
	exported := func(i int32) bool {
		p := t.parent(i)
		return p >= 0 && t.kind(p) == "export_statement"
	}
	var visit visitFunc
	visit = func(i int32, container string) (bool, string) {
		switch t.kind(i) {
		case "export_statement":
			if src := t.field(i, "source"); src >= 0 {
				x.imp(i, unquote(t.text(src)), "export", jsClauseNames(t, i))
				return false, container
			}
			return true, container
		case "import_statement":
			if src := t.field(i, "source"); src >= 0 {
				x.imp(i, unquote(t.text(src)), "import", jsClauseNames(t, i))
			} else if req := t.childKind(i, "import_require_clause"); req >= 0 {
				// TypeScript's `import x = require("y")`: the source is the
				// clause's, and x the name it binds.
				if src := t.field(req, "source"); src >= 0 {
					var names []string
					if n := t.childKind(req, "identifier"); n >= 0 {
						names = []string{t.text(n)}
					}
					x.imp(i, unquote(t.text(src)), "import", names)
				}
			}
		case "function_declaration", "generator_function_declaration", "function_signature":
			x.def(i, t.field(i, "name"), KindFunction, container, exported(i))
		case "class_declaration", "abstract_class_declaration", "class":
			name := t.field(i, "name")
			if name < 0 {
				return false, container
			}
			exp := exported(i)
			x.def(i, name, KindClass, container, exp)
			if body := t.field(i, "body"); body >= 0 {
				jsMembers(x, body, t.text(name), exp)
			}
		case "interface_declaration":
			name := t.field(i, "name")
			exp := exported(i)
			x.def(i, name, KindInterface, container, exp)
			if body := t.field(i, "body"); body >= 0 {
				jsMembers(x, body, t.text(name), exp)
			}
		case "type_alias_declaration":
			x.def(i, t.field(i, "name"), KindType, container, exported(i))
		case "enum_declaration":
			x.def(i, t.field(i, "name"), KindEnum, container, exported(i))
		case "internal_module", "module":
			name := t.field(i, "name")
			if name < 0 || t.kind(name) == "string" {
				return false, container
			}
			x.def(i, name, KindModule, container, exported(i) || t.kind(t.parent(i)) == "expression_statement" && exported(t.parent(i)))
			if body := t.field(i, "body"); body >= 0 {
				x.walk(body, t.text(name), visit)
			}
		case "expression_statement":
			// TypeScript wraps `namespace X {}` in an expression statement.
			return t.childKind(i, "internal_module") >= 0, container
		case "ambient_declaration":
			return true, container
		case "lexical_declaration", "variable_declaration":
			p := t.parent(i)
			if p >= 0 && t.kind(p) == "export_statement" {
				p = t.parent(p)
			}
			if k := t.kind(p); k != "program" && (k != "statement_block" || t.kind(t.parent(p)) != "internal_module") {
				return false, container // a local inside a function or block
			}
			isConst := strings.HasPrefix(t.text(i), "const")
			exp := exported(i)
			for _, d := range t.children(i) {
				if t.kind(d) != "variable_declarator" {
					continue
				}
				name := t.field(d, "name")
				if t.kind(name) != "identifier" {
					continue
				}
				kind := KindVariable
				switch t.kind(t.field(d, "value")) {
				case "arrow_function", "function_expression", "function", "generator_function":
					kind = KindFunction
				default:
					if isConst {
						kind = KindConstant
					}
				}
				x.def(d, name, kind, container, exp)
			}
		}
		return false, container
	}
	x.walk(0, "", visit)
	jsRequires(x)
}

// jsMembers records methods and fields of a class body or interface body.
func jsMembers(x *extractor, body int32, owner string, ownerExported bool) {
	t := x.t
	for _, m := range t.children(body) {
		var kind SymbolKind
		switch t.kind(m) {
		case "method_definition", "method_signature", "abstract_method_signature":
			kind = KindMethod
		case "public_field_definition", "field_definition", "property_signature":
			kind = KindField
		default:
			continue
		}
		name := t.field(m, "name")
		if name < 0 {
			name = t.field(m, "property")
		}
		if name < 0 {
			continue
		}
		private := t.kind(name) == "private_property_identifier"
		if a := t.childKind(m, "accessibility_modifier"); a >= 0 && t.text(a) != "public" {
			private = true
		}
		x.def(m, name, kind, owner, ownerExported && !private)
	}
}

// jsClauseNames returns the imported or re-exported names of an import or
// export statement: {a, b as c} gives a, b; a default import gives its
// local name; `* as ns` gives ns.
func jsClauseNames(t *tree, stmt int32) []string {
	var names []string
	var rec func(i int32)
	rec = func(i int32) {
		for _, c := range t.children(i) {
			switch t.kind(c) {
			case "import_specifier", "export_specifier":
				if n := t.field(c, "name"); n >= 0 {
					names = append(names, unquote(t.text(n)))
				}
			case "import_clause", "named_imports", "export_clause":
				rec(c)
			case "namespace_import", "namespace_export":
				if n := t.childKind(c, "identifier"); n >= 0 {
					names = append(names, t.text(n))
				}
			case "identifier":
				if t.kind(i) == "import_clause" {
					names = append(names, t.text(c))
				}
			}
		}
	}
	rec(stmt)
	return names
}

// jsRequires records require("x") and dynamic import("x") calls anywhere,
// in document order: the tree's and those lexed from the function bodies
// left out of the parse (skip_js.go).
func jsRequires(x *extractor) {
	t := x.t
	type call struct {
		at, row    uint32
		kind, path string
	}
	var lexed []call
	keep := func(at, row uint32, kind, path string) { lexed = append(lexed, call{at, row, kind, path}) }
	for _, sp := range x.bodies {
		if sp.fn {
			jsBodyRequires(t.src, sp, keep)
		}
	}
	k := 0
	flush := func(before uint32) {
		for ; k < len(lexed) && lexed[k].at < before; k++ {
			x.impLine(int(lexed[k].row)+1, lexed[k].path, lexed[k].kind, nil)
		}
	}
	defer flush(^uint32(0))
	for i := range t.nodes {
		if t.kind(int32(i)) != "call_expression" {
			continue
		}
		fn := t.field(int32(i), "function")
		kind := ""
		switch {
		case t.kind(fn) == "import":
			kind = "import"
		case t.kind(fn) == "identifier" && t.text(fn) == "require":
			kind = "require"
		default:
			continue
		}
		args := t.field(int32(i), "arguments")
		if args < 0 {
			continue
		}
		if s := t.nodes[args].first; s >= 0 && t.kind(s) == "string" {
			flush(t.nodes[i].start)
			x.imp(int32(i), unquote(t.text(s)), kind, nil)
		}
	}
}
