package policy

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file turns a run_command string into the simple commands it runs,
// with mvdan.cc/sh/v3/syntax (bash dialect). Every construct that runs a
// command contributes its simple commands as parts: the operands of &&, ||,
// ;, & and pipes (| and |&), subshells ( … ), groups { …; }, if, while, for
// and case bodies, $( … ) and backquote substitutions (in arguments,
// assignments, redirect targets and unquoted here-documents), process
// substitutions <( … ) and >( … ), the string of `sh -c`, `bash -c`,
// `eval` and `trap` when it is a literal, and the command of `find -exec`.
// Constructs it cannot see through make the command not approvable: a parse
// error, a redirect that writes a file, a function definition, a program
// name that is not a literal ($CMD, $(…), globs), an assignment to a
// variable that changes what runs (PATH, LD_PRELOAD, …), eval of a
// non-literal string, arithmetic commands and coprocesses.

// maxCommandLen bounds the command text the parser reads, in bytes; a longer
// command is not parsed (never approved, deny rules matched on its text).
const maxCommandLen = 64 << 10

// internalErrorReason is recorded when checking a command panicked; the
// fuzz test fails on it.
const internalErrorReason = "internal error while checking the command"

// maxDepth bounds nested shell strings (sh -c "sh -c '…'").
const maxDepth = 8

// word is one shell word: its value when it is a literal (quotes and
// backslashes removed), or known false when it expands at run time.
type word struct {
	s     string
	known bool
}

// part is one simple command found in a command line.
type part struct {
	text  string // the command as written (literal words unquoted)
	words []word // program and arguments (assignments excluded)
	// inner is words with benign wrappers (env, nice, timeout, command,
	// nohup, exec, stdbuf, time, xargs) removed: the program that really
	// runs. It equals words when there is no wrapper.
	inner []word
	// open is true when the program gets more arguments at run time
	// (xargs), so an exact rule cannot cover it.
	open bool
	// harmless marks parts that need no rule: cd, set, export and the like,
	// and the outer `sh -c STR` whose STR was parsed into parts of its own.
	harmless bool
	// opaque marks a part whose command cannot be known (a non-literal
	// program or shell string): allow rules never cover it and every deny
	// rule matches it.
	opaque bool
}

// analysis is the result of analyse.
type analysis struct {
	parsed bool     // the text parsed as a shell program
	parts  []part   // every simple command, in source order
	unsafe []string // why the command is not approvable; empty when it is
}

// approvable reports whether allow rules may approve the command: it parsed,
// has a part, and holds nothing the analysis cannot see through.
func (a *analysis) approvable() bool {
	return a.parsed && len(a.unsafe) == 0 && len(a.parts) > 0
}

// analyse parses cmd and collects its parts. It never panics on any input.
func analyse(cmd string) *analysis {
	a := &analysis{}
	if len(cmd) > maxCommandLen {
		a.unsafe = append(a.unsafe, "command too long to check")
		return a
	}
	w := &walker{a: a}
	a.parsed = w.parseInto(cmd, 0)
	return a
}

type walker struct {
	a *analysis
}

func (w *walker) flag(format string, args ...any) {
	w.a.unsafe = append(w.a.unsafe, fmt.Sprintf(format, args...))
}

// parseInto parses src (a whole command line or the string of sh -c) and
// walks it; false when it does not parse or nesting is too deep.
func (w *walker) parseInto(src string, depth int) (ok bool) {
	if depth > maxDepth {
		w.flag("shell strings nested too deeply")
		return false
	}
	defer func() {
		// The parser is fuzzed upstream, but a panic here must never take
		// the runtime down: treat it as a command that does not parse.
		if r := recover(); r != nil {
			w.flag(internalErrorReason)
			ok = false
		}
	}()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		w.flag("command could not be parsed: %v", err)
		return false
	}
	c := &ctx{src: src, depth: depth}
	for _, st := range f.Stmts {
		w.stmt(c, st)
	}
	return true
}

