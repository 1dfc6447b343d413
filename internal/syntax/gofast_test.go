package syntax

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// goParserAccepts reports whether go/parser reads src without an error
// (parseGoAST's own test).
func goParserAccepts(src []byte) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	return err == nil
}

// checkFast asserts the fast path's contract on src: it accepts only
// what go/parser accepts, and what it accepts gives parseGoAST's
// FileInfo exactly. It returns whether the fast path accepted src.
func checkFast(t testing.TB, name string, src []byte) bool {
	t.Helper()
	errs := fastInternalErrors.Load()
	fast, ok := parseGoFast(src)
	if n := fastInternalErrors.Load(); n != errs {
		t.Errorf("%s: the recognizer failed internally (a panic or an unlinked slot)", name)
	}
	if !ok {
		return false
	}
	slow, sok := parseGoAST(src)
	if !sok {
		t.Errorf("%s: the fast path accepts a file go/parser rejects", name)
		return true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: fast vs go/parser: %s", name, diffInfo(fast, slow))
	}
	return true
}

// TestGoFastCases: constructs where the fast path must give parseGoAST's
// answer (or bail out); each must be accepted by the fast path unless
// marked as a bail-out.
func TestGoFastCases(t *testing.T) {
	for _, c := range goFastCases {
		src := []byte(c.src)
		if !goParserAccepts(src) {
			t.Errorf("%s: go/parser rejects the case", c.name)
			continue
		}
		ok := checkFast(t, c.name, src)
		if ok == c.bail {
			t.Errorf("%s: fast path accepted=%v, want %v", c.name, ok, !c.bail)
		}
	}
}

const hdr = "package p\n"

var goFastCases = []struct {
	name, src string
	bail      bool // the fast path is expected to bail (go/parser may accept)
}{
	{"labels vs keys", hdr + "func f() {\nL: for x := range xs { if x { continue L }; m := map[string]int{key: 1}; _ = T{Field: nil}; goto L; break L }\n}\n", false},
	{"if composite paren", hdr + "func f() { if x == (T{}) { }; for _, v := range []T{{a: 1}} { _ = v }; switch y := (pkg.T{}); y {} }\n", false},
	{"generics", hdr + "type List[T any] struct { next *List[T]; val T }\ntype M[K comparable, V pkg.C] map[K]V\ntype U[T int | ~string] interface{ ~int | pkg.X; M(x T) pkg.R }\nfunc F[T any, U pkg.C[T]](x T) U { return G[T, U](x) }\nfunc (l *List[T]) Len() int { return pkg.F[T](l.val) + pkg.G[T](a, b) }\nvar _ = (*pkg.T[K])(nil)\nvar _ = ((pkg.T[K]))(nil)\n", false},
	{"type switches", hdr + "func f(x any) { switch y := x.(type) { case nil, pkg.T, *pkg.U, []pkg.V, map[pkg.K]pkg.V, func(pkg.A) pkg.B: _ = y; case interface{ M() }: default: } ; switch x.(type) {} }\n", false},
	{"method expressions", hdr + "var f = (*T).M\nvar g = T.M\nvar h = pkg.T.M\nvar i = new(pkg.T)\nvar j = make([]pkg.T, 0, n)\nvar k = x.(pkg.T)\nvar l = []pkg.T(nil)\nvar m = pkg.T(nil)\n", false},
	{"keywords", hdr + "const c = iota\nvar v = nil\nfunc f() (bool, error) { x := true; y := [iota]int{}; _ = x.nil; return false, nil }\n", false},
	{"struct tags", hdr + "type S struct {\n\tA, B int `json:\"a\"`\n\tpkg.Embedded\n\t*Ptr\n\tC struct{ D int }\n\tE [N]pkg.T\n\tG[int]\n}\n", false},
	{"interfaces", hdr + "type I interface {\n\tM(a int) (b string, err error)\n\tpkg.J\n\tN()\n\tG[int]\n}\n", false},
	{"specs", hdr + "const (\n\tA = iota // c\n)\nconst (\n\tB = 1\n)\ntype (\n\tT int\n)\ntype (\n\t// doc\n\tU int\n)\nvar (\n\tV = 1\n)\nvar W, X = 1, 2\nconst Y, Z int = 1, 2\n", false},
	{"imports", hdr + "import (\n\t\"fmt\"\n\tx \"strings\"\n\t. \"os\"\n\t_ \"embed\"\n\t`raw/path`\n)\nimport \"b\"\n", false},
	{"receivers", hdr + "func (T) A() {}\nfunc (t *T) B() {}\nfunc (t *T[K, V]) C() {}\nfunc (pkg.T) D() {}\nfunc () E() {}\nfunc (a, b T) F() {}\nfunc (T[K]) G() {}\n", false},
	{"funcs", hdr + "func f(a, b int, c ...string) (x int, err error)\nfunc g(int, string) error { return nil }\nfunc h() func() int { return func() int { return 1 } }\n", false},
	{"array type spec", hdr + "type A [N]int\ntype B [pkg.N * 2]int\ntype C [N + 1]int\ntype D []int\ntype E [...]int\ntype F[P any] [2]P\n", false},
	{"channels", hdr + "var a chan<- int\nvar b <-chan int\nvar c = make(<-chan chan int)\nfunc f() { x <- 1; <-x; select { case v := <-c: _ = v; case c <- 1: default: } }\n", false},
	{"literals", hdr + "var a = 0x1p-2 + 1_000 + 0b1 + 0o7 + 017 + 1e3 + .5 + 1i + 'a' + '\\n' + '\\x41' + '\\u00e9' + '\\U0001F600' + 'é'\nvar s = \"a\\tb\\\"\" + `raw\nstring`\n", false},
	{"crlf", "package p\r\n\r\nimport \"fmt\"\r\n\r\nfunc F() {\r\n\tfmt.Println(`a\r\nb`)\r\n}\r\n", false},
	{"bom", "\xEF\xBB\xBFpackage p\nfunc F() {}\n", false},
	{"non-ascii comment", hdr + "// héllo\nfunc F() { _ = \"wörld\" }\n", false},
	{"comments", hdr + "func f() { a := 1 /* x\n */ b := 2 // c\n _ = a + b }\n", false},
	{"empty body semis", hdr + "func f() { ; ; }\nfunc g() {}; func h() {}\n", false},
	{"conversions", hdr + "var a = []byte(s)\nvar b = map[string]int(nil)\nvar c = func()(nil)\nvar d = interface{}(nil)\nvar e = struct{}{}\nvar f = chan int(nil)\nvar g = (*T)(nil)\n", false},
	{"goroutines", hdr + "func f() { go g(); defer h(x)(y); go func() {}() }\n", false},
	{"for forms", hdr + "func f() { for {}; for x {}; for i := 0; i < n; i++ {}; for ; ; {}; for range ch {}; for k := range m {}; for k, v = range m {} }\n", false},
	{"if else", hdr + "func f() { if x := g(); x > 0 { } else if y { } else { } }\n", false},
	{"unicode ident", hdr + "var héllo, Ωmega = 1, 2\ntype Ä struct{ ß int }\nfunc (Ä) µs() { _ = héllo + x٣ }\n", false},
	{"line directive", hdr + "//line foo.go:10\nvar x = 1\n/*line bar.go:1:2*/ var y = 2\n\t//line :0\n", false},
	{"array length star", hdr + "type T[P *C] struct{}\ntype U [len(x) + 1]int\ntype V [f(x)]int\ntype W [N | M]int\n", false},
	{"type param star", hdr + "type T[P *C,] struct{}\ntype U[P *C | []int, Q any] = map[P]Q\ntype V[P *pkg.C | pkg.D] struct{}\n", false},
	{"type param paren", hdr + "type T[P ([]int)] struct{}\n", true},
	{"type param union", hdr + "type T[P *C | []int] struct{}\n", false},
}

