package syntax

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsTricky is JavaScript written to trip the body finder and the
// identifier classifier: labels, contextual keywords (get, set, static,
// async, let, of), keywords as property and member names, private names,
// new.target and import.meta, regular expressions after blocks and
// keywords, division, templates with substitutions holding braces,
// strings and comments with braces, object patterns, generators, nested
// functions and classes, require() and import() calls in bodies.
const jsTricky = `'use strict';
const fs = require("fs");
import def, { named as alias } from "./module.js";
export function outer(alpha, { beta, gamma: delta } = {}) {
  const { install: installs = 0, ctrl: aborter } = alpha;
  let [first, second] = beta;
  outerLoop: for (const item of delta) {
    innerLoop: for (let index = 0; index < item.length; index++) {
      if (item[index] === "}") continue outerLoop;
      if (index > 3) break innerLoop;
    }
  }
  const re = /[/}{]+\/"'/g, ratio = first / second / 2;
  const text = ` + "`a ${alpha.map(x => { return `${x}}`; })} b {`" + `;
  const helper = require('./helper'), lazy = import("./lazy.js");
  const { default: imported } = require("./default");
  return { get value() { return installs; }, set value(v) { aborter = v; }, async load() { await lazy; },
    static: 1, get: 2, set, of: 3, async: 4, default: 5, delete: obj.delete, new: new.target, meta: import.meta.url };
}
export class Service extends Base {
  static instances = 0;
  #hiddenState = 1;
  static { Service.instances = 0; }
  constructor(options) { super(options); this.#hiddenState = options.secret ?? 2; this.options = options; }
  get name() { return this.options.name || "service without a name at all"; }
  set name(value) { this.options.name = value; this.#hiddenState++; return; }
  static create(...args) { return new Service(...args).init(function inner() { return args.length; }); }
  async *stream(source) { for await (const chunk of source) { yield chunk; } }
  delete(key) { return this.store.delete(key) && typeof key === "string" || void 0; }
}
function regexAfterBlock(input) {
  if (input) { prepare(input); }
  /^\s*$/.test(input) && reportEmpty(input);
  let async = 1, of = 2, get = 3, set = 4, let_ = 5, static_ = 6;
  async = get + set + of;
  const call = async (value) => { await value; }, other = async value => value, plain = async(first, second);
  switch (input.kind) { case "a": { handle(input); break; } default: fallback(input); }
  return input.replace(/\}/g, "") / ratio;
}
module.exports = function (req, res) {
  const body = JSON.parse(req.body || "{}");
  if (body.lazy) { return import('./lazy-' + body.name).then(mod => mod.default(res)); }
  return require("./" + body.name) || require(body.name) || new require("x") || obj.require("y");
};
`

// TestJavaScriptBodySkipMatchesWholeParse: with function bodies left out
// of the parse, JavaScript fixtures and jsTricky give the FileInfo of a
// whole parse (symbols, imports in order, refs in order, errors).
func TestJavaScriptBodySkipMatchesWholeParse(t *testing.T) {
	inputs := map[string][]byte{"tricky": []byte(jsTricky)}
	files, _ := filepath.Glob("testdata/javascript/*.js*")
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".golden") })
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	// JSX: the bodies holding it are parsed whole, the others still skipped.
	inputs["jsx"] = []byte("function plain(alpha, beta) { return compute(alpha, beta) + other(alpha) + third(beta); }\n" +
		"function View(props) { const label = props.name; return <div className=\"x\">it's {label} {/* } */}</div>; }\n")
	// A regular expression after an if head's ')', division after a
	// postfix ++ (each read the other way would make names of its text).
	inputs["regex after a head"] = []byte("function f(alpha) { if (alpha) /xray yankee/.test(alpha); while (alpha) /zulu/.exec(alpha); return alpha++ / 2 + beta-- / gamma; }\n")
	inputs["unterminated"] = []byte("function a() { const s = \"never closed; }\nfunction b() { other_function_call_that_is_long(); another_one(); }")
	inputs["unbalanced"] = []byte("function a() { if (x) { y_call_with_a_long_name(); z_call_with_a_long_name(); }\nclass After { field = 1 }")
	for name, src := range inputs {
		again := wholeAgain.Load()
		skipped, whole := parseBoth(t, "javascript", src)
		if name == "tricky" && (wholeAgain.Load() != again || whole.HasErrors) {
			t.Errorf("tricky: the skipped parse was refused (jsVerify), or the source has errors (%v)", whole.HasErrors)
		}
		if !reflect.DeepEqual(skipped, whole) {
			t.Errorf("%s: skipped bodies differ from the whole parse\nskipped: %+v\nwhole:   %+v", name, skipped, whole)
		}
	}
	if n := len(jsBodies([]byte(jsTricky))); n < 5 {
		t.Errorf("tricky: %d bodies found, want at least 5", n)
	}
	if n := len(jsBodies(inputs["jsx"])); n != 1 {
		t.Errorf("jsx: %d bodies found, want 1 (the body before the JSX)", n)
	}
}

