package syntax

// Python function bodies are 74% of the bytes of the mixed benchmark
// tree's 12.3 MB of Python and, as in Rust (skip_rust.go), the index keeps
// nothing from inside them but the identifiers they use: extractPython
// does not enter a function_definition. A Python block cannot be left
// empty, so a body's last statement stays in the parse and the statements
// before it are left out (included ranges): tree-sitter sees
//
//	def f(x):
//	    return y
//
// with the last statement at its real offset, so the block, the function
// and every enclosing class end exactly where they end in a whole parse.
// The left-out statements' identifiers are lexed by pyBodyIdents.

// pyLine is one logical line (its physical lines joined by brackets,
// backslashes and multi-line strings), comment-only and blank lines
// excluded.
type pyLine struct {
	lineStart int // offset of column 0 of its first physical line
	row       int // 0-based row of that line
	indent    int // leading spaces of that line
	first     int // offset of its first token
	firstEnd  int
	second    int // offset of its second token, -1 if none
	secondEnd int
	colon     bool // its last token is ':'
	end       int  // offset of the '\n' that ends it (len(src) at the end)
	endRow    int  // row of that '\n'
	endCol    int  // its column
}

// pyLexer splits Python source into tokens: strings (any prefix, triple
// quotes, f-string interpolations recorded in interp) and comments are
// single tokens, so nothing inside them is taken for code.
type pyLexer struct {
	src       []byte
	i, end    int
	row       int
	lineStart int
	depth     int      // open brackets
	interp    [][2]int // f-string interpolation ranges of the last string
	bad       bool     // an unterminated string

	tokRow, tokLineStart int // row and line start of the last token's start
}

func pyIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func pyIdentPart(c byte) bool { return pyIdentStart(c) || c >= '0' && c <= '9' }

// pyStringPrefix reports whether w (an identifier just read) is a string
// prefix: r, b, u, f and their pairs, any case.
func pyStringPrefix(w []byte) (ok, fstring, raw bool) {
	if len(w) > 2 {
		return false, false, false
	}
	seen := 0
	for _, c := range w {
		switch c | 0x20 {
		case 'r':
			raw = true
		case 'f':
			fstring = true
		case 'b', 'u':
		default:
			return false, false, false
		}
		seen++
	}
	return seen > 0, fstring, raw
}

// token kinds of pyLexer.next
const (
	pyEOF = iota
	pyNewline
	pyIdent
	pyString
	pyPunct
	pyOther
)

