// Package ignore owns the gitignore pattern language used by the workspace
// index: parsing one line of a .gitignore, .ignore, .task-xignore or
// .git/info/exclude file into a Rule, and matching root-relative paths with
// git's semantics.
//
// Source: gitignore(5) ("PATTERN FORMAT") and git's wildmatch.c with the
// WM_PATHNAME flag:
//   - blank lines and lines starting with "#" are ignored; "\#" is a literal "#";
//   - trailing spaces are dropped unless escaped with "\";
//   - a leading "!" negates the pattern; "\!" is a literal "!";
//   - a trailing "/" matches directories only;
//   - a pattern with a "/" at its start or in its middle is anchored to the
//     directory of the file that holds it; otherwise it matches the base
//     name at any depth below that directory;
//   - "*" and "?" and "[...]" never match "/"; "**/" at the start, "/**" at
//     the end and "/**/" in the middle match across directories.
//
// The rule that a file cannot be re-included when one of its parent
// directories is excluded is the caller's job (walk no further into an
// excluded directory, or test each ancestor first).
package ignore

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rule is one parsed pattern line.
type Rule struct {
	// Pattern is the glob with the "!" prefix, the leading "/" and the
	// trailing "/" removed. Escapes ("\#", "\!", "\ ") are kept and
	// understood by Match.
	Pattern string
	// Negate is true for a "!pattern" line: a match re-includes the path.
	Negate bool
	// DirOnly is true when the line ended with "/".
	DirOnly bool
	// Anchored is true when the pattern held a "/" before its end: it is
	// matched against the path relative to Base, not against the base name.
	Anchored bool
	// Base is the root-relative directory ("/"-separated, "" for the root)
	// of the file that holds the rule. The rule applies only below it.
	Base string

	kind   matchKind
	suffix string // for kindSuffix: the literal after the leading "*"
}

type matchKind uint8

const (
	kindGlob    matchKind = iota // general wildmatch
	kindLiteral                  // no wildcard and no escape: string equality
	kindSuffix                   // "*" followed by a literal without "/"
)

// Result is the outcome of matching a path against a List.
type Result int

const (
	// NoMatch means no rule matched: the path is not excluded by this list.
	NoMatch Result = iota
	// Ignore means the last matching rule excludes the path.
	Ignore
	// Include means the last matching rule is a negation ("!pattern").
	Include
)

// ParseLine parses one line of an ignore file. It reports false for blank
// lines, comments and lines that hold no pattern. base is the root-relative
// directory of the ignore file ("" for the root).
func ParseLine(line, base string) (Rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return Rule{}, false
	}
	line = trimTrailingSpaces(line)
	r := Rule{Base: base}
	if strings.HasPrefix(line, "!") {
		r.Negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !escapedAt(line, len(line)-1) {
		r.DirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return Rule{}, false
	}
	if strings.Contains(line, "/") {
		r.Anchored = true
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			return Rule{}, false
		}
	}
	r.Pattern = line
	r.compile()
	return r, true
}

// Parse parses the content of an ignore file into rules in file order.
func Parse(data []byte, base string) List {
	var out List
	s := string(data)
	// A UTF-8 byte order mark at the start is not part of the first pattern.
	s = strings.TrimPrefix(s, "\uFEFF")
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if r, ok := ParseLine(line, base); ok {
			out = append(out, r)
		}
	}
	return out
}

