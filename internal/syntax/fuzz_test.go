package syntax

import (
	"context"
	"testing"
)

func fuzzLang(f *testing.F, lang string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		info, err := Parse(context.Background(), lang, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range info.Symbols {
			if s.StartByte < 0 || s.EndByte > len(src) || s.StartByte > s.EndByte || s.StartLine > s.EndLine {
				t.Fatalf("bad range %+v", s)
			}
		}
		if len(info.Refs) > MaxRefs {
			t.Fatalf("%d refs", len(info.Refs))
		}
	})
}

// FuzzParseGo: any bytes parse without panic and give in-range symbols.
func FuzzParseGo(f *testing.F) {
	fuzzLang(f, "go", "package p\nfunc (r *T[K]) M() {}\ntype S struct{ A, B int }\n", "import (\n\"x\"\n", "type (")
}

// FuzzParseTypeScript: as FuzzParseGo for TypeScript.
func FuzzParseTypeScript(f *testing.F) {
	fuzzLang(f, "typescript", "export class A { private x = 1; m() {} }\n", "import {a as b} from './x'; require('y')", "namespace N { export const f = () => 1 }")
}

// FuzzParseCpp: as FuzzParseGo for C++.
func FuzzParseCpp(f *testing.F) {
	fuzzLang(f, "cpp", "namespace a { class B { public: void f(); }; }\nvoid a::B::f() {}\n", "#include \"x.h\"\n#define M(x) x\n", "typedef struct { int a; } T;")
}
