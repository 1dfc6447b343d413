package syntax

import "bytes"

// Minified JavaScript (a bundle: webpack's, esbuild's, a vendored .min.js)
// is one to a few hundred lines of up to hundreds of KB, and tree-sitter
// builds a node for every token of it: hugo's renderkatex.bundle.js, 305
// KB in 263 lines (the longest 113 KB), took ~24 MB of C while it parsed,
// the mixed benchmark tree's highest RSS, for no symbol (its code is one
// function expression's body) and names mangled to a letter or two. So a
// file that looks minified (jsMinified) is parsed like a Rust file's
// function bodies (skip_rust.go): the insides of its top-level brace
// blocks are left out of the parse, and their identifiers are read by the
// lexer below (jsBodyIdents) into the file's refs. What stays parsed is
// its top level: declarations, imports and exports there keep their
// symbols. Left out: a block's insides, so a class's methods, and the
// require() and import() calls in them (a bundle has resolved its own).
// Other files are parsed whole, as before.
//
// Peers draw the same line: VS Code does not tokenize lines over 20 000
// characters (editor.maxTokenizationLineLength), and code hosts mark such
// files as generated.

// A file is minified when it is at least minifiedSize bytes and its mean
// line is at least minifiedMeanLine bytes (hand-written JavaScript: 30-40;
// the two such files in the benchmark trees: 1 163 and 8 458). A long
// line alone (a data: URL in a hand-written file) does not make it so.
const (
	minifiedSize     = 32 << 10
	minifiedMeanLine = 250
)

// jsMinified reports whether src looks minified.
func jsMinified(src []byte) bool {
	if len(src) < minifiedSize {
		return false
	}
	return len(src)/(1+bytes.Count(src, []byte{'\n'})) >= minifiedMeanLine
}

// jsTok is a token kind of jsLexer.
type jsTok uint8

const (
	jsEOF    jsTok = iota
	jsBad          // an unterminated string, template, comment or regex
	jsIdent        // an identifier or keyword
	jsPunct        // one byte of punctuation; a template's `${` and its `}` too
	jsOther        // a number, string, regex or template text
	jsDivide       // '/' read as division (a kind of its own for regexOK)
)

// jsLexer splits JavaScript into the tokens the block finder and the
// identifier lexer need. Strings, comments, numbers, regular expression
// literals and template text are single tokens; a template's
// substitutions are code, so their identifiers and braces count. A '/'
// starts a regular expression where an expression may start (after an
// operator, an opening bracket or a keyword such as return), else it is
// division: the usual rule, wrong only in rare code (a regex right after
// a block's '}'), where the lexer then misreads part of a line.
type jsLexer struct {
	src       []byte
	i, end    int
	row       int // 0-based line of src[i]
	lineStart int // offset of that line's first byte
	// tmpl holds, for each template substitution we are in, the brace
	// depth it opened at; braces counts the braces open in code.
	tmpl   []int
	braces int
	prev   jsTok // the last token's kind (not comments)
	prevB  byte  // its byte when punctuation
	prevKw bool  // it was a keyword after which an expression starts
	// Set by skip_javascript.go's tokenizer (false in a minified file):
	// blockClose, the last '}' closed a block, not an object; headClose,
	// the last ')' closed an if/while/for/with head (a regular
	// expression may follow either); postfix, the last token ended a
	// postfix ++ or -- (a '/' after it divides).
	blockClose, headClose, postfix bool
}

func jsIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c == '\\'
}

func jsIdentPart(c byte) bool { return jsIdentStart(c) || c >= '0' && c <= '9' }

// jsNumberEnd returns the end of the numeric literal starting at i (a
// digit, or '.' before a digit) as tree-sitter lexes it: a '.' after a
// complete literal is a member access's, so 0n.toString(), 1.5.toFixed(),
// 1..toString() and 1e3.toFixed() end before it and the name after it is
// read. Letters running on (1px, 3in) stay in the literal as before (a
// whole parse reads those as errors).
func jsNumberEnd(src []byte, i, end int) int {
	digits := func(i int, hex bool) int {
		for i < end && (src[i] >= '0' && src[i] <= '9' || src[i] == '_' || hex && src[i]|0x20 >= 'a' && src[i]|0x20 <= 'f') {
			i++
		}
		return i
	}
	rest := func(i int) int {
		for i < end && jsIdentPart(src[i]) {
			i++
		}
		return i
	}
	if src[i] == '0' && i+1 < end && bytes.IndexByte([]byte("xXoObB"), src[i+1]) >= 0 {
		return rest(digits(i+2, true)) // a BigInt's 'n' runs on
	}
	if src[i] == '.' {
		i = digits(i+1, false)
	} else {
		i = digits(i, false)
		if i < end && src[i] == 'n' {
			return rest(i)
		}
		if i < end && src[i] == '.' {
			i = digits(i+1, false)
		}
	}
	if i < end && src[i]|0x20 == 'e' {
		j := i + 1
		if j < end && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < end && src[j] >= '0' && src[j] <= '9' {
			i = digits(j, false)
		}
	}
	return rest(i)
}