// tsTricky is TypeScript written to trip the type tracking: annotations
// on locals, parameters and return types (object types, function types,
// conditional and mapped types), predefined types as names and as types,
// as/satisfies chains, generic calls against comparisons, type
// assertions, optional and definite marks, parameter properties,
// modifiers, index signatures, enums, decorators, async arrows with
// return types, overloads.
const tsTricky = `import { Base, type Shape } from "./base";
export async function load<T extends object = {}>(input: T, opts?: { retries: number; string: string }): Promise<T | undefined> {
  const count: number = opts?.retries ?? 3, label: string = String(count);
  let pending!: Map<string, Array<() => void>>;
  const cast = <unknown>input as unknown as Record<string, any>;
  const fn = async (value: string): Promise<void> => { await value; };
  const plain = async(first, second);
  const checked = { number: 1, string: label, any: cast, object: null } satisfies Partial<Record<string, unknown>>;
  if (count < limit && limit > count) { record(count); }
  for (let index = 0; index < count; index++) { pending.get(label)?.push(() => undefined); }
  const mapped: { [K in keyof T]?: T[K] extends string ? K : never } = {};
  const guard = (value: unknown): value is string => typeof value === "string";
  const tuple: [string, number, ...boolean[]] = ["a", 1];
  enum Color { Red = 1, Green, Blue }
  return require("./dynamic") as T || import("./lazy").then((mod): T => mod.default as T);
}
export class Service extends Base implements Shape {
  private readonly cache = new Map<string, number>();
  protected static instances: number = 0;
  declare public label?: string;
  [key: string]: unknown;
  constructor(private readonly options: { name: string }, public override: boolean = false) { super(); this.cache.set(options.name, 1); }
  @logged() public async fetch<R>(url: string, init?: RequestInit): Promise<R> { const response = await fetch(url, init); return (await response.json()) as R; }
  get size(): number { return this.cache.size + Service.instances + this.options.name.length; }
  delete(): void;
  delete(flag?: boolean): void { this.cache.clear(); this.label = flag ? "on" : "off with a long enough label"; }
  public compare(left: number, right: number): -1 | 0 | 1 { return left < right ? -1 : left > right ? 1 : 0; }
}
export const helper = function (this: Window, event: Event): { handled: boolean } { return { handled: event.defaultPrevented || this.closed }; };
`

