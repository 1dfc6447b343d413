package syntax

import "strings"

// extractRust reads a Rust source_file: fn (method inside impl or trait,
// container: the impl's type or the trait), struct, union, enum, trait
// (interface), type alias, const/static (constant), inline `mod x { }`
// (module, container of its items), struct fields; `mod x;` and `use`
// declarations as imports. Exported: a `pub` visibility modifier; items
// of a trait and of a trait impl follow the trait.
func extractRust(x *extractor) {
	t := x.t
	x.refKinds = set("identifier", "type_identifier", "field_identifier")
	x.stop = set("self", "Self", "crate", "super", "_")
	pub := func(i int32) bool { return t.childKind(i, "visibility_modifier") >= 0 }
	var visit visitFunc
	visit = func(i int32, container string) (bool, string) {
		switch t.kind(i) {
		case "function_item", "function_signature_item":
			kind := KindFunction
			exported := pub(i)
			if p := t.parent(i); p >= 0 && t.kind(p) == "declaration_list" {
				if owner := t.parent(p); t.kind(owner) == "impl_item" || t.kind(owner) == "trait_item" {
					kind = KindMethod
					if t.kind(owner) == "trait_item" || t.field(owner, "trait") >= 0 {
						exported = exported || pub(owner) || t.kind(owner) == "impl_item"
					}
				}
			}
			x.def(i, t.field(i, "name"), kind, container, exported)
		case "struct_item", "union_item":
			name := t.field(i, "name")
			x.def(i, name, KindStruct, container, pub(i))
			if body := t.field(i, "body"); body >= 0 && t.kind(body) == "field_declaration_list" {
				for _, f := range t.children(body) {
					if t.kind(f) == "field_declaration" {
						x.def(f, t.field(f, "name"), KindField, t.text(name), pub(f))
					}
				}
			}
		case "enum_item":
			x.def(i, t.field(i, "name"), KindEnum, container, pub(i))
		case "trait_item":
			name := t.field(i, "name")
			x.def(i, name, KindInterface, container, pub(i))
			if body := t.field(i, "body"); body >= 0 {
				x.walk(body, t.text(name), visit)
			}
		case "impl_item":
			if body := t.field(i, "body"); body >= 0 {
				x.walk(body, rustTypeName(t, t.field(i, "type")), visit)
			}
		case "type_item":
			x.def(i, t.field(i, "name"), KindType, container, pub(i))
		case "const_item", "static_item":
			x.def(i, t.field(i, "name"), KindConstant, container, pub(i))
		case "mod_item":
			name := t.field(i, "name")
			body := t.field(i, "body")
			if body < 0 {
				x.imp(i, t.text(name), "mod", nil)
				x.defNames[name] = true
				return false, container
			}
			x.def(i, name, KindModule, container, pub(i))
			inner := t.text(name)
			if container != "" {
				inner = container + "::" + inner
			}
			x.walk(body, inner, visit)
		case "use_declaration":
			if arg := t.field(i, "argument"); arg >= 0 {
				rustUse(x, i, arg, "")
			}
		case "macro_definition":
			x.def(i, t.field(i, "name"), KindFunction, container, false)
		}
		return false, container
	}
	x.walk(0, "", visit)
}

// rustUse records one use tree: `a::b` (Path "a::b"), `a::{b, c}` (Path
// "a", Names b, c), `a::b as c`, `a::*`; nested groups are flattened with
// their prefix.
func rustUse(x *extractor, at, arg int32, prefix string) {
	t := x.t
	join := func(p, s string) string {
		if p == "" {
			return s
		}
		return p + "::" + s
	}
	switch t.kind(arg) {
	case "use_as_clause":
		x.imp(at, join(prefix, t.text(t.field(arg, "path"))), "use", nil)
	case "use_wildcard":
		p := strings.TrimSuffix(strings.TrimSpace(t.text(arg)), "*")
		x.imp(at, join(prefix, strings.TrimSuffix(p, "::")), "use", []string{"*"})
	case "scoped_use_list":
		path := join(prefix, t.text(t.field(arg, "path")))
		if l := t.field(arg, "list"); l >= 0 {
			rustUseList(x, at, l, path)
		}
	case "use_list":
		rustUseList(x, at, arg, prefix)
	default:
		x.imp(at, join(prefix, t.text(arg)), "use", nil)
	}
}

// rustUseList records `{a, b, c::d, e::{f}}` under path: plain names go in
// one import's Names, nested paths and groups get their own import.
func rustUseList(x *extractor, at, list int32, path string) {
	t := x.t
	var names []string
	for _, c := range t.children(list) {
		switch t.kind(c) {
		case "identifier", "self", "type_identifier":
			names = append(names, t.text(c))
		case "use_as_clause":
			if p := t.field(c, "path"); t.kind(p) == "identifier" {
				names = append(names, t.text(p))
			} else {
				rustUse(x, at, c, path)
			}
		default:
			rustUse(x, at, c, path)
		}
	}
	if len(names) > 0 || path != "" && len(t.children(list)) == 0 {
		x.imp(at, path, "use", names)
	}
}

// rustTypeName returns the base name of an impl's type: "Foo" for Foo,
// Foo<T>, path::Foo, &Foo.
func rustTypeName(t *tree, typ int32) string {
	for typ >= 0 {
		switch t.kind(typ) {
		case "type_identifier", "identifier":
			return t.text(typ)
		case "generic_type":
			typ = t.field(typ, "type")
		case "scoped_type_identifier":
			typ = t.field(typ, "name")
		case "reference_type", "pointer_type":
			typ = t.field(typ, "type")
		default:
			return t.text(typ)
		}
	}
	return ""
}
