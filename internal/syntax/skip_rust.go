package syntax

import "unicode/utf8"

// Function bodies are most of a Rust file (68% of the bytes of the mixed
// benchmark tree's 19.5 MB) and most of tree-sitter's work, yet the index
// keeps nothing from inside them but the identifiers they use (refs):
// extractRust does not enter a function_item. So tree-sitter parses a Rust
// file with each item-level fn body's inside left out (included ranges:
// the braces stay, the tree keeps its byte offsets and rows, the fn's node
// its full extent), and collectRefs reads the identifiers of those insides
// with the lexer below, in document order, merged with the tree's.

// bodySpan is one function body tree-sitter does not parse: src[open] is
// its '{' and src[close] its '}'. Rows are 0-based lines and cols byte
// columns (tree-sitter's points) of the two braces.
type bodySpan struct {
	open, close       uint32
	openRow, closeRow uint32
	openCol, closeCol uint32
	tt                bool // inside a token tree (a macro's arguments or rules)
	fn                bool // a JavaScript function's body (skip_javascript.go), not a minified file's block
	ts, jsx           bool // fn: of TypeScript, of a dialect with JSX
}

// minSkippedBody is the smallest inside (bytes) worth a range of its own.
const minSkippedBody = 48

// rsTok is a token kind of rsLexer.
type rsTok uint8

const (
	rsEOF      rsTok = iota
	rsBad            // an unterminated string, char or comment
	rsIdent          // an identifier or keyword
	rsLifetime       // 'name: start and end are the name's
	rsPunct          // one byte of punctuation
	rsOther          // a literal, a raw identifier
)

// rsLexer splits Rust source into the tokens rustBodies and the body refs
// need: comments, strings (raw, byte, C), chars and numbers are single
// tokens, so nothing inside them is taken for code.
type rsLexer struct {
	src       []byte
	i         int
	end       int
	row       int // 0-based line of src[i]
	lineStart int // offset of that line's first byte
}

func rsIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func rsIdentPart(c byte) bool { return rsIdentStart(c) || c >= '0' && c <= '9' }

// newline notes a '\n' at offset at.
func (l *rsLexer) newline(at int) {
	l.row++
	l.lineStart = at + 1
}

// skipTo advances to offset j, counting the newlines passed.
func (l *rsLexer) skipTo(j int) {
	for k := l.i; k < j; k++ {
		if l.src[k] == '\n' {
			l.newline(k)
		}
	}
	l.i = j
}

// next returns the next token's kind and extent.
func (l *rsLexer) next() (rsTok, int, int) {
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
			j := l.i + 2
			for j < end && src[j] != '\n' {
				j++
			}
			l.i = j
		case c == '/' && l.i+1 < end && src[l.i+1] == '*':
			depth, j := 1, l.i+2
			for j < end && depth > 0 {
				switch {
				case src[j] == '/' && j+1 < end && src[j+1] == '*':
					depth++
					j += 2
				case src[j] == '*' && j+1 < end && src[j+1] == '/':
					depth--
					j += 2
				default:
					j++
				}
			}
			if depth > 0 {
				return rsBad, l.i, end
			}
			l.skipTo(j)
		default:
			return l.token()
		}
	}
	return rsEOF, end, end
}

