package syntax

import (
	"bytes"
	"sync"
	"unsafe"
)

// JavaScript, TypeScript and TSX function bodies (hand-written files;
// minified ones are skip_minified.go's) are left out of tree-sitter's
// parse like Rust's and Python's (skip_rust.go): extractJS never enters a
// function's body (its walk reads top-level statements, export and
// namespace bodies, class bodies' member names; a local declaration
// inside a function is not a symbol), so the index keeps from a body only
// its identifiers (refs) and its require("x") / import("x") calls
// (jsRequires). The included ranges keep the braces, so the tree keeps
// its offsets, rows and every function's full extent; collectRefs merges
// the lexed identifiers after the body's block node, and jsRequires the
// lexed calls by offset among the tree's (Parse then sorts imports by
// line, stably, as before). Class bodies stay parsed; their methods'
// bodies are left out.
//
// Finding the bodies: jsTokenizer splits the file with jsLexer
// (skip_minified.go; a '/' after a block's '}' may start a regular
// expression) and gives each '{' a kind from the tokens before it: the
// '{' after an arrow's "=>", or after the ')' of a parameter list (a ')'
// whose '(' does not follow if/for/while/switch/catch/with), is a
// function body; in TypeScript also the '{' ending a return type
// (`f(): Promise<T> {`). It stops at an unterminated token, unbalanced
// brackets and, in JavaScript and TSX, a '<' where an expression starts
// (JSX, whose text it cannot read): bodies still open there are parsed.
//
// Reading them (jsScan, the same code when finding the bodies and when
// lexing one): each identifier is classified as tree-sitter reads it.
// Keywords out, but a keyword after '.' or as an object or class member's
// name is a property_identifier; contextual words (get, set, static,
// async, let, of) by what follows them; labels and break/continue labels
// (statement_identifier) out; private names (#x), new.target and
// import.meta out. In TypeScript the scanner follows types: after a ':'
// annotation (not a conditional's, an object literal's, a label's or a
// case's), as and satisfies, inside type arguments ('<' glued to a name,
// or where an expression starts) and object types, the predefined types
// (string, number, any, ...) and type operators (keyof, infer, ...) are
// not refs, and a type ends at '=', ',', ';', an arrow that does not
// follow ')', a '{' after a complete type, or a new line. Modifiers and
// parameter properties are keywords. A body holding what the scanner
// cannot read exactly (a non-ASCII identifier, a type, interface,
// namespace or declare declaration, a '<' it placed wrong) is parsed
// whole, and the bodies around it too; its nested functions can still be
// skipped.
//
// Every guess is checked against the skipped parse (jsVerify): each left-
// out body must be a statement_block of a function, method or arrow over
// the same braces, and the tree must have no error; else the file is
// parsed again whole (Parse). So HasErrors differs from a whole parse
// only where the errors were inside a left-out body.
//
// On the mixed benchmark tree (TestJavaScriptBodySkipOnTree and
// TestTypeScriptBodySkipOnTree, TASK_X_BENCH_DIR): 1 688 of 2 209
// JavaScript files have bodies left out (5.0 of 7.9 MB), 322 of 2 660
// TypeScript files (1.3 of 8.8 MB: most are .d.ts declarations); symbols,
// imports, refs and errors equal to a whole parse in every file.
// BenchmarkParseTree, JavaScript 1.22-1.36 -> 0.55-0.66 CPU-s a pass,
// TypeScript 0.89-0.99 -> 0.83-0.94 (docs/index.md, Issue 39).

// Brace kinds (jsTokn.f of a '{').
const (
	bkBlock  = 1 + iota // a statement block
	bkFn                // a function's body: a candidate to leave out
	bkObject            // an object literal (or pattern)
	bkClass             // a class body
	bkType              // a TypeScript object type (scan only)
)

// jsTokn is one token of a tokenized file or body.
type jsTokn struct {
	s, e  uint32
	row   uint32 // of e (of s too for punctuation and identifiers)
	match int32  // a bracket's partner, -1 if none
	kind  jsTok
	b     byte  // punctuation's byte
	f     uint8 // '{': its brace kind; ':': 1 when a conditional's
}

// jsWorkPool recycles token slices of up to maxPooledToks tokens (a 64
// KiB file has ~13 000) with the scans' stacks; bigger ones are left to
// the GC.
const maxPooledToks = 32 << 10

var jsWorkPool = sync.Pool{New: func() any { return &jsWork{toks: make([]jsTokn, 0, 4096)} }}

// jsWork is the scratch of one tokenizing and scan, pooled.
type jsWork struct {
	toks      []jsTokn
	stack, qs []int32
	levels    []jsLevel
	cands     []jsCand
	z         jsTokenizer
	sc        jsScan
}

// getJSWork returns scratch whose token slice holds n tokens.
func getJSWork(n int) *jsWork {
	w := jsWorkPool.Get().(*jsWork)
	if cap(w.toks) < n {
		w.toks = make([]jsTokn, 0, n)
	}
	return w
}

func putJSWork(w *jsWork) {
	if cap(w.toks) <= maxPooledToks {
		w.toks, w.stack, w.qs, w.levels, w.cands = w.toks[:0], w.stack[:0], w.qs[:0], w.levels[:0], w.cands[:0]
		jsWorkPool.Put(w)
	}
}