// TestGoFastRejects: files go/parser or go/scanner reject; the fast path
// must bail out on every one.
func TestGoFastRejects(t *testing.T) {
	for i, s := range goFastRejects {
		src := []byte(s)
		if goParserAccepts(src) {
			t.Errorf("case %d: go/parser accepts %q (fix the case)", i, s)
			continue
		}
		if _, ok := parseGoFast(src); ok {
			t.Errorf("case %d: the fast path accepts %q", i, s)
		}
	}
}

var goFastRejects = []string{
	"",
	"package",
	"package p; import \"a\"; var x int; import \"b\"",
	hdr + "var s = \"a\\qb\"",
	hdr + "var s = \"abc",
	hdr + "var s = `abc",
	hdr + "/* unterminated",
	hdr + "var r = 'ab'",
	hdr + "var r = ''",
	hdr + "var r = '\\400'",
	hdr + "var r = '\\uD800'",
	hdr + "var n = 09",
	hdr + "var n = 0x",
	hdr + "var n = 1__0",
	hdr + "var n = 0x1.0",
	hdr + "var n = 0b2",
	hdr + "var n = 1_",
	hdr + "var n = 0o1.2",
	hdr + "var n = 1e",
	hdr + "var x = @",
	hdr + "var x = 1\x00",
	hdr + "var x = \"\xff\"",
	hdr + "var x = 1 \xEF\xBB\xBF",
	hdr + "func f() { if x == T{} {} }",
	hdr + "func f() { x := (T){} }",
	hdr + "func f() { go (g()) }",
	hdr + "func f() { go g }",
	hdr + "func f() { a, b: }",
	hdr + "func f() { for a, b, c := range x {} }",
	hdr + "func f() { switch x = y.(type) {} }",
	hdr + "func f() { if x := 1 {} }",
	hdr + "func f()\n{}",
	hdr + "func (r T) m[P any]() {}",
	hdr + "var f = func[T any]() {}",
	hdr + "type I interface { m[T any]() }",
	hdr + "func f(a int, string) {}",
	hdr + "func f(a ...int, b int) {}",
	hdr + "func f(a, b ...int) {}",
	hdr + "func f() (a ...int) {}",
	hdr + "func f[]() {}",
	hdr + "func f() { x[] }",
	hdr + "func f() { x[1:2:] }",
	hdr + "func f() { goto }",
	hdr + "func f() { a := 1, }",
	hdr + "var a = [...]int{1, 2,\n}[0]\nvar b = f(1\n)",
	hdr + "type A [N,]int",
	hdr + "var x = <-chan<- int",
	hdr + "func f() { ~x }",
	hdr + "func f() { var x = 1 = 2 }",
	hdr + "var x = a == 1 = 2",
	hdr + "func f() { if { } }",
	hdr + "func f() { if x; {} }",
	hdr + "func f() { switch x := 1 {} }",
	hdr + "type S struct { *(T) }",
	hdr + "type S struct { (T) }",
	"\xFF\xFEpackage p",
	hdr + "//line foo.go:0\n",
	hdr + "//line foo.go:1:x\n",
	hdr + "/*line :1:0*/",
	hdr + "var x = 1 · 2",
	hdr + "var ٣x = 1",
}

