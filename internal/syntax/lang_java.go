package syntax

import "strings"

// extractJava reads a Java compilation unit: class, interface, enum,
// record and annotation type declarations (nested ones with the outer type
// as container), methods and constructors (method), fields, enum constants
// (constant). Exported: a `public` modifier, or membership of an exported
// interface (implicitly public). Imports: `import a.b.C;` (Path "a.b.C"),
// `import a.b.*;` (Path "a.b", Names ["*"]), static imports alike.
func extractJava(x *extractor) {
	t := x.t
	x.refKinds = set("identifier", "type_identifier")
	x.stop = set("String", "Object", "Override", "var")
	public := func(i int32) bool {
		m := t.childKind(i, "modifiers")
		return m >= 0 && hasWord(t.text(m), "public")
	}
	type owner struct {
		name     string
		iface    bool
		exported bool
	}
	var walk func(body int32, o owner)
	walk = func(body int32, o owner) {
		for _, i := range t.children(body) {
			exp := public(i) || o.iface && o.exported
			switch k := t.kind(i); k {
			case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
				kind := map[string]SymbolKind{"class_declaration": KindClass, "interface_declaration": KindInterface,
					"enum_declaration": KindEnum, "record_declaration": KindClass, "annotation_type_declaration": KindInterface}[k]
				name := t.field(i, "name")
				x.def(i, name, kind, o.name, exp)
				if b := t.field(i, "body"); b >= 0 {
					walk(b, owner{name: t.text(name), iface: kind == KindInterface, exported: exp})
				}
			case "method_declaration", "constructor_declaration", "compact_constructor_declaration":
				x.def(i, t.field(i, "name"), KindMethod, o.name, exp)
			case "field_declaration", "constant_declaration":
				for _, d := range t.fields(i, "declarator") {
					x.def(i, t.field(d, "name"), KindField, o.name, exp)
				}
			case "enum_constant":
				x.def(i, t.field(i, "name"), KindConstant, o.name, o.exported)
			case "enum_body_declarations":
				walk(i, o)
			case "import_declaration":
				path, names := "", []string(nil)
				for _, c := range t.children(i) {
					switch t.kind(c) {
					case "scoped_identifier", "identifier":
						path = t.text(c)
					case "asterisk":
						names = []string{"*"}
					}
				}
				kind := "import"
				if hasWord(t.text(i), "static") {
					kind = "import_static"
				}
				x.imp(i, strings.Join(strings.Fields(path), ""), kind, names)
			}
		}
	}
	walk(0, owner{})
}