// jsTokensFor estimates the tokens of n bytes (about one per 5 bytes).
func jsTokensFor(n int) int { return n/5 + 64 }

// jsTokenizer reads src[start:end) into tokens, deciding each brace's
// kind. complete is false when it stopped early: an unterminated token,
// unbalanced brackets, or (jsx) a '<' where an expression starts (JSX,
// whose text the lexer cannot read).
type jsTokenizer struct {
	src  []byte
	jsx  bool
	toks []jsTokn
	w    *jsWork // the stacks' scratch
}

func (z *jsTokenizer) run(start, end, row, lineStart int, firstFn bool) (complete bool) {
	src := z.src
	l := &jsLexer{src: src, i: start, end: end, row: row, lineStart: lineStart}
	stack := z.w.stack[:0] // open brackets
	qs := z.w.qs[:0]       // pending '?' of conditionals per level (qs[0]: outside any)
	defer func() { z.w.stack, z.w.qs = stack[:0], qs[:0] }()
	qs = append(qs, 0)
	pendingClass := -1 // stack depth at which a `class` awaits its body
	for {
		exprStart := l.regexOK()
		tok, s, e := l.next()
		switch tok {
		case jsEOF:
			return len(stack) == 0 && len(l.tmpl) == 0
		case jsBad:
			return false
		}
		t := jsTokn{s: uint32(s), e: uint32(e), row: uint32(l.row), match: -1, kind: tok}
		if tok == jsPunct {
			t.b = src[s]
		}
		i := int32(len(z.toks))
		switch {
		case tok == jsIdent && e-s == 5 && string(src[s:e]) == "class":
			if !(i > 0 && z.isPunct(i-1, '.')) && nextByteIdentOrBrace(src, e, end) {
				pendingClass = len(stack)
			}
		case tok != jsPunct:
		case t.b == '<':
			if z.jsx && exprStart {
				return false
			}
		case t.b == '(' || t.b == '[':
			stack = append(stack, i)
			qs = append(qs, 0)
		case t.b == '{':
			switch {
			case i == 0 && firstFn:
				t.f = bkFn
			case pendingClass == len(stack):
				t.f = bkClass
				pendingClass = -1
			default:
				t.f = z.braceKind(i, stack, qs)
			}
			stack = append(stack, i)
			qs = append(qs, 0)
		case t.b == ')' || t.b == ']' || t.b == '}':
			if len(stack) == 0 {
				return false
			}
			o := stack[len(stack)-1]
			ob := z.toks[o].b
			if ob == '(' && t.b != ')' || ob == '[' && t.b != ']' || ob == '{' && t.b != '}' {
				return false
			}
			stack = stack[:len(stack)-1]
			qs = qs[:len(qs)-1]
			if pendingClass > len(stack) {
				pendingClass = -1
			}
			t.match = o
			z.toks[o].match = i
			switch t.b {
			case '}':
				l.blockClose = z.toks[o].f != bkObject
			case ')':
				switch z.word(o - 1) {
				case "if", "while", "for", "with":
					l.headClose = true
				default:
					l.headClose = false
				}
			}
		case t.b == '?':
			if !optionalOrNullish(src, s, end, i > 0 && z.isPunct(i-1, '?') && z.toks[i-1].e == t.s) {
				qs[len(qs)-1]++
			}
		case t.b == ':':
			if qs[len(qs)-1] > 0 {
				qs[len(qs)-1]--
				t.f = 1
			}
		}
		// A '+' or '-' glued to the same before it, after an operand, ends
		// a postfix ++ or --.
		l.postfix = tok == jsPunct && (t.b == '+' || t.b == '-') && z.isPunct(i-1, t.b) && z.toks[i-1].e == t.s && z.operand(i-2)
		z.toks = append(z.toks, t)
	}
}

// operand reports whether token i ends an operand (a name that is not a
// keyword, a literal, a ')' or ']').
func (z *jsTokenizer) operand(i int32) bool {
	if i < 0 {
		return false
	}
	switch t := &z.toks[i]; t.kind {
	case jsIdent:
		return !jsHardKeywords[z.word(i)] || z.word(i) == "this" || z.word(i) == "super"
	case jsOther:
		return true
	case jsPunct:
		return t.b == ')' || t.b == ']'
	}
	return false
}

// nextByteIdentOrBrace reports whether the first non-space byte from e
// starts an identifier or is '{' (a class keyword rather than a member
// named class).
func nextByteIdentOrBrace(src []byte, e, end int) bool {
	for ; e < end; e++ {
		switch c := src[e]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c == '{' || jsIdentStart(c)
		}
	}
	return false
}

// optionalOrNullish reports whether the '?' at s is part of "?." (not
// "?.5"), "??", or the second '?' of one (afterQ), or TypeScript's
// optional mark (x?: T, f(x?) ).
func optionalOrNullish(src []byte, s, end int, afterQ bool) bool {
	if afterQ {
		return true
	}
	if s+1 < end {
		switch src[s+1] {
		case '?':
			return true
		case '.':
			return !(s+2 < end && src[s+2] >= '0' && src[s+2] <= '9')
		}
	}
	for j := s + 1; j < end; j++ {
		switch src[j] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':', ',', ')':
			return true
		}
		break
	}
	return false
}