// TestGoFastHugeAndDeep: a long file and deep nesting either match or
// bail; never a crash.
func TestGoFastHugeAndDeep(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\n")
	for i := 0; i < 30000; i++ {
		b.WriteString("func F")
		b.WriteString(strings.Repeat("x", i%7+1))
		b.WriteString("() { a.B(c, \"d\", 1) }\n")
	}
	if !checkFast(t, "huge", []byte(b.String())) {
		t.Error("the fast path bails on a long plain file")
	}
	deep := "package p\nvar x = " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000) + "\n"
	checkFast(t, "deep", []byte(deep))
	deep2 := "package p\nvar x = " + strings.Repeat("[]", 60000) + strings.Repeat("(", 60000) + "\n"
	checkFast(t, "deep2", []byte(deep2))
}

// TestGoFastFixtures: every Go fixture of the package.
func TestGoFastFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "go", "*.go"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !checkFast(t, f, src) && goParserAccepts(src) {
			t.Errorf("%s: the fast path bails on a fixture go/parser reads", f)
		}
	}
}

// TestGoFastMatchesGoASTOnTree compares the fast path with parseGoAST on
// every .go file under TASK_X_GOFAST_TREE (a folder, or "goroot" for
// $(go env GOROOT)/src; several separated by ':'): the fast path accepts
// only files go/parser accepts, gives the same FileInfo, and the test
// logs how many files it bails on. Without the variable it reads this
// repository's own Go files (~4 MB).
func TestGoFastMatchesGoASTOnTree(t *testing.T) {
	env := os.Getenv("TASK_X_GOFAST_TREE")
	own := env == ""
	if own {
		env = filepath.Join("..", "..")
	}
	for _, dir := range strings.Split(env, ":") {
		if dir == "goroot" {
			out, err := exec.Command("go", "env", "GOROOT").Output()
			if err != nil {
				t.Skip("go env GOROOT:", err)
			}
			dir = filepath.Join(strings.TrimSpace(string(out)), "src")
		}
		var files, accepted, bailed, rejected int
		var bailBytes, allBytes int64
		var bails []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || !d.Type().IsRegular() {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil || len(src) > maxGoAST {
				return nil
			}
			files++
			allBytes += int64(len(src))
			if checkFast(t, p, src) {
				accepted++
				return nil
			}
			if goParserAccepts(src) {
				bailed++
				bailBytes += int64(len(src))
				if len(bails) < 40 {
					bails = append(bails, p)
				}
			} else {
				rejected++
			}
			return nil
		})
		t.Logf("%s: %d files (%d bytes): fast %d, bailed on %d that go/parser reads (%d bytes), %d rejected by both",
			dir, files, allBytes, accepted, bailed, bailBytes, rejected)
		if own && accepted == 0 {
			t.Errorf("no file of this repository read")
		}
		for _, b := range bails {
			t.Logf("  bailed: %s", b)
		}
	}
}

// FuzzGoFastMatchesGoAST: for any input, the fast path accepts only what
// go/parser accepts, and then gives parseGoAST's FileInfo exactly.
func FuzzGoFastMatchesGoAST(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "go", "*.go"))
	for _, p := range files {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	for _, c := range goFastCases {
		f.Add([]byte(c.src))
	}
	for _, s := range goFastRejects {
		f.Add([]byte(s))
	}
	f.Add([]byte("package p\nfunc f() { L: for { switch x := y.(type) { case nil, pkg.T: break L } }; _ = T{a: nil}; if x == (T{}) {} }\n"))
	f.Add([]byte("package p\ntype T[P any, Q pkg.C[P]] struct{ a [N]P; pkg.E; F[int] }\nvar _ = (*pkg.T[K])(nil)\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		checkFast(t, "input", src)
	})
}
