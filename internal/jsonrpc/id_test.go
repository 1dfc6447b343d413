package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodeID(t *testing.T) {
	tests := []struct {
		raw  string
		want ID
		ok   bool
	}{
		{`1`, IntID(1), true},
		{`0`, IntID(0), true},
		{`-7`, IntID(-7), true},
		{` 42 `, IntID(42), true},
		{`9223372036854775807`, IntID(9223372036854775807), true},
		{`-9223372036854775808`, IntID(-9223372036854775808), true},
		{`"1"`, StringID("1"), true},
		{`""`, StringID(""), true},
		{`"a\u2028\"b"`, StringID("a\u2028\"b"), true},
		{`9223372036854775808`, ID{}, false},
		{`-9223372036854775809`, ID{}, false},
		{`1.0`, ID{}, false},
		{`1.5`, ID{}, false},
		{`1e3`, ID{}, false},
		{`1E3`, ID{}, false},
		{`-0`, ID{}, false},
		{`01`, ID{}, false},
		{`+1`, ID{}, false},
		{`-`, ID{}, false},
		{`null`, ID{}, false},
		{`true`, ID{}, false},
		{`{}`, ID{}, false},
		{`[1]`, ID{}, false},
		{``, ID{}, false},
		{`"unterminated`, ID{}, false},
		{"\"\xff\"", ID{}, false},
	}
	for _, tt := range tests {
		got, err := DecodeID(json.RawMessage(tt.raw))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("DecodeID(%s) = %v, %v; want %v, ok=%v", tt.raw, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, errBadID) {
			t.Errorf("DecodeID(%s) error %v does not wrap errBadID", tt.raw, err)
		}
	}
}

func TestIDKeepsIntAndStringApart(t *testing.T) {
	m := map[ID]string{IntID(1): "int", StringID("1"): "string"}
	if len(m) != 2 || m[IntID(1)] != "int" || m[StringID("1")] != "string" {
		t.Fatalf("map = %v", m)
	}
	if IntID(1).String() != "1" || StringID("1").String() != `"1"` || (ID{}).String() != "null" {
		t.Fatal("String does not keep 1 and \"1\" apart")
	}
	if IntID(1).IsValid() == false || (ID{}).IsValid() {
		t.Fatal("IsValid")
	}
	if n, ok := IntID(5).Int(); !ok || n != 5 {
		t.Fatal("Int")
	}
	if s, ok := StringID("x").Str(); !ok || s != "x" || !StringID("x").IsString() {
		t.Fatal("Str")
	}
}

func TestIDJSONRoundTrip(t *testing.T) {
	for _, id := range []ID{IntID(0), IntID(-3), IntID(1 << 62), StringID(""), StringID("é\u2028\"")} {
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var back ID
		if err := json.Unmarshal(b, &back); err != nil || back != id {
			t.Errorf("%v → %s → %v, %v", id, b, back, err)
		}
	}
	if b, _ := json.Marshal(ID{}); string(b) != "null" {
		t.Errorf("zero ID marshals as %s", b)
	}
	var id ID
	if err := json.Unmarshal([]byte(`1.5`), &id); err == nil {
		t.Error("UnmarshalJSON accepted 1.5")
	}
}

// A string id is its JSON text: lone surrogates, which all decode to U+FFFD, stay
// distinct ids and encode back byte for byte.
func TestStringIDKeepsJSONText(t *testing.T) {
	texts := []string{`"\ud800"`, `"\udfff"`, `"\ufffd"`, "\"\uFFFD\"", `"\uD800"`, `"a\/b"`}
	seen := map[ID]string{}
	for _, text := range texts {
		id, err := DecodeID(json.RawMessage(text))
		if err != nil {
			t.Fatalf("DecodeID(%s): %v", text, err)
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("%s and %s are the same id", prev, text)
		}
		seen[id] = text
		b, err := json.Marshal(id)
		if err != nil || string(b) != text {
			t.Errorf("Marshal(DecodeID(%s)) = %s, %v", text, b, err)
		}
		if line, err := Encode(map[string]ID{"id": id}); err != nil || string(line) != `{"id":`+text+"}\n" {
			t.Errorf("Encode echoes %s as %s, %v", text, line, err)
		}
		if id.String() != text {
			t.Errorf("String() = %s, want %s", id.String(), text)
		}
	}
	if s, _ := seen0(seen).Str(); s != "\ufffd" {
		t.Errorf("Str() of a lone surrogate = %q, want the decoded U+FFFD", s)
	}
}

func seen0(m map[ID]string) ID {
	for id, text := range m {
		if text == `"\ud800"` {
			return id
		}
	}
	return ID{}
}