func (z *jsTokenizer) isPunct(i int32, b byte) bool {
	return i >= 0 && int(i) < len(z.toks) && z.toks[i].kind == jsPunct && z.toks[i].b == b
}

func (z *jsTokenizer) word(i int32) string {
	if i < 0 || int(i) >= len(z.toks) || z.toks[i].kind != jsIdent {
		return ""
	}
	return srcString(z.src, z.toks[i].s, z.toks[i].e)
}

// srcString is src[s:e] as a string without a copy: for comparisons and
// map look-ups only (src does not change while a file parses, and the
// string is not kept).
func srcString(src []byte, s, e uint32) string {
	if e <= s {
		return ""
	}
	return unsafe.String(&src[s], int(e-s))
}

// braceKind decides what the '{' at token i opens from the tokens before it.
func (z *jsTokenizer) braceKind(i int32, stack, qs []int32) uint8 {
	if i == 0 {
		return bkBlock
	}
	p := &z.toks[i-1]
	switch p.kind {
	case jsPunct:
		switch p.b {
		case ')':
			switch z.word(p.match - 1) {
			case "if", "for", "while", "switch", "catch", "with", "await":
				return bkBlock
			}
			return bkFn
		case '>':
			if z.isPunct(i-2, '=') && z.toks[i-2].e == p.s {
				return bkFn // =>
			}
			return bkObject
		case '{', '}', ';':
			return bkBlock
		case ':':
			if p.f == 1 || qs[len(qs)-1] > 0 {
				return bkObject
			}
			if len(stack) > 0 {
				if o := &z.toks[stack[len(stack)-1]]; o.b != '{' || o.f == bkObject {
					return bkObject
				}
			}
			return bkBlock // case x: {, label: {
		}
		return bkObject
	case jsIdent:
		switch z.word(i - 1) {
		case "return", "typeof", "case", "in", "of", "yield", "await", "throw", "delete", "void",
			"instanceof", "new", "extends", "default", "const", "let", "var":
			return bkObject
		}
		return bkBlock
	}
	return bkBlock
}

// jsBodies is the grammars' bodies for JavaScript: a minified file's
// top-level blocks (jsMinifiedBodies), else the function bodies jsScan
// can read exactly, outermost first, each at least minSkippedBody bytes
// inside; nil when there is none. tsBodies and tsxBodies are it for
// TypeScript and TSX.
func jsBodies(src []byte) []bodySpan  { return scriptBodies(src, false, true) }
func tsBodies(src []byte) []bodySpan  { return scriptBodies(src, true, false) }
func tsxBodies(src []byte) []bodySpan { return scriptBodies(src, true, true) }

func scriptBodies(src []byte, ts, jsx bool) []bodySpan {
	if len(src) >= 1<<31-1 {
		return nil
	}
	if jsMinified(src) {
		return jsMinifiedBodies(src)
	}
	if !bytes.Contains(src, []byte("function")) && !bytes.Contains(src, []byte("=>")) && !bytes.Contains(src, []byte(") {")) && !bytes.Contains(src, []byte("){")) && !(ts && bytes.Contains(src, []byte("):"))) {
		return nil
	}
	w := getJSWork(jsTokensFor(len(src)))
	defer putJSWork(w)
	z := &w.z
	*z = jsTokenizer{src: src, jsx: jsx, toks: w.toks[:0], w: w}
	z.run(0, len(src), 0, 0, false)
	w.toks = z.toks[:0]
	sc := &w.sc
	*sc = jsScan{src: src, toks: z.toks, ts: ts, levels: w.levels[:0], cands: w.cands[:0]}
	spans := sc.find()
	w.levels, w.cands = sc.levels[:0], sc.cands[:0]
	*z, *sc = jsTokenizer{}, jsScan{} // drop src, the callbacks and the spans
	for k := range spans {
		spans[k].ts, spans[k].jsx = ts, jsx
	}
	return spans
}

// jsBodyIdents is the grammars' bodyIdents for JavaScript, TypeScript and
// TSX: a function body's identifiers (jsScan), or a minified file's
// block's (jsMinifiedIdents).
func jsBodyIdents(src []byte, sp bodySpan, emit func([]byte) bool) {
	if !sp.fn {
		jsMinifiedIdents(src, sp, emit)
		return
	}
	jsScanBody(src, sp, emit, nil)
}

// jsScanBody tokenizes body sp and passes its identifiers to emit (until
// it returns false) and its require()/import() calls to req.
func jsScanBody(src []byte, sp bodySpan, emit func([]byte) bool, req func(at, row uint32, kind, path string)) {
	w := getJSWork(jsTokensFor(int(sp.close - sp.open)))
	defer putJSWork(w)
	z := &w.z
	*z = jsTokenizer{src: src, jsx: sp.jsx, toks: w.toks[:0], w: w}
	z.run(int(sp.open), int(sp.close)+1, int(sp.openRow), int(sp.open)-int(sp.openCol), true)
	w.toks = z.toks[:0]
	sc := &w.sc
	*sc = jsScan{src: src, toks: z.toks, ts: sp.ts, emit: emit, req: req, levels: w.levels[:0], cands: w.cands[:0]}
	sc.scan()
	w.levels, w.cands = sc.levels[:0], sc.cands[:0]
	*z, *sc = jsTokenizer{}, jsScan{}
}