// ctx is the source text being walked and its nesting depth.
type ctx struct {
	src   string
	depth int
}

func (c *ctx) text(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(c.src) || s > e {
		return ""
	}
	return c.src[s:e]
}

func (w *walker) stmts(c *ctx, list []*syntax.Stmt) {
	for _, st := range list {
		w.stmt(c, st)
	}
}

func (w *walker) stmt(c *ctx, st *syntax.Stmt) {
	if st == nil {
		return
	}
	for _, r := range st.Redirs {
		w.redirect(c, r)
	}
	if st.Coprocess {
		w.flag("coprocess")
	}
	w.command(c, st.Cmd)
}

func (w *walker) command(c *ctx, cmd syntax.Command) {
	switch x := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, x)
	case *syntax.BinaryCmd:
		w.stmt(c, x.X)
		w.stmt(c, x.Y)
	case *syntax.Subshell:
		w.stmts(c, x.Stmts)
	case *syntax.Block:
		w.stmts(c, x.Stmts)
	case *syntax.IfClause:
		for ic := x; ic != nil; ic = ic.Else {
			w.stmts(c, ic.Cond)
			w.stmts(c, ic.Then)
		}
	case *syntax.WhileClause:
		w.stmts(c, x.Cond)
		w.stmts(c, x.Do)
	case *syntax.ForClause:
		if it, ok := x.Loop.(*syntax.WordIter); ok {
			for _, wd := range it.Items {
				w.subst(c, wd)
			}
		} else {
			w.flag("C-style for loop")
			w.subst(c, x.Loop)
		}
		w.stmts(c, x.Do)
	case *syntax.CaseClause:
		w.subst(c, x.Word)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				w.subst(c, p)
			}
			w.stmts(c, it.Stmts)
		}
	case *syntax.TestClause:
		w.subst(c, x.X)
	case *syntax.TimeClause:
		w.stmt(c, x.Stmt)
	case *syntax.FuncDecl:
		name := ""
		if x.Name != nil {
			name = x.Name.Value
		}
		w.flag("defines a function %q", name)
		w.stmt(c, x.Body)
	case *syntax.DeclClause:
		for _, as := range x.Args {
			w.assign(c, as)
		}
		w.a.parts = append(w.a.parts, part{text: c.text(x), words: []word{{s: x.Variant.Value, known: true}},
			inner: []word{{s: x.Variant.Value, known: true}}, harmless: true})
	case *syntax.ArithmCmd:
		w.flag("arithmetic command")
		w.subst(c, x)
	case *syntax.LetClause:
		w.flag("let")
		w.subst(c, x)
	case *syntax.CoprocClause:
		w.flag("coprocess")
		w.stmt(c, x.Stmt)
	default:
		w.flag("unsupported shell construct %T", cmd)
		w.subst(c, cmd)
	}
}

// subst finds the command and process substitutions under n and walks their
// statements as parts.
func (w *walker) subst(c *ctx, n syntax.Node) {
	if isNil(n) {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			if x.TempFile || x.ReplyVar {
				w.flag("mksh substitution")
			}
			w.stmts(c, x.Stmts)
			return false
		case *syntax.ProcSubst:
			w.stmts(c, x.Stmts)
			return false
		case *syntax.ArithmExp:
			if evalsVariable(x.X) {
				w.flag("arithmetic on a variable %q (bash runs $(…) found in its value)", c.text(x))
			}
		case *syntax.ParamExp:
			w.paramExp(c, x)
		case *syntax.ArrayElem:
			if x.Index != nil && evalsVariable(x.Index) {
				w.flag("array subscript on a variable %q (bash runs $(…) found in its value)", c.text(x.Index))
			}
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
				w.flag("[[ %s ]] evaluates a variable name and its subscript", x.Op)
			}
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				if !isIntegerWord(x.X) || !isIntegerWord(x.Y) {
					w.flag("[[ %s ]] evaluates its operands as arithmetic", x.Op)
				}
			}
		}
		return true
	})
}

