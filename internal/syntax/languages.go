package syntax

import (
	"sort"
	"sync"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsbash "github.com/tree-sitter/tree-sitter-bash/bindings/go"
	tscsharp "github.com/tree-sitter/tree-sitter-c-sharp/bindings/go"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
	tscpp "github.com/tree-sitter/tree-sitter-cpp/bindings/go"
	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsruby "github.com/tree-sitter/tree-sitter-ruby/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// grammar is one supported language: its tree-sitter grammar, the kind and
// field name tables read once (so the walk compares Go strings instead of
// crossing cgo per name) and the extractor.
type grammar struct {
	name    string
	load    func() unsafe.Pointer // TSLanguage*
	extract func(*extractor)
	// bodies finds the function bodies tree-sitter need not parse, and
	// bodyIdents lexes the identifiers inside one (skip_rust.go); nil for
	// a language parsed whole.
	bodies     func(src []byte) []bodySpan
	bodyIdents func(src []byte, sp bodySpan, emit func([]byte) bool)
	// verify, when set, checks a parse with bodies left out; false means
	// the bodies were misread and the file is parsed again whole.
	verify func(t *tree, skip []bodySpan) bool

	once   sync.Once
	raw    unsafe.Pointer
	lang   *sitter.Language
	kinds  []string // kind id -> name
	fields []string // field id -> name
}

func (g *grammar) init() {
	g.once.Do(func() {
		g.raw = g.load()
		g.lang = sitter.NewLanguage(g.raw)
		n := g.lang.NodeKindCount()
		g.kinds = make([]string, n)
		for i := uint32(0); i < n; i++ {
			g.kinds[i] = g.lang.NodeKindForId(uint16(i))
		}
		f := g.lang.FieldCount()
		g.fields = make([]string, f+1)
		for i := uint32(1); i <= f; i++ {
			g.fields[i] = g.lang.FieldNameForId(uint16(i))
		}
	})
}

// grammars maps internal/workspace language ids (File.Language) to grammars.
var grammars = map[string]*grammar{
	"go":         {load: tsgo.Language, extract: extractGo},
	"rust":       {load: tsrust.Language, extract: extractRust, bodies: rustBodies, bodyIdents: rustBodyIdents},
	"typescript": {load: tsts.LanguageTypescript, extract: extractJS, bodies: tsBodies, bodyIdents: jsBodyIdents, verify: jsVerify},
	"tsx":        {load: tsts.LanguageTSX, extract: extractJS, bodies: tsxBodies, bodyIdents: jsBodyIdents, verify: jsVerify},
	"javascript": {load: tsjs.Language, extract: extractJS, bodies: jsBodies, bodyIdents: jsBodyIdents, verify: jsVerify},
	"python":     {load: tspython.Language, extract: extractPython, bodies: pythonBodies, bodyIdents: pyBodyIdents},
	"java":       {load: tsjava.Language, extract: extractJava},
	"c":          {load: tsc.Language, extract: extractC},
	"cpp":        {load: tscpp.Language, extract: extractC},
	"csharp":     {load: tscsharp.Language, extract: extractCSharp},
	"ruby":       {load: tsruby.Language, extract: extractRuby},
	"bash":       {load: tsbash.Language, extract: extractBash},
}

func init() {
	for name, g := range grammars {
		g.name = name
	}
}

// Supported reports whether Parse handles language, an internal/workspace
// language id such as "go", "tsx" or "csharp".
func Supported(language string) bool {
	_, ok := grammars[language]
	return ok
}

// Languages returns the supported language ids, sorted.
func Languages() []string {
	out := make([]string, 0, len(grammars))
	for name := range grammars {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