// jsBodyRequires passes the require("x") and import("x") calls inside
// function body sp to req with their offset and 0-based row.
func jsBodyRequires(src []byte, sp bodySpan, req func(at, row uint32, kind, path string)) {
	in := src[sp.open:sp.close]
	if !bytes.Contains(in, []byte("require")) && !bytes.Contains(in, []byte("import")) {
		return
	}
	jsScanBody(src, sp, nil, req)
}

// jsScan classifies the identifiers of tokens (jsTokenizer's).
type jsScan struct {
	src  []byte
	toks []jsTokn
	ts   bool // TypeScript or TSX: types and their keywords
	// emit takes identifiers that are refs (until it returns false), req
	// the require()/import() calls; both nil when finding bodies.
	emit func([]byte) bool
	req  func(at, row uint32, kind, path string)

	levels []jsLevel // levels[0] is outside every bracket
	cands  []jsCand
	spans  []bodySpan
	stop   bool

	colAt, lineStart uint32 // col's last offset and the start of its line
}

// jsLevel is one open bracket ('(', '[', '{' or, in TypeScript, a type's
// '<') while scanning.
type jsLevel struct {
	tok      int32 // the opening token, -1 for the top
	typ      bool  // its inside is a type (type arguments, a type literal)
	ann      bool  // a type annotation (after ':', as, satisfies) is being read at this level
	annRet   bool  // ... a return type (its ':' followed a parameter list's ')')
	caseOpen bool  // a case or default awaits its ':'
}

// jsCand is an open function body while finding bodies.
type jsCand struct {
	tok   int32
	col   uint32 // of its '{'
	bad   bool
	spans int // len(spans) when it opened
}

const (
	jsSkipIdent = iota
	jsEmitIdent
	jsBadIdent
)

// find returns the bodies to leave out.
func (sc *jsScan) find() []bodySpan {
	sc.walk()
	return sc.spans
}

// scan emits one body's identifiers and calls.
func (sc *jsScan) scan() { sc.walk() }

func (sc *jsScan) bad() {
	if len(sc.cands) > 0 {
		sc.cands[len(sc.cands)-1].bad = true
	}
}

func (sc *jsScan) top() *jsLevel { return &sc.levels[len(sc.levels)-1] }

func (sc *jsScan) walk() {
	finding := sc.emit == nil && sc.req == nil
	sc.levels = append(sc.levels[:0], jsLevel{tok: -1})
	for i := range sc.toks {
		if sc.stop {
			return
		}
		t := &sc.toks[i]
		retBody := false
		if sc.ts && sc.top().ann {
			retBody = sc.endAnnotation(i)
		}
		lv := sc.top()
		inType := sc.ts && (lv.typ || lv.ann)
		switch t.kind {
		case jsPunct:
			switch t.b {
			case '(', '[':
				sc.levels = append(sc.levels, jsLevel{tok: int32(i), typ: inType})
			case '<':
				if sc.ts && sc.angleOpens(i, inType) {
					sc.levels = append(sc.levels, jsLevel{tok: int32(i), typ: true})
				}
			case '>':
				if sc.ts && lv.tok >= 0 && sc.toks[lv.tok].b == '<' && !(sc.isPunct(i-1, '=') && sc.toks[i-1].e == t.s) {
					sc.levels = sc.levels[:len(sc.levels)-1]
				}
			case ';':
				if sc.ts && lv.tok >= 0 && sc.toks[lv.tok].b == '<' {
					sc.bad() // a '<' that was a comparison
					sc.levels = sc.levels[:len(sc.levels)-1]
				}
			case ':':
				if sc.ts && t.f != 0 && sc.isPunct(i-1, ')') {
					// cond ? (x): T => y : z: an arrow's return type or
					// the conditional's ':', as tree-sitter decides: not read here
					if o := int(sc.toks[i-1].match); o > 0 && (sc.isPunct(o-1, '?') || sc.isWord(o-1, "async") || sc.isPunct(o-1, '>')) {
						sc.bad()
					}
				}
				if sc.ts && t.f == 0 && sc.annotationColon(i) {
					lv.ann, lv.annRet = true, sc.isPunct(i-1, ')')
				}
			case '{':
				if sc.ts {
					switch {
					case inType:
						t.f = bkType
					case retBody:
						t.f = bkFn
					case t.f == bkFn && i > 0 && !sc.isPunct(i-1, ')') && !sc.arrowAt(i-2):
						t.f = bkBlock
					}
				}
				sc.levels = append(sc.levels, jsLevel{tok: int32(i), typ: t.f == bkType})
				if t.f == bkFn && t.match >= 0 {
					c := jsCand{tok: int32(i), spans: len(sc.spans)}
					if finding {
						c.col = sc.col(t.s)
					}
					sc.cands = append(sc.cands, c)
				}
			case ')', ']', '}':
				for len(sc.levels) > 1 && sc.toks[sc.top().tok].b == '<' {
					sc.bad()
					sc.levels = sc.levels[:len(sc.levels)-1]
				}
				if len(sc.levels) > 1 {
					sc.levels = sc.levels[:len(sc.levels)-1]
				}
				if t.b == '}' && t.match >= 0 && sc.toks[t.match].f == bkFn && len(sc.cands) > 0 && sc.cands[len(sc.cands)-1].tok == t.match {
					c := sc.cands[len(sc.cands)-1]
					sc.cands = sc.cands[:len(sc.cands)-1]
					if c.bad {
						sc.bad()
					} else if o := &sc.toks[c.tok]; finding && t.s-o.s-1 >= minSkippedBody {
						sc.spans = append(sc.spans[:c.spans], bodySpan{
							open: o.s, openRow: o.row, openCol: c.col,
							close: t.s, closeRow: t.row, closeCol: sc.col(t.s), fn: true,
						})
					}
				}
			}
		case jsIdent:
			if finding && len(sc.cands) == 0 && !sc.ts {
				continue // outside every body: tree-sitter reads it
			}
			c := sc.classify(i, inType)
			if finding && len(sc.cands) == 0 {
				c = jsSkipIdent // TypeScript's levels were kept up to date
			}
			switch c {
			case jsEmitIdent:
				if sc.emit != nil && !sc.emit(sc.src[t.s:t.e]) {
					sc.stop = true
				}
			case jsBadIdent:
				sc.bad()
			case jsSkipIdent:
				if sc.ts && !inType {
					switch sc.word(i) {
					case "as", "satisfies":
						if !sc.isPunct(i-1, '.') {
							lv.ann, lv.annRet = true, false
						}
					case "case", "default":
						lv.caseOpen = true
					}
				}
			}
			if sc.req != nil {
				sc.call(i)
			}
		}
	}
}

