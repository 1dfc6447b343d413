package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// decodeChunk fills ch from one chunk's JSON. The common shapes (text,
// reasoning and finish deltas, usage) are read by scanChunk without
// reflection; anything it does not read exactly as json.Unmarshal would
// (tool calls, an error, escaped or case-folded keys, duplicate keys, numbers
// that are not plain small integers, invalid JSON) goes to json.Unmarshal, so
// the result and the errors are those of json.Unmarshal (FuzzChunkScan pins
// this). scratch is reused for the choices of scanned chunks; ch must not be
// kept past the next call with the same scratch.
func decodeChunk(data []byte, ch *chunk, scratch *[]chunkChoice) error {
	*ch = chunk{}
	if scanChunk(data, ch, scratch) {
		return nil
	}
	*ch = chunk{}
	return json.Unmarshal(data, ch)
}

// maxScanDepth bounds the nesting scanChunk skips; deeper values go to
// json.Unmarshal.
const maxScanDepth = 64

// chunkScanner is a strict JSON reader over one chunk. Every method returns
// false on anything it does not accept, and the caller gives up.
type chunkScanner struct {
	b []byte
	i int
}

// scanChunk reads data as a chat.completion.chunk into ch. It reports false,
// leaving ch in an unspecified state, when the fallback must decide.
// RawMessage fields alias data, as json.Unmarshal's copies would hold the
// same bytes.
func scanChunk(data []byte, ch *chunk, scratch *[]chunkChoice) bool {
	s := chunkScanner{b: data}
	var seen [3]bool
	ok := s.object(func(key []byte) bool {
		switch k := string(key); k {
		case "choices":
			if seen[0] {
				return false
			}
			seen[0] = true
			return s.choices(ch, scratch)
		case "usage":
			if seen[1] {
				return false
			}
			seen[1] = true
			if s.null() {
				return true
			}
			ch.Usage = &chunkUsage{}
			return s.usage(ch.Usage)
		case "error":
			if seen[2] {
				return false
			}
			seen[2] = true
			// Only an explicit null is read here; an error goes to the fallback.
			if !s.null() {
				return false
			}
			ch.Error = json.RawMessage("null")
			return true
		default:
			return !foldsTo(key, "choices", "usage", "error") && s.skip(0)
		}
	})
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// choices reads the choices array (or null).
func (s *chunkScanner) choices(ch *chunk, scratch *[]chunkChoice) bool {
	if s.null() {
		return true
	}
	if !s.consume('[') {
		return false
	}
	list := (*scratch)[:0]
	if list == nil {
		list = make([]chunkChoice, 0, 1) // [] is an empty slice, not nil
	}
	s.ws()
	if s.consume(']') {
		ch.Choices = list
		return true
	}
	for {
		list = append(list, chunkChoice{})
		if !s.choice(&list[len(list)-1]) {
			*scratch = list
			return false
		}
		s.ws()
		if s.consume(']') {
			break
		}
		if !s.consume(',') {
			*scratch = list
			return false
		}
	}
	*scratch = list
	ch.Choices = list
	return true
}

// choice reads one choice object.
func (s *chunkScanner) choice(c *chunkChoice) bool {
	var seen [3]bool
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			if seen[0] {
				return false
			}
			seen[0] = true
			return s.null() || s.smallInt(&c.Index)
		case "delta":
			if seen[1] {
				return false
			}
			seen[1] = true
			return s.null() || s.delta(&c.Delta)
		case "finish_reason":
			if seen[2] {
				return false
			}
			seen[2] = true
			if s.null() {
				return true
			}
			str, ok := s.plainString()
			if !ok {
				return false
			}
			v := string(str)
			c.FinishReason = &v
			return true
		default:
			return !foldsTo(key, "index", "delta", "finish_reason") && s.skip(0)
		}
	})
}

// delta reads a delta object without tool calls.
func (s *chunkScanner) delta(d *chunkDelta) bool {
	var seen [3]bool
	raw := func(i int, dst *json.RawMessage) bool {
		if seen[i] {
			return false
		}
		seen[i] = true
		start := s.i
		if !s.skip(0) {
			return false
		}
		*dst = s.b[start:s.i]
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return raw(0, &d.Content)
		case "reasoning_content":
			return raw(1, &d.ReasoningContent)
		case "reasoning":
			return raw(2, &d.Reasoning)
		case "tool_calls", "function_call":
			// An explicit null is as if absent; calls go to the fallback.
			return s.null()
		default:
			return !foldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls", "function_call") && s.skip(0)
		}
	})
}

// usage reads a usage object.
func (s *chunkScanner) usage(u *chunkUsage) bool {
	var seen [2]bool
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			if seen[0] {
				return false
			}
			seen[0] = true
			return s.null() || s.smallInt(&u.PromptTokens)
		case "completion_tokens":
			if seen[1] {
				return false
			}
			seen[1] = true
			return s.null() || s.smallInt(&u.CompletionTokens)
		default:
			return !foldsTo(key, "prompt_tokens", "completion_tokens") && s.skip(0)
		}
	})
}

// foldsTo reports whether key matches one of names only case-insensitively,
// which json.Unmarshal would accept and the scanner leaves to it. Keys are
// plain ASCII here (key refuses the rest).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// object reads an object, calling member with each key once the scanner is
// at the key's value; member must consume the value.
func (s *chunkScanner) object(member func(key []byte) bool) bool {
	s.ws()
	if !s.consume('{') {
		return false
	}
	s.ws()
	if s.consume('}') {
		return true
	}
	for {
		key, ok := s.key()
		if !ok {
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

// key reads an object key made of printable ASCII without escapes.
func (s *chunkScanner) key() ([]byte, bool) {
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

// plainString reads a string without escapes holding valid UTF-8, whose bytes
// are then exactly its value.
func (s *chunkScanner) plainString() ([]byte, bool) {
	start := s.i
	esc, ok := s.str()
	if !ok || esc {
		return nil, false
	}
	v := s.b[start+1 : s.i-1]
	if !utf8.Valid(v) {
		return nil, false
	}
	return v, true
}

// str reads a JSON string, reporting whether it holds escapes.
func (s *chunkScanner) str() (escaped, ok bool) {
	if !s.consume('"') {
		return false, false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, true
		case c < 0x20:
			return false, false
		case c == '\\':
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
		default:
			s.i++
		}
	}
	return false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// smallInt reads a non-negative integer of at most 9 digits without a
// leading zero, which json.Unmarshal stores in an int unchanged.
func (s *chunkScanner) smallInt(dst *int) bool {
	start, n := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 9 || (digits > 1 && s.b[start] == '0') {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false
	}
	*dst = n
	return true
}

// skip reads any JSON value.
func (s *chunkScanner) skip(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		if depth >= maxScanDepth {
			return false
		}
		return s.object(func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		if depth >= maxScanDepth {
			return false
		}
		s.i++
		s.ws()
		if s.consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
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
func (s *chunkScanner) number() bool {
	if s.consume('-') && s.i >= len(s.b) {
		return false
	}
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
func (s *chunkScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *chunkScanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// null reads the literal null if it is next.
func (s *chunkScanner) null() bool {
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

func (s *chunkScanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// ws skips JSON whitespace.
func (s *chunkScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}
