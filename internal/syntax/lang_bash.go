package syntax

// extractBash reads a shell script: function definitions (exported: every
// function is visible to the script that sources it) and `source f` /
// `. f` commands as imports (Kind "source"). Refs are command names and
// variable names, so a call to a function defined in a sourced file links.
func extractBash(x *extractor) {
	t := x.t
	x.refKinds = set("command_name", "variable_name")
	x.stop = set("echo", "printf", "cd", "test", "exit", "return", "local", "export",
		"set", "shift", "read", "true", "false", "source", "eval", "exec")
	for i := range t.nodes {
		switch t.kind(int32(i)) {
		case "function_definition":
			x.def(int32(i), t.field(int32(i), "name"), KindFunction, "", true)
		case "command":
			name := t.field(int32(i), "name")
			if name < 0 {
				continue
			}
			if cmd := t.text(name); cmd == "source" || cmd == "." {
				if arg := t.field(int32(i), "argument"); arg >= 0 {
					x.imp(int32(i), unquote(t.text(arg)), "source", nil)
				}
			}
		}
	}
}
