package claudecode

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file holds the rules of the PreToolUse hook `task-x-runtime
// --hook-shell-edit` (protocol.md, Claude Code engine): a Bash command is
// blocked when any simple command in it rewrites files outside the task-x
// tools, wherever it sits (after &&, ||, ;, in a pipe, a subshell, a
// group, if/while/for/case bodies, $(…), backquotes, <(…), the string of
// sh -c / bash -c / eval, find -exec, xargs). Blocked:
//
//   - sed -i / --in-place (any suffix, any combined flags), perl -i, ruby -i;
//   - tee with a file argument;
//   - a redirection that writes a file (>, >>, >|, &>, &>>, >&file), except
//     to /dev/null, /dev/stdout, /dev/stderr, /dev/fd/N and under /tmp/;
//   - dd of=FILE, truncate;
//   - inline scripts (python -c, python - <<EOF, node -e, perl -e, ruby -e,
//     php -r, deno eval, …) whose code calls a file-write API. Read-only
//     scripts run.
//
// A command that does not parse is blocked too: the hook cannot see what
// it does, and bash would refuse it anyway.

// maxShellDepth bounds nested shell strings (sh -c "bash -c '…'").
const maxShellDepth = 8

// ShellEditReason returns why cmd may not run ("" when it may).
func ShellEditReason(cmd string) string {
	w := &editWalker{}
	w.parse(cmd, 0)
	if len(w.reasons) == 0 {
		return ""
	}
	return w.reasons[0]
}

type editWalker struct {
	reasons []string
}

func (w *editWalker) block(format string, args ...any) {
	w.reasons = append(w.reasons, fmt.Sprintf(format, args...))
}

func (w *editWalker) parse(src string, depth int) {
	if depth > maxShellDepth {
		w.block("shell strings nested too deeply to check")
		return
	}
	defer func() {
		if r := recover(); r != nil {
			w.block("the command could not be checked")
		}
	}()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		w.block("the command could not be parsed: %v", err)
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			w.stmt(x, depth)
		case *syntax.CallExpr:
			w.call(x, nil, depth)
		}
		return true
	})
}

// stmt checks the redirections of one statement; a here-document feeding
// an interpreter is that interpreter's inline script.
func (w *editWalker) stmt(st *syntax.Stmt, depth int) {
	for _, r := range st.Redirs {
		w.redirect(r)
	}
	if call, ok := st.Cmd.(*syntax.CallExpr); ok {
		for _, r := range st.Redirs {
			if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc) && len(call.Args) > 0 {
				body := ""
				if r.Op == syntax.WordHdoc {
					body = wordText(r.Word)
				} else if r.Hdoc != nil {
					body = wordText(r.Hdoc)
				}
				w.stdinScript(call, body, depth)
			}
		}
	}
}

// safeTargets may be written without writing a workspace file.
var safeTargets = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true}

func safeTarget(t string) bool {
	if safeTargets[t] || strings.HasPrefix(t, "/dev/fd/") {
		return true
	}
	clean := path.Clean(t)
	return strings.HasPrefix(clean, "/tmp/") && !strings.Contains(t, "..")
}

func (w *editWalker) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
	case syntax.DplOut:
		t, known := literal(r.Word)
		if known && (t == "-" || isDigits(t)) {
			return
		}
	default:
		return
	}
	t, known := literal(r.Word)
	if known && safeTarget(t) {
		return
	}
	w.block("the redirection %q writes a file; edit files with the mcp__task-x__ tools", redirText(r))
}

func redirText(r *syntax.Redirect) string {
	var b strings.Builder
	p := syntax.NewPrinter()
	_ = p.Print(&b, &syntax.Stmt{Redirs: []*syntax.Redirect{r}, Cmd: &syntax.CallExpr{}})
	return strings.TrimSpace(b.String())
}

// call checks one simple command. args overrides the words of x (for
// commands found inside find -exec or xargs).
func (w *editWalker) call(x *syntax.CallExpr, args []string, depth int) {
	if args == nil {
		if len(x.Args) == 0 {
			return
		}
		args = make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i], _ = literal(a)
		}
	}
	args = unwrapPrefix(args)
	if len(args) == 0 {
		return
	}
	prog := path.Base(args[0])
	rest := args[1:]
	switch {
	case prog == "sed":
		if sedInPlace(rest) {
			w.block("`sed -i` rewrites files; edit files with the mcp__task-x__ tools")
		}
	case prog == "perl" || prog == "ruby":
		if perlInPlace(rest) {
			w.block("`%s -i` rewrites files; edit files with the mcp__task-x__ tools", prog)
			return
		}
		w.inlineArgs(prog, rest)
	case prog == "tee":
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if !safeTarget(a) {
				w.block("`tee` writes files; edit files with the mcp__task-x__ tools")
				return
			}
		}
	case prog == "dd":
		for _, a := range rest {
			if t, ok := strings.CutPrefix(a, "of="); ok && !safeTarget(t) {
				w.block("`dd of=` writes files; edit files with the mcp__task-x__ tools")
				return
			}
		}
	case prog == "truncate":
		w.block("`truncate` rewrites files; edit files with the mcp__task-x__ tools")
	case shellNames[prog]:
		for i, a := range rest {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'c') && i+1 < len(rest) {
				w.parse(rest[i+1], depth+1)
				return
			}
		}
	case prog == "eval":
		w.parse(strings.Join(rest, " "), depth+1)
	case prog == "find":
		for i, a := range rest {
			if a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir" {
				var sub []string
				for _, b := range rest[i+1:] {
					if b == ";" || b == "+" {
						break
					}
					sub = append(sub, b)
				}
				w.call(x, sub, depth)
			}
			if a == "-fprint" || a == "-fprintf" || a == "-fls" || a == "-delete" {
				w.block("`find %s` changes files; edit files with the mcp__task-x__ tools", a)
				return
			}
		}
	case prog == "xargs":
		i := 0
		for i < len(rest) && strings.HasPrefix(rest[i], "-") {
			if xargsValueFlags[rest[i]] {
				i++
			}
			i++
		}
		if i < len(rest) {
			w.call(x, rest[i:], depth)
		}
	default:
		if lang := interpreter(prog); lang != "" {
			w.inlineArgs(prog, rest)
		}
	}
}