// TestTypeScriptBodySkipMatchesWholeParse is TestJavaScriptBodySkipMatchesWholeParse
// for TypeScript (tsTricky, the fixtures) and TSX (a body holding JSX is
// parsed whole).
func TestTypeScriptBodySkipMatchesWholeParse(t *testing.T) {
	inputs := map[string][]byte{"tricky": []byte(tsTricky)}
	files, _ := filepath.Glob("testdata/typescript/*.ts")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = b
	}
	for name, src := range inputs {
		again := wholeAgain.Load()
		skipped, whole := parseBoth(t, "typescript", src)
		if name == "tricky" && (wholeAgain.Load() != again || whole.HasErrors) {
			t.Errorf("tricky: the skipped parse was refused (jsVerify), or the source has errors (%v)", whole.HasErrors)
		}
		if !reflect.DeepEqual(skipped, whole) {
			t.Errorf("%s: skipped bodies differ from the whole parse\nskipped: %+v\nwhole:   %+v", name, skipped, whole)
		}
	}
	if n := len(tsBodies([]byte(tsTricky))); n < 6 {
		t.Errorf("tricky: %d bodies found, want at least 6", n)
	}
	tsx := map[string][]byte{"tricky": []byte(tsTricky[strings.Index(tsTricky, "export class"):])}
	files, _ = filepath.Glob("testdata/tsx/*.tsx")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tsx[f] = b
	}
	tsx["jsx"] = []byte("export function plain(alpha: number, beta: string): string { return compute(alpha, beta) + other(alpha) + third(beta); }\n" +
		"export function View(props: Props) { const label: string = props.name; return <div className=\"x\">it's {label}</div>; }\n")
	for name, src := range tsx {
		skipped, whole := parseBoth(t, "tsx", src)
		if !reflect.DeepEqual(skipped, whole) {
			t.Errorf("tsx %s: skipped bodies differ from the whole parse\nskipped: %+v\nwhole:   %+v", name, skipped, whole)
		}
	}
	if n := len(tsxBodies(tsx["jsx"])); n != 1 {
		t.Errorf("tsx jsx: %d bodies found, want 1", n)
	}
}

// FuzzJavaScriptBodies: the JavaScript body finder and classifier on any
// bytes (fuzzBodies: spans are ordered '{' '}' pairs with their rows and
// columns, identifiers inside them, no panic), and where the whole parse
// has no error, the skipped parse gives its symbols and imports (calls in
// bodies included).
func FuzzJavaScriptBodies(f *testing.F) {
	seeds := []string{jsTricky,
		"function f(a) { return a ? { get: 1, set } : async (b) => { for (const c of b) label: { break label; } }; }",
		"x = function () { return require('a') + import(\"b\") + new require('c') + y.require('d') + `${require('e')}`; }",
		"class A { static { s(); } get [k]() { return /}/.test(this.#p) / 2; } async *g() { yield* other(); } }",
		"a = () => { if (x) { y(); } /re{/.exec(z); const { default: d, delete: e } = q; return d; }",
		"function j() { return <div>{'}'}</div>; } function k() { return '<' + \"{\" + `}`; }",
		"function u() { const s = `a${ b({ c: `${ d }` }) }e`; return s; }", "function v() {", "f() {}}", "(a) => {/",
	}
	fuzzScriptBodies(f, "javascript", seeds...)
}

// FuzzTypeScriptBodies is FuzzJavaScriptBodies for TypeScript.
func FuzzTypeScriptBodies(f *testing.F) {
	fuzzScriptBodies(f, "typescript", tsTricky,
		"function f(a?: number, b: { c: string } = {}): Promise<void> { const d = <any>a as unknown as T; return g<string>(d) < h ? i : j; }",
		"class K { private x: number; m(): void { let y!: Map<string, () => void>; y = z satisfies W; } constructor(public a: A) { super(); this.a = a; } }",
		"const l = async (m: N): Promise<O> => { type P = string; interface Q { r: S } enum T { U } return m; };", "function v(): {", "x = (): void => {")
}

// FuzzTSXBodies is FuzzJavaScriptBodies for TSX.
func FuzzTSXBodies(f *testing.F) {
	fuzzScriptBodies(f, "tsx", "function A(p: P): JSX.Element { const q: string = p.r; return <div>{q}</div>; }",
		"const b = (c: number): number => { return c < d ? e : f; }; function g() { return h<i>(j); }")
}