// paramExp flags the expansions that make bash evaluate a variable's value
// as code: a subscript or a slice that names a variable (arithmetic, where
// `x='a[$(cmd)]'` runs cmd), an indirection ${!x} (its value may be a name
// with such a subscript), and ${x@P} (prompt expansion runs $(…)).
func (w *walker) paramExp(c *ctx, x *syntax.ParamExp) {
	switch {
	case x.Excl:
		w.flag("indirect expansion %q", c.text(x))
	case x.Index != nil && evalsVariable(x.Index):
		w.flag("subscript on a variable %q (bash runs $(…) found in its value)", c.text(x))
	case x.Slice != nil && (evalsVariable(x.Slice.Offset) || evalsVariable(x.Slice.Length)):
		w.flag("slice on a variable %q (bash runs $(…) found in its value)", c.text(x))
	case x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.ContainsRune(x.Exp.Word.Lit(), 'P'):
		w.flag("prompt expansion %q runs $(…) found in the value", c.text(x))
	}
}

// evalsVariable reports whether an arithmetic expression (or subscript)
// refers to a variable or expansion: bash evaluates a variable's value as
// arithmetic in turn, and an array subscript in that value runs any command
// substitution it holds. Numbers (42, 0x1f, 16#ff) and operators are safe;
// @ and * subscripts are not arithmetic.
func evalsVariable(e syntax.ArithmExpr) bool {
	if isNil(e) {
		return false
	}
	found := false
	syntax.Walk(e, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst:
			found = true
		case *syntax.Lit:
			if v := x.Value; v != "" && v != "@" && v != "*" && !(v[0] >= '0' && v[0] <= '9') {
				found = true
			}
		}
		return !found
	})
	return found
}

// isIntegerWord reports whether a [[ ]] operand is a literal integer.
func isIntegerWord(e syntax.TestExpr) bool {
	wd, ok := e.(*syntax.Word)
	if !ok {
		return false
	}
	l := literal(wd)
	return l.known && isDigits(strings.TrimPrefix(l.s, "-"))
}

// isNil reports whether n is nil or a typed nil pointer (an absent optional
// field such as Redirect.Hdoc).
func isNil(n syntax.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// harmlessRedirectTargets may be written without writing a file.
var harmlessRedirectTargets = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

func (w *walker) redirect(c *ctx, r *syntax.Redirect) {
	w.subst(c, r.Word)
	w.subst(c, r.Hdoc)
	target, known := "", false
	if r.Word != nil {
		wd := literal(r.Word)
		target, known = wd.s, wd.known
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	case syntax.DplIn, syntax.DplOut:
		// n>&m, n<&m, n>&- duplicate or close descriptors; >&file (bash)
		// writes file.
		if known && (target == "-" || isDigits(target)) {
			return
		}
		if r.Op == syntax.DplIn && known && !strings.HasPrefix(target, "/dev/tcp/") && !strings.HasPrefix(target, "/dev/udp/") {
			return
		}
	case syntax.RdrIn:
		if known && !strings.HasPrefix(target, "/dev/tcp/") && !strings.HasPrefix(target, "/dev/udp/") {
			return
		}
		if !known {
			w.flag("reads from a computed path %q", c.text(r.Word))
			return
		}
		w.flag("opens a network connection %q", target)
		return
	}
	if known && harmlessRedirectTargets[target] {
		return
	}
	w.flag("redirect %q writes a file", c.text(r))
}

// dangerousEnv are variables whose value changes which program runs or what
// a shell executes; setting one makes the command not approvable.
var dangerousEnv = map[string]bool{
	"PATH": true, "IFS": true, "BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true,
	"PS4": true, "PROMPT_COMMAND": true, "CDPATH": true, "NODE_OPTIONS": true, "PYTHONSTARTUP": true,
	"PYTHONPATH": true, "PERL5OPT": true, "PERL5LIB": true, "RUBYOPT": true, "EDITOR": true,
	"VISUAL": true, "PAGER": true, "SHELL": true, "HOME": true, "BROWSER": true,
}

func dangerousName(name string) bool {
	return dangerousEnv[name] || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") ||
		strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "BASH_FUNC_")
}