// col is the byte column of offset at, which is never before the last
// offset asked (the walk's order): a line is searched once however many
// braces it holds.
func (sc *jsScan) col(at uint32) uint32 {
	if at < sc.colAt {
		sc.colAt, sc.lineStart = 0, 0
	}
	if j := bytes.LastIndexByte(sc.src[sc.colAt:at], '\n'); j >= 0 {
		sc.lineStart = sc.colAt + uint32(j) + 1
	}
	sc.colAt = at
	return at - sc.lineStart
}

func (sc *jsScan) tok(i int) *jsTokn {
	if i < 0 || i >= len(sc.toks) {
		return nil
	}
	return &sc.toks[i]
}

func (sc *jsScan) isPunct(i int, b byte) bool {
	t := sc.tok(i)
	return t != nil && t.kind == jsPunct && t.b == b
}

func (sc *jsScan) word(i int) string {
	t := sc.tok(i)
	if t == nil || t.kind != jsIdent {
		return ""
	}
	return srcString(sc.src, t.s, t.e)
}

func (sc *jsScan) isWord(i int, w string) bool {
	t := sc.tok(i)
	return t != nil && t.kind == jsIdent && int(t.e-t.s) == len(w) && string(sc.src[t.s:t.e]) == w
}

// ctx is the kind of the innermost open bracket: a brace kind, '(', '['
// or '<' (0 at the top), and its token.
func (sc *jsScan) ctx() (kind uint8, opener int) {
	o := int(sc.top().tok)
	if o < 0 {
		return 0, -1
	}
	if t := &sc.toks[o]; t.b == '{' {
		return t.f, o
	}
	return sc.toks[o].b, o
}

// tsPrefixWords are TypeScript words after which a type goes on.
var tsPrefixWords = set("keyof", "typeof", "infer", "unique", "readonly", "asserts", "is", "extends", "new",
	"abstract", "as", "satisfies", "in", "instanceof", "void", "return", "case", "yield", "await", "throw", "delete")

// typeEnd reports whether token p can end a type (or an operand).
func (sc *jsScan) typeEnd(p int) bool {
	t := sc.tok(p)
	if t == nil {
		return false
	}
	switch t.kind {
	case jsIdent:
		return !tsPrefixWords[sc.word(p)]
	case jsOther:
		return true
	case jsPunct:
		switch t.b {
		case ')', ']', '}':
			return true
		case '>':
			return !(sc.isPunct(p-1, '=') && sc.toks[p-1].e == t.s)
		}
	}
	return false
}

// typeEndIn is typeEnd inside a type, where void is a whole type.
func (sc *jsScan) typeEndIn(p int) bool { return sc.typeEnd(p) || sc.isWord(p, "void") }

// endAnnotation ends the type annotation read at the top level when token
// i cannot go on with it; it reports whether i is the '{' of a function
// body after a return type.
func (sc *jsScan) endAnnotation(i int) bool {
	lv := sc.top()
	t := &sc.toks[i]
	end := false
	switch t.kind {
	case jsPunct:
		switch t.b {
		case '=':
			if n := sc.tok(i + 1); n != nil && n.kind == jsPunct && n.b == '>' && n.s == t.e {
				end = !sc.isPunct(i-1, ')') // a function type's arrow goes on
			} else {
				end = true
			}
		case '>':
			end = !(sc.isPunct(i-1, '=') && sc.toks[i-1].e == t.s)
		case '{':
			if sc.typeEndIn(i - 1) {
				lv.ann = false
				return lv.annRet
			}
		case '|', '&':
			n := sc.tok(i + 1)
			end = n != nil && n.kind == jsPunct && n.b == t.b && n.s == t.e // || &&
		case '.', '[', '(', '<', '?', '-', '$':
		case ':':
			end = t.f == 0
		default:
			end = true
		}
	case jsIdent, jsOther:
		if sc.typeEndIn(i - 1) {
			switch w := sc.word(i); {
			case sc.toks[i-1].row < t.row:
				end = true // a new statement
			case t.kind == jsIdent && (w == "is" || w == "extends" || w == "as" || w == "satisfies" || w == "keyof" || w == "infer"):
			default:
				end = true
			}
		}
	default:
		end = true
	}
	if end {
		lv.ann = false
	}
	return false
}

