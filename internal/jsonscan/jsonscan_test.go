package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

var seeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `12`, `-1.5e+10`, `1E3`, `"a"`, `""`,
	`{"a":[1,{"b":null}],"c":"\u00e9\n\"\\\/\b\f\r\t"}`,
	` { "k" : "v" } `,
	`"caf\u00e9 \ud83d\ude00 \ud800"`,
	"\"\xff invalid utf-8\"",
	"\"raw é and \u2028\"",
	`{"a":1,}`, `[1,]`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, `"\x"`, `"\u12"`, "\"\x01\"",
	`nul`, `tru`, `{"a" 1}`, `{"a":1 "b":2}`, `{"\u0061":1}`, `{"é":1}`, `[[[[[[[[[[]]]]]]]]]]`,
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	`"text_delta"`, `"text\u005fdelta"`, `123456789`, `1234567890`, `00`, `7.0`,
}

// depth is the deepest nesting of arrays and objects in valid JSON.
func depth(data []byte) int {
	d, most, inStr := 0, 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

func check(t *testing.T, data []byte) {
	t.Helper()
	valid := json.Valid(data)
	s := New(data)
	ok := s.Skip() && s.End()
	if ok && !valid {
		t.Fatalf("Skip accepted invalid JSON %q", data)
	}
	// Leading whitespace is the caller's; json.Valid allows it.
	trimmed := strings.TrimLeft(string(data), " \t\r\n")
	if valid && !ok && len(trimmed) == len(data) && depth(data) <= MaxDepth {
		t.Fatalf("Skip refused valid JSON %q", data)
	}

	s = New(data)
	if v, ok := s.String(); ok && s.End() {
		var want string
		if err := json.Unmarshal(data, &want); err != nil || v != want {
			t.Fatalf("String(%q) = %q, json.Unmarshal %q (%v)", data, v, want, err)
		}
	}
	s = New(data)
	if v, ok := s.Interned([]string{"a", "text_delta", ""}); ok && s.End() {
		var want string
		if err := json.Unmarshal(data, &want); err != nil || v != want {
			t.Fatalf("Interned(%q) = %q, json.Unmarshal %q (%v)", data, v, want, err)
		}
	}
	s = New(data)
	if n, ok := s.SmallInt(); ok && s.End() {
		var want int
		if err := json.Unmarshal(data, &want); err != nil || n != want {
			t.Fatalf("SmallInt(%q) = %d, json.Unmarshal %d (%v)", data, n, want, err)
		}
	}
	s = New(data)
	if v, ok := s.Bool(); ok && s.End() {
		var want bool
		if err := json.Unmarshal(data, &want); err != nil || v != want {
			t.Fatalf("Bool(%q) = %v, json.Unmarshal %v (%v)", data, v, want, err)
		}
	}
	s = New(data)
	if raw, ok := s.Raw(); ok && s.End() {
		var want json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil || string(raw) != string(want) {
			t.Fatalf("Raw(%q) = %q, json.Unmarshal %q (%v)", data, raw, want, err)
		}
	}
}

func TestScannerMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s))
	}
}

func TestObjectKeys(t *testing.T) {
	var keys []string
	s := New([]byte(` {"a":1, "b" : [true], "c":{"d":null}} `))
	ok := s.Object(func(k []byte) bool {
		keys = append(keys, string(k))
		return s.Skip()
	})
	if !ok || !s.End() || strings.Join(keys, ",") != "a,b,c" {
		t.Fatalf("keys %v ok %v", keys, ok)
	}
	for _, doc := range []string{`{"\u0061":1}`, `{"é":1}`, `{"a":1`, `{"a":1}x`} {
		s := New([]byte(doc))
		if s.Object(func([]byte) bool { return s.Skip() }) && s.End() {
			t.Errorf("Object accepted %q", doc)
		}
	}
}

func TestSeenAndFoldsTo(t *testing.T) {
	var m Seen
	if !m.First(3) || m.First(3) || !m.First(63) {
		t.Fatal("Seen.First")
	}
	if !FoldsTo([]byte("Content"), "role", "content") || FoldsTo([]byte("content"), "contents") {
		t.Fatal("FoldsTo")
	}
}

// FuzzScanner: what the Scanner accepts, encoding/json accepts with the same
// value; valid JSON within MaxDepth is never refused by Skip.
func FuzzScanner(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { check(t, data) })
}

// TestFieldReaders: each Field reader fills its field as json.Unmarshal
// does (null leaves a value, sets a *int to nil, is "null" raw) and
// refuses a duplicate member.
func TestFieldReaders(t *testing.T) {
	type fields struct {
		S string          `json:"s"`
		I int             `json:"i"`
		C *int            `json:"c"`
		R json.RawMessage `json:"r"`
	}
	for _, in := range []string{
		`{"s":"x","i":3,"c":4,"r":{"a":[1]}}`,
		`{"s":null,"i":null,"c":null,"r":null}`,
		`{"s":"x","s":"y"}`,
		`{"c":1,"c":null}`,
	} {
		var want fields
		one := 7
		want.S, want.I, want.C = "keep", 5, &one
		got := want
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		s := New([]byte(in))
		var seen Seen
		ok := s.Object(func(key []byte) bool {
			switch string(key) {
			case "s":
				return s.StringField(&seen, 0, &got.S)
			case "i":
				return s.IntField(&seen, 1, &got.I)
			case "c":
				return s.CountField(&seen, 2, &got.C)
			case "r":
				return s.RawField(&seen, 3, &got.R)
			}
			return false
		}) && s.End()
		dup := strings.Count(in, `"s"`) > 1 || strings.Count(in, `"c"`) > 1
		if dup {
			if ok {
				t.Errorf("%s: a duplicate member was read", in)
			}
			continue
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !ok || string(gb) != string(wb) {
			t.Errorf("%s: got %s (ok %v), json.Unmarshal %s", in, gb, ok, wb)
		}
	}
}
