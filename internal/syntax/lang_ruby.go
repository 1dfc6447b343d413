package syntax

// extractRuby reads Ruby: class, module (container of what it holds,
// nested as "A::B"), def (method inside a class or module, else function),
// `def self.x` (method), constant assignments (constant). Ruby has no
// export syntax: every definition counts as exported except methods
// after a bare `private`/`protected` line are not tracked (all exported).
// Imports: `require "x"` (Kind "require"), `require_relative "x"` (Kind
// "require_relative"), `load "x"` (Kind "load").
func extractRuby(x *extractor) {
	t := x.t
	x.refKinds = set("identifier", "constant")
	x.stop = set("require", "require_relative", "attr_reader", "attr_accessor", "attr_writer",
		"puts", "private", "protected", "public", "include", "extend", "raise", "new")
	var visit visitFunc
	visit = func(i int32, container string) (bool, string) {
		switch t.kind(i) {
		case "class", "module":
			name := t.field(i, "name")
			kind := KindClass
			if t.kind(i) == "module" {
				kind = KindModule
			}
			x.def(i, name, kind, container, true)
			inner := t.text(name)
			if container != "" {
				inner = container + "::" + inner
			}
			if name >= 0 {
				x.walk(i, inner, visit)
			}
		case "body_statement", "begin_block":
			return true, container
		case "method":
			kind := KindFunction
			if container != "" {
				kind = KindMethod
			}
			x.def(i, t.field(i, "name"), kind, container, true)
		case "singleton_method":
			x.def(i, t.field(i, "name"), KindMethod, container, true)
		case "assignment":
			if l := t.field(i, "left"); t.kind(l) == "constant" {
				x.def(i, l, KindConstant, container, true)
			}
		case "call":
			m := t.field(i, "method")
			if t.field(i, "receiver") >= 0 || m < 0 {
				return false, container
			}
			switch name := t.text(m); name {
			case "require", "require_relative", "load":
				args := t.field(i, "arguments")
				if args >= 0 {
					if s := t.nodes[args].first; s >= 0 && t.kind(s) == "string" {
						if c := t.childKind(s, "string_content"); c >= 0 && t.nodes[s].first == c && t.nodes[c].next < 0 {
							x.imp(i, t.text(c), name, nil)
						}
					}
				}
			}
		}
		return false, container
	}
	x.walk(0, "", visit)
}