func (r *Rule) compile() {
	if !strings.ContainsAny(r.Pattern, `*?[\`) {
		r.kind = kindLiteral
		return
	}
	if r.Pattern[0] == '*' && !strings.ContainsAny(r.Pattern[1:], `*?[\/`) {
		r.kind = kindSuffix
		r.suffix = r.Pattern[1:]
		return
	}
	r.kind = kindGlob
}

// trimTrailingSpaces drops unescaped trailing spaces.
func trimTrailingSpaces(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		if escapedAt(s, len(s)-1) {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// escapedAt reports whether the byte at i is preceded by an odd number of
// backslashes.
func escapedAt(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// Match reports whether the rule matches rel, a root-relative path with "/".
// isDir tells whether rel names a directory. It does not look at ancestors.
func (r *Rule) Match(rel string, isDir bool) bool {
	if r.DirOnly && !isDir {
		return false
	}
	sub := rel
	if r.Base != "" {
		if len(rel) <= len(r.Base) || rel[len(r.Base)] != '/' || !strings.HasPrefix(rel, r.Base) {
			return false
		}
		sub = rel[len(r.Base)+1:]
	}
	if !r.Anchored {
		if i := strings.LastIndexByte(sub, '/'); i >= 0 {
			sub = sub[i+1:]
		}
	}
	switch r.kind {
	case kindLiteral:
		return sub == r.Pattern
	case kindSuffix:
		return strings.HasSuffix(sub, r.suffix) && !strings.Contains(sub, "/")
	}
	return Match(r.Pattern, sub)
}

// List is the rules of one or more ignore files in precedence order: a later
// rule overrides an earlier one.
type List []Rule

// Match returns the outcome of the last rule in l that matches rel.
func (l List) Match(rel string, isDir bool) Result {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].Match(rel, isDir) {
			if l[i].Negate {
				return Include
			}
			return Ignore
		}
	}
	return NoMatch
}

// Match reports whether the wildmatch pattern matches name in pathname mode:
// "*", "?" and "[...]" do not match "/", "**" between slashes (or at the ends)
// matches any number of directories, "\" escapes the next character. A
// malformed pattern (unterminated "[" or a trailing "\") matches nothing.
func Match(pattern, name string) bool {
	m := matcher{p: pattern, s: name}
	if strings.Count(pattern, "*") > 1 {
		m.failed = make(map[[2]int32]struct{})
	}
	return m.match(0, 0)
}

type matcher struct {
	p, s   string
	failed map[[2]int32]struct{} // (pi, si) pairs known not to match
}

func (m *matcher) match(pi, si int) bool {
	if m.failed != nil {
		if _, ok := m.failed[[2]int32{int32(pi), int32(si)}]; ok {
			return false
		}
	}
	ok := m.matchFrom(pi, si)
	if !ok && m.failed != nil {
		m.failed[[2]int32{int32(pi), int32(si)}] = struct{}{}
	}
	return ok
}

func (m *matcher) matchFrom(pi, si int) bool {
	p, s := m.p, m.s
	for pi < len(p) {
		c := p[pi]
		switch c {
		case '*':
			segStart := pi == 0 || p[pi-1] == '/'
			if pi+1 < len(p) && p[pi+1] == '*' && segStart && (pi+2 == len(p) || p[pi+2] == '/') {
				// A "**" that fills a whole path segment.
				if pi+2 == len(p) {
					return true
				}
				rest := pi + 3 // after "**/"
				if m.match(rest, si) {
					return true
				}
				for i := si; i < len(s); i++ {
					if s[i] == '/' && m.match(rest, i+1) {
						return true
					}
				}
				return false
			}
			for pi < len(p) && p[pi] == '*' {
				pi++
			}
			if pi == len(p) {
				return !strings.Contains(s[si:], "/")
			}
			for i := si; i <= len(s); i++ {
				if m.match(pi, i) {
					return true
				}
				if i == len(s) || s[i] == '/' {
					return false
				}
			}
			return false
		case '?':
			if si >= len(s) || s[si] == '/' {
				return false
			}
			_, n := utf8.DecodeRuneInString(s[si:])
			si += n
			pi++
		case '[':
			if si >= len(s) || s[si] == '/' {
				return false
			}
			r, n := utf8.DecodeRuneInString(s[si:])
			ok, end := matchClass(p, pi, r)
			if end < 0 || !ok {
				return false
			}
			pi = end
			si += n
		case '\\':
			if pi+1 >= len(p) {
				return false
			}
			if si >= len(s) || s[si] != p[pi+1] {
				return false
			}
			pi += 2
			si++
		default:
			if si >= len(s) || s[si] != c {
				return false
			}
			pi++
			si++
		}
	}
	return si == len(s)
}

// matchClass matches rune r against the bracket expression starting at
// p[start] == '['. It returns whether r matched and the index just after the
// closing "]", or -1 when the expression is unterminated.
func matchClass(p string, start int, r rune) (bool, int) {
	i := start + 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	matched := false
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return matched != negate, i + 1
		}
		first = false
		if p[i] == '[' && i+1 < len(p) && p[i+1] == ':' {
			if end := strings.Index(p[i+2:], ":]"); end >= 0 {
				name := p[i+2 : i+2+end]
				if posixClass(name, r) {
					matched = true
				}
				i += 2 + end + 2
				continue
			}
		}
		lo, n := classChar(p, i)
		if n == 0 {
			return false, -1
		}
		i += n
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			h, n2 := classChar(p, i+1)
			if n2 == 0 {
				return false, -1
			}
			hi = h
			i += 1 + n2
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, -1
}

// classChar decodes one (possibly escaped) character of a bracket expression
// at p[i]. n is 0 when the pattern ends.
func classChar(p string, i int) (rune, int) {
	if p[i] == '\\' {
		if i+1 >= len(p) {
			return 0, 0
		}
		r, n := utf8.DecodeRuneInString(p[i+1:])
		return r, n + 1
	}
	r, n := utf8.DecodeRuneInString(p[i:])
	return r, n
}

func posixClass(name string, r rune) bool {
	switch name {
	case "alnum":
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	case "alpha":
		return unicode.IsLetter(r)
	case "blank":
		return r == ' ' || r == '\t'
	case "digit":
		return '0' <= r && r <= '9'
	case "lower":
		return unicode.IsLower(r)
	case "upper":
		return unicode.IsUpper(r)
	case "space":
		return unicode.IsSpace(r)
	case "punct":
		return unicode.IsPunct(r) || unicode.IsSymbol(r)
	case "xdigit":
		return strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	return false
}
