package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// ID is a JSON-RPC request id: a string or an integer (protocol.md "Framing": `1`
// and `"1"` are different ids). The zero ID is "no id" (a notification). ID is
// comparable and can key a map; StringID("1") != IntID(1).
//
// A string id read from the wire keeps its JSON text: two string ids are equal when
// their JSON text is, and a reply echoes that text byte for byte. Decoding alone would
// not do: "\ud800" and "\udfff" (lone surrogates) both decode to U+FFFD, so they would
// collide with each other and with "\ufffd", and the reply would carry another id.
type ID struct {
	kind idKind
	str  string // the decoded value
	raw  string // a string id's JSON text, quotes included
	num  int64
}

type idKind uint8

const (
	idNone idKind = iota
	idString
	idInt
)

// StringID returns the string id s, whose JSON text is s encoded by encoding/json
// without HTML escaping.
func StringID(s string) ID { return ID{kind: idString, str: s, raw: encodeString(s)} }

func encodeString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// IntID returns the integer id n.
func IntID(n int64) ID { return ID{kind: idInt, num: n} }

// IsValid reports whether id is a string or an integer (not the zero ID).
func (id ID) IsValid() bool { return id.kind != idNone }

// IsString reports whether id is a string id.
func (id ID) IsString() bool { return id.kind == idString }

// Int returns the integer value and true for an integer id.
func (id ID) Int() (int64, bool) { return id.num, id.kind == idInt }

// Str returns the string value and true for a string id.
func (id ID) Str() (string, bool) { return id.str, id.kind == idString }

// String renders the id as it is on the wire: 7, "7" (its JSON text), or null for
// the zero ID, so that log lines keep 1 and "1" apart.
func (id ID) String() string {
	switch id.kind {
	case idString:
		return id.raw
	case idInt:
		return strconv.FormatInt(id.num, 10)
	}
	return "null"
}

// MarshalJSON encodes a string id as its JSON text (exactly as it was received), an
// integer id as a JSON number, and the zero ID as null (the id of a reply to an
// unreadable request).
func (id ID) MarshalJSON() ([]byte, error) {
	switch id.kind {
	case idString:
		return []byte(id.raw), nil
	case idInt:
		return strconv.AppendInt(nil, id.num, 10), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON decodes with DecodeID.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := DecodeID(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

var errBadID = errors.New("jsonrpc: id must be a string or an integer")

// DecodeID decodes a JSON request id. It accepts a JSON string (valid UTF-8) or a
// JSON integer token that fits in int64: an optional '-' then digits without leading
// zeros. It rejects null, booleans, objects, arrays, and every number token with a
// fraction or an exponent (1.0, 1.5, 1e3), even when its value is integral, and
// rejects -0, whose value would collide with 0. Surrounding JSON whitespace is
// allowed. The error wraps nothing; the caller maps it to -32600.
func DecodeID(raw json.RawMessage) (ID, error) {
	b := bytes.Trim(raw, " \t\r\n")
	if len(b) == 0 {
		return ID{}, errBadID
	}
	switch c := b[0]; {
	case c == '"':
		if !utf8.Valid(b) {
			return ID{}, fmt.Errorf("%w: invalid UTF-8", errBadID)
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return ID{}, fmt.Errorf("%w: %v", errBadID, err)
		}
		return ID{kind: idString, str: s, raw: string(b)}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if !isIntegerToken(b) {
			return ID{}, fmt.Errorf("%w: %s is not an integer token", errBadID, truncate(b))
		}
		if string(b) == "-0" {
			return ID{}, fmt.Errorf("%w: -0 is ambiguous", errBadID)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return ID{}, fmt.Errorf("%w: %s does not fit in int64", errBadID, truncate(b))
		}
		return IntID(n), nil
	}
	return ID{}, errBadID
}

// isIntegerToken reports whether b is exactly -?(0|[1-9][0-9]*).
func isIntegerToken(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func truncate(b []byte) string {
	const limit = 32
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}
