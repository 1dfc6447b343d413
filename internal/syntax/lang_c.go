package syntax

import "strings"

// extractC reads C and C++: function definitions (method when defined in a
// class or as `T::f`, container: the class), struct/union (struct), class,
// enum with its enumerators (constant), typedef and `using X = ...`
// (type), namespace (module, nested as "a::b"), class and struct fields
// and member function declarations, top-level variables, `#define`
// (object-like: constant, function-like: function). Exported: not
// `static` at file scope; class members follow `public:`/`private:`
// sections (class default private, struct public). Imports: `#include
// "x.h"` (Kind "include") and `#include <x.h>` (Kind "include_system").
func extractC(x *extractor) {
	t := x.t
	x.refKinds = set("identifier", "type_identifier", "field_identifier", "namespace_identifier")
	x.stop = set("NULL", "nullptr", "size_t", "std", "int8_t", "int16_t", "int32_t", "int64_t",
		"uint8_t", "uint16_t", "uint32_t", "uint64_t", "bool", "string")
	static := func(i int32) bool {
		for _, c := range t.children(i) {
			if t.kind(c) == "storage_class_specifier" && t.text(c) == "static" {
				return true
			}
		}
		return false
	}
	var visit visitFunc
	visit = func(i int32, container string) (bool, string) {
		switch t.kind(i) {
		case "preproc_include":
			p := t.field(i, "path")
			kind := "include"
			if t.kind(p) == "system_lib_string" {
				kind = "include_system"
			}
			x.imp(i, unquote(t.text(p)), kind, nil)
		case "preproc_def":
			x.def(i, t.field(i, "name"), KindConstant, container, true)
		case "preproc_function_def":
			x.def(i, t.field(i, "name"), KindFunction, container, true)
		case "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
			"linkage_specification", "declaration_list", "template_declaration":
			return true, container
		case "namespace_definition":
			name := t.field(i, "name")
			inner := container
			if name >= 0 {
				x.def(i, name, KindModule, container, true)
				inner = joinScope(container, t.text(name))
			}
			if b := t.field(i, "body"); b >= 0 {
				x.walk(b, inner, visit)
			}
		case "function_definition":
			decl := cFuncDeclarator(t, t.field(i, "declarator"))
			if decl < 0 {
				return false, container
			}
			name := t.field(decl, "declarator")
			switch t.kind(name) {
			case "qualified_identifier":
				scope, last := cQualified(t, name)
				kind, owner := KindFunction, container
				if scope != "" {
					kind, owner = KindMethod, joinScope(container, scope)
				}
				x.def(i, last, kind, owner, !static(i))
			case "identifier", "field_identifier", "destructor_name", "operator_name":
				x.def(i, name, KindFunction, container, !static(i))
			}
		case "struct_specifier", "union_specifier", "class_specifier", "enum_specifier":
			cRecord(x, i, container, visit)
		case "type_definition":
			for _, c := range t.children(i) {
				if t.kind(c) == "struct_specifier" || t.kind(c) == "union_specifier" || t.kind(c) == "enum_specifier" || t.kind(c) == "class_specifier" {
					cRecord(x, c, container, visit)
				}
			}
			for _, d := range t.fields(i, "declarator") {
				if n := cDeclName(t, d); n >= 0 {
					x.def(i, n, KindType, container, true)
				}
			}
		case "alias_declaration":
			x.def(i, t.field(i, "name"), KindType, container, true)
		case "declaration":
			if hasWord(t.text(i), "extern") && t.childKind(i, "storage_class_specifier") >= 0 {
				return false, container
			}
			for _, c := range t.children(i) {
				switch t.kind(c) {
				case "struct_specifier", "union_specifier", "class_specifier", "enum_specifier":
					cRecord(x, c, container, visit)
				}
			}
			for _, d := range t.fields(i, "declarator") {
				if cFuncDeclarator(t, d) >= 0 {
					continue // a prototype, not a definition
				}
				if n := cDeclName(t, d); n >= 0 {
					x.def(i, n, KindVariable, container, !static(i))
				}
			}
		}
		return false, container
	}
	x.walk(0, "", visit)
}

