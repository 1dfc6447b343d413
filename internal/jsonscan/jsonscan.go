// Package jsonscan reads JSON text (RFC 8259) by hand for the hot decode
// paths of the provider adapters, where encoding/json's reflection costs more
// than the stream itself. A Scanner accepts only what encoding/json accepts
// and yields the values encoding/json would store; for anything it does not
// read exactly that way (escaped or non-ASCII object keys, numbers that are
// not small non-negative integers, nesting deeper than MaxDepth) a method
// reports false, and the caller falls back to json.Unmarshal of the whole
// document. It never panics on any input.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxDepth bounds the nesting Skip reads; deeper values report false.
const MaxDepth = 64

// Scanner reads one JSON document. Methods that read a value expect the
// scanner at the value (Object skips leading whitespace itself) and report
// false on anything they do not accept, leaving the position unspecified.
type Scanner struct {
	b []byte
	i int
}

// New returns a Scanner over data. Returned byte slices alias data.
func New(data []byte) Scanner { return Scanner{b: data} }

// End skips trailing whitespace and reports whether the document ends there.
func (s *Scanner) End() bool {
	s.ws()
	return s.i == len(s.b)
}

// Object reads an object, calling member for each key with the scanner at
// the key's value (whitespace skipped); member must read the value and
// report whether it did. Keys are the raw bytes between the quotes and must
// be printable ASCII without escapes.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	return s.object(member, true)
}

// object reads an object; plainKeys refuses keys that are not printable
// ASCII without escapes, else any string is a key.
func (s *Scanner) object(member func(key []byte) bool, plainKeys bool) bool {
	s.ws()
	if !s.consume('{') {
		return false
	}
	s.ws()
	if s.consume('}') {
		return true
	}
	for {
		var key []byte
		if plainKeys {
			k, ok := s.key()
			if !ok {
				return false
			}
			key = k
		} else if _, ok := s.str(); !ok {
			return false
		}
		s.ws()
		if !s.consume(':') {
			return false
		}
		s.ws()
		if !member(key) {
			return false
		}
		s.ws()
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
		s.ws()
	}
}

// Array reads an array, calling elem with the scanner at each element
// (whitespace skipped); elem must read the element. An empty array calls
// elem never.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.consume('[') {
		return false
	}
	s.ws()
	if s.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		s.ws()
		if s.consume(']') {
			return true
		}
		if !s.consume(',') {
			return false
		}
		s.ws()
	}
}

// IsArray reports whether an array starts here.
func (s *Scanner) IsArray() bool { return s.i < len(s.b) && s.b[s.i] == '[' }

