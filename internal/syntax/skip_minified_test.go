package syntax

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// minify pads one line of JavaScript to a minified file: the line
// repeated inside an IIFE's body up to minifiedSize, no newlines.
func minify(head, body, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("!function(e){")
	for b.Len() < minifiedSize+1024 {
		b.WriteString(body)
	}
	b.WriteString("}(this);")
	b.WriteString(tail)
	return []byte(b.String())
}

func TestJSMinifiedDetect(t *testing.T) {
	if jsMinified([]byte(strings.Repeat("var a = 1;\n", 10000))) {
		t.Fatal("hand-written code read as minified")
	}
	// A long data line in an otherwise ordinary file does not make it so.
	src := "const icon = \"" + strings.Repeat("A", 40000) + "\";\n" + strings.Repeat("function f() { return 1; }\n", 2000)
	if jsMinified([]byte(src)) || jsMinifiedBodies([]byte(src)) != nil {
		t.Fatal("a file with one long string line read as minified")
	}
	if !jsMinified(minify("", "var x=1;", "")) {
		t.Fatal("a minified file not detected")
	}
	if jsMinified([]byte(strings.Repeat("x", minifiedSize-1))) {
		t.Fatal("a small file read as minified")
	}
}

// TestJSMinifiedParse checks a minified file keeps its top level's
// symbols and imports, and gets its blocks' identifiers as refs through
// the lexer, across the lexing traps: regexes with braces and slashes,
// division, templates with nested substitutions, strings with braces.
func TestJSMinifiedParse(t *testing.T) {
	body := `var r=/\{[^}]*\}\//g,q=a/b/c,s="}{'",u='{"}',v=` + "`x${ {k:1}.k }y${`in${renderMath}`}z`" +
		`;function g(){return/}/.test(katexOptions)}if(x){y=z}`
	src := minify(`import{render as R}from"./katex.js";export function topLevel(){return someLongIdentifierName+anotherLongIdentifierName}`, body,
		`export class Widget{paint(){return WidgetPainter.paintEverythingNow(canvasElement)}}`)
	spans := jsMinifiedBodies(src)
	if len(spans) != 3 {
		t.Fatalf("%d spans, want the IIFE's, topLevel's and Widget's bodies: %+v", len(spans), spans)
	}
	for _, sp := range spans {
		if src[sp.open] != '{' || src[sp.close] != '}' {
			t.Fatalf("span %+v does not sit on braces", sp)
		}
	}
	info, err := Parse(context.Background(), "javascript", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := func() (out []string) {
		for _, s := range info.Symbols {
			out = append(out, s.Name.String())
		}
		return out
	}()
	if !slices.Contains(names, "topLevel") || !slices.Contains(names, "Widget") {
		t.Fatalf("top-level symbols %v, want topLevel and Widget", names)
	}
	if slices.Contains(names, "paint") || slices.Contains(names, "g") {
		t.Fatalf("symbols from skipped blocks: %v", names)
	}
	if len(info.Imports) != 1 || info.Imports[0].Path != "./katex.js" || !slices.Equal(info.Imports[0].Names, []string{"render"}) {
		t.Fatalf("imports %+v", info.Imports)
	}
	var refs []string
	for _, r := range info.Refs {
		refs = append(refs, r.String())
	}
	for _, want := range []string{"renderMath", "katexOptions", "WidgetPainter", "paintEverythingNow", "anotherLongIdentifierName"} {
		if !slices.Contains(refs, want) {
			t.Fatalf("refs %v lack %q (read from a skipped block)", refs, want)
		}
	}
	for _, kw := range []string{"function", "return", "var", "this"} {
		if slices.Contains(refs, kw) {
			t.Fatalf("keyword %q among refs %v", kw, refs)
		}
	}
	if info.HasErrors {
		t.Fatal("the parse with the blocks left out has errors")
	}
}

// TestJSMinifiedUnbalanced: a file that does not lex (an unterminated
// string, unbalanced braces) is parsed whole.
func TestJSMinifiedUnbalanced(t *testing.T) {
	for _, src := range [][]byte{
		minify("", "var x=1;", "var s='open"),
		minify("{", "var x=1;", ""),
		minify("", "var x=1;", "}}"),
		minify("", "var x=`a${b", ""),
	} {
		if sp := jsMinifiedBodies(src); sp != nil {
			t.Fatalf("spans %+v for a file that does not lex", sp)
		}
	}
}

// TestJSMinifiedBundle parses a real minified bundle when the mixed
// benchmark tree is there (TASK_X_BENCH_DIR).
func TestJSMinifiedBundle(t *testing.T) {
	dir := os.Getenv("TASK_X_BENCH_DIR")
	src, err := os.ReadFile(dir + "/hugo/internal/warpc/js/renderkatex.bundle.js")
	if dir == "" || err != nil {
		t.Skip("needs TASK_X_BENCH_DIR with hugo's renderkatex.bundle.js")
	}
	sp := jsMinifiedBodies(src)
	if len(sp) == 0 {
		t.Fatal("the bundle is not skipped")
	}
	info, err := Parse(context.Background(), "javascript", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d spans, %d symbols, %d refs, %d imports", len(sp), len(info.Symbols), len(info.Refs), len(info.Imports))
}

// FuzzJSMinifiedBodies: any input lexes without a panic, and the spans are
// in order, on braces, within the source.
func FuzzJSMinifiedBodies(f *testing.F) {
	f.Add([]byte("var r=/\\{/;function f(){return `a${ {b:1} }`}"))
	f.Add([]byte("a/b/c;x=/[/]/g;`${`${`x`}`}`"))
	f.Add([]byte("import{a}from'b';export{c};if(x){y}"))
	const fn = "function f(){return alpha+beta+gamma+delta+epsilon+zeta+eta+theta+iota}"
	f.Add([]byte("var a\\\nb=1;" + fn))    // a backslash at a line's end in code
	f.Add([]byte("s='a\\\r\nb';" + fn))    // a CRLF line continuation in a string
	f.Add([]byte("x=/a\\\n/;y=1;\n" + fn)) // a regex cut by its line's end
	f.Fuzz(func(t *testing.T, b []byte) {
		// Padded to the minified size with a comment on one line, so the
		// lexer runs unless b has over ~130 lines.
		src := append(append([]byte{}, b...), []byte("\n/*"+strings.Repeat("x", minifiedSize)+"*/")...)
		spans := jsMinifiedBodies(src)
		last := -1
		for _, sp := range spans {
			if int(sp.open) <= last || sp.close <= sp.open || int(sp.close) >= len(src) || src[sp.open] != '{' || src[sp.close] != '}' {
				t.Fatalf("bad span %+v (last %d, len %d)", sp, last, len(src))
			}
			last = int(sp.close)
			for _, at := range [][3]uint32{{sp.open, sp.openRow, sp.openCol}, {sp.close, sp.closeRow, sp.closeCol}} {
				before := src[:at[0]]
				row, col := uint32(bytes.Count(before, []byte{'\n'})), at[0]-uint32(bytes.LastIndexByte(before, '\n')+1)
				if at[1] != row || at[2] != col {
					t.Fatalf("span %+v: brace at %d is on row %d col %d", sp, at[0], row, col)
				}
			}
			jsBodyIdents(src, sp, func([]byte) bool { return true })
		}
	})
}