// annotationColon reports whether the ':' at i (not a conditional's)
// starts a type annotation.
func (sc *jsScan) annotationColon(i int) bool {
	if sc.isPunct(i-1, ')') {
		return true // a return type
	}
	lv := sc.top()
	if lv.typ {
		return true
	}
	switch ctx, _ := sc.ctx(); ctx {
	case bkObject:
		return false
	case bkBlock, bkFn, 0:
		if lv.caseOpen {
			lv.caseOpen = false
			return false
		}
		if p := sc.tok(i - 1); p != nil && p.kind == jsIdent && sc.labelPrev(i-2) {
			return false
		}
	}
	return true
}

// angleOpens reports whether the '<' at i opens type arguments or
// parameters (or a type assertion) rather than comparing.
func (sc *jsScan) angleOpens(i int, inType bool) bool {
	if inType {
		return true
	}
	p := sc.tok(i - 1)
	if p == nil {
		return true
	}
	switch p.kind {
	case jsIdent:
		if jsHardKeywords[sc.word(i-1)] {
			return true // return <T>x
		}
		return p.e == sc.toks[i].s // f<T>(), not a < b
	case jsPunct:
		return p.b != ')' && p.b != ']' && p.b != '}'
	}
	return false
}

// memberStart reports whether token i can start a member's name after a
// modifier (get, set, static, async, ...).
func (sc *jsScan) memberStart(i int) bool {
	t := sc.tok(i)
	if t == nil {
		return false
	}
	switch t.kind {
	case jsIdent:
		return true
	case jsOther:
		return sc.src[t.s] == '"' || sc.src[t.s] == '\'' || sc.src[t.s] >= '0' && sc.src[t.s] <= '9' || sc.src[t.s] == '.'
	case jsPunct:
		return t.b == '[' || t.b == '#' || t.b == '*'
	}
	return false
}

// memberPos reports whether identifier i stands where an object literal's
// or class body's member name goes.
func (sc *jsScan) memberPos(i int, ctx uint8, opener int) bool {
	return sc.memberPosN(i, ctx, opener, 8)
}

// memberPosN is memberPos looking back over at most n modifiers (a long
// run of them must not cost quadratic time).
func (sc *jsScan) memberPosN(i int, ctx uint8, opener int, n int) bool {
	p := sc.tok(i - 1)
	if p == nil || n == 0 {
		return false
	}
	if p.kind == jsPunct {
		switch p.b {
		case '{':
			return i-1 == opener
		case ',':
			return ctx == bkObject || ctx == bkType
		case ';', '}':
			return ctx == bkClass || ctx == bkType && p.b == ';'
		case '*':
			return true
		}
		return false
	}
	if p.kind == jsIdent {
		switch sc.word(i - 1) {
		case "get", "set", "async":
			return sc.memberPosN(i-1, ctx, opener, n-1)
		case "static":
			return ctx == bkClass && sc.memberPosN(i-1, ctx, opener, n-1)
		}
		if sc.ts && tsModifiers[sc.word(i-1)] {
			return ctx == bkClass && sc.memberPosN(i-1, ctx, opener, n-1)
		}
	}
	// A class field or type member without ';' ends its line.
	return (ctx == bkClass || ctx == bkType) && p.row < sc.toks[i].row && p.kind != jsPunct
}

// jsHardKeywords are never identifiers in tree-sitter-javascript but as a
// property's name.
var jsHardKeywords = set("break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
	"do", "else", "export", "extends", "finally", "for", "function", "if", "import", "in", "instanceof",
	"new", "return", "super", "switch", "this", "throw", "try", "typeof", "var", "void", "while", "with",
	"yield", "await", "null", "true", "false")

// tsTypeWords are keywords inside a TypeScript type (predefined types
// and type operators) that are identifiers in an expression.
var tsTypeWords = set("any", "number", "boolean", "string", "symbol", "object", "unknown", "never",
	"keyof", "infer", "unique", "readonly", "asserts", "is", "abstract")

// tsModifiers are TypeScript's class member and parameter modifiers.
var tsModifiers = set("public", "private", "protected", "readonly", "override", "accessor", "abstract", "declare")