// fuzzScriptBodies is the body of FuzzJavaScriptBodies for language lang.
func fuzzScriptBodies(f *testing.F, lang string, seeds ...string) {
	g := grammars[lang]
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var last uint32
		for i, sp := range g.bodies(src) {
			if sp.open >= sp.close || int(sp.close) >= len(src) || src[sp.open] != '{' || src[sp.close] != '}' || i > 0 && sp.open < last {
				t.Fatalf("bad span %+v after %d", sp, last)
			}
			last = sp.close
			for _, end := range []struct{ at, row, col uint32 }{{sp.open, sp.openRow, sp.openCol}, {sp.close, sp.closeRow, sp.closeCol}} {
				row := uint32(strings.Count(string(src[:end.at]), "\n"))
				col := end.at - uint32(strings.LastIndexByte(string(src[:end.at]), '\n')+1)
				if end.row != row || end.col != col {
					t.Fatalf("span %+v: offset %d is at row %d col %d", sp, end.at, row, col)
				}
			}
			g.bodyIdents(src, sp, func(b []byte) bool {
				off := uint32(cap(src) - cap(b))
				if off <= sp.open || off+uint32(len(b)) > sp.close {
					t.Fatalf("identifier %q at %d outside body %+v", b, off, sp)
				}
				return true
			})
		}
		skipped, whole := parseBoth(t, lang, src)
		checkSymbolRanges(t, src, skipped)
		if !whole.HasErrors && (!reflect.DeepEqual(skipped.Symbols, whole.Symbols) || !reflect.DeepEqual(skipped.Imports, whole.Imports)) {
			t.Fatalf("symbols or imports differ\nskipped: %+v\nwhole:   %+v", skipped, whole)
		}
	})
}

// BenchmarkJSBodiesLongLine: a long line holding thousands of bodies (in
// a file whose other lines keep it from looking minified) costs linear
// time: the columns of the braces are found walking forward.
func BenchmarkJSBodiesLongLine(b *testing.B) {
	src := []byte(strings.Repeat("f(function () { return first_argument + second_argument + third; }); ", 6000) + "\n" + strings.Repeat("x = 1;\n", 30000))
	if n := len(jsBodies(src)); n != 6000 {
		b.Fatalf("%d bodies, want 6000", n)
	}
	for b.Loop() {
		jsBodies(src)
	}
}

const plainJS = "function plain(alpha, beta) {\n  return compute(alpha, beta) + other(alpha) + third(beta);\n}\n"