func (w *walker) assign(c *ctx, as *syntax.Assign) {
	if as == nil {
		return
	}
	w.subst(c, as.Value)
	w.subst(c, as.Array)
	w.subst(c, as.Index)
	if as.Name == nil {
		// declare/export with a computed argument: `export $X`.
		if as.Value != nil {
			if wd := literal(as.Value); !wd.known || strings.HasPrefix(wd.s, "-f") {
				w.flag("computed declaration %q", c.text(as.Value))
			} else if strings.HasPrefix(wd.s, "-") && strings.ContainsAny(wd.s, "in") {
				// -i evaluates later assignments as arithmetic; -n makes a
				// name reference whose subscript is evaluated on use.
				w.flag("declaration option %q", wd.s)
			} else if name, _, _ := strings.Cut(wd.s, "="); dangerousName(name) {
				w.flag("sets %s", name)
			}
		}
		return
	}
	if dangerousName(as.Name.Value) {
		w.flag("sets %s", as.Name.Value)
	}
	if as.Index != nil && evalsVariable(as.Index) {
		w.flag("assigns to a subscript on a variable %q", c.text(as.Index))
	}
}

// harmlessPrograms need no rule: they change the shell's own state or do
// nothing.
var harmlessPrograms = map[string]bool{
	"cd": true, "pushd": true, "popd": true, "true": true, "false": true, ":": true,
	"set": true, "wait": true, "exit": true, "export": true, "unset": true,
}

// shells run a string given with -c.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

func (w *walker) call(c *ctx, x *syntax.CallExpr) {
	for _, as := range x.Assigns {
		w.assign(c, as)
	}
	if len(x.Args) == 0 {
		return // only assignments: they set shell variables
	}
	words := make([]word, len(x.Args))
	for i, a := range x.Args {
		words[i] = literal(a)
	}
	p := part{text: joinWords(c, x.Args, words), words: words}
	idx := len(w.a.parts)
	w.a.parts = append(w.a.parts, part{}) // filled below; keeps source order
	defer func() { w.a.parts[idx] = p }()
	for _, a := range x.Args {
		w.subst(c, a)
	}
	prog := words[0]
	if !prog.known || strings.ContainsAny(prog.s, "*?[") {
		p.opaque = true
		w.flag("the program name %q is computed at run time", c.text(x.Args[0]))
		return
	}
	inner, open, ok := unwrap(words)
	p.inner, p.open = inner, open
	if !ok {
		w.flag("cannot read the options of %q", prog.s)
	}
	if len(inner) > 0 && !inner[0].known {
		p.opaque = true
		w.flag("the program run by %q is computed at run time", prog.s)
	}
	if len(inner) > 0 && inner[0].known {
		base := path.Base(inner[0].s)
		switch {
		case harmlessPrograms[base] && base == inner[0].s && len(inner) == len(words):
			p.harmless = true
			for _, a := range inner[1:] {
				// unset 'a[x]', wait -p 'a[x]': bash evaluates the subscript
				// as arithmetic, so x's value can run $(…).
				if (base == "unset" || base == "wait") && (!a.known || strings.Contains(a.s, "[")) {
					w.flag("%s of a subscripted name %q", base, a.s)
				}
			}
		case base == "command" && len(inner) > 1 && (inner[1].s == "-v" || inner[1].s == "-V"):
			p.harmless = true // looks a name up, runs nothing
		case shells[base]:
			w.shell(c, &p, inner)
		case base == "eval":
			w.eval(c, &p, inner[1:], "eval")
		case base == "trap":
			if len(inner) > 1 {
				w.eval(c, &p, inner[1:2], "trap")
			}
		case base == "find":
			w.findExec(c, inner)
		}
	}
}

