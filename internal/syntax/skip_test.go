package syntax

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestPythonBodySkipMatchesWholeParse: as the Rust test, for Python:
// fixtures and traps (multi-line strings and headers, f-strings with
// nested interpolations and format specs, decorators before the last
// statement, else/except clauses at the body's indentation, comments at
// odd indentation, match statements and match as a name, nested defs,
// classes whose last method is skipped).
func TestPythonBodySkipMatchesWholeParse(t *testing.T) {
	inputs := map[string][]byte{}
	files, _ := filepath.Glob("testdata/python/*.py")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	inputs["tricky"] = []byte(`import os
from .models import Model as Base

class Service(Base):
    """Doc."""
    LIMIT = 10

    def __init__(self, name: str, *args, **kwargs) -> None:
        self.name = name
        text = f"{name!r:>{width}} {kwargs['key']} {{literal}} {obj.attr:%Y-%m-%d}"
        raw = rb'\d+' + r"\w" + '\'' + "tab\t"
        multi = """a
def not_a_def():
    pass
"""
        match = re.match(pattern, text)
        if match:
            value = compute(match)
        else:
            value = fallback()
  # a comment at odd indentation
        try:
            risky(value)
        except ValueError as err:
            handle(err)
        finally:
            cleanup()

    @property
    def label(self):
        first = self.name.upper()
        second = helper(first,
                        extra=True)

        @decorator(option=1)
        def inner(arg):
            return arg * factor
        return inner

    async def run(self, items):
        async for item in stream(items):
            await process(item)
        match command:
            case Point(x=0, y=0):
                origin()
            case _:
                other()


def top_level(a, b=lambda q: q + 1):
    total = a + b(a)
    if total > 3:             total -= 1
    for index in range(total):
        yield index
    while total:
        total -= 1
    return total
`)
	for name, src := range inputs {
		skipped, whole := parseBoth(t, "python", src)
		if !reflect.DeepEqual(skipped, whole) {
			t.Errorf("%s: skipped bodies differ from the whole parse\nskipped: %+v\nwhole:   %+v", name, skipped, whole)
		}
	}
	if n := len(pythonBodies(inputs["tricky"])); n < 4 {
		t.Errorf("tricky: %d bodies found, want 4", n)
	}
}

// parseBoth parses src with function bodies skipped and whole.
func parseBoth(t testing.TB, lang string, src []byte) (skipped, whole *FileInfo) {
	t.Helper()
	var err error
	if skipped, err = Parse(context.Background(), lang, src, nil); err != nil {
		t.Fatal(err)
	}
	if whole, err = Parse(context.Background(), lang, src, &Options{wholeBodies: true}); err != nil {
		t.Fatal(err)
	}
	return skipped, whole
}

// TestRustBodySkipMatchesWholeParse: with fn bodies left out of the
// parse, every Rust fixture gives the same FileInfo as a whole parse
// (symbols with their extents, imports, refs in order, errors), and so do
// sources written to trip the body finder: strings, raw strings, chars
// and lifetimes holding braces, nested block comments, fn pointer types,
// trait declarations without bodies, macros, labels, primitive paths.
func TestRustBodySkipMatchesWholeParse(t *testing.T) {
	inputs := map[string][]byte{}
	files, _ := filepath.Glob("testdata/rust/*.rs")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	inputs["tricky"] = []byte(`use std::fmt::{self, Display};
/* a { comment /* nested } */ still } */
pub struct Holder { f: fn(u8) -> u8, g: Box<dyn Fn() -> String> }
const K: fn() -> u32 = zero_returning_function;
pub trait Shape { fn area(&self) -> f64; fn name(&self) -> String { String::from("shape with a long default body") } }
impl<'a> Holder where 'a: 'static {
    pub fn new(label: &'a str) -> Self {
        let brace = '{'; let close = '}'; let esc = '\''; let uni = '\u{7D}';
        let s = "a } string { with \" quotes"; let r = r#"raw } " still raw { "#;
        let b = b"bytes {"; let br = br##"x}"##; let bc = b'{';
        'outer: for index in 0..10 { if index > 3 { break 'outer; } }
        let max = u8::MAX as usize + i32::BITS as usize; let typed: u64 = 0x1F_u64 + 1e-3 as u64 + 2.5f64 as u64;
        println!("{} {}", label, max);
        macro_rules! local { ($name:ident) => { let $name = 1; } }
        local!(value);
        let closure = |first: u32, second| -> u32 { first + second };
        Holder { f: |x| x, g: Box::new(move || format!("{typed}")) }
    }
    fn generic<T: Display + Clone, const N: usize>(items: [T; N]) -> Vec<String> where T: fmt::Debug {
        items.iter().map(|item| item.to_string()).collect::<Vec<_>>()
    }
}
extern "C" { fn abs(input: i32) -> i32; }
fn unfinished_lifetime_label_and_more<'de>(d: &'de str) -> Option<&'de str> { match d { "" => None, other => Some(other) } }
`)
	// A fn without body or ';' inside a macro's token tree: the '}' that
	// closes the tree ends it, and the next item is code again (its body
	// has an else, which is an identifier only inside a token tree).
	inputs["bodiless in a macro"] = []byte("declare!{ fn declared_only() }\nfn after(flag: bool) -> u32 { if flag { first_branch_value() } else { second_branch_value() } }\n")
	inputs["unterminated"] = []byte("fn a() { let s = \"never closed; }\nfn b() { other_function_call_that_is_long(); another_one(); }")
	inputs["unbalanced"] = []byte("fn a() { if x { y_call_with_a_long_name(); z_call_with_a_long_name(); }\nstruct After { field: u8 }")
	for name, src := range inputs {
		skipped, whole := parseBoth(t, "rust", src)
		if !reflect.DeepEqual(skipped, whole) {
			t.Errorf("%s: skipped bodies differ from the whole parse\nskipped: %+v\nwhole:   %+v", name, skipped, whole)
		}
	}
	if len(rustBodies(inputs["tricky"])) < 3 {
		t.Errorf("tricky: bodies %v, want the fn bodies found", rustBodies(inputs["tricky"]))
	}
}