var shellNames = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

var xargsValueFlags = map[string]bool{"-I": true, "-n": true, "-P": true, "-d": true, "-L": true, "-s": true, "-E": true, "-a": true}

// unwrapPrefix drops wrappers that run the rest of the line as a command
// (env, sudo, nice, timeout, command, nohup, exec, stdbuf, time) and
// leading VAR=value words of env.
func unwrapPrefix(args []string) []string {
	for len(args) > 0 {
		switch path.Base(args[0]) {
		case "env", "sudo", "nice", "nohup", "exec", "command", "stdbuf", "time", "doas":
			args = args[1:]
			for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
				args = args[1:]
			}
		case "timeout":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
			if len(args) > 0 {
				args = args[1:] // the duration
			}
		default:
			return args
		}
	}
	return args
}

// perlInPlace reports whether perl's or ruby's switches hold -i (-i,
// -i.bak, -pi, -pi.bak, -0pi) before the code of -e.
func perlInPlace(args []string) bool {
	for _, a := range args {
		if a == "--" || len(a) < 2 || a[0] != '-' || a[1] == '-' {
			return false
		}
		for _, c := range a[1:] {
			if c == 'i' {
				return true
			}
			if c == 'e' || c == 'E' || c == 'I' || c == 'M' || c == 'm' || c == 'x' || c == 'C' || c == 'd' || c == 'r' {
				break // the rest of the word is a value
			}
		}
	}
	return false
}

// sedInPlace reports whether sed's arguments hold -i (alone, with a suffix,
// or combined: -ni, -Ei.bak) or --in-place.
func sedInPlace(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "--in-place") {
			return true
		}
		if strings.HasPrefix(a, "--") || !strings.HasPrefix(a, "-") || len(a) < 2 {
			continue
		}
		for _, c := range a[1:] {
			if c == 'i' {
				return true
			}
			if c == 'e' || c == 'f' || c == 'l' {
				// The rest of this word, or the next word, is the value.
				if len(a) == 2 {
					i++
				}
				break
			}
		}
	}
	return false
}

// interpreter names the inline-script language of prog ("" when none).
func interpreter(prog string) string {
	switch {
	case prog == "python" || prog == "pypy" || prog == "pypy3" || strings.HasPrefix(prog, "python3") || strings.HasPrefix(prog, "python2"):
		return "python"
	case prog == "node" || prog == "nodejs" || prog == "bun" || prog == "deno":
		return "node"
	case prog == "perl":
		return "perl"
	case prog == "ruby":
		return "ruby"
	case prog == "php":
		return "php"
	}
	return ""
}

// inlineArgs checks the code given on the command line: -c (python), -e /
// -p / --eval / --print (node, bun), eval (deno), -e / -E (perl, ruby), -r
// (php).
func (w *editWalker) inlineArgs(prog string, rest []string) {
	lang := interpreter(prog)
	for i, a := range rest {
		code, take := "", false
		switch lang {
		case "python":
			if a == "-c" {
				take = true
			} else if strings.HasPrefix(a, "-c") {
				code = a[2:]
			}
		case "node":
			switch {
			case a == "-e" || a == "-p" || a == "--eval" || a == "--print" || a == "eval" || a == "-pe":
				take = true
			case strings.HasPrefix(a, "--eval="):
				code = strings.TrimPrefix(a, "--eval=")
			}
		case "perl", "ruby":
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && (strings.HasSuffix(a, "e") || strings.HasSuffix(a, "E")) {
				take = true
			}
		case "php":
			take = a == "-r"
		}
		if take && i+1 < len(rest) {
			code = rest[i+1]
		}
		if code != "" {
			if api := writeAPI(lang, code); api != "" {
				w.block("the inline %s script calls %s, which writes files; edit files with the mcp__task-x__ tools", lang, api)
				return
			}
		}
		if lang == "python" && !strings.HasPrefix(a, "-") {
			return // a script file: its arguments are its own
		}
	}
}

