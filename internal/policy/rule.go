package policy

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Rule is one allow or deny entry: a tool name, or `tool(pattern)` in the
// Claude Code style (addendum §5). What a pattern matches in this slice:
//
//   - run_command: `prefix:*` matches a command whose words start with the
//     words of prefix (`npm test:*` matches "npm test" and "npm test -- -u",
//     not "npm tests"); any other pattern matches the whole command, words
//     compared after shell unquoting. The command is parsed with
//     mvdan.cc/sh/v3/syntax into its simple commands (see shell.go). An
//     allow rule covers a command only when nothing in it is unjudgeable
//     (a redirect to a file, a function, a computed program, …) and every
//     part is covered by some allow rule, after benign wrappers (env,
//     timeout, nice, xargs, …) and VAR=value prefixes are removed. A deny
//     rule refuses when it matches any part, before or after unwrapping, any
//     tail of a wrapper's words (sudo -u x rm), or a part whose program is
//     computed at run time; a command that does not parse is matched on
//     its text split at operators.
//   - a tool with `path`, `from` or `to` string inputs (read_file,
//     write_file, replace_text, delete_path, move_path, list_files, …): the
//     pattern is a doublestar glob (`src/**`, `**/*.go`) matched against each
//     of them, relative to the workspace root with "/". An allow rule needs
//     every one to be inside the root and to match; a deny rule refuses when
//     any one matches.
//   - anything else (apply_patch's patch, MCP arguments, search queries):
//     not evaluated yet, so an allow rule with a pattern never matches and a
//     deny rule with a pattern always matches (fail closed).
type Rule struct {
	Tool       string
	Pattern    string
	HasPattern bool
}

// ParseRule parses `tool` or `tool(pattern)`. The tool name is letters,
// digits, '_', '-' and '.'; the pattern is not empty. A glob pattern of a
// tool other than run_command must be a valid doublestar pattern.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, rest, hasPattern := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "" {
		return Rule{}, fmt.Errorf("rule %q has no tool name", s)
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return Rule{}, fmt.Errorf("rule %q: tool name has %q", s, c)
		}
	}
	if !hasPattern {
		return Rule{Tool: name}, nil
	}
	if !strings.HasSuffix(rest, ")") {
		return Rule{}, fmt.Errorf("rule %q: missing closing parenthesis", s)
	}
	pat := strings.TrimSpace(strings.TrimSuffix(rest, ")"))
	if pat == "" {
		return Rule{}, fmt.Errorf("rule %q: empty pattern", s)
	}
	if name != "run_command" && !doublestar.ValidatePattern(pat) {
		return Rule{}, fmt.Errorf("rule %q: invalid glob pattern", s)
	}
	return Rule{Tool: name, Pattern: pat, HasPattern: true}, nil
}

// String gives the rule back in its source form.
func (r Rule) String() string {
	if !r.HasPattern {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// matchAllow reports whether an allow rule covers input (tools other than
// run_command, which commandAllowed handles).
func (r Rule) matchAllow(input json.RawMessage, root string) bool {
	if !r.HasPattern {
		return true
	}
	paths, ok := pathInputs(input)
	if !ok || len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		rel, inside := relPath(p, root)
		if !inside || !globMatch(r.Pattern, rel) {
			return false
		}
	}
	return true
}

// matchDeny reports whether a deny rule refuses input; what it cannot judge,
// it refuses.
func (r Rule) matchDeny(input json.RawMessage, root string) bool {
	if !r.HasPattern {
		return true
	}
	if r.Tool == "run_command" {
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(input, &in) != nil {
			return true
		}
		return commandDenied(r.Pattern, in.Command)
	}
	paths, ok := pathInputs(input)
	if !ok || len(paths) == 0 {
		return true
	}
	for _, p := range paths {
		rel, _ := relPath(p, root)
		if globMatch(r.Pattern, rel) || globMatch(r.Pattern, strings.TrimPrefix(path.Clean(filepath.ToSlash(p)), "/")) {
			return true
		}
	}
	return false
}

// pathInputs returns the path, from and to string fields of a JSON object
// input; ok is false when input is not a JSON object.
func pathInputs(input json.RawMessage) ([]string, bool) {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil || in == nil {
		return nil, false
	}
	var out []string
	for _, k := range []string{"path", "from", "to"} {
		raw, ok := in[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// relPath turns p (relative to root, or absolute) into a clean root-relative
// path with "/". inside is false when it leaves the root or when p is
// absolute and no root is known.
func relPath(p, root string) (rel string, inside bool) {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		if root == "" {
			return filepath.ToSlash(filepath.Clean(p)), false
		}
		r, err := filepath.Rel(root, p)
		if err != nil {
			return filepath.ToSlash(filepath.Clean(p)), false
		}
		p = r
	}
	rel = path.Clean(filepath.ToSlash(p))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return rel, false
	}
	return rel, true
}

func globMatch(pattern, name string) bool {
	ok, err := doublestar.Match(pattern, name)
	return err == nil && ok
}
