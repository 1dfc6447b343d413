package syntax

import (
	"bytes"
	"go/token"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// The fast path of the Go extraction (issue 39). go/parser builds a whole
// AST, and go/scanner allocates a string per identifier and literal; that
// garbage was most of a cold open's GC. parseGoFast reads the file with a
// lexer over the []byte that allocates nothing per token and a
// recursive-descent recognizer that follows go/parser (Go 1.26) function
// by function, builds no tree and emits exactly what parseGoAST emits:
// the same symbols (ranges from the same node positions), imports, refs
// in source order and package.
//
// Design:
//   - Every error go/parser or go/scanner would report is a bail-out: the
//     recognizer stops and parseGoFast returns ok=false, and the caller
//     runs parseGoAST exactly as before. It also bails on what it does not
//     handle (non-ASCII identifiers, `//line` directives, the ambiguous
//     `type T[P *C]` / `[P (C)]` / `[P | C]` forms, nesting deeper than
//     fastMaxNest). A bail-out costs only speed, so the recognizer is
//     strict: it must never accept a file go/parser rejects.
//   - Identifiers are events in source order (go/parser's Ident nodes; the
//     refs walk sorts its identifiers by position). Whether an identifier
//     is a ref depends on refWalker's type-versus-expression context only
//     for `nil`/`true`/`false`/`iota` (keywords in an expression) and for
//     the X of a selector (a package qualifier in a type). Each node has a
//     context slot; a parent links its children's slots to a fixed context
//     (expression, type) or to its own slot (children walked with the same
//     walker), and may relink them once the following tokens settle the
//     shape (an index followed by a call is a generic instance, a
//     parenthesised generic with one operand is a conversion). Slots are
//     resolved after the parse.
//   - Definitions (defNames), import names and labels (notRef) are flags
//     on the events; collectRefs' filters then run in the same order.
//
// FuzzGoFastMatchesGoAST and TestGoFastMatchesGoASTOnTree check both
// properties: fast accepts ⇒ go/parser accepts, and the FileInfos are
// reflect.DeepEqual (GOROOT/src, Go's test tree, a module cache and this
// repository: no difference; 1 bail-out in ~14 600 files).
//
// Figures (issue 39, docs/index.md "The Go fast path"): BenchmarkParseTree
// on GOROOT/src's Go files 2.9-3.4 -> 1.1-1.4 CPU-s per pass, 23.6 M ->
// 0.1 M allocations; the cold open of GOROOT/src ~40% less process CPU,
// the mixed tree's 11-24% less; peak memory unchanged within the noise.

// fastMaxNest bounds the recognizer's nesting (go/parser's nestLev, same
// places); go/parser fails at 1e5, so bailing earlier is safe.
const fastMaxNest = 20000

// slot ids of the two fixed contexts.
const (
	sExpr int32 = 0
	sType int32 = 1
)

// node kinds (go/ast node types the rules look at).
const (
	nIdent uint8 = iota + 1
	nBasicLit
	nFuncLit
	nCompositeLit
	nParen
	nSelector
	nIndex
	nIndexList
	nSlice
	nTypeAssert
	nCall
	nStar
	nUnary
	nBinary
	nKeyValue
	nArrayType
	nStructType
	nFuncType
	nInterfaceType
	nMapType
	nChanType
	nEllipsis
)

// fnode is what the recognizer keeps of an expression or type node.
type fnode struct {
	kind    uint8
	inner   uint8 // kind under the node's parentheses (ast.Unparen)
	pg      bool  // parenGeneric: a generic instance under parens and stars
	tsa     bool  // x.(type)
	arrowOK bool  // a channel type `<-` may be applied to (parseUnaryExpr)
	newmake bool  // the identifier new or make
	slot    int32 // the node's context slot
	ev      int32 // identifier: its event
	xs, is  int32 // index: the slots of X and of the index group
	rname   int32 // goASTReceiver's name event, -1 if none
	sid     int32 // struct/interface: its id (for members)
	// For parseTypeSpec's `[name ...` (go/parser's extractName):
	te       bool // isTypeElem
	e2f, e2t bool // extractName(x, force) splits x into a name and a type (force false, true)
}

// fev is one identifier event.
type fev struct {
	off, end int32
	slot     int32
	flags    uint8
}

const (
	evSelX   uint8 = 1 << iota // X of a selector: not a ref in a type
	evNotRef                   // import name or label
	evDef                      // name of a recorded symbol
)

// fmember is a struct field or interface method of a struct or interface
// type, recorded as a symbol when the type is a top-level spec's type.
type fmember struct {
	sid      int32
	ev       int32
	from, to int32
	fl, tl   int32
	method   bool
}

// fspec is a spec of the top-level declaration being parsed.
type fspec struct {
	from, to int32
	fl, tl   int32
	ev0, evn int32 // names: events [ev0, evn) of value specs; ev0 for a type
	kind     SymbolKind
	mem0     int32 // members [mem0, memn) of p.specMembers
	memn     int32
}

// fparam is one entry of parseParameterList.
type fparam struct {
	name   int32 // event or -1
	hasTyp bool
	ell    bool
	rname  int32
}

type fbail struct{}

// fp is the recognizer's state; pooled with its buffers.
type fp struct {
	src []byte
	// scanner
	off        int
	line       int32
	insertSemi bool
	// current token
	tok          token.Token
	pos, end     int32
	tline, eline int32
	prevEnd      int32
	prevEndLine  int32
	// parser
	exprLev int
	inRhs   bool
	nest    int
	sids    int32

	evs         []fev
	par         []int32
	params      []fparam
	members     []fmember
	specMembers []fmember
	specs       []fspec
	syms        []Symbol
	imps        []Import
	refs        []Name
	symEv       [][2]int32 // per symbol: name event, container event (-1: "")
	pkg         int32
	in          internCache
}

var fastPool = sync.Pool{New: func() any { return new(fp) }}

// fastInternalErrors counts the files the recognizer gave up on through
// its own fault (a panic other than a bail-out, a context slot left
// unlinked); the answer then comes from go/parser, and the tests require
// zero.
var fastInternalErrors atomic.Int64

// parseGoFast is parseGoAST's result through the fast recognizer; ok is
// false when it bails out (then the caller runs parseGoAST).
func parseGoFast(src []byte) (info *FileInfo, ok bool) {
	if !fastPrecheck(src) {
		return nil, false
	}
	p := fastPool.Get().(*fp)
	defer p.release()
	if !p.run(src) {
		return nil, false
	}
	p.in = getInternCache()
	defer putInternCache(p.in)
	info, ok = p.emit()
	if !ok {
		return nil, false
	}
	info = settle(info)
	sort.SliceStable(info.Imports, func(i, j int) bool { return info.Imports[i].Line < info.Imports[j].Line })
	return info, true
}

// fastPrecheck applies go/scanner's whole-file rules: no NUL, valid UTF-8,
// a byte order mark only as the first character.
func fastPrecheck(src []byte) bool {
	if bytes.IndexByte(src, 0) >= 0 {
		return false
	}
	if !utf8.Valid(src) {
		return false
	}
	rest := src
	if bytes.HasPrefix(rest, fastBOM) {
		rest = rest[3:]
	}
	return !bytes.Contains(rest, fastBOM)
}

var fastBOM = []byte{0xEF, 0xBB, 0xBF}

// release returns p to the pool unless its buffers grew past ~0.5 MB (a
// big file's scratch is garbage at once rather than kept by the pool).
func (p *fp) release() {
	const keep = 16 << 10
	p.src = nil
	p.in = nil
	if cap(p.evs) > keep || cap(p.par) > 4*keep || cap(p.syms) > keep/4 || cap(p.members) > keep/4 {
		return
	}
	fastPool.Put(p)
}

func (p *fp) bail() { panic(fbail{}) }

func (p *fp) run(src []byte) (ok bool) {
	*p = fp{
		src: src, line: 1,
		evs: p.evs[:0], par: p.par[:0], params: p.params[:0], members: p.members[:0],
		specMembers: p.specMembers[:0], specs: p.specs[:0], syms: p.syms[:0], imps: p.imps[:0], refs: p.refs[:0],
		symEv: p.symEv[:0],
	}
	p.par = append(p.par, sExpr, sType)
	if bytes.HasPrefix(src, fastBOM) {
		p.off = 3
	}
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(fbail); !is {
				// A recognizer bug (an index out of range, ...): go/parser
				// reads the file; the oracle tests fail on the count.
				fastInternalErrors.Add(1)
			}
			ok = false
		}
	}()
	p.next()
	p.parseFile()
	return true
}

// ---------------------------------------------------------------------------
// Lexer (go/scanner over bytes).

// fastKeywords holds Go's keywords by first letter and length (at most
// three share both: select, struct, switch).
var fastKeywords = func() (t [26][12][3]token.Token) {
	for k := token.BREAK; k <= token.VAR; k++ {
		w := k.String()
		c := &t[w[0]-'a'][len(w)]
		for i := range c {
			if c[i] == 0 {
				c[i] = k
				break
			}
		}
	}
	return
}()