// TestScriptBodySkipForOfLeftSides: `of` in a for head after a
// parenthesized left side or (TypeScript) a non-null '!' is the keyword,
// not a ref; where it is a name (`!of`, `of` declared) it stays one. A
// name after a number literal's member '.' is read (0n.toString()).
// TypeScript's `using` declarations and `x! as T` are read as a whole parse
// reads them, and an import()/require() whose path follows a comment is
// not an import (the whole parse's arguments start with the comment). The
// rest: test262's names in sloppy code.
func TestScriptBodySkipForOfLeftSides(t *testing.T) {
	cases := []struct{ lang, src string }{
		{"javascript", "function outer() {\n  for ((first) of items);\n  for ((second.field) of items) use(second);\n}\n"},
		{"javascript", "async function outer() {\n  for await (first of items);\n  for await ((second) of items);\n}\n"},
		{"javascript", "function outer() {\n  for (; !of; ) step();\n  for (let index = 0; index < of; index++) step();\n}\n"},
		{"typescript", "function outer(items: string[]) {\n  for (first! of items);\n  for ((second as any) of items);\n  for (third.field! of items);\n}\n"},
		{"typescript", "function outer() {\n  for (; !of; ) step();\n  for ([first] of items);\n}\n"},
		{"tsx", "function outer(items: string[]) {\n  for ((first) of items);\n  for (second! of items);\n}\n"},
		// a member of a number literal: 0n.toLocaleString() (test262)
		{"javascript", "function outer(locales) {\n  return 0n.toLocaleString(locales) + 1.5.toFixed(2) + 1..toString() + .5.toPrecision(1) + 1e3.toExponential() + 0x1Fn.valueOf() + 1e+3.toFixed() + 08.5.toFixed();\n}\n"},
		{"typescript", "function outer(locales: string): string {\n  return 0n.toLocaleString(locales) + 1.5.toFixed(2) + 0b101n.toString(2);\n}\n"},
		// TypeScript's using declarations (deno std); `using` as a name stays a ref
		{"typescript", "async function outer() {\n  using timer = stub(Deno, \"unrefTimer\");\n  await using handle = open();\n  using\n  other = open();\n}\n"},
		{"typescript", "function outer() {\n  let using = 1;\n  const { using: renamed } = source.using;\n  return renamed;\n}\n"},
		{"tsx", "function outer() {\n  using timer = stub(Deno, \"unrefTimer\");\n  return timer;\n}\n"},
		// x! as T (excalidraw, deno std): `as` is the operator
		{"typescript", "function outer(glob: string[], index: number) {\n  return chars.includes(glob[index]! as EscapeChar) || (find(glob)! as Element) || value! as Other;\n}\n"},
		{"typescript", "function outer(as: boolean) {\n  if (!as) return;\n  return check(as) && !as && validate(!as);\n}\n"},
		// import() with a comment before the path: a whole parse does not
		// read it (the arguments' first node is the comment) (excalidraw)
		{"tsx", "async function outer() {\n  const template = (await import(\n    /* webpackChunkName: \"bug\" */ \"../bug-issue-template\"\n  )).default;\n  return require(/* c */ \"x\") + require(\"y\" /* c */);\n}\n"},
		{"javascript", "async function outer() {\n  const template = (await import(/* webpackChunkName: \"bug\" */ \"../bug-issue-template\")).default;\n  return require(// c\n\"x\") + require(\"y\" /* c */);\n}\n"},
		// test262: yield and await as names in sloppy code, an import
		// declaration in a body, and for await (let [x] of y), where tree-sitter
		// reads let as a name (let[x]) or not (let [...x]): these bodies are parsed
		{"javascript", "function outer(arg) {\n  var yield = arg + 1;\n  let other = 1, await = 2;\n  return yield;\n}\nfunction second() {\n  function yield() {}\n  return compute(yield);\n}\nfunction plain(alpha, beta) {\n  return compute(alpha, beta) + other(alpha) + third(beta);\n}\n"},
		{"javascript", "function outer() {\n  import value from \"./module\";\n  return value;\n}\nasync function second() {\n  const loaded = await import(\"./lazy\"), address = import.meta.url;\n  return [loaded, address];\n}\n"},
		{"javascript", "async function outer(source) {\n  for await (let [first] of source) use(first);\n  for await (let [...rest] of source) use(rest);\n  for (let [second] of source) use(second);\n}\n" + plainJS},
		// typescript-eslint: an arrow with a return type as a conditional's
		// operand, super in a decorator (these bodies are parsed)
		{"typescript", "function outer(name: string, leading: boolean) {\n  const check = leading\n    ? (): boolean => name.startsWith('_')\n    : (): boolean => name.endsWith('_');\n  return check() ? (name) : other;\n}\n" + plainJS},
		{"typescript", "class Outer extends Base {\n  method() {\n    class Inner {\n      @(super.decorate)\n      second() {}\n      @super.decorate\n      third() {}\n    }\n  }\n}\n" + plainJS},
		{"typescript", "async function outer(source: Iterable<number[]>) {\n  for await (let [first] of source) use(first);\n  var await = 1;\n}\nfunction plain(alpha: number, beta: number) {\n  return compute(alpha, beta) + other(alpha) + third(beta);\n}\n"},
	}
	for _, c := range cases {
		src := []byte(c.src)
		if len(grammars[c.lang].bodies(src)) == 0 {
			t.Errorf("%s %q: no body left out", c.lang, c.src)
		}
		skipped, whole := parseBoth(t, c.lang, src)
		if whole.HasErrors {
			t.Errorf("%s %q: the whole parse has errors", c.lang, c.src)
		}
		if !reflect.DeepEqual(skipped, whole) {
			t.Errorf("%s %q: skipped refs %v, whole %v", c.lang, c.src, skipped.Refs, whole.Refs)
		}
	}
}
