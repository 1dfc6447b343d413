// Package syntax owns tree-sitter parsing: for each supported language it
// turns a file's bytes into symbols (definitions), import statements and the
// identifiers the file references. The cgo boundary stays in this package;
// everything it returns is plain Go data.
//
// Source: ../shared/spec/addendum.md §2 (symbols) and protocol.md graph/project
// (import and reference edges).
package syntax

// Symbol kinds (addendum §2).
const (
	KindFunction  = "function"
	KindMethod    = "method"
	KindType      = "type"
	KindInterface = "interface"
	KindClass     = "class"
	KindStruct    = "struct"
	KindEnum      = "enum"
	KindConstant  = "constant"
	KindVariable  = "variable"
	KindModule    = "module"
	KindField     = "field"
)

// Symbol is one definition. Lines are 1-based and inclusive; StartByte and
// EndByte are byte offsets of the whole definition node. Container is the
// enclosing type, class, module or impl name ("" at top level). Exported
// follows the language's rule (Go upper case, Rust pub, JS/TS export,
// Python no leading underscore, Java/C# public, ...).
//
// Lines and offsets are int32 (a parsed file is at most 1 MiB; the
// workspace skips larger ones): 72 bytes a symbol instead of 88, ~6 MB of
// the ~370 k symbols of Go's source tree.
type Symbol struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	StartLine int32  `json:"startLine"`
	EndLine   int32  `json:"endLine"`
	StartByte int32  `json:"startByte"`
	EndByte   int32  `json:"endByte"`
	Container string `json:"container,omitempty"`
	Exported  bool   `json:"exported"`
}

// Import is one import statement as written, before resolution. Path is the
// specifier: "./util" or "../lib/index.js" (JS/TS), "os.path" or ".models"
// or "..pkg.mod" (Python, leading dots kept for relative imports),
// "crate::a::b", "super::x", "self::y" (Rust use), "name" for a Rust `mod
// name;` declaration (Kind "mod"), "github.com/x/y/z" (Go). Names lists
// imported names where the syntax gives them (Python `from m import a, b`,
// Rust `use m::{a, b}`, JS `import {a, b}`), else nil. Line is 1-based.
type Import struct {
	Path  string   `json:"path"`
	Kind  string   `json:"kind"` // "import", "from", "require", "export", "use", "mod"
	Names []string `json:"names,omitempty"`
	Line  int      `json:"line"`
}

// FileInfo is everything the index keeps from one parse. Refs holds the
// distinct identifiers the file uses (type names, called functions,
// selectors), excluding the file's own definitions' names at their
// definition sites; it feeds reference edges and retrieval. Package is the
// Go package name (package clause), "" for other languages. TimedOut
// reports a parse stopped by the time limit (counted in parseErrors);
// HasErrors reports a tree with ERROR nodes (the symbols found are still
// kept) in what tree-sitter parsed: the insides of Rust and Python
// function bodies are not parsed (skip_rust.go, skip_python.go), so an
// error there is not reported.
type FileInfo struct {
	Language  string   `json:"language"`
	Symbols   []Symbol `json:"symbols"`
	Imports   []Import `json:"imports"`
	Refs      []string `json:"refs"`
	Package   string   `json:"package,omitempty"`
	TimedOut  bool     `json:"timedOut,omitempty"`
	HasErrors bool     `json:"hasErrors,omitempty"`
}