// classify tells how tree-sitter reads identifier token i (inType: in a
// TypeScript type).
func (sc *jsScan) classify(i int, inType bool) int {
	t := &sc.toks[i]
	w := sc.src[t.s:t.e]
	for _, c := range w {
		if c >= 0x80 || c == '\\' {
			return jsBadIdent // tree-sitter's identifier rules for these are its own
		}
	}
	if p := sc.tok(i - 1); p != nil && p.kind == jsPunct {
		switch p.b {
		case '.':
			if sc.isPunct(i-2, '.') && sc.toks[i-2].e == p.s {
				break // a spread
			}
			if string(w) == "meta" && sc.isWord(i-2, "import") || string(w) == "target" && sc.isWord(i-2, "new") {
				return jsSkipIdent
			}
			return jsEmitIdent // a property, keywords too
		case '#':
			if p.e == t.s {
				return jsSkipIdent // a private name
			}
		}
	}
	ctx, opener := sc.ctx()
	if inType {
		if ctx == bkType && sc.memberPos(i, ctx, opener) {
			if n := sc.tok(i + 1); n != nil && n.kind == jsPunct && (n.b == ':' || n.b == '?' || n.b == '(' || n.b == ';' || n.b == ',' || n.b == '}' || n.b == '<') {
				return jsEmitIdent // a member's name
			}
			return jsBadIdent // get/set, modifiers, index signatures' names
		}
		if jsHardKeywords[string(w)] || tsTypeWords[string(w)] {
			return jsSkipIdent
		}
		if (string(w) == "as" || string(w) == "satisfies") && sc.typeEnd(i-1) {
			return jsSkipIdent // x as unknown as T
		}
		return jsEmitIdent
	}
	if sc.ts {
		switch string(w) {
		case "as", "satisfies":
			if sc.typeEnd(i-1) || sc.nonNull(i-1) { // x! as T
				return jsSkipIdent
			}
		case "enum":
			if n := sc.tok(i + 1); n != nil && n.kind == jsIdent {
				return jsSkipIdent
			}
		case "type", "interface", "namespace", "module", "declare", "abstract", "global", "implements":
			if n := sc.tok(i + 1); n != nil && (n.kind == jsIdent || n.kind == jsOther || n.kind == jsPunct && n.b == '{') {
				return jsBadIdent // a declaration inside a body: not read here
			}
		}
		if tsModifiers[string(w)] {
			if (ctx == bkClass && sc.memberPos(i, ctx, opener) || ctx == '(') && sc.memberStart(i+1) {
				return jsSkipIdent
			}
		}
	}
	if (ctx == bkObject || ctx == bkClass) && sc.memberPos(i, ctx, opener) {
		switch string(w) {
		case "get", "set", "async":
			if sc.memberStart(i + 1) {
				return jsSkipIdent
			}
		case "static":
			if ctx == bkClass && (sc.memberStart(i+1) || sc.isPunct(i+1, '{')) {
				return jsSkipIdent
			}
		}
		return jsEmitIdent // a member's name (a keyword too) or shorthand
	}
	switch string(w) {
	case "yield", "await":
		// a name in sloppy code (var yield, let a, await = 1, function
		// yield() {}): a whole parse reads an identifier; not read here
		if sc.isWord(i-1, "var") || sc.isWord(i-1, "let") || sc.isWord(i-1, "const") || sc.isWord(i-1, "function") || sc.isWord(i-1, "class") ||
			sc.isPunct(i+1, '=') && !(sc.isPunct(i+2, '=') || sc.isPunct(i+2, '>')) {
			return jsBadIdent
		}
	case "super":
		if sc.isPunct(i-1, '@') || sc.isPunct(i-1, '(') && sc.isPunct(i-2, '@') {
			return jsBadIdent // @super.x, @(super.x): a whole parse reads a name
		}
	case "import":
		// an import declaration in a body (not import() or import.meta)
		if !sc.isPunct(i+1, '(') && !sc.isPunct(i+1, '.') {
			return jsBadIdent
		}
	}
	if jsHardKeywords[string(w)] {
		return jsSkipIdent
	}
	switch string(w) {
	case "let":
		if sc.isPunct(i+1, '[') && sc.isPunct(i-1, '(') && sc.isWord(i-2, "await") && sc.isWord(i-3, "for") {
			return jsBadIdent // tree-sitter reads for await (let [x] of y) as let[x], but let [...x] as a declaration
		}
		if n := sc.tok(i + 1); n != nil && (n.kind == jsIdent || n.kind == jsPunct && (n.b == '[' || n.b == '{')) {
			return jsSkipIdent
		}
	case "async":
		if sc.isWord(i+1, "function") {
			return jsSkipIdent
		}
		if n := sc.tok(i + 1); n != nil && n.kind == jsIdent && sc.arrowAt(i+2) {
			return jsSkipIdent
		}
		if sc.isPunct(i+1, '(') {
			m := int(sc.toks[i+1].match)
			if m < 0 {
				return jsBadIdent
			}
			if sc.arrowAt(m + 1) {
				return jsSkipIdent
			}
			if c := sc.tok(m + 1); sc.ts && c != nil && c.kind == jsPunct && c.b == ':' && c.f == 0 {
				return jsSkipIdent // async (): T => ... (a call's ':' would be a conditional's)
			}
		}
	case "using":
		// TypeScript's `using x = ...` (and `await using`): a keyword
		// before a name, on the same line or not, as tree-sitter reads it
		if n := sc.tok(i + 1); sc.ts && n != nil && n.kind == jsIdent && !jsHardKeywords[sc.word(i+1)] {
			return jsSkipIdent
		}
	case "of":
		if ctx == '(' && (sc.isWord(opener-1, "for") || sc.isWord(opener-1, "await") && sc.isWord(opener-2, "for")) {
			// after the left side: a name, a pattern's ']' or '}', a
			// parenthesized expression's ')' (`for ((x) of y)`), or in
			// TypeScript a non-null '!' after one of these (`for (x! of y)`)
			if p := sc.tok(i - 1); p != nil && (p.kind == jsIdent && !jsHardKeywords[sc.word(i-1)] && sc.word(i-1) != "let" || p.kind == jsPunct && (p.b == ']' || p.b == '}' || p.b == ')') || sc.ts && sc.nonNull(i-1)) {
				return jsSkipIdent
			}
		}
	}
	if p := sc.tok(i - 1); p != nil && p.kind == jsIdent && p.row == t.row && (sc.isWord(i-1, "break") || sc.isWord(i-1, "continue")) {
		return jsSkipIdent // a label
	}
	if n := sc.tok(i + 1); n != nil && n.kind == jsPunct && n.b == ':' && n.f == 0 && (ctx == bkBlock || ctx == bkFn) && sc.labelPrev(i-1) {
		return jsSkipIdent // a label
	}
	return jsEmitIdent
}

