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
//     compared after collapsing white space. An allow rule covers a command
//     only when SplitCommand finds it simple and every part is covered by
//     some allow rule. A deny rule refuses when any part, or any text inside
//     $(…), `…` or (…), matches after dropping leading VAR=value words and
//     wrapper programs (sudo, env, xargs, …).
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
		for _, seg := range denySegments(in.Command) {
			if commandMatch(r.Pattern, seg) {
				return true
			}
		}
		return false
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

// commandAllowed reports whether the allow rules for run_command cover the
// command of input.
func commandAllowed(rules []Rule, input json.RawMessage) bool {
	var own []Rule
	for _, r := range rules {
		if r.Tool != "run_command" {
			continue
		}
		if !r.HasPattern {
			return true
		}
		own = append(own, r)
	}
	if len(own) == 0 {
		return false
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	parts, simple := SplitCommand(in.Command)
	if !simple || len(parts) == 0 {
		return false
	}
	for _, part := range parts {
		covered := false
		for _, r := range own {
			if commandMatch(r.Pattern, part) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

// commandMatch matches one command part against a run_command pattern.
func commandMatch(pattern, part string) bool {
	words := strings.Fields(part)
	if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
		pw := strings.Fields(prefix)
		if len(pw) == 0 || len(words) < len(pw) {
			return false
		}
		for i := range pw {
			if words[i] != pw[i] {
				return false
			}
		}
		return true
	}
	return strings.Join(words, " ") == strings.Join(strings.Fields(pattern), " ")
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

// SplitCommand splits a shell command into its parts at &&, ||, ;, |, & and
// newlines, trimmed, empty parts dropped. simple is false when the command
// has constructs this splitter cannot judge: command substitution ($( or
// backquote), subshells or groups ( ( ) ), input redirection, or output
// redirection other than 2>&1 and >/dev/null. Quotes are not parsed: an
// operator inside quotes splits too, which can only add parts, never hide
// one. (A real shell parser replaces this in a later issue.)
func SplitCommand(cmd string) (parts []string, simple bool) {
	simple = true
	probe := cmd
	for _, ok := range []string{"2>&1", "2> /dev/null", "2>/dev/null", "> /dev/null", ">/dev/null"} {
		probe = strings.ReplaceAll(probe, ok, " ")
	}
	if strings.ContainsAny(probe, "`<>()") || strings.Contains(probe, "$(") {
		simple = false
	}
	return splitAt(probe, "&&", "||", ";", "|", "&", "\n"), simple
}

func splitAt(s string, seps ...string) []string {
	for _, sep := range seps[1:] {
		s = strings.ReplaceAll(s, sep, seps[0])
	}
	var out []string
	for _, p := range strings.Split(s, seps[0]) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// denySegments returns every piece of cmd a deny rule is checked against:
// the parts split at operators and at $( ` ( ) { }, each with leading
// VAR=value words and wrapper programs removed.
func denySegments(cmd string) []string {
	segs := splitAt(cmd, "&&", "||", ";", "|", "&", "\n", "$(", "`", "(", ")", "{", "}")
	out := make([]string, 0, len(segs))
	for _, s := range segs {
		words := strings.Fields(s)
		for len(words) > 0 && (isAssignment(words[0]) || RunsOtherPrograms(words[0]) || strings.HasPrefix(words[0], "-")) {
			words = words[1:]
		}
		out = append(out, s)
		if len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	return out
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	return i > 0 && !strings.ContainsAny(w[:i], "/-.")
}

// wrappers run another program given as their arguments.
var wrappers = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "fish": true, "env": true, "xargs": true,
	"sudo": true, "doas": true, "eval": true, "exec": true, "nohup": true, "time": true,
	"timeout": true, "nice": true, "command": true, "builtin": true, "watch": true, "stdbuf": true,
}

// RunsOtherPrograms reports whether prog is a wrapper that runs another
// program from its arguments (sh, bash, env, xargs, sudo, eval, timeout, …),
// so approving it would approve anything.
func RunsOtherPrograms(prog string) bool {
	return wrappers[path.Base(prog)]
}

// CommandPrograms returns the program (first word) of each part of cmd as
// split by SplitCommand. ok is false when the command is not simple, is
// empty, or a part starts with a VAR=value assignment.
func CommandPrograms(cmd string) (progs []string, ok bool) {
	parts, simple := SplitCommand(cmd)
	if !simple || len(parts) == 0 {
		return nil, false
	}
	for _, p := range parts {
		w := strings.Fields(p)[0]
		if isAssignment(w) {
			return nil, false
		}
		progs = append(progs, w)
	}
	return progs, true
}