// stdinScript checks a here-document fed to an interpreter (python3 -
// <<EOF, node <<EOF).
func (w *editWalker) stdinScript(call *syntax.CallExpr, body string, depth int) {
	args := make([]string, len(call.Args))
	for i, a := range call.Args {
		args[i], _ = literal(a)
	}
	args = unwrapPrefix(args)
	if len(args) == 0 {
		return
	}
	prog := path.Base(args[0])
	if shellNames[prog] {
		w.parse(body, depth+1)
		return
	}
	lang := interpreter(prog)
	if lang == "" {
		return
	}
	if api := writeAPI(lang, body); api != "" {
		w.block("the inline %s script calls %s, which writes files; edit files with the mcp__task-x__ tools", lang, api)
	}
}

type apiPattern struct {
	name string
	re   *regexp.Regexp
}

// writeAPIs are the file-write calls of each language's inline scripts.
var writeAPIs = map[string][]apiPattern{
	"python": {
		{"open(…, \"w\")", regexp.MustCompile(`open\s*\([^,)]*,\s*['"][rbtU]*[wax+]`)},
		{"open(…, mode=…)", regexp.MustCompile(`open\s*\([^)]*mode\s*=`)},
		{"write_text", regexp.MustCompile(`\.write_(text|bytes)\s*\(`)},
		{"shutil", regexp.MustCompile(`\bshutil\.`)},
		{"os.remove", regexp.MustCompile(`\bos\.(remove|unlink|rename|replace|rmdir|removedirs|truncate|makedirs|mkdir|symlink|link|chmod|open|write|ftruncate)\s*\(`)},
		{"Path.unlink", regexp.MustCompile(`\.(unlink|rmdir|touch|rename|replace|symlink_to|hardlink_to|chmod)\s*\(`)},
		{"fileinput inplace", regexp.MustCompile(`inplace\s*=`)},
		{"subprocess", regexp.MustCompile(`\b(subprocess|os\.system|os\.popen|os\.exec)`)},
	},
	"node": {
		{"writeFile", regexp.MustCompile(`\b(writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|copyFile|copyFileSync|cp|cpSync|rename|renameSync|unlink|unlinkSync|rm|rmSync|rmdir|rmdirSync|truncate|truncateSync|ftruncate|mkdir|mkdirSync|symlink|symlinkSync|chmod|chmodSync|write|writeSync|open|openSync|writev)\s*\(`)},
		{"Bun.write", regexp.MustCompile(`\bBun\.write\b|\bDeno\.(write|remove|rename|truncate|create|mkdir)`)},
		{"child_process", regexp.MustCompile(`child_process|\bexecSync\b|\bspawnSync\b|\bexec\s*\(|\bspawn\s*\(`)},
	},
	"perl": {
		{"open(>…)", regexp.MustCompile(`open\s*\(?[^;]*['"]\s*(\+?[>|]|\+<)`)},
		{"open(FH, \">\", …)", regexp.MustCompile(`open\s*\(?\s*[^,;]+,\s*['"]\s*(\+?[>|]|\+<)`)},
		{"unlink", regexp.MustCompile(`\b(unlink|rename|rmdir|mkdir|truncate|symlink|link|chmod|system|exec)\b`)},
		{"backticks", regexp.MustCompile("`|\\bqx")},
	},
	"ruby": {
		{"File.write", regexp.MustCompile(`\b(File|IO)\.(write|binwrite|delete|unlink|rename|truncate|symlink|link|chmod)\b`)},
		{"File.open(…, \"w\")", regexp.MustCompile(`\bFile\.open\s*\(?[^,)]*,\s*['"][rb]*[wa+]`)},
		{"FileUtils", regexp.MustCompile(`\bFileUtils\b|\bDir\.(mkdir|rmdir|delete|unlink)\b`)},
		{"system", regexp.MustCompile("\\b(system|exec|spawn)\\b|`|%x")},
	},
	"php": {
		{"file_put_contents", regexp.MustCompile(`\b(file_put_contents|fopen|fwrite|fputs|unlink|rename|copy|rmdir|mkdir|touch|ftruncate|symlink|chmod|system|exec|shell_exec|passthru|proc_open|popen)\s*\(`)},
	},
}

// writeAPI names the first file-write call found in code ("" when none).
func writeAPI(lang, code string) string {
	for _, p := range writeAPIs[lang] {
		if p.re.MatchString(code) {
			return p.name
		}
	}
	return ""
}

// literal returns the value of a word with quotes removed, and whether it
// is fully known (no expansions).
func literal(wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", false
	}
	var b strings.Builder
	known := true
	var parts func(ps []syntax.WordPart)
	parts = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch x := p.(type) {
			case *syntax.Lit:
				b.WriteString(unescape(x.Value))
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				parts(x.Parts)
			default:
				known = false
			}
		}
	}
	parts(wd.Parts)
	return b.String(), known
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// wordText is the text of a here-document body, expansions printed as
// written.
func wordText(wd *syntax.Word) string {
	if wd == nil {
		return ""
	}
	var b strings.Builder
	p := syntax.NewPrinter()
	_ = p.Print(&b, wd)
	return b.String()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