// nonNull reports whether token i is TypeScript's postfix '!' (x!, f()!,
// a[0]!): on the line of a name (not a keyword), ')' or ']' before it.
func (sc *jsScan) nonNull(i int) bool {
	p := sc.tok(i - 1)
	return sc.isPunct(i, '!') && p != nil && p.row == sc.toks[i].row &&
		(p.kind == jsIdent && !jsHardKeywords[sc.word(i-1)] || p.kind == jsPunct && (p.b == ')' || p.b == ']'))
}

// arrowAt reports whether tokens i, i+1 are "=>".
func (sc *jsScan) arrowAt(i int) bool {
	return sc.isPunct(i, '=') && sc.isPunct(i+1, '>') && sc.toks[i].e == sc.toks[i+1].s
}

// labelPrev reports whether a statement can start after token p (so an
// identifier there followed by ':' is a label).
func (sc *jsScan) labelPrev(p int) bool {
	t := sc.tok(p)
	if t == nil {
		return true
	}
	switch t.kind {
	case jsPunct:
		switch t.b {
		case '{', '}', ';':
			return true
		case ':':
			return t.f == 0
		case ')':
			switch sc.word(int(t.match) - 1) {
			case "if", "for", "while", "with":
				return true
			}
		}
	case jsIdent:
		switch sc.word(p) {
		case "else", "do":
			return true
		}
	}
	return t.row < sc.toks[p+1].row && t.kind != jsPunct
}

// call reports identifier i to sc.req when it is require("x") or
// import("x") as tree-sitter reads it: a call_expression whose function
// is the identifier require (not a property, not after new) or import,
// and whose first argument is a string.
func (sc *jsScan) call(i int) {
	t := &sc.toks[i]
	kind := ""
	switch {
	case sc.isWord(i, "require"):
		kind = "require"
	case sc.isWord(i, "import"):
		kind = "import"
	default:
		return
	}
	if p := sc.tok(i - 1); p != nil && (p.kind == jsPunct && p.b == '.' || sc.isWord(i-1, "new") || sc.isWord(i-1, "function")) {
		if !(p.b == '.' && sc.isPunct(i-2, '.') && sc.toks[i-2].e == p.s) { // not a spread
			return
		}
	}
	j := i + 1
	if sc.isPunct(j, '?') && sc.isPunct(j+1, '.') {
		j += 2
	}
	if !sc.isPunct(j, '(') {
		return
	}
	s := sc.tok(j + 1)
	if s == nil || s.kind != jsOther || (sc.src[s.s] != '"' && sc.src[s.s] != '\'') {
		return
	}
	if bytes.IndexByte(sc.src[sc.toks[j].e:s.s], '/') >= 0 {
		return // a comment before the string is the arguments' first node
	}
	if !sc.isPunct(j+2, ')') && !sc.isPunct(j+2, ',') {
		return
	}
	sc.req(t.s, t.row, kind, unquote(string(sc.src[s.s:s.e])))
}

// jsVerify reports whether each function body in skip came out of the
// skipped parse as a function's statement_block over the same braces, in
// a tree without errors.
func jsVerify(t *tree, skip []bodySpan) bool {
	if t.hasError {
		return false
	}
	if len(skip) == 0 || !skip[0].fn {
		return true // a minified file's blocks (skip_minified.go)
	}
	j := 0
	for i := range t.nodes {
		n := &t.nodes[i]
		if n.start < skip[j].open {
			continue
		}
		sp := skip[j]
		if n.start != sp.open || n.end != sp.close+1 || t.kindOf(n) != "statement_block" || n.parent < 0 {
			return false
		}
		switch t.kindOf(&t.nodes[n.parent]) {
		case "function_declaration", "function_expression", "function", "generator_function_declaration",
			"generator_function", "arrow_function", "method_definition":
		default:
			return false
		}
		if j++; j == len(skip) {
			return true
		}
	}
	return false
}