// token reads the token at l.i (not a space or comment).
func (l *rsLexer) token() (rsTok, int, int) {
	src, end, s := l.src, l.end, l.i
	c := src[s]
	switch {
	case c == '"':
		return l.quoted(s, s+1)
	case c == '\'':
		return l.quote(s)
	case c >= '0' && c <= '9':
		j := s + 1
		for j < end {
			d := src[j]
			switch {
			case rsIdentPart(d):
				j++
			case (d == '+' || d == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !hexLiteral(src[s:j]):
				j++
			case d == '.' && j+1 < end && src[j+1] >= '0' && src[j+1] <= '9':
				j++
			default:
				l.i = j
				return rsOther, s, j
			}
		}
		l.i = j
		return rsOther, s, j
	case rsIdentStart(c):
		j := s + 1
		for j < end && rsIdentPart(src[j]) {
			j++
		}
		if j < end {
			switch w := string(src[s:j]); {
			case (w == "b" || w == "c") && src[j] == '"':
				return l.quoted(s, j+1)
			case w == "b" && src[j] == '\'':
				return l.quote(s + 1)
			case (w == "r" || w == "br" || w == "cr") && (src[j] == '"' || src[j] == '#'):
				return l.raw(s, j)
			}
		}
		l.i = j
		return rsIdent, s, j
	}
	l.i = s + 1
	return rsPunct, s, s + 1
}

func hexLiteral(b []byte) bool {
	return len(b) > 1 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')
}

// quoted reads a "..." string whose first byte after the quote is at j.
func (l *rsLexer) quoted(s, j int) (rsTok, int, int) {
	src, end := l.src, l.end
	for j < end {
		switch src[j] {
		case '\\':
			j += 2
			continue
		case '"':
			l.skipTo(j + 1)
			return rsOther, s, j + 1
		}
		j++
	}
	return rsBad, s, end
}

// raw reads r#"..."# (any number of #) starting at s, hashes at j; a raw
// identifier r#name is rsOther too.
func (l *rsLexer) raw(s, j int) (rsTok, int, int) {
	src, end := l.src, l.end
	h := j
	for h < end && src[h] == '#' {
		h++
	}
	if h >= end || src[h] != '"' {
		if h == j+1 && h < end && rsIdentStart(src[h]) && src[s] == 'r' && j == s+1 {
			k := h + 1
			for k < end && rsIdentPart(src[k]) {
				k++
			}
			l.i = k
			return rsOther, s, k
		}
		l.i = j
		return rsIdent, s, j
	}
	hashes := h - j
	for k := h + 1; k < end; k++ {
		if src[k] != '"' {
			continue
		}
		n := 0
		for n < hashes && k+1+n < end && src[k+1+n] == '#' {
			n++
		}
		if n == hashes {
			l.skipTo(k + 1 + n)
			return rsOther, s, k + 1 + n
		}
	}
	return rsBad, s, end
}

// quote reads what starts with the quote at q: a char literal ('x',
// '\n', '\u{1F600}') or a lifetime or label ('a, 'static).
func (l *rsLexer) quote(q int) (rsTok, int, int) {
	src, end := l.src, l.end
	if q+1 >= end {
		l.i = q + 1
		return rsPunct, q, q + 1
	}
	if src[q+1] == '\\' {
		for j := q + 2; j < end && src[j] != '\n'; j++ {
			if src[j] == '\\' {
				j++
				continue
			}
			if src[j] == '\'' {
				l.i = j + 1
				return rsOther, q, j + 1
			}
		}
		return rsBad, q, end
	}
	_, size := utf8.DecodeRune(src[q+1:])
	if q+1+size < end && src[q+1+size] == '\'' && src[q+1] != '\n' {
		l.i = q + 2 + size
		return rsOther, q, q + 2 + size
	}
	if rsIdentStart(src[q+1]) {
		j := q + 2
		for j < end && rsIdentPart(src[j]) {
			j++
		}
		l.i = j
		return rsLifetime, q + 1, j
	}
	l.i = q + 1
	return rsPunct, q, q + 1
}

// rustBodies returns the bodies of the fn items of src that are not inside
// another fn body and whose inside is at least minSkippedBody bytes, in
// order; nil when there are none or src does not lex (an unterminated
// string or comment: tree-sitter then parses it all, as before).
func rustBodies(src []byte) []bodySpan {
	if len(src) >= 1<<31-1 {
		return nil
	}
	l := &rsLexer{src: src, end: len(src)}
	var spans []bodySpan
	// tt is the depth of token-tree delimiters at item level: a fn inside
	// a macro call's arguments or a macro_rules body is tokens to
	// tree-sitter, and its body's words follow the token-tree rules.
	tt, ttNext := 0, false
	var prev rsTok
	for {
		tok, s, e := l.next()
		switch tok {
		case rsEOF:
			return spans
		case rsBad:
			return nil
		case rsPunct:
			switch c := src[s]; c {
			case '!':
				if prev == rsIdent && tt == 0 && l.delimiterFollows() {
					ttNext = true
				}
			case '(', '[', '{':
				if tt > 0 {
					tt++
				} else if ttNext {
					tt, ttNext = 1, false
				}
			case ')', ']', '}':
				if tt > 0 {
					tt--
				}
			}
			prev = tok
			continue
		case rsIdent:
			prev = tok
			if string(src[s:e]) == "macro_rules" && tt == 0 && l.follows("!") {
				ttNext = true
				continue
			}
			if e-s != 2 || src[s] != 'f' || src[s+1] != 'n' {
				continue
			}
		default:
			prev = tok
			continue
		}
		// fn NAME: an item (a fn pointer type has no name).
		if tok, _, _ = l.next(); tok != rsIdent {
			if tok == rsBad {
				return nil
			}
			prev = tok
			continue
		}
		// The signature: parameters, generics, return type, where clause,
		// up to the body's '{' outside parentheses and brackets, or ';'.
		depth := 0
	signature:
		for {
			tok, s, _ = l.next()
			prev = tok
			switch tok {
			case rsEOF:
				return spans
			case rsBad:
				return nil
			case rsPunct:
				switch src[s] {
				case '(', '[':
					depth++
				case ')', ']':
					depth--
				case ';':
					if depth <= 0 {
						break signature
					}
				case '}':
					if depth <= 0 {
						// A fn with neither body nor ';' whose token tree
						// this closes (m!{ fn f() }).
						if tt > 0 {
							tt--
						}
						break signature
					}
				case '{':
					if depth > 0 {
						continue
					}
					sp := bodySpan{open: uint32(s), openRow: uint32(l.row), openCol: uint32(s - l.lineStart), tt: tt > 0}
					if !l.matchBrace() {
						return nil
					}
					close := l.i - 1
					sp.close, sp.closeRow, sp.closeCol = uint32(close), uint32(l.row), uint32(close-l.lineStart)
					if close-s-1 >= minSkippedBody {
						spans = append(spans, sp)
					}
					break signature
				}
				if depth < 0 && tt > 0 {
					// The fn's token tree closed before any body.
					tt += depth
					tt = max(tt, 0)
					break signature
				}
			}
		}
	}
}

// matchBrace advances past the '}' that closes the '{' just read; false
// at the end of the source or on a token that does not lex.
func (l *rsLexer) matchBrace() bool {
	depth := 1
	for {
		tok, s, _ := l.next()
		switch tok {
		case rsEOF, rsBad:
			return false
		case rsPunct:
			switch l.src[s] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					return true
				}
			}
		}
	}
}