// fastKeyword is token.Lookup for a lower-case word of 2 to 11 bytes.
func fastKeyword(w []byte) token.Token {
	for _, k := range &fastKeywords[w[0]-'a'][len(w)] {
		if k == 0 {
			break
		}
		if string(w) == k.String() {
			return k
		}
	}
	return token.IDENT
}

var identByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
	}
	return
}()

// next consumes the current token.
func (p *fp) next() {
	if p.tok != token.SEMICOLON && p.tok != token.EOF && p.tok != token.ILLEGAL {
		p.prevEnd, p.prevEndLine = p.end, p.eline
	}
	p.scan()
}

func (p *fp) byteAt(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

func (p *fp) scan() {
	src := p.src
	i := p.off
again:
	for i < len(src) {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\r' {
			i++
			continue
		}
		if c == '\n' && !p.insertSemi {
			i++
			p.line++
			continue
		}
		break
	}
	p.pos, p.tline = int32(i), p.line
	if i >= len(src) {
		p.off, p.end, p.eline = i, int32(i), p.line
		if p.insertSemi {
			p.insertSemi = false
			p.tok = token.SEMICOLON
			return
		}
		p.tok = token.EOF
		return
	}
	c := src[i]
	insertSemi := false
	tok := token.ILLEGAL
	switch {
	case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c >= utf8.RuneSelf && p.letterAt(i):
		j := i + 1
		if c >= utf8.RuneSelf {
			_, w := utf8.DecodeRune(src[i:])
			j = i + w
		}
		for j < len(src) {
			if identByte[src[j]] {
				j++
				continue
			}
			if src[j] < utf8.RuneSelf {
				break
			}
			r, w := utf8.DecodeRune(src[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += w
		}
		tok = token.IDENT
		if j-i > 1 && j-i < 12 && 'a' <= c && c <= 'z' {
			tok = fastKeyword(src[i:j])
		}
		switch tok {
		case token.IDENT, token.BREAK, token.CONTINUE, token.FALLTHROUGH, token.RETURN:
			insertSemi = true
		}
		i = j
	case '0' <= c && c <= '9' || c == '.' && i+1 < len(src) && '0' <= src[i+1] && src[i+1] <= '9':
		tok, i = p.scanNumber(i)
		insertSemi = true
	case c >= utf8.RuneSelf:
		p.bail() // an illegal character
	default:
		i++
		switch c {
		case '\n':
			p.line++
			p.insertSemi = false
			p.off, p.end, p.eline = i, int32(i), p.line
			p.tok = token.SEMICOLON
			return
		case '"':
			for {
				if i >= len(src) {
					p.bail()
				}
				ch := src[i]
				if ch == '\n' {
					p.bail()
				}
				i++
				if ch == '"' {
					break
				}
				if ch == '\\' {
					i = p.escape(i, '"')
				}
			}
			tok, insertSemi = token.STRING, true
		case '\'':
			n := 0
			for {
				if i >= len(src) {
					p.bail()
				}
				ch := src[i]
				if ch == '\n' {
					p.bail()
				}
				if ch < utf8.RuneSelf {
					i++
				} else {
					_, w := utf8.DecodeRune(src[i:])
					i += w
				}
				if ch == '\'' {
					break
				}
				n++
				if ch == '\\' {
					i = p.escape(i, '\'')
				}
			}
			if n != 1 {
				p.bail()
			}
			tok, insertSemi = token.CHAR, true
		case '`':
			j := bytes.IndexByte(src[i:], '`')
			if j < 0 {
				p.bail()
			}
			p.line += int32(bytes.Count(src[i:i+j], nl))
			i += j + 1
			tok, insertSemi = token.STRING, true
		case ':':
			tok = token.COLON
			if p.byteAt(i) == '=' {
				i++
				tok = token.DEFINE
			}
		case '.':
			tok = token.PERIOD
			if p.byteAt(i) == '.' && p.byteAt(i+1) == '.' {
				i += 2
				tok = token.ELLIPSIS
			}
		case ',':
			tok = token.COMMA
		case ';':
			tok = token.SEMICOLON
		case '(':
			tok = token.LPAREN
		case ')':
			tok, insertSemi = token.RPAREN, true
		case '[':
			tok = token.LBRACK
		case ']':
			tok, insertSemi = token.RBRACK, true
		case '{':
			tok = token.LBRACE
		case '}':
			tok, insertSemi = token.RBRACE, true
		case '+':
			tok, i = p.switch3(i, token.ADD, token.ADD_ASSIGN, '+', token.INC)
			insertSemi = tok == token.INC
		case '-':
			tok, i = p.switch3(i, token.SUB, token.SUB_ASSIGN, '-', token.DEC)
			insertSemi = tok == token.DEC
		case '*':
			tok, i = p.switch2(i, token.MUL, token.MUL_ASSIGN)
		case '/':
			switch p.byteAt(i) {
			case '/':
				j := bytes.IndexByte(src[i:], '\n')
				if j < 0 {
					j = len(src) - i
				}
				// A //line directive starts a line (go/scanner).
				if (i == 1 || src[i-2] == '\n') && bytes.HasPrefix(src[i+1:], fastLine) {
					lit := src[i-1 : i+j]
					if len(lit) > 0 && lit[len(lit)-1] == '\r' {
						lit = lit[:len(lit)-1]
					}
					p.lineDirective(lit[7:])
				}
				i += j
				goto again
			case '*':
				j := bytes.Index(src[i+1:], fastEndComment)
				if j < 0 {
					p.bail() // comment not terminated
				}
				body := src[i+1 : i+1+j]
				if bytes.HasPrefix(body, fastLine) {
					p.lineDirective(body[5:])
				}
				i += 1 + j + 2
				if n := bytes.Count(body, nl); n > 0 {
					p.line += int32(n)
					if p.insertSemi {
						p.insertSemi = false
						p.off, p.end, p.eline = i, int32(i), p.line
						p.pos, p.tline = int32(i), p.line
						p.tok = token.SEMICOLON
						return
					}
				}
				goto again
			}
			tok, i = p.switch2(i, token.QUO, token.QUO_ASSIGN)
		case '%':
			tok, i = p.switch2(i, token.REM, token.REM_ASSIGN)
		case '^':
			tok, i = p.switch2(i, token.XOR, token.XOR_ASSIGN)
		case '<':
			if p.byteAt(i) == '-' {
				i++
				tok = token.ARROW
			} else {
				tok, i = p.switch4(i, token.LSS, token.LEQ, '<', token.SHL, token.SHL_ASSIGN)
			}
		case '>':
			tok, i = p.switch4(i, token.GTR, token.GEQ, '>', token.SHR, token.SHR_ASSIGN)
		case '=':
			tok, i = p.switch2(i, token.ASSIGN, token.EQL)
		case '!':
			tok, i = p.switch2(i, token.NOT, token.NEQ)
		case '&':
			if p.byteAt(i) == '^' {
				i++
				tok, i = p.switch2(i, token.AND_NOT, token.AND_NOT_ASSIGN)
			} else {
				tok, i = p.switch3(i, token.AND, token.AND_ASSIGN, '&', token.LAND)
			}
		case '|':
			tok, i = p.switch3(i, token.OR, token.OR_ASSIGN, '|', token.LOR)
		case '~':
			tok = token.TILDE
		default:
			p.bail() // illegal character
		}
	}
	p.insertSemi = insertSemi
	p.off, p.end, p.eline = i, int32(i), p.line
	p.tok = tok
}

// letterAt reports whether the rune at src[i] is a Unicode letter.
func (p *fp) letterAt(i int) bool {
	r, _ := utf8.DecodeRune(p.src[i:])
	return unicode.IsLetter(r)
}

// lineDirective bails where go/scanner's updateLineInfo reports an error
// in a line directive's text (after "line "); position changes do not
// matter (lines are counted without directives).
func (p *fp) lineDirective(text []byte) {
	i, n, ok := ftrailingDigits(text)
	if i == 0 {
		return
	}
	if !ok {
		p.bail()
	}
	const maxLineCol = 1 << 30
	line := n
	if i2, n2, ok2 := ftrailingDigits(text[:i-1]); ok2 {
		_ = i2
		line = n2
		if n == 0 || n > maxLineCol {
			p.bail()
		}
	}
	if line == 0 || line > maxLineCol {
		p.bail()
	}
}

func ftrailingDigits(text []byte) (int, int, bool) {
	i := bytes.LastIndexByte(text, ':')
	if i < 0 {
		return 0, 0, false
	}
	n, err := strconv.ParseUint(string(text[i+1:]), 10, 0)
	return i + 1, int(n), err == nil
}

var (
	nl             = []byte{'\n'}
	fastLine       = []byte("line ")
	fastEndComment = []byte("*/")
)

func (p *fp) switch2(i int, tok0, tok1 token.Token) (token.Token, int) {
	if p.byteAt(i) == '=' {
		return tok1, i + 1
	}
	return tok0, i
}

func (p *fp) switch3(i int, tok0, tok1 token.Token, ch2 byte, tok2 token.Token) (token.Token, int) {
	switch p.byteAt(i) {
	case '=':
		return tok1, i + 1
	case ch2:
		return tok2, i + 1
	}
	return tok0, i
}

func (p *fp) switch4(i int, tok0, tok1 token.Token, ch2 byte, tok2, tok3 token.Token) (token.Token, int) {
	switch p.byteAt(i) {
	case '=':
		return tok1, i + 1
	case ch2:
		if p.byteAt(i+1) == '=' {
			return tok3, i + 2
		}
		return tok2, i + 1
	}
	return tok0, i
}

func fdigitVal(c byte) uint32 {
	switch {
	case '0' <= c && c <= '9':
		return uint32(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return uint32(c|0x20-'a') + 10
	}
	return 16
}

// escape is scanEscape after the backslash at src[i-1]; it returns the
// offset after the escape.
func (p *fp) escape(i int, quote byte) int {
	var n int
	var base, max uint32
	switch c := p.byteAt(i); c {
	case 'a', 'b', 'f', 'n', 'r', 't', 'v', '\\', quote:
		return i + 1
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n, base, max = 3, 8, 255
	case 'x':
		i++
		n, base, max = 2, 16, 255
	case 'u':
		i++
		n, base, max = 4, 16, unicode.MaxRune
	case 'U':
		i++
		n, base, max = 8, 16, unicode.MaxRune
	default:
		p.bail()
	}
	var x uint32
	for ; n > 0; n-- {
		d := fdigitVal(p.byteAt(i))
		if d >= base {
			p.bail()
		}
		x = x*base + d
		i++
	}
	if x > max || 0xD800 <= x && x < 0xE000 {
		p.bail()
	}
	return i
}

func fisDecimal(c byte) bool { return '0' <= c && c <= '9' }
func fisHex(c byte) bool     { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func (p *fp) digits(i, base int, invalid *int) (int, int) {
	digsep := 0
	if base <= 10 {
		max := byte('0' + base)
		for c := p.byteAt(i); fisDecimal(c) || c == '_'; c = p.byteAt(i) {
			ds := 1
			if c == '_' {
				ds = 2
			} else if c >= max && invalid != nil && *invalid < 0 {
				*invalid = i
			}
			digsep |= ds
			i++
		}
	} else {
		for c := p.byteAt(i); fisHex(c) || c == '_'; c = p.byteAt(i) {
			ds := 1
			if c == '_' {
				ds = 2
			}
			digsep |= ds
			i++
		}
	}
	return digsep, i
}

// scanNumber is go/scanner's scanNumber: every error bails.
func (p *fp) scanNumber(i int) (token.Token, int) {
	offs := i
	tok := token.ILLEGAL
	base, prefix, digsep, invalid := 10, byte(0), 0, -1
	var ds int
	if p.byteAt(i) != '.' {
		tok = token.INT
		if p.byteAt(i) == '0' {
			i++
			switch p.byteAt(i) | 0x20 {
			case 'x':
				i++
				base, prefix = 16, 'x'
			case 'o':
				i++
				base, prefix = 8, 'o'
			case 'b':
				i++
				base, prefix = 2, 'b'
			default:
				base, prefix = 8, '0'
				digsep = 1
			}
		}
		ds, i = p.digits(i, base, &invalid)
		digsep |= ds
	}
	if p.byteAt(i) == '.' {
		tok = token.FLOAT
		if prefix == 'o' || prefix == 'b' {
			p.bail()
		}
		i++
		ds, i = p.digits(i, base, &invalid)
		digsep |= ds
	}
	if digsep&1 == 0 {
		p.bail()
	}
	if e := p.byteAt(i) | 0x20; e == 'e' || e == 'p' {
		if e == 'e' && prefix != 0 && prefix != '0' || e == 'p' && prefix != 'x' {
			p.bail()
		}
		i++
		tok = token.FLOAT
		if c := p.byteAt(i); c == '+' || c == '-' {
			i++
		}
		ds, i = p.digits(i, 10, nil)
		digsep |= ds
		if ds&1 == 0 {
			p.bail()
		}
	} else if prefix == 'x' && tok == token.FLOAT {
		p.bail()
	}
	if p.byteAt(i) == 'i' {
		tok = token.IMAG
		i++
	}
	if tok == token.INT && invalid >= 0 {
		p.bail()
	}
	if digsep&2 != 0 && finvalidSep(p.src[offs:i]) >= 0 {
		p.bail()
	}
	return tok, i
}

func finvalidSep(x []byte) int {
	x1 := byte(' ')
	d := byte('.')
	i := 0
	if len(x) >= 2 && x[0] == '0' {
		x1 = x[1] | 0x20
		if x1 == 'x' || x1 == 'o' || x1 == 'b' {
			d = '0'
			i = 2
		}
	}
	for ; i < len(x); i++ {
		pd := d
		d = x[i]
		switch {
		case d == '_':
			if pd != '0' {
				return i
			}
		case fisDecimal(d) || x1 == 'x' && fisHex(d):
			d = '0'
		default:
			if pd == '_' {
				return i - 1
			}
			d = '.'
		}
	}
	if d == '_' {
		return len(x) - 1
	}
	return -1
}

// ---------------------------------------------------------------------------
// Parser support.

func (p *fp) expect(tok token.Token) {
	if p.tok != tok {
		p.bail()
	}
	p.next()
}

func (p *fp) expectSemi() {
	switch p.tok {
	case token.RPAREN, token.RBRACE:
	case token.SEMICOLON:
		p.next()
	default:
		p.bail()
	}
}

// atComma is go/parser's atComma; a missing comma bails.
func (p *fp) atComma(follow token.Token) bool {
	if p.tok == token.COMMA {
		return true
	}
	if p.tok != follow {
		p.bail()
	}
	return false
}

func (p *fp) incNest() {
	p.nest++
	if p.nest > fastMaxNest {
		p.bail()
	}
}

func (p *fp) slot() int32 {
	p.par = append(p.par, -1)
	return int32(len(p.par) - 1)
}

func (p *fp) link(child, parent int32) { p.par[child] = parent }

func (p *fp) leaf(kind uint8) fnode {
	n := fnode{kind: kind, inner: kind, slot: p.slot(), ev: -1, rname: -1, xs: -1, is: -1}
	switch kind {
	case nArrayType, nStructType, nFuncType, nInterfaceType, nMapType, nChanType:
		n.te = true
	}
	return n
}

// wrap makes a node whose child x is walked with the node's walker.
func (p *fp) wrap(kind uint8, x fnode) fnode {
	n := p.leaf(kind)
	p.link(x.slot, n.slot)
	return n
}

func (p *fp) parseIdent() fnode {
	if p.tok != token.IDENT {
		p.bail()
	}
	n := p.leaf(nIdent)
	n.ev = int32(len(p.evs))
	n.rname = n.ev
	p.evs = append(p.evs, fev{off: p.pos, end: p.end, slot: n.slot})
	if w := p.src[p.pos:p.end]; len(w) == 3 && string(w) == "new" || len(w) == 4 && string(w) == "make" {
		n.newmake = true
	}
	p.next()
	return n
}

// ---------------------------------------------------------------------------
// Types.

func (p *fp) parseType() fnode {
	t, ok := p.tryIdentOrType()
	if !ok {
		p.bail()
	}
	return t
}

func (p *fp) parseQualifiedIdent(id *fnode) fnode {
	t := p.parseTypeName(id)
	if p.tok == token.LBRACK {
		t = p.parseTypeInstance(t)
	}
	return t
}

func (p *fp) parseTypeName(id *fnode) fnode {
	var x fnode
	if id == nil {
		x = p.parseIdent()
	} else {
		x = *id
	}
	if p.tok == token.PERIOD {
		p.next()
		sel := p.parseIdent()
		p.link(sel.slot, sType)
		n := p.wrap(nSelector, x)
		p.evs[x.ev].flags |= evSelX
		n.rname = sel.ev
		return n
	}
	return x
}

// indexNode is packIndexExpr: x's slot and the index group's go to the
// node's, until a call relinks them.
func (p *fp) indexNode(x fnode, group int32, n int) fnode {
	k := nIndex
	if n > 1 {
		k = nIndexList
	}
	r := p.wrap(k, x)
	p.link(group, r.slot)
	r.xs, r.is = x.slot, group
	r.pg = true
	r.rname = x.rname
	return r
}

func (p *fp) parseArrayType(lenNode *fnode) fnode {
	var ln fnode
	hasLen := false
	if lenNode == nil {
		p.exprLev++
		if p.tok == token.ELLIPSIS {
			ln, hasLen = p.leaf(nEllipsis), true
			p.next()
		} else if p.tok != token.RBRACK {
			ln, hasLen = p.parseRhs(), true
		}
		p.exprLev--
	} else {
		ln, hasLen = *lenNode, true
	}
	if p.tok == token.COMMA {
		p.bail()
	}
	p.expect(token.RBRACK)
	elt := p.parseType()
	n := p.leaf(nArrayType)
	if hasLen {
		p.link(ln.slot, sExpr)
	}
	p.link(elt.slot, sType)
	return n
}

// parseArrayFieldOrTypeInstance returns named=false for x[P] (x is then
// part of the type).
func (p *fp) parseArrayFieldOrTypeInstance(x fnode) (named bool, t fnode) {
	p.expect(token.LBRACK)
	trailingComma := false
	nargs := 0
	var first fnode
	group := p.slot()
	if p.tok != token.RBRACK {
		p.exprLev++
		first = p.parseRhs()
		p.link(first.slot, group)
		nargs++
		for p.tok == token.COMMA {
			p.next()
			if p.tok == token.RBRACK {
				trailingComma = true
				break
			}
			a := p.parseRhs()
			p.link(a.slot, group)
			nargs++
		}
		p.exprLev--
	}
	p.expect(token.RBRACK)
	if nargs == 0 {
		elt := p.parseType()
		n := p.leaf(nArrayType)
		p.link(elt.slot, sType)
		return true, n
	}
	if nargs == 1 {
		if elt, ok := p.tryIdentOrType(); ok {
			if trailingComma {
				p.bail()
			}
			n := p.leaf(nArrayType)
			p.link(group, sExpr)
			p.link(elt.slot, sType)
			return true, n
		}
	}
	return false, p.indexNode(x, group, nargs)
}

// parseFieldDecl records its names as members of struct sid.
func (p *fp) parseFieldDecl(sid int32) {
	from, fl := p.pos, p.tline
	ev0 := int32(len(p.evs))
	nnames := 0
	switch p.tok {
	case token.IDENT:
		name := p.parseIdent()
		if p.tok == token.PERIOD || p.tok == token.STRING || p.tok == token.SEMICOLON || p.tok == token.RBRACE {
			t := name
			if p.tok == token.PERIOD {
				t = p.parseQualifiedIdent(&name)
			}
			p.link(t.slot, sType)
		} else {
			p.link(name.slot, sType)
			nnames = 1
			for p.tok == token.COMMA {
				p.next()
				n := p.parseIdent()
				p.link(n.slot, sType)
				nnames++
			}
			if nnames == 1 && p.tok == token.LBRACK {
				named, t := p.parseArrayFieldOrTypeInstance(name)
				if !named {
					nnames = 0
					p.link(name.slot, t.slot) // x of the index
				}
				p.link(t.slot, sType)
			} else {
				t := p.parseType()
				p.link(t.slot, sType)
			}
		}
	case token.MUL:
		p.next()
		if p.tok == token.LPAREN {
			p.bail()
		}
		t := p.parseQualifiedIdent(nil)
		s := p.wrap(nStar, t)
		p.link(s.slot, sType)
	default:
		p.bail()
	}
	if p.tok == token.STRING {
		p.next()
	}
	to, tl := p.prevEnd, p.prevEndLine
	p.expectSemi()
	// The names are the first nnames identifier events of the field.
	for k := 0; k < nnames; k++ {
		p.members = append(p.members, fmember{sid: sid, ev: ev0 + int32(k), from: from, to: to, fl: fl, tl: tl})
	}
}

func (p *fp) parseStructType() fnode {
	p.expect(token.STRUCT)
	p.expect(token.LBRACE)
	p.sids++
	sid := p.sids
	for p.tok == token.IDENT || p.tok == token.MUL || p.tok == token.LPAREN {
		p.parseFieldDecl(sid)
	}
	p.expect(token.RBRACE)
	n := p.leaf(nStructType)
	n.sid = sid
	return n
}

func (p *fp) parseDotsType() fnode {
	p.expect(token.ELLIPSIS)
	elt := p.parseType()
	return p.wrap(nEllipsis, elt)
}

// parseParamDecl returns one entry; its name and type are walked in a
// type context (a parameter name is appended directly, never a keyword).
func (p *fp) parseParamDecl(name *fnode, typeSetsOK bool) (par fparam) {
	par.name, par.rname = -1, -1
	done := func(t fnode) {
		par.hasTyp, par.ell, par.rname = true, t.kind == nEllipsis, t.rname
		p.link(t.slot, sType)
	}
	var t fnode
	has := false
	tok := p.tok
	if name != nil {
		tok = token.IDENT
	} else if typeSetsOK && p.tok == token.TILDE {
		done(p.embeddedElem(nil))
		return
	}
	switch tok {
	case token.IDENT:
		var n fnode
		if name != nil {
			n = *name
		} else {
			n = p.parseIdent()
		}
		par.name = n.ev
		p.link(n.slot, sType) // relinked where it becomes part of a type
		switch p.tok {
		case token.IDENT, token.MUL, token.ARROW, token.FUNC, token.CHAN, token.MAP, token.STRUCT, token.INTERFACE, token.LPAREN:
			t, has = p.parseType(), true
		case token.LBRACK:
			named, tt := p.parseArrayFieldOrTypeInstance(n)
			if !named {
				par.name = -1
			}
			t, has = tt, true
		case token.ELLIPSIS:
			done(p.parseDotsType())
			return
		case token.PERIOD:
			t, has = p.parseQualifiedIdent(&n), true
			par.name = -1
		case token.TILDE:
			if typeSetsOK {
				done(p.embeddedElem(nil))
				return
			}
		case token.OR:
			if typeSetsOK {
				par.name = -1
				done(p.embeddedElem(&n))
				return
			}
		}
	case token.MUL, token.ARROW, token.FUNC, token.LBRACK, token.CHAN, token.MAP, token.STRUCT, token.INTERFACE, token.LPAREN:
		t, has = p.parseType(), true
	case token.ELLIPSIS:
		done(p.parseDotsType())
		return
	default:
		p.bail()
	}
	if typeSetsOK && p.tok == token.OR && has {
		t = p.embeddedElem(&t)
	}
	if has {
		done(t)
	}
	return
}

// parseParameterList is go/parser's: it returns the receiver name event
// of the first field's type (goASTReceiver), -1 if none, and the number
// of entries.
func (p *fp) parseParameterList(name0, typ0 *fnode, closing token.Token, dddok bool) (rname int32, n int) {
	tparams := closing == token.RBRACK
	base := len(p.params)
	named, typed := 0, 0
	for name0 != nil || p.tok != closing && p.tok != token.EOF {
		var par fparam
		if typ0 != nil {
			t := *typ0
			if tparams {
				t = p.embeddedElem(&t)
			}
			p.link(t.slot, sType)
			par = fparam{name: name0.ev, hasTyp: true, ell: t.kind == nEllipsis, rname: t.rname}
		} else {
			par = p.parseParamDecl(name0, tparams)
		}
		name0, typ0 = nil, nil
		if par.name >= 0 || par.hasTyp {
			p.params = append(p.params, par)
			if par.name >= 0 && par.hasTyp {
				named++
			}
			if par.hasTyp {
				typed++
			}
		}
		if !p.atComma(closing) {
			break
		}
		p.next()
	}
	list := p.params[base:]
	defer func() { p.params = p.params[:base] }()
	if len(list) == 0 {
		return -1, 0
	}
	if named == 0 {
		if tparams {
			p.bail()
		}
		// all unnamed: names are types
		for i := range list {
			if !list[i].hasTyp {
				list[i].hasTyp, list[i].ell, list[i].rname = true, false, list[i].name
			}
		}
	} else if named != len(list) {
		haveTyp, ell, rn := false, false, int32(-1)
		for i := len(list) - 1; i >= 0; i-- {
			par := &list[i]
			if par.hasTyp {
				if par.name < 0 {
					p.bail()
				}
				haveTyp, ell, rn = true, par.ell, par.rname
			} else if haveTyp {
				par.hasTyp, par.ell, par.rname = true, ell, rn
			} else {
				p.bail()
			}
		}
	}
	for i := range list {
		if list[i].ell && (!dddok || i+1 < len(list)) {
			p.bail()
		}
	}
	return list[0].rname, len(list)
}

func (p *fp) parseTypeParameters() {
	p.expect(token.LBRACK)
	n := 0
	if p.tok != token.RBRACK {
		_, n = p.parseParameterList(nil, nil, token.RBRACK, false)
	}
	p.expect(token.RBRACK)
	if n == 0 {
		p.bail()
	}
}

// parseParameters returns the receiver name event (parseParameterList).
func (p *fp) parseParameters(result bool) int32 {
	if !result || p.tok == token.LPAREN {
		p.expect(token.LPAREN)
		rn := int32(-1)
		if p.tok != token.RPAREN {
			rn, _ = p.parseParameterList(nil, nil, token.RPAREN, !result)
		}
		p.expect(token.RPAREN)
		return rn
	}
	if t, ok := p.tryIdentOrType(); ok {
		p.link(t.slot, sType)
	}
	return -1
}

func (p *fp) parseFuncType() fnode {
	p.expect(token.FUNC)
	if p.tok == token.LBRACK {
		p.bail() // function type must have no type parameters
	}
	p.parseParameters(false)
	p.parseParameters(true)
	return p.leaf(nFuncType)
}

// parseMethodSpec parses an interface element starting with an
// identifier; method reports a method (its name event is ev).
func (p *fp) parseMethodSpec() (method bool, ev int32, t fnode) {
	x := p.parseTypeName(nil)
	if x.kind == nIdent {
		switch p.tok {
		case token.LBRACK:
			p.next()
			p.exprLev++
			first := p.parseExpr()
			p.exprLev--
			if first.kind == nIdent && p.tok != token.COMMA && p.tok != token.RBRACK {
				p.bail() // interface method must have no type parameters
			}
			group := p.slot()
			p.link(first.slot, group)
			n := 1
			if p.atComma(token.RBRACK) {
				p.exprLev++
				p.next()
				n += p.parseTypeList(group)
				p.exprLev--
			}
			p.expect(token.RBRACK)
			return false, -1, p.indexNode(x, group, n)
		case token.LPAREN:
			p.link(x.slot, sType)
			p.parseParameters(false)
			p.parseParameters(true)
			return true, x.ev, p.leaf(nFuncType)
		}
		return false, -1, x
	}
	if p.tok == token.LBRACK {
		x = p.parseTypeInstance(x)
	}
	return false, -1, x
}

func (p *fp) embeddedElem(x *fnode) fnode {
	var t fnode
	if x == nil {
		t = p.embeddedTerm()
	} else {
		t = *x
	}
	for p.tok == token.OR {
		p.next()
		y := p.embeddedTerm()
		t = p.binary(token.OR, t, y)
	}
	return t
}

func (p *fp) embeddedTerm() fnode {
	if p.tok == token.TILDE {
		p.next()
		u := p.wrap(nUnary, p.parseType())
		u.te = true
		return u
	}
	t, ok := p.tryIdentOrType()
	if !ok {
		p.bail()
	}
	return t
}

func (p *fp) parseInterfaceType() fnode {
	p.expect(token.INTERFACE)
	p.expect(token.LBRACE)
	p.sids++
	sid := p.sids
	for {
		from, fl := p.pos, p.tline
		switch {
		case p.tok == token.IDENT:
			method, ev, t := p.parseMethodSpec()
			if !method {
				t = p.embeddedElem(&t)
			}
			p.link(t.slot, sType)
			to, tl := p.prevEnd, p.prevEndLine
			p.expectSemi()
			if method {
				p.members = append(p.members, fmember{sid: sid, ev: ev, from: from, to: to, fl: fl, tl: tl, method: true})
			}
			continue
		case p.tok == token.TILDE:
			t := p.embeddedElem(nil)
			p.link(t.slot, sType)
			p.expectSemi()
			continue
		default:
			if t, ok := p.tryIdentOrType(); ok {
				t = p.embeddedElem(&t)
				p.link(t.slot, sType)
				p.expectSemi()
				continue
			}
		}
		break
	}
	p.expect(token.RBRACE)
	n := p.leaf(nInterfaceType)
	n.sid = sid
	return n
}

func (p *fp) parseMapType() fnode {
	p.expect(token.MAP)
	p.expect(token.LBRACK)
	k := p.parseType()
	p.expect(token.RBRACK)
	v := p.parseType()
	p.link(k.slot, sType)
	p.link(v.slot, sType)
	return p.leaf(nMapType)
}

const (
	chanSend = 1
	chanRecv = 2
	chanBoth = 3
)

func (p *fp) parseChanType() fnode {
	dir := chanBoth
	if p.tok == token.CHAN {
		p.next()
		if p.tok == token.ARROW {
			p.next()
			dir = chanSend
		}
	} else {
		p.expect(token.ARROW)
		p.expect(token.CHAN)
		dir = chanRecv
	}
	v := p.parseType()
	p.link(v.slot, sType)
	n := p.leaf(nChanType)
	n.arrowOK = dir == chanBoth || dir == chanSend && v.kind == nChanType && v.arrowOK
	return n
}

// parseTypeList parses types up to ']' (a trailing comma allowed), each
// linked to group, and returns how many it read.
func (p *fp) parseTypeList(group int32) int {
	n := 0
	for p.tok != token.RBRACK && p.tok != token.EOF {
		a := p.parseType()
		p.link(a.slot, group)
		n++
		if !p.atComma(token.RBRACK) {
			break
		}
		p.next()
	}
	return n
}

func (p *fp) parseTypeInstance(t fnode) fnode {
	p.expect(token.LBRACK)
	p.exprLev++
	group := p.slot()
	n := p.parseTypeList(group)
	p.exprLev--
	p.expect(token.RBRACK)
	if n == 0 {
		p.bail()
	}
	return p.indexNode(t, group, n)
}

func (p *fp) tryIdentOrType() (fnode, bool) {
	p.incNest()
	defer func() { p.nest-- }()
	switch p.tok {
	case token.IDENT:
		t := p.parseTypeName(nil)
		if p.tok == token.LBRACK {
			t = p.parseTypeInstance(t)
		}
		return t, true
	case token.LBRACK:
		p.next()
		return p.parseArrayType(nil), true
	case token.STRUCT:
		return p.parseStructType(), true
	case token.MUL:
		p.next()
		x := p.parseType()
		s := p.wrap(nStar, x)
		s.pg, s.rname = x.pg, x.rname
		return s, true
	case token.FUNC:
		return p.parseFuncType(), true
	case token.INTERFACE:
		return p.parseInterfaceType(), true
	case token.MAP:
		return p.parseMapType(), true
	case token.CHAN, token.ARROW:
		return p.parseChanType(), true
	case token.LPAREN:
		p.next()
		t := p.parseType()
		p.expect(token.RPAREN)
		return p.paren(t), true
	}
	return fnode{}, false
}

func (p *fp) paren(x fnode) fnode {
	n := p.wrap(nParen, x)
	n.inner, n.pg, n.rname, n.te = x.inner, x.pg, x.rname, x.te
	return n
}

// ---------------------------------------------------------------------------
// Blocks and expressions.

func (p *fp) parseStmtList(ctx int32) {
	for p.tok != token.CASE && p.tok != token.DEFAULT && p.tok != token.RBRACE && p.tok != token.EOF {
		p.parseStmt(ctx)
	}
}

func (p *fp) parseBlockStmt(ctx int32) {
	p.expect(token.LBRACE)
	p.parseStmtList(ctx)
	p.expect(token.RBRACE)
}

func (p *fp) parseFuncTypeOrLit() fnode {
	t := p.parseFuncType()
	if p.tok != token.LBRACE {
		return t
	}
	n := p.leaf(nFuncLit)
	p.exprLev++
	p.parseBlockStmt(n.slot)
	p.exprLev--
	return n
}

func (p *fp) parseOperand() fnode {
	switch p.tok {
	case token.IDENT:
		return p.parseIdent()
	case token.INT, token.FLOAT, token.IMAG, token.CHAR, token.STRING:
		n := p.leaf(nBasicLit)
		p.next()
		return n
	case token.LPAREN:
		p.next()
		p.exprLev++
		x := p.parseRhs()
		p.exprLev--
		p.expect(token.RPAREN)
		return p.paren(x)
	case token.FUNC:
		return p.parseFuncTypeOrLit()
	}
	if t, ok := p.tryIdentOrType(); ok {
		return t
	}
	p.bail()
	return fnode{}
}

func (p *fp) parseTypeAssertion(x fnode) fnode {
	p.expect(token.LPAREN)
	n := p.leaf(nTypeAssert)
	if p.tok == token.TYPE {
		p.next()
		n.tsa = true
	} else {
		t := p.parseType()
		p.link(t.slot, sType)
	}
	p.expect(token.RPAREN)
	p.link(x.slot, sExpr)
	return n
}

func (p *fp) parseIndexOrSliceOrInstance(x fnode) fnode {
	p.expect(token.LBRACK)
	if p.tok == token.RBRACK {
		p.bail()
	}
	p.exprLev++
	group := p.slot()
	var idx [3]bool
	nargs := 0
	if p.tok != token.COLON {
		a := p.parseRhs()
		p.link(a.slot, group)
		idx[0] = true
	}
	ncolons := 0
	switch p.tok {
	case token.COLON:
		for p.tok == token.COLON && ncolons < 2 {
			ncolons++
			p.next()
			if p.tok != token.COLON && p.tok != token.RBRACK && p.tok != token.EOF {
				a := p.parseRhs()
				p.link(a.slot, group)
				idx[ncolons] = true
			}
		}
	case token.COMMA:
		nargs = 1
		for p.tok == token.COMMA {
			p.next()
			if p.tok != token.RBRACK && p.tok != token.EOF {
				a := p.parseType()
				p.link(a.slot, group)
				nargs++
			}
		}
	}
	p.exprLev--
	p.expect(token.RBRACK)
	if ncolons > 0 {
		if ncolons == 2 && (!idx[1] || !idx[2]) {
			p.bail()
		}
		n := p.wrap(nSlice, x)
		p.link(group, n.slot)
		return n
	}
	if nargs == 0 {
		nargs = 1
	}
	return p.indexNode(x, group, nargs)
}

func (p *fp) parseCallOrConversion(fun fnode) fnode {
	p.expect(token.LPAREN)
	p.exprLev++
	nargs := 0
	ellipsis := false
	arg0te := false
	for p.tok != token.RPAREN && p.tok != token.EOF && !ellipsis {
		a := p.parseRhs()
		if nargs == 0 {
			arg0te = a.te
		}
		if nargs == 0 && fun.kind == nIdent && fun.newmake {
			p.link(a.slot, sType)
		} else {
			p.link(a.slot, sExpr)
		}
		nargs++
		if p.tok == token.ELLIPSIS {
			ellipsis = true
			p.next()
		}
		if !p.atComma(token.RPAREN) {
			break
		}
		p.next()
	}
	p.exprLev--
	p.expect(token.RPAREN)
	conv := nargs == 1 && !ellipsis
	switch fun.kind {
	case nArrayType, nMapType, nChanType, nFuncType, nInterfaceType, nStructType:
		p.link(fun.slot, sType)
	case nParen:
		if conv && fun.pg {
			p.link(fun.slot, sType)
		} else {
			p.link(fun.slot, sExpr)
		}
	case nIndex, nIndexList:
		if conv {
			p.link(fun.xs, sType)
		} else {
			p.link(fun.xs, sExpr)
		}
		p.link(fun.is, sType)
	default:
		p.link(fun.slot, sExpr)
	}
	c := p.leaf(nCall)
	if fun.kind == nIdent && conv {
		c.e2f, c.e2t = arg0te, true
	}
	return c
}

func (p *fp) parseValue() fnode {
	if p.tok == token.LBRACE {
		return p.parseLiteralValue(nil)
	}
	return p.parseExpr()
}

func (p *fp) parseElement() fnode {
	x := p.parseValue()
	if p.tok == token.COLON {
		p.next()
		y := p.parseValue()
		kv := p.wrap(nKeyValue, x)
		p.link(y.slot, kv.slot)
		return kv
	}
	return x
}

func (p *fp) parseLiteralValue(typ *fnode) fnode {
	p.incNest()
	defer func() { p.nest-- }()
	p.expect(token.LBRACE)
	p.exprLev++
	for p.tok != token.RBRACE && p.tok != token.EOF {
		e := p.parseElement()
		p.link(e.slot, sExpr)
		if !p.atComma(token.RBRACE) {
			break
		}
		p.next()
	}
	p.exprLev--
	p.expect(token.RBRACE)
	if typ != nil {
		p.link(typ.slot, sType)
	}
	return p.leaf(nCompositeLit)
}

func (p *fp) parsePrimaryExpr(x *fnode) fnode {
	var n fnode
	if x == nil {
		n = p.parseOperand()
	} else {
		n = *x
	}
	k := 0
	defer func() { p.nest -= k }()
	for {
		k++
		p.incNest()
		switch p.tok {
		case token.PERIOD:
			p.next()
			switch p.tok {
			case token.IDENT:
				sel := p.parseIdent()
				p.link(sel.slot, sType)
				s := p.wrap(nSelector, n)
				if n.kind == nIdent {
					p.evs[n.ev].flags |= evSelX
				}
				s.rname = sel.ev
				n = s
			case token.LPAREN:
				n = p.parseTypeAssertion(n)
			default:
				p.bail()
			}
		case token.LBRACK:
			n = p.parseIndexOrSliceOrInstance(n)
		case token.LPAREN:
			n = p.parseCallOrConversion(n)
		case token.LBRACE:
			switch n.inner {
			case nIdent, nSelector, nIndex, nIndexList:
				if p.exprLev < 0 {
					return n
				}
			case nArrayType, nStructType, nMapType:
			default:
				return n
			}
			if n.kind == nParen {
				p.bail() // cannot parenthesize type in composite literal
			}
			n = p.parseLiteralValue(&n)
		default:
			return n
		}
	}
}

func (p *fp) parseUnaryExpr() fnode {
	p.incNest()
	defer func() { p.nest-- }()
	switch p.tok {
	case token.ADD, token.SUB, token.NOT, token.XOR, token.AND, token.TILDE:
		tilde := p.tok == token.TILDE
		p.next()
		u := p.wrap(nUnary, p.parseUnaryExpr())
		u.te = tilde
		return u
	case token.ARROW:
		p.next()
		x := p.parseUnaryExpr()
		if x.kind == nChanType {
			if !x.arrowOK {
				p.bail()
			}
			x.arrowOK = false // now a receive-only channel type
			return x
		}
		return p.wrap(nUnary, x)
	case token.MUL:
		p.next()
		x := p.parseUnaryExpr()
		s := p.wrap(nStar, x)
		s.pg, s.rname = x.pg, x.rname
		return s
	}
	return p.parsePrimaryExpr(nil)
}

func (p *fp) tokPrec() (token.Token, int) {
	tok := p.tok
	if p.inRhs && tok == token.ASSIGN {
		tok = token.EQL
	}
	return tok, tok.Precedence()
}

func (p *fp) parseBinaryExpr(x *fnode, prec1 int) fnode {
	var n fnode
	if x == nil {
		n = p.parseUnaryExpr()
	} else {
		n = *x
	}
	k := 0
	defer func() { p.nest -= k }()
	for {
		k++
		p.incNest()
		op, oprec := p.tokPrec()
		if oprec < prec1 {
			return n
		}
		p.expect(op)
		y := p.parseBinaryExpr(nil, oprec+1)
		n = p.binary(op, n, y)
	}
}

// binary is a BinaryExpr x op y, with isTypeElem and extractName's split.
func (p *fp) binary(op token.Token, x, y fnode) fnode {
	b := p.wrap(nBinary, x)
	p.link(y.slot, b.slot)
	b.te = x.te || y.te
	switch op {
	case token.MUL:
		b.e2f = x.kind == nIdent && y.te
		b.e2t = x.kind == nIdent
	case token.OR:
		// extractName(x.X, force || isTypeElem(x.Y))
		b.e2f = x.e2t && y.te || x.e2f
		b.e2t = x.e2t
	}
	return b
}

func (p *fp) parseExpr() fnode { return p.parseBinaryExpr(nil, token.LowestPrec+1) }

func (p *fp) parseRhs() fnode {
	old := p.inRhs
	p.inRhs = true
	x := p.parseExpr()
	p.inRhs = old
	return x
}

// parseList parses an expression list, linking each to ctx; it returns
// the count and the first expression.
func (p *fp) parseList(inRhs bool, ctx int32) (int, fnode) {
	old := p.inRhs
	p.inRhs = inRhs
	first := p.parseExpr()
	p.link(first.slot, ctx)
	n := 1
	for p.tok == token.COMMA {
		p.next()
		x := p.parseExpr()
		p.link(x.slot, ctx)
		n++
	}
	p.inRhs = old
	return n, first
}

// ---------------------------------------------------------------------------
// Statements.

const (
	stNone = iota
	stExpr
	stAssign
	stOther
	stLabeled
)

// fstmt is what the header rules look at of a simple statement.
type fstmt struct {
	kind       int
	tok        token.Token
	nlhs, nrhs int
	x0, y0     fnode
	isRange    bool
}

const (
	modeBasic = iota
	modeLabelOk
	modeRangeOk
)

func (p *fp) parseSimpleStmt(mode int, ctx int32) fstmt {
	n, x0 := p.parseList(false, ctx)
	switch p.tok {
	case token.DEFINE, token.ASSIGN, token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN, token.QUO_ASSIGN,
		token.REM_ASSIGN, token.AND_ASSIGN, token.OR_ASSIGN, token.XOR_ASSIGN, token.SHL_ASSIGN, token.SHR_ASSIGN, token.AND_NOT_ASSIGN:
		tok := p.tok
		p.next()
		s := fstmt{kind: stAssign, tok: tok, nlhs: n, x0: x0}
		if mode == modeRangeOk && p.tok == token.RANGE && (tok == token.DEFINE || tok == token.ASSIGN) {
			p.next()
			y := p.parseRhs()
			p.link(y.slot, ctx)
			s.nrhs, s.y0, s.isRange = 1, y, true
		} else {
			s.nrhs, s.y0 = p.parseList(true, ctx)
		}
		return s
	}
	if n > 1 {
		p.bail()
	}
	switch p.tok {
	case token.COLON:
		p.next()
		if mode == modeLabelOk && x0.kind == nIdent {
			p.evs[x0.ev].flags |= evNotRef
			p.parseStmt(ctx)
			return fstmt{kind: stLabeled}
		}
		p.bail()
	case token.ARROW:
		p.next()
		y := p.parseRhs()
		p.link(y.slot, ctx)
		return fstmt{kind: stOther}
	case token.INC, token.DEC:
		p.next()
		return fstmt{kind: stOther}
	}
	return fstmt{kind: stExpr, nlhs: 1, x0: x0}
}

func (p *fp) parseCallExpr(ctx int32) {
	x := p.parseRhs()
	p.link(x.slot, ctx)
	if x.kind != nCall {
		p.bail()
	}
}

func (p *fp) parseIfHeader(ctx int32) {
	if p.tok == token.LBRACE {
		p.bail()
	}
	prevLev := p.exprLev
	p.exprLev = -1
	var init fstmt
	if p.tok != token.SEMICOLON {
		if p.tok == token.VAR {
			p.bail()
		}
		init = p.parseSimpleStmt(modeBasic, ctx)
	}
	var cond fstmt
	if p.tok != token.LBRACE {
		p.expect(token.SEMICOLON)
		if p.tok != token.LBRACE {
			cond = p.parseSimpleStmt(modeBasic, ctx)
		}
	} else {
		cond = init
	}
	if cond.kind != stExpr {
		p.bail()
	}
	p.exprLev = prevLev
}

func (p *fp) parseIfStmt(ctx int32) {
	p.incNest()
	defer func() { p.nest-- }()
	p.expect(token.IF)
	p.parseIfHeader(ctx)
	p.parseBlockStmt(ctx)
	if p.tok == token.ELSE {
		p.next()
		switch p.tok {
		case token.IF:
			p.parseIfStmt(ctx)
		case token.LBRACE:
			p.parseBlockStmt(ctx)
			p.expectSemi()
		default:
			p.bail()
		}
	} else {
		p.expectSemi()
	}
}

func (p *fp) parseCaseClause(ctx int32, typeSwitch bool) {
	if p.tok == token.CASE {
		p.next()
		lctx := ctx
		if typeSwitch {
			lctx = sType
		}
		p.parseList(true, lctx)
	} else {
		p.expect(token.DEFAULT)
	}
	p.expect(token.COLON)
	p.parseStmtList(ctx)
}

func (p *fp) isTypeSwitchGuard(s fstmt) bool {
	switch s.kind {
	case stExpr:
		return s.x0.tsa
	case stAssign:
		if s.nlhs == 1 && s.nrhs == 1 && !s.isRange && s.y0.tsa {
			switch s.tok {
			case token.ASSIGN:
				p.bail()
			case token.DEFINE:
				return true
			}
		}
	}
	return false
}

func (p *fp) parseSwitchStmt(ctx int32) {
	p.expect(token.SWITCH)
	var s2 fstmt
	if p.tok != token.LBRACE {
		prevLev := p.exprLev
		p.exprLev = -1
		if p.tok != token.SEMICOLON {
			s2 = p.parseSimpleStmt(modeBasic, ctx)
		}
		if p.tok == token.SEMICOLON {
			p.next()
			s2 = fstmt{}
			if p.tok != token.LBRACE {
				s2 = p.parseSimpleStmt(modeBasic, ctx)
			}
		}
		p.exprLev = prevLev
	}
	typeSwitch := p.isTypeSwitchGuard(s2)
	p.expect(token.LBRACE)
	for p.tok == token.CASE || p.tok == token.DEFAULT {
		p.parseCaseClause(ctx, typeSwitch)
	}
	p.expect(token.RBRACE)
	p.expectSemi()
	if !typeSwitch && s2.kind != stNone && s2.kind != stExpr {
		p.bail()
	}
}

func (p *fp) parseCommClause(ctx int32) {
	if p.tok == token.CASE {
		p.next()
		n, _ := p.parseList(false, ctx)
		if p.tok == token.ARROW {
			if n > 1 {
				p.bail()
			}
			p.next()
			y := p.parseRhs()
			p.link(y.slot, ctx)
		} else if p.tok == token.ASSIGN || p.tok == token.DEFINE {
			if n > 2 {
				p.bail()
			}
			p.next()
			y := p.parseRhs()
			p.link(y.slot, ctx)
		} else if n > 1 {
			p.bail()
		}
	} else {
		p.expect(token.DEFAULT)
	}
	p.expect(token.COLON)
	p.parseStmtList(ctx)
}

func (p *fp) parseSelectStmt(ctx int32) {
	p.expect(token.SELECT)
	p.expect(token.LBRACE)
	for p.tok == token.CASE || p.tok == token.DEFAULT {
		p.parseCommClause(ctx)
	}
	p.expect(token.RBRACE)
	p.expectSemi()
}

func (p *fp) parseForStmt(ctx int32) {
	p.expect(token.FOR)
	var s2 fstmt
	isRange := false
	if p.tok != token.LBRACE {
		prevLev := p.exprLev
		p.exprLev = -1
		if p.tok != token.SEMICOLON {
			if p.tok == token.RANGE {
				p.next()
				y := p.parseRhs()
				p.link(y.slot, ctx)
				s2 = fstmt{kind: stAssign, isRange: true}
				isRange = true
			} else {
				s2 = p.parseSimpleStmt(modeRangeOk, ctx)
				isRange = s2.isRange
			}
		}
		if !isRange && p.tok == token.SEMICOLON {
			p.next()
			s2 = fstmt{}
			if p.tok != token.SEMICOLON {
				s2 = p.parseSimpleStmt(modeBasic, ctx)
			}
			p.expectSemi()
			if p.tok != token.LBRACE {
				p.parseSimpleStmt(modeBasic, ctx)
			}
		}
		p.exprLev = prevLev
	}
	p.parseBlockStmt(ctx)
	p.expectSemi()
	if isRange {
		if s2.nlhs > 2 {
			p.bail()
		}
		return
	}
	if s2.kind != stNone && s2.kind != stExpr {
		p.bail()
	}
}

func (p *fp) parseStmt(ctx int32) {
	p.incNest()
	defer func() { p.nest-- }()
	switch p.tok {
	case token.CONST, token.TYPE, token.VAR:
		p.parseGenDecl(p.tok, false)
	case token.IDENT, token.INT, token.FLOAT, token.IMAG, token.CHAR, token.STRING, token.FUNC, token.LPAREN,
		token.LBRACK, token.STRUCT, token.MAP, token.CHAN, token.INTERFACE,
		token.ADD, token.SUB, token.MUL, token.AND, token.XOR, token.ARROW, token.NOT:
		if s := p.parseSimpleStmt(modeLabelOk, ctx); s.kind != stLabeled {
			p.expectSemi()
		}
	case token.GO, token.DEFER:
		p.next()
		p.parseCallExpr(ctx)
		p.expectSemi()
	case token.RETURN:
		p.next()
		if p.tok != token.SEMICOLON && p.tok != token.RBRACE {
			p.parseList(true, ctx)
		}
		p.expectSemi()
	case token.BREAK, token.CONTINUE, token.GOTO, token.FALLTHROUGH:
		tok := p.tok
		p.next()
		if tok == token.GOTO || (tok == token.CONTINUE || tok == token.BREAK) && p.tok == token.IDENT {
			l := p.parseIdent()
			p.link(l.slot, ctx)
			p.evs[l.ev].flags |= evNotRef
		}
		p.expectSemi()
	case token.LBRACE:
		p.parseBlockStmt(ctx)
		p.expectSemi()
	case token.IF:
		p.parseIfStmt(ctx)
	case token.SWITCH:
		p.parseSwitchStmt(ctx)
	case token.SELECT:
		p.parseSelectStmt(ctx)
	case token.FOR:
		p.parseForStmt(ctx)
	case token.SEMICOLON:
		p.next()
	case token.RBRACE:
	default:
		p.bail()
	}
}

// ---------------------------------------------------------------------------
// Declarations.

func (p *fp) parseImportSpec() {
	fl := p.tline
	switch p.tok {
	case token.IDENT:
		n := p.parseIdent()
		p.link(n.slot, sExpr)
		p.evs[n.ev].flags |= evNotRef
	case token.PERIOD:
		p.next()
	}
	if p.tok != token.STRING {
		p.bail()
	}
	lit := p.src[p.pos:p.end]
	if bytes.IndexByte(lit, '\r') >= 0 {
		p.bail() // go/scanner strips CRs from raw strings
	}
	p.next()
	p.expectSemi()
	if path := unquote(string(lit)); path != "" {
		p.imps = append(p.imps, Import{Path: path, Kind: "import", Line: int(fl)})
	}
}

// parseValueSpec records a top-level spec in p.specs.
func (p *fp) parseValueSpec(keyword token.Token, top bool) {
	from, fl := p.pos, p.tline
	ev0 := int32(len(p.evs))
	for {
		n := p.parseIdent()
		p.link(n.slot, sType)
		if p.tok != token.COMMA {
			break
		}
		p.next()
	}
	evn := int32(len(p.evs))
	if keyword == token.CONST {
		if p.tok != token.EOF && p.tok != token.SEMICOLON && p.tok != token.RPAREN {
			if t, ok := p.tryIdentOrType(); ok {
				p.link(t.slot, sType)
			}
			if p.tok == token.ASSIGN {
				p.next()
				p.parseList(true, sExpr)
			}
		}
	} else {
		if p.tok != token.ASSIGN {
			t := p.parseType()
			p.link(t.slot, sType)
		}
		if p.tok == token.ASSIGN {
			p.next()
			p.parseList(true, sExpr)
		}
	}
	to, tl := p.prevEnd, p.prevEndLine
	p.expectSemi()
	if top {
		kind := KindVariable
		if keyword == token.CONST {
			kind = KindConstant
		}
		p.specs = append(p.specs, fspec{from: from, to: to, fl: fl, tl: tl, ev0: ev0, evn: evn, kind: kind})
	}
}

func (p *fp) parseTypeSpec(top bool) {
	from, fl := p.pos, p.tline
	name := p.parseIdent()
	p.link(name.slot, sType)
	mem0 := len(p.members)
	alias := false
	var t fnode
	if p.tok == token.LBRACK {
		p.next()
		if p.tok == token.IDENT {
			x := p.parseIdent()
			switch p.tok {
			case token.LBRACK, token.IDENT, token.INTERFACE, token.FUNC, token.MAP, token.CHAN, token.STRUCT,
				token.TILDE, token.COMMA, token.ARROW:
				// spec.Name "[" pname ...: type parameters
				p.link(x.slot, sType)
				p.parseParameterList(&x, nil, token.RBRACK, false)
				p.expect(token.RBRACK)
				if p.tok == token.ASSIGN {
					alias = true
					p.next()
				}
				t = p.parseType()
			case token.RBRACK:
				t = p.parseArrayType(&x)
			default:
				// An expression starting with the name: an array
				// length unless extractName splits it into a name
				// and a type (then bail: that reading is not kept).
				p.exprLev++
				lhs := p.parsePrimaryExpr(&x)
				ln := p.parseBinaryExpr(&lhs, token.LowestPrec+1)
				p.exprLev--
				force := p.tok == token.COMMA
				if ln.kind == nIdent || ln.kind == nCall && (force || ln.e2f) {
					p.bail() // P(C) as a parameter: not kept
				}
				if force && ln.e2t || !force && ln.e2f {
					// name *T, name *T|U: a type parameter list
					// whose first parameter's type is ln without
					// the name (every part of it, and the name, in
					// a type context: ln's slot goes to sType).
					p.parseParameterList(&x, &ln, token.RBRACK, false)
					p.expect(token.RBRACK)
					if p.tok == token.ASSIGN {
						alias = true
						p.next()
					}
					t = p.parseType()
					break
				}
				t = p.parseArrayType(&ln)
			}
		} else {
			t = p.parseArrayType(nil)
		}
	} else {
		if p.tok == token.ASSIGN {
			alias = true
			p.next()
		}
		t = p.parseType()
	}
	p.link(t.slot, sType)
	to, tl := p.prevEnd, p.prevEndLine
	p.expectSemi()
	if !top {
		p.members = p.members[:mem0]
		return
	}
	kind := KindType
	if !alias {
		switch t.kind {
		case nStructType:
			kind = KindStruct
		case nInterfaceType:
			kind = KindInterface
		}
	}
	m0 := int32(len(p.specMembers))
	if t.kind == nStructType || t.kind == nInterfaceType {
		for _, m := range p.members[mem0:] {
			if m.sid != t.sid {
				continue
			}
			if t.kind == nInterfaceType && !m.method {
				continue
			}
			p.specMembers = append(p.specMembers, m)
		}
	}
	p.members = p.members[:mem0]
	p.specs = append(p.specs, fspec{from: from, to: to, fl: fl, tl: tl, ev0: name.ev, evn: name.ev + 1, kind: kind,
		mem0: m0, memn: int32(len(p.specMembers))})
}

func (p *fp) parseGenDecl(keyword token.Token, top bool) {
	pos, line := p.pos, p.tline
	p.expect(keyword)
	spec := func() {
		switch keyword {
		case token.IMPORT:
			p.parseImportSpec()
		case token.CONST, token.VAR:
			p.parseValueSpec(keyword, top)
		case token.TYPE:
			p.parseTypeSpec(top)
		}
	}
	s0 := len(p.specs)
	m0 := len(p.specMembers)
	paren := false
	var lparen, rparen int32
	if p.tok == token.LPAREN {
		paren = true
		lparen = p.pos
		p.next()
		for p.tok != token.RPAREN && p.tok != token.EOF {
			spec()
		}
		rparen = p.pos
		p.expect(token.RPAREN)
	} else {
		spec()
	}
	end, endLine := p.prevEnd, p.prevEndLine
	if paren {
		p.expectSemi()
	}
	if !top || keyword == token.IMPORT {
		return
	}
	specs := p.specs[s0:]
	for i := range specs {
		s := &specs[i]
		from, to, fl, tl := s.from, s.to, s.fl, s.tl
		if len(specs) == 1 {
			switch {
			case !paren:
				from, fl, to, tl = pos, line, end, endLine
			case keyword == token.VAR:
			case bytes.IndexByte(p.src[lparen+1:s.from], '/') >= 0 || bytes.IndexByte(p.src[s.to:rparen], '/') >= 0:
			default:
				from, fl, to, tl = pos, line, end, endLine
			}
		}
		for ev := s.ev0; ev < s.evn; ev++ {
			p.def(from, to, fl, tl, ev, s.kind, -1)
		}
		if keyword == token.TYPE {
			owner := s.ev0
			for _, m := range p.specMembers[s.mem0:s.memn] {
				kind := KindField
				if m.method {
					kind = KindMethod
				}
				p.def(m.from, m.to, m.fl, m.tl, m.ev, kind, owner)
			}
		}
	}
	p.specs = p.specs[:s0]
	p.specMembers = p.specMembers[:m0]
}

func (p *fp) word(ev int32) []byte { e := p.evs[ev]; return p.src[e.off:e.end] }

// def is goAST.def; container is an event (-1: none).
func (p *fp) def(from, to, fl, tl, ev int32, kind SymbolKind, container int32) {
	if len(p.syms) >= maxSymbols {
		return
	}
	p.evs[ev].flags |= evDef
	w := p.word(ev)
	p.syms = append(p.syms, Symbol{
		Kind:      kind,
		StartLine: fl, EndLine: tl,
		StartByte: from, EndByte: to,
		Exported: 'A' <= w[0] && w[0] <= 'Z' || w[0] >= utf8.RuneSelf && upperFirst(string(w)),
	})
	// Names are interned in emit, in parseGoAST's order; keep the events.
	p.symEv = append(p.symEv, [2]int32{ev, container})
}

func (p *fp) parseFuncDecl() {
	pos, line := p.pos, p.tline
	p.expect(token.FUNC)
	recv := false
	rname := int32(-1)
	if p.tok == token.LPAREN {
		recv = true
		rname = p.parseParameters(false)
	}
	name := p.parseIdent()
	p.link(name.slot, sExpr)
	if p.tok == token.LBRACK {
		p.parseTypeParameters()
		if recv {
			p.bail()
		}
	}
	p.parseParameters(false)
	p.parseParameters(true)
	var end, endLine int32
	switch p.tok {
	case token.LBRACE:
		p.parseBlockStmt(sExpr)
		end, endLine = p.prevEnd, p.prevEndLine
		p.expectSemi()
	case token.SEMICOLON:
		end, endLine = p.prevEnd, p.prevEndLine
		p.next()
		if p.tok == token.LBRACE {
			p.bail()
		}
	default:
		end, endLine = p.prevEnd, p.prevEndLine
		p.expectSemi()
	}
	kind, container := KindFunction, int32(-1)
	if recv {
		kind, container = KindMethod, rname // -1: goASTReceiver's ""

	}
	p.def(pos, end, line, endLine, name.ev, kind, container)
}

func (p *fp) parseFile() {
	p.expect(token.PACKAGE)
	pkg := p.parseIdent()
	p.link(pkg.slot, sExpr)
	p.evs[pkg.ev].flags |= evDef
	p.pkg = pkg.ev
	p.expectSemi()
	for p.tok == token.IMPORT {
		p.parseGenDecl(token.IMPORT, true)
	}
	for p.tok != token.EOF {
		switch p.tok {
		case token.CONST, token.VAR, token.TYPE:
			p.parseGenDecl(p.tok, true)
		case token.FUNC:
			p.parseFuncDecl()
		default:
			p.bail() // imports after other declarations, or no declaration
		}
	}
}

// ---------------------------------------------------------------------------
// Output.

func (p *fp) resolve(s int32) int32 {
	r := s
	for r > sType {
		q := p.par[r]
		if q < 0 {
			return -1
		}
		r = q
	}
	// path compression
	for s > sType {
		q := p.par[s]
		p.par[s] = r
		s = q
	}
	return r
}

func (p *fp) emit() (*FileInfo, bool) {
	// Every slot must be linked before anything is interned.
	for i := range p.evs {
		if p.resolve(p.evs[i].slot) < 0 {
			fastInternalErrors.Add(1)
			return nil, false
		}
	}
	info := &FileInfo{Language: "go", Symbols: []Symbol{}, Imports: []Import{}, Refs: []Name{}}
	info.Package = string(p.word(p.pkg))
	for i := range p.syms {
		se := p.symEv[i]
		p.syms[i].Name = p.in.nameBytes(p.word(se[0]))
		if c := se[1]; c >= 0 {
			p.syms[i].Container = p.in.nameBytes(p.word(c))
		} else {
			p.syms[i].Container = p.in.name("")
		}
	}
	if len(p.syms) > 0 {
		info.Symbols = p.syms
	}
	if len(p.imps) > 0 {
		info.Imports = p.imps
	}
	seen := getSeenSet()
	defer putSeenSet(seen)
	for i := range p.evs {
		e := &p.evs[i]
		n := e.end - e.off
		if n < 2 || n > 128 || e.flags&(evDef|evNotRef) != 0 {
			continue
		}
		ctx := p.resolve(e.slot)
		if e.flags&evSelX != 0 && ctx == sType {
			continue
		}
		w := p.src[e.off:e.end]
		if seen[string(w)] || goStop[string(w)] {
			continue
		}
		if ctx == sExpr && fastKeywordNode(w) {
			continue
		}
		name := p.in.nameBytes(w)
		if name == 0 {
			continue
		}
		seen[name.String()] = true
		p.refs = append(p.refs, name)
		if len(p.refs) >= MaxRefs {
			break
		}
	}
	if len(p.refs) > 0 {
		info.Refs = p.refs
	}
	return info, true
}

func fastKeywordNode(w []byte) bool {
	switch string(w) {
	case "nil", "true", "false", "iota":
		return true
	}
	return false
}
