// Package syntax owns tree-sitter parsing: for each supported language it
// turns a file's bytes into symbols (definitions), import statements and the
// identifiers the file references. The cgo boundary stays in this package;
// everything it returns is plain Go data.
//
// Source: ../shared/spec/addendum.md §2 (symbols) and protocol.md graph/project
// (import and reference edges).
package syntax

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// SymbolKind is a symbol's kind (addendum §2): one byte in a Symbol
// instead of a string header. Its String, text and JSON forms are the
// kind's name ("function", ...); the zero value is no kind ("").
type SymbolKind uint8

// Symbol kinds (addendum §2).
const (
	KindFunction SymbolKind = iota + 1
	KindMethod
	KindType
	KindInterface
	KindClass
	KindStruct
	KindEnum
	KindConstant
	KindVariable
	KindModule
	KindField
)

var kindNames = [...]string{"", "function", "method", "type", "interface", "class", "struct", "enum",
	"constant", "variable", "module", "field"}

// String is the kind's name ("" for the zero kind).
func (k SymbolKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseSymbolKind returns the kind named name ("" is the zero kind); ok
// is false for a name that is no kind.
func ParseSymbolKind(name string) (k SymbolKind, ok bool) {
	for i, n := range kindNames {
		if n == name {
			return SymbolKind(i), true
		}
	}
	return 0, false
}

// MarshalText is the kind's name (so JSON holds "function", as before).
func (k SymbolKind) MarshalText() ([]byte, error) {
	if int(k) >= len(kindNames) {
		return nil, fmt.Errorf("syntax: no symbol kind %d", k)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind's name.
func (k *SymbolKind) UnmarshalText(b []byte) error {
	v, ok := ParseSymbolKind(string(b))
	if !ok {
		return fmt.Errorf("syntax: unknown symbol kind %q", b)
	}
	*k = v
	return nil
}

// Symbol is one definition. Lines are 1-based and inclusive; StartByte and
// EndByte are byte offsets of the whole definition node. Container is the
// enclosing type, class, module or impl name ("" at top level). Exported
// follows the language's rule (Go upper case, Rust pub, JS/TS export,
// Python no leading underscore, Java/C# public, ...).
//
// The name and container are Names (ids in the process's name table,
// names.go), lines and offsets int32 (a parsed file is at most 1 MiB; the
// workspace skips larger ones) and the kind one byte: 28 bytes a symbol
// and no pointer (it was 88 with int lines and a kind string, 56 with two
// string headers), ~10 MB less over the ~370 k symbols of Go's source
// tree. Its JSON is unchanged: the names as strings, in the fields'
// documented order (MarshalJSON).
type Symbol struct {
	Name      Name       `json:"name"`
	Container Name       `json:"container,omitempty"`
	StartLine int32      `json:"startLine"`
	EndLine   int32      `json:"endLine"`
	StartByte int32      `json:"startByte"`
	EndByte   int32      `json:"endByte"`
	Kind      SymbolKind `json:"kind"`
	Exported  bool       `json:"exported"`
}

// symbolJSON is Symbol's JSON form, in the order the fields were always
// written: name, kind, lines, bytes, container, exported.
type symbolJSON struct {
	Name      string     `json:"name"`
	Kind      SymbolKind `json:"kind"`
	StartLine int32      `json:"startLine"`
	EndLine   int32      `json:"endLine"`
	StartByte int32      `json:"startByte"`
	EndByte   int32      `json:"endByte"`
	Container string     `json:"container,omitempty"`
	Exported  bool       `json:"exported"`
}

// MarshalJSON writes the symbol's fields in their documented order.
func (s Symbol) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, or not, as it was told
	if err := enc.Encode(symbolJSON{Name: s.Name.String(), Kind: s.Kind, StartLine: s.StartLine, EndLine: s.EndLine,
		StartByte: s.StartByte, EndByte: s.EndByte, Container: s.Container.String(), Exported: s.Exported}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
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
// definition sites; it feeds reference edges. Each is a Name (4 bytes, an
// id in the process's name table, names.go): String gives the name, and
// the JSON form is the list of names, as it was. Package is the
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
	Refs      []Name   `json:"refs"`
	Package   string   `json:"package,omitempty"`
	TimedOut  bool     `json:"timedOut,omitempty"`
	HasErrors bool     `json:"hasErrors,omitempty"`
}
