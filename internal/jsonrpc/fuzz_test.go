package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReader checks the framer against a direct reference: split on '\n', drop one
// trailing '\r', skip blank lines, stop with ErrMessageTooLarge at the first line
// over the cap.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "a\nb\n", "a\r\nb", "\n\n \t\r\n", "x\u2028y\n", "123456\nz\n", "\r\r\n", "a\rb\r"} {
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		limit := int(max%64) + 1
		got, err := readAll(NewReader(bytes.NewReader(data), limit))

		var want []string
		wantErr := io.EOF
		parts := strings.Split(string(data), "\n")
		for _, p := range parts {
			p = strings.TrimSuffix(p, "\r")
			if len(p) > limit {
				wantErr = ErrMessageTooLarge
				break
			}
			if strings.Trim(p, " \t\r") != "" {
				want = append(want, p)
			}
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("err = %v, want %v", err, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("lines = %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] || strings.Contains(got[i], "\n") {
				t.Fatalf("line %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// FuzzDecodeID checks DecodeID against encoding/json with UseNumber: exactly the
// JSON strings and the integer tokens that fit in int64 (but -0) are ids, and they
// round-trip through MarshalJSON.
func FuzzDecodeID(f *testing.F) {
	for _, s := range []string{`1`, `"1"`, `-0`, `1.0`, `1e3`, `null`, `9223372036854775808`, `"\u2028"`, ` 7 `, `[1]`, `{}`, `true`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		id, err := DecodeID(raw)

		wantOK := false
		var ref any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if utf8.Valid(raw) && json.Valid(raw) && dec.Decode(&ref) == nil {
			switch v := ref.(type) {
			case string:
				wantOK = id == StringID(v)
			case json.Number:
				n, perr := strconv.ParseInt(v.String(), 10, 64)
				wantOK = perr == nil && !strings.ContainsAny(v.String(), ".eE") && v.String() != "-0"
				if wantOK && id != IntID(n) {
					t.Fatalf("DecodeID(%q) = %v, want %d", raw, id, n)
				}
			}
		}
		if (err == nil) != wantOK {
			t.Fatalf("DecodeID(%q) = %v, %v; want ok=%v", raw, id, err, wantOK)
		}
		if err != nil {
			return
		}
		b, merr := id.MarshalJSON()
		if merr != nil {
			t.Fatal(merr)
		}
		back, berr := DecodeID(b)
		if berr != nil || back != id {
			t.Fatalf("round trip %v → %s → %v, %v", id, b, back, berr)
		}
	})
}

// FuzzDecodeMessage checks the message decoder never panics, classifies invalid
// UTF-8 and JSON as -32700 (with an id only when the line has an id and a
// method), and that whatever it answers is one valid line.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`,
		`{"jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","id":"x","result":null}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m","data":[1]}}`,
		`[{"jsonrpc":"2.0"}]`, `{"id":1.5}`, `{"id":null,"method":"m"}`, `42`, `{`, "{\"s\":\"\xff\"}",
		`{"jsonrpc":"2.0","id":1,"method":"m","params":"s"}`, `{"jsonrpc":"2.0","ID":1,"Method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, fail := decodeMessage(line)
		if (m == nil) == (fail == nil) {
			t.Fatalf("decodeMessage(%q) = %v, %v", line, m, fail)
		}
		if !utf8.Valid(line) || !json.Valid(line) {
			if fail == nil || fail.err.Code != CodeParseError {
				t.Fatalf("decodeMessage(%q) did not fail with -32700", line)
			}
			if fail.id.IsValid() && (!bytes.Contains(line, []byte(`"method"`)) || !bytes.Contains(line, []byte(`"id"`))) {
				t.Fatalf("decodeMessage(%q): id %s without an id and a method", line, fail.id)
			}
		}
		if fail != nil {
			if fail.err.Code != CodeParseError && fail.err.Code != CodeInvalidRequest {
				t.Fatalf("code %d", fail.err.Code)
			}
			out, err := Encode(wireErrorResponse{JSONRPC: "2.0", ID: fail.id, Error: fail.err})
			if err != nil || bytes.Count(out, []byte("\n")) != 1 || !json.Valid(out) {
				t.Fatalf("reply %q, %v", out, err)
			}
			return
		}
		switch m.kind {
		case kindRequest:
			if !m.id.IsValid() {
				t.Fatal("request without an id")
			}
		case kindNotification:
			if m.id.IsValid() {
				t.Fatal("notification with an id")
			}
		case kindResponse:
			if m.result == nil && m.err == nil {
				t.Fatal("response with neither result nor error")
			}
		default:
			t.Fatalf("kind %d", m.kind)
		}
		if m.params != nil && m.params[0] != '{' && m.params[0] != '[' {
			t.Fatalf("params %q", m.params)
		}
	})
}
