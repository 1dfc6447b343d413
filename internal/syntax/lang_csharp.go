package syntax

// extractCSharp reads C#: namespaces (module, block or file-scoped,
// container of what they hold), class, record (class), struct, interface,
// enum (members as constant), delegate (type), methods, constructors
// (method), properties and fields (field). Exported: a `public` modifier,
// or membership of an exported interface. Imports: `using A.B;` (Kind
// "using"; aliases and `using static` alike, Path the namespace or type).
func extractCSharp(x *extractor) {
	t := x.t
	x.refKinds = set("identifier")
	x.stop = set("var", "value", "string", "nameof", "dynamic")
	public := func(i int32) bool {
		for _, c := range t.children(i) {
			if t.kind(c) == "modifier" && t.text(c) == "public" {
				return true
			}
		}
		return false
	}
	kinds := map[string]SymbolKind{"class_declaration": KindClass, "record_declaration": KindClass,
		"record_struct_declaration": KindStruct, "struct_declaration": KindStruct,
		"interface_declaration": KindInterface, "enum_declaration": KindEnum}
	type owner struct {
		name            string
		iface, exported bool
	}
	var walk func(body int32, o owner)
	walk = func(body int32, o owner) {
		for _, i := range t.children(body) {
			exp := public(i) || o.iface && o.exported
			switch k := t.kind(i); k {
			case "using_directive":
				n := t.field(i, "name")
				if n < 0 {
					for _, c := range t.children(i) {
						if k := t.kind(c); k == "qualified_name" || k == "identifier" {
							n = c
						}
					}
				}
				if n >= 0 {
					x.imp(i, t.text(n), "using", nil)
				}
			case "namespace_declaration", "file_scoped_namespace_declaration":
				name := t.field(i, "name")
				x.def(i, name, KindModule, o.name, true)
				inner := owner{name: joinDot(o.name, t.text(name)), exported: true}
				if b := t.field(i, "body"); b >= 0 {
					walk(b, inner)
				} else {
					walk(i, inner)
				}
			case "declaration_list":
				walk(i, o)
			case "class_declaration", "record_declaration", "record_struct_declaration", "struct_declaration",
				"interface_declaration", "enum_declaration":
				name := t.field(i, "name")
				x.def(i, name, kinds[k], o.name, exp)
				b := t.field(i, "body")
				if b < 0 {
					continue
				}
				inner := owner{name: t.text(name), iface: k == "interface_declaration", exported: exp}
				if k == "enum_declaration" {
					for _, m := range t.children(b) {
						if t.kind(m) == "enum_member_declaration" {
							x.def(m, t.field(m, "name"), KindConstant, inner.name, exp)
						}
					}
					continue
				}
				walk(b, inner)
			case "delegate_declaration":
				x.def(i, t.field(i, "name"), KindType, o.name, exp)
			case "method_declaration", "constructor_declaration", "destructor_declaration", "operator_declaration":
				x.def(i, t.field(i, "name"), KindMethod, o.name, exp)
			case "property_declaration", "event_declaration":
				x.def(i, t.field(i, "name"), KindField, o.name, exp)
			case "field_declaration", "event_field_declaration":
				if v := t.childKind(i, "variable_declaration"); v >= 0 {
					for _, d := range t.children(v) {
						if t.kind(d) == "variable_declarator" {
							n := t.field(d, "name")
							if n < 0 {
								n = t.childKind(d, "identifier")
							}
							x.def(i, n, KindField, o.name, exp)
						}
					}
				}
			}
		}
	}
	walk(0, owner{})
}

func joinDot(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}