// Null reads the literal null if it is next and reports whether it was.
func (s *Scanner) Null() bool {
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// Bool reads true or false.
func (s *Scanner) Bool() (v, ok bool) {
	switch {
	case s.literal("true"):
		return true, true
	case s.literal("false"):
		return false, true
	}
	return false, false
}

// String reads a string and returns its value as json.Unmarshal into a Go
// string would: escapes decoded, invalid UTF-8 replaced by U+FFFD.
func (s *Scanner) String() (string, bool) {
	start := s.i
	escaped, ok := s.str()
	if !ok {
		return "", false
	}
	inner := s.b[start+1 : s.i-1]
	if !escaped && utf8.Valid(inner) {
		return string(inner), true
	}
	var v string
	if json.Unmarshal(s.b[start:s.i], &v) != nil {
		return "", false
	}
	return v, true
}

// Interned reads a string like String, but returns the entry of known equal
// to it, without allocating, when there is one (event and delta type names).
func (s *Scanner) Interned(known []string) (string, bool) {
	start := s.i
	escaped, ok := s.str()
	if !ok {
		return "", false
	}
	if !escaped {
		inner := s.b[start+1 : s.i-1]
		for _, k := range known {
			if string(inner) == k {
				return k, true
			}
		}
	}
	s.i = start
	return s.String()
}

// SmallInt reads a non-negative integer of at most 9 digits without a
// leading zero, fraction or exponent: one that json.Unmarshal stores in an
// int unchanged.
func (s *Scanner) SmallInt() (int, bool) {
	start, n := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 9 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	return n, true
}

// Raw reads any value and returns its bytes, as json.RawMessage would hold.
func (s *Scanner) Raw() ([]byte, bool) {
	start := s.i
	if !s.skip(0) {
		return nil, false
	}
	return s.b[start:s.i], true
}

// Skip reads any value.
func (s *Scanner) Skip() bool { return s.skip(0) }

// FoldsTo reports whether key equals one of names ignoring ASCII case, the
// match json.Unmarshal also accepts for a struct field. Callers that compare
// keys exactly use it to leave such keys to json.Unmarshal.
func FoldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// Seen tracks the fields of one object already read, so that a duplicate
// key (where json.Unmarshal merges or overwrites) can be refused.
type Seen uint64

// First marks field i (0 to 63) and reports whether it was not marked yet.
func (m *Seen) First(i int) bool {
	bit := Seen(1) << uint(i)
	if *m&bit != 0 {
		return false
	}
	*m |= bit
	return true
}

// The Field readers read the value of member i of an object (Seen
// refusing a duplicate member) into a Go field as json.Unmarshal fills it.
// Each reports false, for the fallback to decide, on a duplicate member or
// a value they do not read.

// StringField reads a string or null (null leaves *dst) into a string
// field.
func (s *Scanner) StringField(seen *Seen, i int, dst *string) bool {
	if !seen.First(i) {
		return false
	}
	if s.Null() {
		return true
	}
	v, ok := s.String()
	*dst = v
	return ok
}

// IntField reads a small non-negative integer or null (null leaves *dst)
// into an int field.
func (s *Scanner) IntField(seen *Seen, i int, dst *int) bool {
	if !seen.First(i) {
		return false
	}
	if s.Null() {
		return true
	}
	n, ok := s.SmallInt()
	*dst = n
	return ok
}

// CountField reads a small non-negative integer or null (null sets nil)
// into a *int field.
func (s *Scanner) CountField(seen *Seen, i int, dst **int) bool {
	if !seen.First(i) {
		return false
	}
	if s.Null() {
		*dst = nil
		return true
	}
	n, ok := s.SmallInt()
	*dst = &n
	return ok
}

// RawField reads any value (null included, as "null") into a
// json.RawMessage field; the bytes alias the scanned data.
func (s *Scanner) RawField(seen *Seen, i int, dst *json.RawMessage) bool {
	if !seen.First(i) {
		return false
	}
	v, ok := s.Raw()
	*dst = v
	return ok
}

// key reads an object key made of printable ASCII without escapes.
func (s *Scanner) key() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			k := s.b[start:s.i]
			s.i++
			return k, true
		}
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// str reads a JSON string, reporting whether it holds escapes.
func (s *Scanner) str() (escaped, ok bool) {
	if !s.consume('"') {
		return false, false
	}
	for s.i < len(s.b) {
		// Fast run over the bytes that need no attention.
		j := s.i
		for j < len(s.b) {
			c := s.b[j]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			j++
		}
		s.i = j
		if s.i >= len(s.b) {
			break
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return escaped, true
		case c < 0x20:
			return false, false
		default: // '\\'
			escaped = true
			if s.i+1 >= len(s.b) {
				return false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return false, false
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return false, false
					}
				}
				s.i += 6
			default:
				return false, false
			}
		}
	}
	return false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (s *Scanner) skip(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		if depth >= MaxDepth {
			return false
		}
		return s.object(func([]byte) bool { return s.skip(depth + 1) }, false)
	case c == '[':
		if depth >= MaxDepth {
			return false
		}
		return s.Array(func() bool { return s.skip(depth + 1) })
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

// number reads a JSON number (RFC 8259 section 6).
func (s *Scanner) number() bool {
	s.consume('-')
	switch {
	case s.consume('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.consume('.') && !s.digits() {
		return false
	}
	if s.consume('e') || s.consume('E') {
		if !s.consume('+') {
			s.consume('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (s *Scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *Scanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

func (s *Scanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// ws skips JSON whitespace.
func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}