// rsKeywords are the words tree-sitter-rust reads as keywords (not
// identifier nodes) in code inside a function body; rsTTKeywords those it
// reads as keywords inside a token tree (a macro call's arguments, a
// macro_rules body, an attribute's arguments), where every other word,
// primitive type names included, is an identifier.
var (
	rsKeywords = set("as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
		"false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
		"return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "yield")
	rsTTKeywords = set("as", "async", "await", "break", "const", "continue", "default", "enum", "fn", "for",
		"if", "impl", "let", "loop", "match", "mod", "pub", "return", "static", "struct", "trait", "type",
		"union", "unsafe", "use", "where", "while", "mut", "true", "false")
)

// rsPrimitives are tree-sitter-rust's primitive_type names: in code not
// identifiers, but for a path's first segment (u8::MAX).
var rsPrimitives = set("u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "u128", "i128", "isize", "usize",
	"f32", "f64", "bool", "str", "char")

// rustBodyIdents calls emit with the identifiers inside body sp (between
// its braces) in order, as tree-sitter would have made identifier,
// type_identifier and field_identifier nodes of them (until emit returns
// false): keywords, primitive types in code (but before ::), macro
// metavariables ($x) and their fragment specifiers ($x:expr) and raw
// identifiers are left out; a lifetime's or label's name is an identifier.
func rustBodyIdents(src []byte, sp bodySpan, emit func([]byte) bool) {
	l := &rsLexer{src: src, i: int(sp.open) + 1, end: int(sp.close)}
	// tt is the depth of token-tree delimiters (0: code); ttNext says the
	// next opening delimiter starts one: after "name!" (a macro call),
	// "macro_rules! name", and inside an attribute's brackets. A body
	// inside a token tree is all token tree.
	tt, ttNext, attr := 0, false, 0
	if sp.tt {
		tt = 1
	}
	// A macro_rules defined in code: rules is the token-tree depth of its
	// body (0: none); a rule's left side, a pattern (inPattern), is where
	// $name:spec binds a fragment specifier, which is no identifier.
	rules, inPattern, expectPattern := 0, false, false
	// meta counts the tokens of "$name:spec" read so far (1 after '$', 2
	// after the name, 3 after the ':').
	meta := 0
	// pats holds the code delimiter depths of the struct patterns we are
	// in (Type { a, b: c } =>): a shorthand field (a) there is a
	// shorthand_field_identifier, no identifier. depth counts code
	// delimiters.
	var pats []int
	depth := 0
	// ctx is the stack of pattern contexts in code: a let's pattern (up
	// to its =), a for's (up to in), a match's arms (each up to its =>),
	// where Type { ... } is a struct pattern.
	type patCtx struct {
		depth     int
		kind      byte // 'l' let, 'f' for, 'm' match arms
		inPattern bool // 'm': before the arm's =>
		armBlock  int  // 'm': depth of the arm's { } body, 0 if none
	}
	var ctx []patCtx
	matchAt := -1 // depth of a "match" whose arms' '{' is next
	inPatternCtx := func() bool {
		if len(ctx) == 0 {
			return false
		}
		c := ctx[len(ctx)-1]
		return c.kind != 'm' || c.inPattern
	}
	var prev rsTok
	var prevByte byte // the last punctuation byte
	var prevWord []byte
	letMut := false // the last two words were "let mut"
	for {
		tok, s, e := l.next()
		switch tok {
		case rsEOF, rsBad:
			return
		case rsLifetime:
			meta = 0
			if !emit(src[s:e]) {
				return
			}
		case rsIdent:
			w := src[s:e]
			// A primitive type's name is an identifier as a path's first
			// segment (u8::MAX), a field or method name (.str()) and a
			// variable (let str = ..; let mut str = ..; str.trim()).
			keyword := rsKeywords[string(w)] || rsPrimitives[string(w)] && !l.follows("::") && !(prev == rsPunct && prevByte == '.') &&
				!(prev == rsIdent && (string(prevWord) == "let" || string(prevWord) == "mut" && letMut)) &&
				!(l.follows(".") && !l.follows("..")) ||
				string(w) == "raw" && prev == rsPunct && prevByte == '&' && (l.follows("const") || l.follows("mut"))
			if tt > 0 {
				keyword = rsTTKeywords[string(w)] || rsPrimitives[string(w)]
			}
			switch {
			case meta == 1:
				meta = 2
			case meta == 3:
				meta = 0
			case tt == 0 && string(w) == "macro_rules" && l.follows("!"):
				meta = 0
				l.next() // the '!'
				if tok, s, e := l.next(); tok == rsIdent && !emit(src[s:e]) {
					return
				}
				ttNext, rules, expectPattern = true, 1, true
			case keyword:
				meta = 0
				if tt == 0 {
					switch string(w) {
					case "let":
						ctx = append(ctx, patCtx{depth: depth, kind: 'l'})
					case "for":
						ctx = append(ctx, patCtx{depth: depth, kind: 'f'})
					case "in":
						if n := len(ctx); n > 0 && ctx[n-1].kind == 'f' && ctx[n-1].depth == depth {
							ctx = ctx[:n-1]
						}
					case "match":
						matchAt = depth
					}
				}
			case tt == 0 && len(pats) > 0 && pats[len(pats)-1] == depth && prevFieldStart(prev, prevByte, prevWord) && (l.follows(",") || l.follows("}")):
				meta = 0 // a shorthand field of a struct pattern
			default:
				meta = 0
				if !emit(w) {
					return
				}
			}
			letMut = prev == rsIdent && string(prevWord) == "let" && string(w) == "mut"
			prevWord = w
		case rsPunct:
			c := src[s]
			if n := len(ctx); tt == 0 && n > 0 && ctx[n-1].depth == depth {
				top := &ctx[n-1]
				switch {
				case c == '=' && l.follows(">"):
					if top.kind == 'm' {
						top.inPattern = false
					}
				case c == '=' && !l.follows("=") && prevByte != '=' && prevByte != '!' && prevByte != '<' && prevByte != '>' || c == ';':
					if top.kind != 'm' {
						ctx = ctx[:n-1]
					}
				case c == ',':
					if top.kind == 'm' {
						top.inPattern = true
					}
				}
			}
			switch {
			case c == '$':
				meta = 1
			case c == ':' && meta == 2 && inPattern && !l.follows(":"):
				meta = 3
			default:
				meta = 0
			}
			switch c {
			case '!':
				if prev == rsIdent && tt == 0 && l.delimiterFollows() {
					ttNext = true
				}
			case '(', '[', '{':
				switch {
				case tt > 0:
					tt++
					if rules > 0 && tt == rules+1 {
						inPattern, expectPattern = expectPattern, false
					}
				case ttNext || attr > 0:
					tt, ttNext = 1, false
				case c == '[' && (prevByte == '#' || prevByte == '!') && prev == rsPunct:
					attr++
				default:
					depth++
					if c == '{' && prev == rsIdent && len(prevWord) > 0 && (len(pats) > 0 && pats[len(pats)-1] == depth-1 ||
						inPatternCtx() && prevWord[0] >= 'A' && prevWord[0] <= 'Z' || l.structPattern(prevWord)) {
						pats = append(pats, depth)
					} else if c == '{' && matchAt == depth-1 {
						matchAt = -1
						ctx = append(ctx, patCtx{depth: depth, kind: 'm', inPattern: true})
					} else if n := len(ctx); c == '{' && n > 0 && ctx[n-1].kind == 'm' && ctx[n-1].depth == depth-1 && prev == rsPunct && prevByte == '>' {
						ctx[n-1].armBlock = depth
					}
				}
			case ')', ']', '}':
				switch {
				case tt > 0:
					tt--
					if rules > 0 && tt == rules {
						// A rule's side closed: a pattern is followed by
						// its expansion, an expansion by the next pattern.
						expectPattern = !inPattern
						inPattern = false
					} else if rules > 0 && tt < rules {
						rules = 0
					}
				case c == ']' && attr > 0:
					attr--
				default:
					if len(pats) > 0 && pats[len(pats)-1] == depth {
						pats = pats[:len(pats)-1]
					}
					for n := len(ctx); n > 0 && ctx[n-1].depth >= depth; n-- {
						ctx = ctx[:n-1] // a context inside the closed group
					}
					if n := len(ctx); n > 0 && ctx[n-1].kind == 'm' && ctx[n-1].armBlock == depth {
						ctx[n-1].armBlock, ctx[n-1].inPattern = 0, true
					}
					depth--
				}
			}
			prevByte = c
		default:
			meta = 0
		}
		prev = tok
	}
}

const maxPatternLook = 512

// prevFieldStart reports whether a struct pattern's field can start
// after the previous token: the group's '{', a ',' or a ref/mut.
func prevFieldStart(prev rsTok, prevByte byte, prevWord []byte) bool {
	if prev == rsPunct {
		return prevByte == '{' || prevByte == ','
	}
	return prev == rsIdent && (string(prevWord) == "ref" || string(prevWord) == "mut")
}

// structPattern reports whether the '{' just read, after the word typ,
// opens a struct pattern rather than a struct expression or a block: typ
// names a type (upper case, or Self) and the group's '}' is followed,
// past closing parentheses and brackets, by what follows a pattern: =>,
// = (not ==), | (not ||), "if" (a match guard) or "in" (a for loop).
// It looks at most maxPatternLook bytes ahead (so nested groups cost
// linear time, not quadratic): a longer group is taken for an expression.
func (l *rsLexer) structPattern(typ []byte) bool {
	if len(typ) == 0 || typ[0] < 'A' || typ[0] > 'Z' {
		return false
	}
	look := *l
	look.end = min(l.end, l.i+maxPatternLook)
	if !look.matchBrace() {
		return false
	}
	for {
		tok, s, e := look.next()
		switch tok {
		case rsPunct:
			switch l.src[s] {
			case ')', ']':
				continue
			case '=':
				return !look.follows("=")
			case '|':
				return !look.follows("|")
			}
			return false
		case rsIdent:
			w := string(l.src[s:e])
			return w == "if" || w == "in"
		}
		return false
	}
}

// delimiterFollows reports whether an opening delimiter comes next: after
// "name!" it opens a macro call's arguments, a token tree.
func (l *rsLexer) delimiterFollows() bool {
	return l.follows("(") || l.follows("[") || l.follows("{")
}

// follows reports whether p comes next at l.i, after spaces.
func (l *rsLexer) follows(p string) bool {
	j := l.i
	for j < l.end && (l.src[j] == ' ' || l.src[j] == '\t' || l.src[j] == '\n' || l.src[j] == '\r') {
		j++
	}
	return j+len(p) <= l.end && string(l.src[j:j+len(p)]) == p
}
