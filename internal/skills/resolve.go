package skills

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Active is a skill that applies to a prompt (skills/resolve): why it
// applies, where it comes from, and its body with {{param}} filled.
type Active = protocol.ActiveSkill

// Resolve returns the skills that apply to prompt and paths (root-relative,
// "/"), each once, in this order: the skill named by a leading /name, then
// skills with a trigger word in the prompt, then skills whose paths globs
// match one of paths, each group in the Set's order. A /name that names no
// skill is not an error: the prompt is then matched as usual.
func (s *Set) Resolve(prompt string, paths []string) []Active {
	out := []Active{}
	if s == nil {
		return out
	}
	taken := map[string]bool{}
	add := func(sk *Skill, reason string, args map[string]string, all string) {
		if taken[sk.Name] {
			return
		}
		taken[sk.Name] = true
		out = append(out, Active{Name: sk.Name, Reason: reason, Source: sk.Source, Text: sk.Fill(args, all)})
	}
	if name, rest, ok := slashCommand(prompt); ok {
		if sk := s.Get(name); sk != nil {
			args := sk.bind(rest)
			add(sk, "command /"+sk.Name, args, strings.TrimSpace(rest))
		}
	}
	for _, sk := range s.Skills {
		for i, re := range sk.triggers {
			if re.MatchString(prompt) {
				add(sk, fmt.Sprintf("trigger %q", sk.Triggers[i]), nil, "")
				break
			}
		}
	}
	for _, sk := range s.Skills {
		if reason := sk.matchPaths(paths); reason != "" {
			add(sk, reason, nil, "")
		}
	}
	return out
}

// Get returns the skill called name (case-insensitive), or nil.
func (s *Set) Get(name string) *Skill {
	for _, sk := range s.Skills {
		if strings.EqualFold(sk.Name, name) {
			return sk
		}
	}
	return nil
}

func (sk *Skill) matchPaths(paths []string) string {
	for _, g := range sk.Paths {
		for _, p := range paths {
			p = strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "./")
			if ok, _ := doublestar.Match(g, p); ok {
				return fmt.Sprintf("path %q matches %q", p, g)
			}
		}
	}
	return ""
}

var slashRe = regexp.MustCompile(`^/([A-Za-z0-9][A-Za-z0-9._-]*)(?:\s+|$)`)

// slashCommand splits a prompt that starts with /name into the name and
// the rest (the arguments).
func slashCommand(prompt string) (name, rest string, ok bool) {
	p := strings.TrimLeft(prompt, " \t\r\n")
	m := slashRe.FindStringSubmatchIndex(p)
	if m == nil {
		return "", "", false
	}
	return p[m[2]:m[3]], p[m[1]:], true
}

// bind parses arguments: key=value (a declared param; quotes allowed) and
// positional words filling the remaining params in declaration order. The
// last positional param takes what is left of the line.
func (sk *Skill) bind(rest string) map[string]string {
	args := map[string]string{}
	declared := map[string]bool{}
	for _, p := range sk.Params {
		declared[p.Name] = true
	}
	var positional []string
	for _, w := range splitArgs(rest) {
		if k, v, ok := strings.Cut(w, "="); ok && declared[k] {
			args[k] = v
			continue
		}
		positional = append(positional, w)
	}
	var free []string
	for _, p := range sk.Params {
		if _, ok := args[p.Name]; !ok {
			free = append(free, p.Name)
		}
	}
	for i, name := range free {
		if i >= len(positional) {
			break
		}
		if i == len(free)-1 {
			args[name] = strings.Join(positional[i:], " ")
			break
		}
		args[name] = positional[i]
	}
	return args
}

// splitArgs splits on blanks, honouring "double" and 'single' quotes.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, has := false, rune(0), false
	for _, r := range s {
		switch {
		case in && r == quote:
			in = false
		case !in && (r == '"' || r == '\''):
			in, quote, has = true, r, true
		case !in && (r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			if cur.Len() > 0 || has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 || has {
		out = append(out, cur.String())
	}
	return out
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}`)

// Fill returns the body with each declared {{param}} replaced by its value
// in args, else its default, else ""; {{args}} (when not a declared param)
// becomes all, the whole argument line. Other {{...}} are left as written.
func (sk *Skill) Fill(args map[string]string, all string) string {
	vals := map[string]string{}
	for _, p := range sk.Params {
		v, ok := args[p.Name]
		if !ok {
			v = p.Default
		}
		vals[p.Name] = v
	}
	if _, ok := vals["args"]; !ok {
		vals["args"] = all
	}
	return placeholder.ReplaceAllStringFunc(sk.Body, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		if v, ok := vals[name]; ok {
			return v
		}
		return m
	})
}

// Block renders active skills for the agent's system prompt: one
// <skill name="..." reason="..."> element per skill, or "" when none.
func Block(active []Active) string {
	if len(active) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("The user's skills below apply to this task. Follow their instructions where they are relevant.\n")
	for _, a := range active {
		fmt.Fprintf(&b, "\n<skill name=%q source=%q reason=%q>\n%s\n</skill>\n", a.Name, a.Source, a.Reason, a.Text)
	}
	return b.String()
}
