package syntax

import (
	"encoding/json"
	"testing"
	"unsafe"
)

// TestSymbolKindText: every kind's name reads back as the kind, "" is the
// zero kind, an unknown name is an error; a Symbol's JSON keeps the
// documented field order and names the kind; a Symbol is 56 bytes.
func TestSymbolKindText(t *testing.T) {
	for k := KindFunction; k <= KindField; k++ {
		got, ok := ParseSymbolKind(k.String())
		if !ok || got != k || k.String() == "" {
			t.Errorf("kind %d: name %q reads back as %d, %v", k, k.String(), got, ok)
		}
		var u SymbolKind
		if b, err := k.MarshalText(); err != nil || u.UnmarshalText(b) != nil || u != k {
			t.Errorf("kind %d: text %q, %v -> %d", k, b, err, u)
		}
	}
	if k, ok := ParseSymbolKind(""); !ok || k != 0 {
		t.Errorf(`ParseSymbolKind("") = %d, %v`, k, ok)
	}
	if _, ok := ParseSymbolKind("func"); ok {
		t.Error(`ParseSymbolKind("func") succeeded`)
	}
	var u SymbolKind
	if err := u.UnmarshalText([]byte("func")); err == nil {
		t.Error("UnmarshalText of an unknown kind succeeded")
	}
	if _, err := SymbolKind(99).MarshalText(); err == nil {
		t.Error("MarshalText of kind 99 succeeded")
	}

	s := Symbol{Name: InternName("a<b"), Kind: KindMethod, StartLine: 1, EndLine: 2, StartByte: 3, EndByte: 40, Container: InternName("T"), Exported: true}
	b, err := json.Marshal(s)
	if want := `{"name":"a\u003cb","kind":"method","startLine":1,"endLine":2,"startByte":3,"endByte":40,"container":"T","exported":true}`; err != nil || string(b) != want {
		t.Errorf("json: %s, %v\nwant %s", b, err, want)
	}
	var back Symbol
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Errorf("json round trip: %+v, %v", back, err)
	}
	b, _ = json.Marshal(Symbol{Name: InternName("f"), Kind: KindFunction})
	if want := `{"name":"f","kind":"function","startLine":0,"endLine":0,"startByte":0,"endByte":0,"exported":false}`; string(b) != want {
		t.Errorf("json: %s\nwant %s", b, want)
	}
	if n := unsafe.Sizeof(Symbol{}); n != 28 {
		t.Errorf("a Symbol is %d bytes, want 28", n)
	}
}