func (l *jsLexer) newline(at int) {
	l.row++
	l.lineStart = at + 1
}

// regexOK reports whether a '/' now starts a regular expression.
func (l *jsLexer) regexOK() bool {
	switch l.prev {
	case jsEOF: // the start
		return true
	case jsIdent:
		return l.prevKw
	case jsPunct:
		if l.postfix {
			return false
		}
		return (l.prevB != ')' || l.headClose) && l.prevB != ']' && (l.prevB != '}' || l.blockClose)
	case jsDivide:
		return true // an operand follows an operator
	}
	return false
}

// next returns the next token's kind and extent [s, e).
func (l *jsLexer) next() (tok jsTok, s, e int) {
	tok, s, e = l.scan()
	if tok != jsEOF && tok != jsBad {
		l.prev = tok
		if tok == jsPunct {
			l.prevB = l.src[s]
		}
		l.prevKw = tok == jsIdent && jsExprKeywords[string(l.src[s:e])]
	}
	return tok, s, e
}

func (l *jsLexer) scan() (jsTok, int, int) {
	src, end := l.src, l.end
	for l.i < end {
		c := src[l.i]
		switch {
		case c == '\n':
			l.newline(l.i)
			l.i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case c == '/' && l.i+1 < end && src[l.i+1] == '/':
			for l.i < end && src[l.i] != '\n' {
				l.i++
			}
		case c == '/' && l.i+1 < end && src[l.i+1] == '*':
			s := l.i
			l.i += 2
			for {
				if l.i+1 >= end {
					l.i = end
					return jsBad, s, end
				}
				if src[l.i] == '*' && src[l.i+1] == '/' {
					l.i += 2
					break
				}
				if src[l.i] == '\n' {
					l.newline(l.i)
				}
				l.i++
			}
		case c == '/':
			s := l.i
			if !l.regexOK() {
				l.i++
				return jsDivide, s, l.i
			}
			if !l.regex() {
				return jsBad, s, l.i
			}
			return jsOther, s, l.i
		case c == '"' || c == '\'':
			s := l.i
			if !l.quoted(c) {
				return jsBad, s, l.i
			}
			return jsOther, s, l.i
		case c == '`':
			s := l.i
			l.i++
			return l.template(s)
		case c == '}' && len(l.tmpl) > 0 && l.tmpl[len(l.tmpl)-1] == l.braces:
			// The end of a template substitution: the template goes on.
			l.tmpl = l.tmpl[:len(l.tmpl)-1]
			s := l.i
			l.i++
			if tok, _, e := l.template(s); tok == jsBad {
				return jsBad, s, e
			}
			return jsOther, s, l.i
		case jsIdentStart(c):
			s := l.i
			for l.i < end && jsIdentPart(src[l.i]) {
				if src[l.i] == '\\' && l.i+1 < end && src[l.i+1] != '\n' && src[l.i+1] != '\r' { // \uXXXX in a name
					l.i++
				}
				l.i++
			}
			return jsIdent, s, l.i
		case c >= '0' && c <= '9' || c == '.' && l.i+1 < end && src[l.i+1] >= '0' && src[l.i+1] <= '9':
			s := l.i
			l.i = jsNumberEnd(src, l.i, end)
			return jsOther, s, l.i
		default:
			s := l.i
			l.i++
			switch c {
			case '{':
				l.braces++
			case '}':
				l.braces--
			}
			return jsPunct, s, l.i
		}
	}
	return jsEOF, end, end
}

// quoted reads a string quoted by q from its opening quote at l.i; false
// at a line end or the source's end before the closing quote.
func (l *jsLexer) quoted(q byte) bool {
	src, end := l.src, l.end
	for l.i++; l.i < end; l.i++ {
		switch src[l.i] {
		case q:
			l.i++
			return true
		case '\\': // an escape; a line continuation (\ LF, \ CR LF) goes on
			if l.i+2 < end && src[l.i+1] == '\r' && src[l.i+2] == '\n' {
				l.i++
			}
			if l.i+1 < end && src[l.i+1] == '\n' {
				l.newline(l.i + 1)
			}
			l.i++
		case '\n':
			return false
		}
	}
	return false
}