// shell handles sh/bash/… invocations: with -c and a literal string, the
// string is parsed into parts of its own and the outer part needs no rule;
// otherwise the part stays and must be covered by a rule naming the shell.
func (w *walker) shell(c *ctx, p *part, inner []word) {
	hasC := false
	i := 1
	for ; i < len(inner); i++ {
		a := inner[i]
		if !a.known {
			break
		}
		if a.s == "-o" || a.s == "+o" {
			i++
			continue
		}
		if len(a.s) < 2 || (a.s[0] != '-' && a.s[0] != '+') || strings.HasPrefix(a.s, "--") {
			break
		}
		if strings.Trim(a.s[1:], "ceuxvfnE") != "" {
			return // -l, -i, --rcfile, …: reads startup files; needs a rule
		}
		if strings.ContainsRune(a.s, 'c') {
			hasC = true
		}
	}
	if !hasC {
		return // runs a script file or stdin: the part itself needs a rule
	}
	if i >= len(inner) || !inner[i].known {
		p.opaque = true
		w.flag("%s -c runs a string computed at run time", inner[0].s)
		return
	}
	if !w.parseInto(inner[i].s, 1+c.depth) {
		p.opaque = true
		return
	}
	p.harmless = true
}

// eval parses the literal arguments of eval (joined by spaces, as eval
// does) or the handler of trap.
func (w *walker) eval(c *ctx, p *part, args []word, name string) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if !a.known {
			p.opaque = true
			w.flag("%s runs a string computed at run time", name)
			return
		}
		parts = append(parts, a.s)
	}
	if !w.parseInto(strings.Join(parts, " "), 1+c.depth) {
		p.opaque = true
		return
	}
	if name == "eval" {
		p.harmless = true
	}
}

// findExec adds the commands of find's -exec, -execdir, -ok and -okdir as
// parts.
func (w *walker) findExec(c *ctx, words []word) {
	for i := 1; i < len(words); i++ {
		switch words[i].s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(words) && !(words[j].known && (words[j].s == ";" || words[j].s == "+")) {
			j++
		}
		sub := words[i+1 : j]
		if len(sub) == 0 {
			continue
		}
		p := part{text: wordsText(sub), words: sub, open: true}
		if !sub[0].known {
			p.opaque = true
			w.flag("find -exec runs a computed program")
		} else {
			p.inner, p.open, _ = unwrap(sub)
			p.open = true
		}
		if p.inner == nil {
			p.inner = sub
		}
		w.a.parts = append(w.a.parts, p)
		i = j
	}
}

// wrapperOptions lists, for each benign wrapper, its options that take a
// separate value. An option not listed and not in flagOnly stops unwrap.
var wrapperOptions = map[string]struct{ withValue, flags string }{
	"env":     {withValue: "-u -C -S --unset --chdir", flags: "-i - --ignore-environment -0 --null -v"},
	"nice":    {withValue: "-n --adjustment"},
	"timeout": {withValue: "-s -k --signal --kill-after", flags: "-v --verbose --preserve-status --foreground"},
	"command": {flags: "-p"},
	"nohup":   {},
	"exec":    {withValue: "-a", flags: "-c -l"},
	"stdbuf":  {withValue: "-i -o -e --input --output --error"},
	"time":    {withValue: "-f -o --format --output", flags: "-p -v -a --portability --verbose --append"},
	"ionice":  {withValue: "-c -n --class --classdata", flags: "-t"},
	"xargs": {withValue: "-I -n -P -d -L -s -E -a --max-args --max-procs --delimiter --max-lines --max-chars --eof --arg-file --replace",
		flags: "-0 -r -t -p -x --null --no-run-if-empty --verbose --interactive --exit -o --open-tty"},
}