// cRecord records a struct, union, class or enum that has a body, with its
// members.
func cRecord(x *extractor, i int32, container string, visit visitFunc) {
	t := x.t
	name := t.field(i, "name")
	body := t.field(i, "body")
	if name < 0 || body < 0 {
		return
	}
	kind := map[string]SymbolKind{"struct_specifier": KindStruct, "union_specifier": KindStruct,
		"class_specifier": KindClass, "enum_specifier": KindEnum}[t.kind(i)]
	x.def(i, name, kind, container, true)
	owner := joinScope(container, t.text(name))
	if kind == KindEnum {
		for _, e := range t.children(body) {
			if t.kind(e) == "enumerator" {
				x.def(e, t.field(e, "name"), KindConstant, owner, true)
			}
		}
		return
	}
	public := kind != KindClass
	for _, m := range t.children(body) {
		switch t.kind(m) {
		case "access_specifier":
			public = strings.TrimSpace(t.text(m)) == "public"
		case "field_declaration":
			for _, d := range t.fields(m, "declarator") {
				if fd := cFuncDeclarator(t, d); fd >= 0 {
					x.def(m, cDeclName(t, d), KindMethod, owner, public)
				} else if n := cDeclName(t, d); n >= 0 {
					x.def(m, n, KindField, owner, public)
				}
			}
			for _, c := range t.children(m) {
				switch t.kind(c) {
				case "struct_specifier", "union_specifier", "class_specifier", "enum_specifier":
					cRecord(x, c, owner, visit)
				}
			}
		case "function_definition":
			decl := cFuncDeclarator(t, t.field(m, "declarator"))
			if decl >= 0 {
				x.def(m, t.field(decl, "declarator"), KindMethod, owner, public)
			}
		case "template_declaration", "declaration":
			// Member templates and constructors declared without a type.
			for _, c := range t.children(m) {
				if t.kind(c) == "function_definition" {
					if decl := cFuncDeclarator(t, t.field(c, "declarator")); decl >= 0 {
						x.def(c, t.field(decl, "declarator"), KindMethod, owner, public)
					}
				}
			}
			for _, d := range t.fields(m, "declarator") {
				if cFuncDeclarator(t, d) >= 0 {
					x.def(m, cDeclName(t, d), KindMethod, owner, public)
				}
			}
		}
	}
}

// cFuncDeclarator finds the function_declarator inside a declarator
// wrapped in pointer, reference or parenthesized declarators; -1 if none.
func cFuncDeclarator(t *tree, d int32) int32 {
	for d >= 0 {
		switch t.kind(d) {
		case "function_declarator":
			return d
		case "pointer_declarator", "reference_declarator", "parenthesized_declarator", "attributed_declarator":
			if n := t.field(d, "declarator"); n >= 0 {
				d = n
			} else {
				d = t.nodes[d].first
			}
		default:
			return -1
		}
	}
	return -1
}

// cDeclName returns the declared name node of a declarator: the identifier
// under init, pointer, array, function and reference declarators.
func cDeclName(t *tree, d int32) int32 {
	for d >= 0 {
		switch t.kind(d) {
		case "identifier", "type_identifier", "field_identifier", "primitive_type":
			if t.kind(d) == "primitive_type" {
				return -1
			}
			return d
		case "init_declarator", "pointer_declarator", "array_declarator", "function_declarator",
			"reference_declarator", "parenthesized_declarator", "attributed_declarator":
			if n := t.field(d, "declarator"); n >= 0 {
				d = n
			} else {
				d = t.nodes[d].first
			}
		default:
			return -1
		}
	}
	return -1
}

// cQualified splits `a::B::f` into its scope "a::B" and its last name node.
func cQualified(t *tree, q int32) (string, int32) {
	var scope []string
	for t.kind(q) == "qualified_identifier" {
		if s := t.field(q, "scope"); s >= 0 {
			scope = append(scope, t.text(s))
		}
		q = t.field(q, "name")
	}
	return strings.Join(scope, "::"), q
}

func joinScope(a, b string) string {
	if a == "" {
		return b
	}
	return a + "::" + b
}
