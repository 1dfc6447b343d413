package policy

import (
	"encoding/json"
	"path"
	"strings"
)

// commandAllowed reports whether the allow rules for run_command cover the
// command of input: a bare `run_command` rule covers anything; pattern rules
// need an approvable command (see analyse) whose every part is harmless or
// matched by one of them.
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
	a := analyse(in.Command)
	if !a.approvable() {
		return false
	}
	for _, p := range a.parts {
		if p.harmless {
			continue
		}
		if p.opaque {
			return false
		}
		covered := false
		for _, r := range own {
			if matchWords(r.Pattern, p.inner, p.open, false) || matchWords(r.Pattern, p.words, false, false) {
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

// commandDenied reports whether a run_command deny pattern refuses cmd. It
// errs towards refusing: a part whose program is computed matches, a
// wrapper's every tail is tried, program paths are compared by base name,
// and a command that does not parse is matched on its text.
func commandDenied(pattern, cmd string) bool {
	a := analyse(cmd)
	if !a.parsed {
		for _, seg := range denySegments(cmd) {
			if matchWords(pattern, textWords(seg), false, true) {
				return true
			}
		}
		return false
	}
	for _, p := range a.parts {
		if p.opaque {
			return true
		}
		if matchWords(pattern, p.words, false, true) || matchWords(pattern, p.inner, p.open, true) {
			return true
		}
		for _, ws := range [][]word{p.words, p.inner} {
			if len(ws) == 0 || !ws[0].known || !RunsOtherPrograms(ws[0].s) {
				continue
			}
			for i := 1; i < len(ws); i++ {
				if matchWords(pattern, ws[i:], true, true) {
					return true
				}
			}
		}
	}
	return false
}

// matchWords matches a run_command pattern against the words of one part.
// A computed word never equals a pattern word for allow and equals any for
// deny; open (more arguments at run time) defeats an exact allow pattern and
// lets an exact deny pattern match a prefix of it. For deny, a program path
// also matches by its base name (/bin/rm matches rm).
func matchWords(pattern string, words []word, open, deny bool) bool {
	prefix, isPrefix := strings.CutSuffix(pattern, ":*")
	if !isPrefix {
		prefix = pattern
	}
	pw := strings.Fields(prefix)
	if len(pw) == 0 || len(words) == 0 {
		return false
	}
	switch {
	case isPrefix && len(words) < len(pw):
		return false
	case !isPrefix && !deny && (open || len(words) != len(pw)):
		return false
	case !isPrefix && deny && (len(words) > len(pw) || !open && len(words) != len(pw)):
		return false
	}
	for i := range min(len(pw), len(words)) {
		w := words[i]
		switch {
		case !w.known:
			if !deny {
				return false
			}
		case w.s == pw[i]:
		case deny && i == 0 && !strings.Contains(pw[0], "/") && path.Base(w.s) == pw[0]:
		default:
			return false
		}
	}
	return true
}

// textWords splits a fallback segment at white space into known words.
func textWords(s string) []word {
	f := strings.Fields(s)
	out := make([]word, len(f))
	for i, x := range f {
		out[i] = word{s: x, known: true}
	}
	return out
}

// SplitCommand parses a shell command (bash syntax, mvdan.cc/sh/v3/syntax)
// and returns the text of each simple command it runs, in source order:
// the operands of &&, ||, ;, &, | and |&, the commands inside subshells,
// groups, control flow, $(…), backquotes, <(…) and >(…), the parsed string
// of sh -c, bash -c and eval, and find -exec commands. Literal words are
// shown unquoted. simple is false when the command does not parse or holds
// something no rule can judge: a redirect that writes a file (2>&1 and
// >/dev/null are fine), a function definition, a program computed at run
// time, an assignment to PATH, LD_PRELOAD or similar, eval or sh -c of a
// computed string, wrapper options it does not know, arithmetic commands
// and coprocesses. A command that does not parse is split at operator
// characters instead, quotes ignored. An empty command has no parts and is
// simple.
func SplitCommand(cmd string) (parts []string, simple bool) {
	a := analyse(cmd)
	if !a.parsed {
		return splitAt(cmd, "&&", "||", ";", "|", "&", "\n"), false
	}
	for _, p := range a.parts {
		parts = append(parts, p.text)
	}
	return parts, len(a.unsafe) == 0
}

// CommandPrograms returns the program each part of cmd runs (SplitCommand's
// parts, after VAR=value prefixes and benign wrappers such as env, timeout,
// nice and xargs are removed; harmless parts such as cd, set and the outer
// `sh -c` are left out). ok is false when the command is not simple, runs
// nothing but harmless parts, or a program is computed at run time. The
// agent remembers these for allowSession (addendum §11); a wrapper that
// remains (sudo, sh with a script, …) is reported as itself, and
// RunsOtherPrograms tells the caller never to remember it.
func CommandPrograms(cmd string) (progs []string, ok bool) {
	a := analyse(cmd)
	if !a.approvable() {
		return nil, false
	}
	for _, p := range a.parts {
		if p.harmless {
			continue
		}
		if p.opaque || len(p.inner) == 0 || !p.inner[0].known {
			return nil, false
		}
		progs = append(progs, p.inner[0].s)
	}
	return progs, len(progs) > 0
}

// wrappers run another program given as their arguments.
var wrappers = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "env": true,
	"xargs": true, "sudo": true, "doas": true, "su": true, "eval": true, "exec": true, "nohup": true,
	"time": true, "timeout": true, "nice": true, "ionice": true, "command": true, "builtin": true,
	"watch": true, "stdbuf": true, "source": true, ".": true, "trap": true, "setsid": true,
	"chroot": true, "unshare": true, "nsenter": true, "strace": true, "flock": true,
	"parallel": true, "busybox": true, "script": true,
}

// RunsOtherPrograms reports whether prog is a wrapper that runs another
// program from its arguments (sh, bash, env, xargs, sudo, eval, timeout, …),
// so approving it would approve anything.
func RunsOtherPrograms(prog string) bool {
	return wrappers[path.Base(prog)]
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

// denySegments is the fallback for a command that does not parse: the text
// split at operators and at $( ` ( ) { }, each piece also without leading
// VAR=value words, wrapper programs and options.
func denySegments(cmd string) []string {
	segs := splitAt(cmd, "&&", "||", ";", "|", "&", "\n", "$(", "`", "(", ")", "{", "}", "'", "\"")
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