// template reads template text from l.i (just past a '`' or a
// substitution's '}') to its closing '`' (jsOther) or to a '${' (jsPunct:
// the substitution's code follows); jsBad at the source's end.
func (l *jsLexer) template(s int) (jsTok, int, int) {
	src, end := l.src, l.end
	for ; l.i < end; l.i++ {
		switch src[l.i] {
		case '`':
			l.i++
			return jsOther, s, l.i
		case '\\':
			if l.i+1 < end && src[l.i+1] == '\n' {
				l.newline(l.i + 1)
			}
			l.i++
		case '\n':
			l.newline(l.i)
		case '$':
			if l.i+1 < end && src[l.i+1] == '{' {
				l.i += 2
				l.tmpl = append(l.tmpl, l.braces)
				return jsPunct, l.i - 2, l.i // "${": an expression follows
			}
		}
	}
	return jsBad, s, end
}

// regex reads a regular expression literal from its '/' at l.i, with its
// flags; false at a line end or the source's end before its closing '/'.
func (l *jsLexer) regex() bool {
	src, end := l.src, l.end
	class := false
	for l.i++; l.i < end; l.i++ {
		switch src[l.i] {
		case '\\':
			if l.i+1 < end && (src[l.i+1] == '\n' || src[l.i+1] == '\r') {
				return false // a regular expression ends on its line
			}
			l.i++
		case '\n':
			return false
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				for l.i++; l.i < end && jsIdentPart(src[l.i]); l.i++ {
				}
				return true
			}
		}
	}
	return false
}

// jsMinifiedBodies is the grammars' bodies for JavaScript, TypeScript and
// TSX: nil unless src looks minified (jsMinified); then the insides of its
// top-level brace blocks of at least minSkippedBody bytes, but for an
// import or export clause's braces (their names are the import's). nil
// too when src does not lex to balanced braces (the file is then parsed
// whole).
func jsMinifiedBodies(src []byte) []bodySpan {
	if !jsMinified(src) || len(src) >= 1<<31-1 {
		return nil
	}
	l := &jsLexer{src: src, end: len(src)}
	var spans []bodySpan
	var open bodySpan
	// clause: the open top-level block is an import or export clause
	// (import{a}, export{b}, import c,{d}); inImport: a top-level import
	// or export statement is being read; word and punct: the last token,
	// when an identifier or punctuation.
	clause, inImport := false, false
	word, punct := "", byte(0)
	for {
		tok, s, e := l.next()
		w, p := "", byte(0)
		switch tok {
		case jsEOF:
			if l.braces != 0 || len(l.tmpl) > 0 {
				return nil
			}
			return spans
		case jsBad:
			return nil
		case jsIdent:
			w = string(src[s:e])
			if l.braces == 0 && len(l.tmpl) == 0 {
				switch w {
				case "import", "export":
					inImport = true
				case "from":
					inImport = false
				}
			}
		case jsPunct:
			p = src[s]
			switch p {
			case ';':
				if l.braces == 0 {
					inImport = false
				}
			case '{':
				if l.braces == 1 && len(l.tmpl) == 0 {
					open = bodySpan{open: uint32(s), openRow: uint32(l.row), openCol: uint32(s - l.lineStart)}
					clause = word == "import" || word == "export" || inImport && punct == ','
				}
			case '}':
				if l.braces < 0 {
					return nil
				}
				if l.braces == 0 && len(l.tmpl) == 0 {
					open.close, open.closeRow, open.closeCol = uint32(s), uint32(l.row), uint32(s-l.lineStart)
					if !clause && s-int(open.open)-1 >= minSkippedBody {
						spans = append(spans, open)
					}
					if !clause {
						inImport = false
					}
				}
			}
		}
		word, punct = w, p
	}
}

// jsMinifiedIdents calls emit with the identifiers inside body sp
// (between its braces) in order, keywords left out, until emit returns
// false.
func jsMinifiedIdents(src []byte, sp bodySpan, emit func([]byte) bool) {
	l := &jsLexer{src: src, i: int(sp.open) + 1, end: int(sp.close)}
	l.prev, l.prevB = jsPunct, '{'
	for {
		tok, s, e := l.next()
		switch tok {
		case jsEOF, jsBad:
			return
		case jsIdent:
			if w := src[s:e]; !jsKeywords[string(w)] && !emit(w) {
				return
			}
		}
	}
}

// jsKeywords are the reserved words tree-sitter-javascript and
// -typescript read as keywords rather than identifiers in expressions and
// statements; jsExprKeywords those after which an expression (so a
// regular expression) may start.
var (
	jsKeywords = set("break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
		"do", "else", "export", "extends", "finally", "for", "function", "if", "import", "in", "instanceof",
		"new", "return", "super", "switch", "this", "throw", "try", "typeof", "var", "void", "while", "with",
		"yield", "let", "await", "null", "true", "false")
	jsExprKeywords = set("return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
		"case", "do", "else", "yield", "await")
)
