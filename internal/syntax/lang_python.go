package syntax

import "strings"

// extractPython reads a Python module: def (method inside a class,
// container: the class), class, module-level assignments (ALL_CAPS names
// as constant, others as variable) and class-level assignments (field).
// Exported: the name does not start with "_". Imports: `import a.b`
// (Kind "import") and `from .m import x` (Kind "from", leading dots kept).
func extractPython(x *extractor) {
	t := x.t
	x.refKinds = set("identifier")
	x.stop = set("self", "cls", "print", "len", "str", "int", "dict", "list", "isinstance",
		"range", "super", "object", "bool", "float", "tuple", "set", "type", "_")
	exported := func(name int32) bool { return !strings.HasPrefix(t.text(name), "_") }
	var visit visitFunc
	visit = func(i int32, container string) (bool, string) {
		switch t.kind(i) {
		case "decorated_definition":
			return true, container
		case "if_statement", "else_clause", "try_statement", "except_clause", "finally_clause", "block":
			// Definitions under `if TYPE_CHECKING:` or try/except import
			// fallbacks are still module (or class) level.
			return true, container
		case "function_definition":
			name := t.field(i, "name")
			kind := KindFunction
			if pythonInClass(t, i) {
				kind = KindMethod
			}
			x.def(pythonDefRange(t, i), name, kind, container, exported(name))
		case "class_definition":
			name := t.field(i, "name")
			x.def(pythonDefRange(t, i), name, KindClass, container, exported(name))
			if body := t.field(i, "body"); body >= 0 {
				x.walk(body, t.text(name), visit)
			}
		case "expression_statement":
			a := t.childKind(i, "assignment")
			if a < 0 {
				return false, container
			}
			left := t.field(a, "left")
			if t.kind(left) != "identifier" {
				return false, container
			}
			name := t.text(left)
			kind := KindVariable
			switch {
			case container != "":
				kind = KindField
			case strings.ToUpper(name) == name && strings.IndexFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0:
				kind = KindConstant
			}
			x.def(i, left, kind, container, exported(left))
		case "import_statement":
			for _, n := range t.fields(i, "name") {
				if t.kind(n) == "aliased_import" {
					n = t.field(n, "name")
				}
				x.imp(i, t.text(n), "import", nil)
			}
		case "import_from_statement":
			var names []string
			for _, n := range t.fields(i, "name") {
				if t.kind(n) == "aliased_import" {
					n = t.field(n, "name")
				}
				names = append(names, t.text(n))
			}
			x.imp(i, strings.Join(strings.Fields(t.text(t.field(i, "module_name"))), ""), "from", names)
		case "future_import_statement":
		}
		return false, container
	}
	x.walk(0, "", visit)
}

// pythonInClass reports whether the def i sits directly in a class body.
func pythonInClass(t *tree, i int32) bool {
	p := t.parent(i)
	if t.kind(p) == "decorated_definition" {
		p = t.parent(p)
	}
	return t.kind(p) == "block" && t.kind(t.parent(p)) == "class_definition"
}

// pythonDefRange includes decorators in a definition's range.
func pythonDefRange(t *tree, i int32) int32 {
	if p := t.parent(i); p >= 0 && t.kind(p) == "decorated_definition" {
		return p
	}
	return i
}