// TestRustBodySkipOnTree compares skipped and whole parses of every Rust
// file under TASK_X_BENCH_DIR and reports the differences: symbols,
// imports and errors must be equal; refs are listed.
func TestRustBodySkipOnTree(t *testing.T) { bodySkipOnTree(t, "rust") }

// TestPythonBodySkipOnTree is TestRustBodySkipOnTree for Python.
func TestPythonBodySkipOnTree(t *testing.T) { bodySkipOnTree(t, "python") }

// TestJavaScriptBodySkipOnTree is TestRustBodySkipOnTree for JavaScript.
func TestJavaScriptBodySkipOnTree(t *testing.T) { bodySkipOnTree(t, "javascript") }

// TestTypeScriptBodySkipOnTree is TestRustBodySkipOnTree for TypeScript.
func TestTypeScriptBodySkipOnTree(t *testing.T) { bodySkipOnTree(t, "typescript") }

// TestTSXBodySkipOnTree is TestRustBodySkipOnTree for TSX.
func TestTSXBodySkipOnTree(t *testing.T) { bodySkipOnTree(t, "tsx") }

func bodySkipOnTree(t *testing.T, language string) {
	dir := os.Getenv("TASK_X_BENCH_DIR")
	if dir == "" {
		t.Skip("TASK_X_BENCH_DIR not set")
	}
	var files, differ, errDiffer, skippedFiles, minified int
	var bytesAll, bytesSkipped int
	extra, missing := map[string]int{}, map[string]int{}
	g := grammars[language]
	again := wholeAgain.Load()
	walkParseable(dir, func(path, lang string, src []byte) {
		if lang != language {
			return
		}
		files++
		bytesAll += len(src)
		if language != "rust" && language != "python" && jsMinified(src) {
			minified++ // skip_minified.go's blocks: not read as a whole parse would
			return
		}
		if spans := g.bodies(src); len(spans) > 0 {
			skippedFiles++
			for _, sp := range spans {
				bytesSkipped += int(sp.close - sp.open - 1)
			}
		}
		skipped, whole := parseBoth(t, lang, src)
		if !reflect.DeepEqual(skipped.Symbols, whole.Symbols) || !reflect.DeepEqual(skipped.Imports, whole.Imports) {
			t.Errorf("%s: symbols or imports differ", path)
			if !reflect.DeepEqual(skipped.Imports, whole.Imports) {
				t.Logf("imports skipped %v\nwhole %v", skipped.Imports, whole.Imports)
			}
		}
		if skipped.HasErrors != whole.HasErrors {
			errDiffer++
		}
		if !slices.Equal(skipped.Refs, whole.Refs) || skipped.HasErrors != whole.HasErrors {
			differ++
			var words []string
			for _, r := range skipped.Refs {
				if !slices.Contains(whole.Refs, r) {
					extra[r.String()]++
					words = append(words, "+"+r.String())
				}
			}
			for _, r := range whole.Refs {
				if !slices.Contains(skipped.Refs, r) {
					missing[r.String()]++
					words = append(words, "-"+r.String())
				}
			}
			if len(words) == 0 {
				words = append(words, "(order)")
			}
			if differ <= 40 {
				t.Logf("%s: refs differ (errors %v/%v): %s", path, skipped.HasErrors, whole.HasErrors, strings.Join(words, " "))
			}
		}
	})
	top := func(m map[string]int) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b string) int { return m[b] - m[a] })
		var out []string
		for _, k := range ks[:min(len(ks), 40)] {
			out = append(out, fmt.Sprintf("%s:%d", k, m[k]))
		}
		return strings.Join(out, " ")
	}
	t.Logf("%d %s files (%d bytes; %d minified, not compared), bodies found in %d (%d bytes inside; %d parses redone whole), %d with other refs or errors (%d errors)\nextra: %s\nmissing: %s",
		files, language, bytesAll, minified, skippedFiles, bytesSkipped, wholeAgain.Load()-again, differ, errDiffer, top(extra), top(missing))
}

// BenchmarkRustBodiesNested: deeply nested struct-like groups in a body
// cost linear time (the pattern look-ahead is bounded).
func BenchmarkRustBodiesNested(b *testing.B) {
	src := []byte("fn f() { " + strings.Repeat("A { ", 50000) + strings.Repeat("} ", 50000) + "}")
	for b.Loop() {
		for _, sp := range rustBodies(src) {
			rustBodyIdents(src, sp, func([]byte) bool { return true })
		}
	}
}