// unwrap removes leading benign wrappers from words and returns the program
// they run with its arguments. open is true when xargs appends arguments.
// ok is false when a wrapper has options unwrap does not know; inner is then
// the words from that wrapper on.
func unwrap(words []word) (inner []word, open, ok bool) {
	for len(words) > 0 && words[0].known {
		name := path.Base(words[0].s)
		opts, isWrapper := wrapperOptions[name]
		if !isWrapper {
			return words, open, true
		}
		if name == "command" && len(words) > 1 && (words[1].s == "-v" || words[1].s == "-V") {
			return words, open, true
		}
		rest := words[1:]
		withValue := strings.Fields(opts.withValue)
		flags := strings.Fields(opts.flags)
		for len(rest) > 0 {
			a := rest[0]
			if !a.known {
				return words, open, false
			}
			if a.s == "--" {
				rest = rest[1:]
				break
			}
			if name == "env" && isAssignment(a.s) {
				n, _, _ := strings.Cut(a.s, "=")
				if dangerousName(n) {
					return words, open, false
				}
				rest = rest[1:]
				continue
			}
			if !strings.HasPrefix(a.s, "-") || a.s == "-" && name != "env" {
				break
			}
			switch {
			case contains(flags, a.s):
				rest = rest[1:]
			case contains(withValue, a.s):
				if len(rest) < 2 {
					return words, open, false
				}
				rest = rest[2:]
			case hasValuePrefix(withValue, a.s):
				rest = rest[1:] // -n10, --max-args=1
			case name == "nice" && isDigits(strings.TrimPrefix(a.s, "-")):
				rest = rest[1:] // nice -10
			default:
				return words, open, false
			}
		}
		if name == "timeout" {
			if len(rest) == 0 {
				return words, open, false
			}
			rest = rest[1:] // DURATION
		}
		if name == "xargs" {
			open = true
			if len(rest) == 0 {
				rest = []word{{s: "echo", known: true}} // xargs with no command runs echo
			}
		}
		if len(rest) == 0 {
			return words, open, true // `env`, `nohup` alone: the wrapper is the program
		}
		words = rest
	}
	return words, open, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasValuePrefix(withValue []string, s string) bool {
	for _, o := range withValue {
		if strings.HasPrefix(o, "--") {
			if strings.HasPrefix(s, o+"=") {
				return true
			}
		} else if len(s) > len(o) && strings.HasPrefix(s, o) && !strings.HasPrefix(s, "--") {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// literal returns the value of a word made of literal text, single-quoted
// and double-quoted text without expansions; known is false otherwise.
func literal(wd *syntax.Word) word {
	if wd == nil {
		return word{}
	}
	var b strings.Builder
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(x.Value, false))
		case *syntax.SglQuoted:
			if x.Dollar && strings.ContainsRune(x.Value, '\\') {
				return word{}
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				return word{}
			}
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return word{}
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return word{}
		}
	}
	return word{s: b.String(), known: true}
}

// unescape removes the backslashes bash removes: any escaped character
// outside quotes; inside double quotes only before $ ` " \ and newline. An
// escaped newline disappears.
func unescape(s string, inDouble bool) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		n := s[i+1]
		switch {
		case n == '\n':
			i++
		case !inDouble || strings.IndexByte("$`\"\\", n) >= 0:
			b.WriteByte(n)
			i++
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// joinWords renders a simple command: literal words unquoted, computed words
// as written.
func joinWords(c *ctx, args []*syntax.Word, words []word) string {
	out := make([]string, len(words))
	for i, wd := range words {
		if wd.known {
			out[i] = wd.s
		} else {
			out[i] = c.text(args[i])
		}
	}
	return strings.Join(out, " ")
}

func wordsText(words []word) string {
	out := make([]string, len(words))
	for i, wd := range words {
		out[i] = wd.s
		if !wd.known {
			out[i] = "…"
		}
	}
	return strings.Join(out, " ")
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j, r := range w[:i] {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
