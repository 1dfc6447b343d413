package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
)

// A runtime→client message over the cap is never written (the client would
// end the session, protocol.md Framing). A reply becomes -32603 (Conn.reply);
// a notification or a call is sent with its longest strings cut, each ending
// with cutMarker, so that the event still arrives (its ids, types and small
// fields whole) and says what was left out.

// cutMarkerFormat ends a string cut to make its message fit the cap.
const cutMarkerFormat = "\n[… cut here: %d more bytes not sent; the message was over the %s message cap]"

// markerRoom bounds the encoded length of one marker.
const markerRoom = 128

// fitParams returns params (JSON) with its longest string values (never an
// object's keys) cut so that the whole is at least over bytes shorter; the
// order of members is kept. ok is false when cutting strings cannot save
// enough (the bulk is numbers, keys or structure).
func fitParams(params json.RawMessage, over, maxLine int) (json.RawMessage, bool) {
	var lens []int
	err := walkTokens(params, func(t json.Token, isKey bool, _ byte) error {
		if s, ok := t.(string); ok && !isKey {
			lens = append(lens, len(s))
		}
		return nil
	})
	if err != nil || len(lens) == 0 {
		return nil, false
	}
	slices.Sort(lens)
	slices.Reverse(lens)
	// saved(limit) is what cutting every string to limit saves at least; it
	// falls as limit grows. Take the largest limit that saves enough.
	saved := func(limit int) int {
		s := 0
		for _, n := range lens {
			if n <= limit+markerRoom {
				break // not cut: its marker would cost more than the cut saves
			}
			s += n - limit - markerRoom
		}
		return s
	}
	if saved(0) < over {
		return nil, false
	}
	lo, hi := 0, lens[0]
	for lo < hi {
		if mid := (lo + hi + 1) / 2; saved(mid) >= over {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	// Escapes can make a cut string's encoding longer than its bytes: halve
	// the limit until the result fits.
	for limit := lo; ; limit /= 2 {
		out, err := cutStrings(params, limit, capText(maxLine))
		if err == nil && len(params)-len(out) >= over {
			return out, true
		}
		if err != nil || limit == 0 {
			return nil, false
		}
	}
}

// cutStrings re-encodes raw with every string value longer than
// limit+markerRoom bytes cut to limit at a character boundary and ended with
// the cut marker.
func cutStrings(raw []byte, limit int, capName string) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(raw))
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	err := walkTokens(raw, func(t json.Token, isKey bool, sep byte) error {
		if sep != 0 {
			out.WriteByte(sep)
		}
		switch v := t.(type) {
		case json.Delim:
			out.WriteByte(byte(v))
			return nil
		case string:
			if !isKey && len(v) > limit+markerRoom {
				cut := limit
				for cut > 0 && !utf8.RuneStart(v[cut]) {
					cut--
				}
				t = v[:cut] + fmt.Sprintf(cutMarkerFormat, len(v)-cut, capName)
			}
		}
		if err := enc.Encode(t); err != nil {
			return err
		}
		out.Truncate(out.Len() - 1) // Encode's newline
		return nil
	})
	return out.Bytes(), err
}

// walkTokens calls visit for each token of raw in order, saying whether a
// string is an object's key and which separator (',' or ':', 0 for none)
// goes before the token.
func walkTokens(raw []byte, visit func(t json.Token, isKey bool, sep byte) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type level struct {
		obj bool
		n   int // keys and values seen at this level
	}
	var stack []level
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var sep byte
		isKey := false
		d, isDelim := t.(json.Delim)
		closing := isDelim && (d == '}' || d == ']')
		if !closing && len(stack) > 0 {
			top := &stack[len(stack)-1]
			isKey = top.obj && top.n%2 == 0
			switch {
			case top.obj && !isKey:
				sep = ':'
			case top.n > 0:
				sep = ','
			}
			top.n++
		}
		switch {
		case closing:
			stack = stack[:len(stack)-1]
		case isDelim:
			stack = append(stack, level{obj: d == '{'})
		}
		if err := visit(t, isKey, sep); err != nil {
			return err
		}
	}
}