// next returns the next token. A newline is returned only outside
// brackets and not after a backslash; comments and spaces are skipped.
func (l *pyLexer) next() (int, int, int) {
	src, end := l.src, l.end
	for l.i < end {
		c := src[l.i]
		switch {
		case c == '\n':
			at := l.i
			l.tokRow, l.tokLineStart = l.row, l.lineStart
			l.row++
			l.i++
			l.lineStart = l.i
			if l.depth == 0 {
				return pyNewline, at, at + 1
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			l.i++
		case c == '\\' && l.i+1 < end && (src[l.i+1] == '\n' || src[l.i+1] == '\r'):
			l.i++
			if src[l.i] == '\r' && l.i+1 < end && src[l.i+1] == '\n' {
				l.i++
			}
			if src[l.i] == '\n' {
				l.row++
				l.i++
				l.lineStart = l.i
			}
		case c == '#':
			for l.i < end && src[l.i] != '\n' {
				l.i++
			}
		default:
			l.tokRow, l.tokLineStart = l.row, l.lineStart
			return l.token()
		}
	}
	return pyEOF, end, end
}

func (l *pyLexer) token() (int, int, int) {
	src, end, s := l.src, l.end, l.i
	c := src[s]
	switch {
	case pyIdentStart(c):
		j := s + 1
		for j < end && pyIdentPart(src[j]) {
			j++
		}
		if j < end && (src[j] == '"' || src[j] == '\'') {
			if ok, f, raw := pyStringPrefix(src[s:j]); ok {
				l.i = j
				return l.str(s, f, raw)
			}
		}
		l.i = j
		return pyIdent, s, j
	case c >= '0' && c <= '9' || c == '.' && s+1 < end && src[s+1] >= '0' && src[s+1] <= '9':
		j := s + 1
		for j < end {
			d := src[j]
			if pyIdentPart(d) || d == '.' || (d == '+' || d == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !hexLiteral(src[s:j]) {
				j++
				continue
			}
			break
		}
		l.i = j
		return pyOther, s, j
	case c == '"' || c == '\'':
		return l.str(s, false, false)
	}
	switch c {
	case '(', '[', '{':
		l.depth++
	case ')', ']', '}':
		if l.depth > 0 {
			l.depth--
		}
	}
	l.i = s + 1
	return pyPunct, s, s + 1
}

// str reads a string whose quote is at l.i (prefix from s); f-string
// interpolations go to l.interp.
func (l *pyLexer) str(s int, fstring, raw bool) (int, int, int) {
	src, end := l.src, l.end
	q := src[l.i]
	triple := l.i+2 < end && src[l.i+1] == q && src[l.i+2] == q
	j := l.i + 1
	if triple {
		j = l.i + 3
	}
	l.interp = l.interp[:0]
	for j < end {
		c := src[j]
		switch {
		case c == '\\':
			// Raw or not, a backslash keeps the next quote in the string.
			j += 2
			continue
		case c == '\n' && !triple:
			l.bad = true
			return pyOther, s, j
		case c == q && (!triple || j+2 < end && src[j+1] == q && src[j+2] == q):
			if triple {
				j += 3
			} else {
				j++
			}
			l.skipTo(j)
			return pyString, s, j
		case c == '{' && fstring:
			if j+1 < end && src[j+1] == '{' {
				j += 2
				continue
			}
			k, ok := l.interpolation(j+1, q, triple)
			if !ok {
				l.bad = true
				return pyOther, s, end
			}
			j = k
			continue
		}
		j++
	}
	l.bad = true
	return pyOther, s, end
}

// interpolation reads an f-string's {expr!c:spec} from just after its
// '{' and returns the offset after its '}'. The expression's range, and
// those of interpolations nested in the spec, go to l.interp.
func (l *pyLexer) interpolation(j int, q byte, triple bool) (int, bool) {
	src, end := l.src, l.end
	start, depth := j, 0
	exprEnd := -1
	for j < end {
		c := src[j]
		switch {
		case c == '"' || c == '\'':
			if c == q && !triple {
				return 0, false
			}
			// A string inside the expression.
			sub := &pyLexer{src: src, i: j, end: end}
			if _, _, e := sub.str(j, false, false); !sub.bad {
				j = e
				continue
			}
			return 0, false
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == '}':
			if depth > 0 {
				depth--
				break
			}
			if exprEnd < 0 {
				exprEnd = j
			}
			l.interp = append(l.interp, [2]int{start, exprEnd})
			return j + 1, true
		case c == '!' && depth == 0 && j+1 < end && src[j+1] != '=':
			if exprEnd < 0 {
				exprEnd = j
			}
			j += 2
			continue
		case c == ':' && depth == 0:
			if exprEnd < 0 {
				exprEnd = j
			}
			// The format spec: text, with nested {interpolations}.
			l.interp = append(l.interp, [2]int{start, exprEnd})
			for k := j + 1; k < end; k++ {
				switch src[k] {
				case '{':
					n, ok := l.interpolation(k+1, q, triple)
					if !ok {
						return 0, false
					}
					k = n - 1
				case '}':
					return k + 1, true
				case '\n':
					if !triple {
						return 0, false
					}
				case q:
					if !triple {
						return 0, false
					}
				}
			}
			return 0, false
		case c == '\n' && !triple:
			return 0, false
		}
		j++
	}
	return 0, false
}

func (l *pyLexer) skipTo(j int) {
	for k := l.i; k < j; k++ {
		if l.src[k] == '\n' {
			l.row++
			l.lineStart = k + 1
		}
	}
	l.i = j
}

// pyLines splits src into logical lines; nil when it does not lex (an
// unterminated string) or a line is indented with tabs.
func pyLines(src []byte) []pyLine {
	l := &pyLexer{src: src, end: len(src)}
	var lines []pyLine
	cur := -1 // index of the logical line being read
	for {
		tok, s, e := l.next()
		if l.bad {
			return nil
		}
		switch tok {
		case pyEOF:
			if cur >= 0 {
				lines[cur].end, lines[cur].endRow, lines[cur].endCol = len(src), l.row, len(src)-l.lineStart
			}
			return lines
		case pyNewline:
			if cur >= 0 {
				lines[cur].end, lines[cur].endRow, lines[cur].endCol = s, l.tokRow, s-l.tokLineStart
				cur = -1
			}
			continue
		}
		if cur < 0 {
			// The first token of a logical line: its indentation.
			ls := l.tokLineStart
			for k := ls; k < s; k++ {
				if src[k] != ' ' {
					return nil // tabs (or a form feed) in indentation: parse it whole
				}
			}
			lines = append(lines, pyLine{lineStart: ls, row: l.tokRow, indent: s - ls, first: s, firstEnd: e, second: -1})
			cur = len(lines) - 1
		} else if lines[cur].second < 0 {
			lines[cur].second, lines[cur].secondEnd = s, e
		}
		lines[cur].colon = tok == pyPunct && src[s] == ':'
	}
}

// pythonBodies returns, for each def whose body has more than one
// statement (outside other such bodies), the span from the '\n' ending
// its header (open) to column 0 of the body's last statement (close):
// what tree-sitter need not parse. nil when src does not lex.
func pythonBodies(src []byte) []bodySpan {
	if len(src) >= 1<<31-1 {
		return nil
	}
	lines := pyLines(src)
	var spans []bodySpan
	word := func(ln *pyLine, first bool) string {
		s, e := ln.first, ln.firstEnd
		if !first {
			s, e = ln.second, ln.secondEnd
		}
		if s < 0 || e-s > 8 {
			return ""
		}
		return string(src[s:e])
	}
	for i := 0; i < len(lines); i++ {
		h := &lines[i]
		w := word(h, true)
		if !h.colon || w != "def" && !(w == "async" && word(h, false) == "def") {
			continue
		}
		// The body: the lines indented deeper than the header.
		j := i + 1
		for j < len(lines) && lines[j].indent > h.indent {
			j++
		}
		if j == i+1 {
			continue
		}
		body := lines[i+1 : j]
		in := body[0].indent
		last, consistent := -1, true
		for k := range body {
			switch {
			case body[k].indent < in:
				consistent = false // tree-sitter sees an error: parse it whole
			case body[k].indent == in:
				switch word(&body[k], true) {
				case "else", "elif", "except", "finally": // a clause of the statement before
				default:
					last = k
				}
			}
		}
		// Decorators before the last statement start it.
		for last > 0 && src[body[last-1].first] == '@' && body[last-1].indent == in {
			last--
		}
		if consistent && last > 0 && body[last].lineStart-h.end-1 >= minSkippedBody {
			spans = append(spans, bodySpan{
				open: uint32(h.end), openRow: uint32(h.endRow), openCol: uint32(h.endCol),
				close: uint32(body[last].lineStart), closeRow: uint32(body[last].row),
			})
		}
		i = j - 1
	}
	return spans
}

// pyKeywords are the words tree-sitter-python never makes identifier
// nodes of (True, False and None are literals).
var pyKeywords = set("and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
	"else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
	"not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "True", "False", "None")

// pyBodyIdents calls emit with the identifiers of the statements of body
// sp that tree-sitter does not parse (from after the header to the last
// statement), in order, f-string interpolations included, as
// tree-sitter-python would have made identifier nodes of them (until emit
// returns false). match and case are keywords where they start a line
// that ends with ':' (the match statement), identifiers elsewhere.
func pyBodyIdents(src []byte, sp bodySpan, emit func([]byte) bool) {
	pyIdents(src, int(sp.open)+1, int(sp.close), emit)
}

func pyIdents(src []byte, from, to int, emit func([]byte) bool) bool {
	l := &pyLexer{src: src, i: from, end: to}
	lineFirst := true
	for {
		tok, s, e := l.next()
		if l.bad {
			return true
		}
		switch tok {
		case pyEOF:
			return true
		case pyNewline:
			lineFirst = true
			continue
		case pyIdent:
			w := src[s:e]
			keyword := pyKeywords[string(w)]
			if !keyword && lineFirst && (string(w) == "match" || string(w) == "case") {
				keyword = pyLineEndsWithColon(src, e, to)
			}
			if !keyword && !emit(w) {
				return false
			}
		case pyString:
			if len(l.interp) > 0 {
				parts := append([][2]int(nil), l.interp...)
				for _, p := range parts {
					if !pyIdents(src, p[0], p[1], emit) {
						return false
					}
				}
			}
		}
		lineFirst = false
	}
}

// pyLineEndsWithColon reports whether the logical line going on at from
// ends with ':' (match x: / case y:), not with an assignment or a call.
func pyLineEndsWithColon(src []byte, from, to int) bool {
	l := &pyLexer{src: src, i: from, end: to}
	colon := false
	for {
		tok, s, _ := l.next()
		if l.bad || tok == pyEOF || tok == pyNewline {
			return colon
		}
		colon = tok == pyPunct && src[s] == ':'
		if tok == pyPunct && src[s] == '=' && l.depth == 0 {
			return false
		}
	}
}
