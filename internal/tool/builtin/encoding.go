package builtin

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text files that are not valid UTF-8 (docs/tools.md, "Encodings"). The
// model reads and writes text as UTF-8 JSON strings, so such a file is shown
// as one of two views, and the edit tools write through the same view so
// that every byte they do not change stays as it was:
//   - mostly UTF-8 with a few invalid bytes (more valid multi-byte sequences
//     than invalid bytes): the text as it is, each invalid byte shown as
//     U+FFFD, and said so. Edits work on the bytes; an oldText holding
//     U+FFFD cannot match such a byte and is refused with that reason.
//   - otherwise a legacy 8-bit encoding: shown decoded as windows-1252 (the
//     WHATWG table, where the five bytes it leaves undefined map to the C1
//     controls U+0081, U+008D, U+008F, U+0090, U+009D, so every byte has a
//     character and back). Edits encode their text back to windows-1252; a
//     character it cannot hold is refused. An ISO-8859-1 file reads the same
//     but for 0x80-0x9F; a file in another encoding (Shift-JIS, KOI8-R...)
//     reads as mojibake, yet its edits stay byte-exact.

// encWindows1252 names the legacy view.
const encWindows1252 = "windows-1252"

// textEncoding describes how a file's bytes map to the text the model sees.
type textEncoding struct {
	// name is "" for UTF-8 (invalid bytes counted in invalid) or
	// encWindows1252.
	name    string
	invalid int // bytes that are not UTF-8, in a UTF-8 view
}

// detectEncoding classifies data (a text file: no NUL in its head).
func detectEncoding(data []byte) textEncoding {
	if utf8.Valid(data) {
		return textEncoding{}
	}
	multi, invalid := 0, 0
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			invalid++
		} else {
			multi++
		}
		i += n
	}
	if multi > invalid {
		return textEncoding{invalid: invalid}
	}
	return textEncoding{name: encWindows1252}
}

// win1252High maps the bytes 0x80-0x9F of windows-1252 (WHATWG).
var win1252High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// win1252Back is the inverse of win1252High.
var win1252Back = func() map[rune]byte {
	m := make(map[rune]byte, len(win1252High))
	for i, r := range win1252High {
		m[r] = byte(0x80 + i)
	}
	return m
}()

// decode returns the text the model sees for data.
func (e textEncoding) decode(data []byte) string {
	if e.name != encWindows1252 {
		return string(data)
	}
	var b strings.Builder
	b.Grow(len(data) + len(data)/4)
	for _, c := range data {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(win1252High[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// encode returns the bytes of text in the encoding. Errors: a character
// windows-1252 cannot hold (named, with its line).
func (e textEncoding) encode(text string) ([]byte, error) {
	if e.name != encWindows1252 {
		return []byte(text), nil
	}
	out := make([]byte, 0, len(text))
	line := 1
	for _, r := range text {
		switch {
		case r == '\n':
			line++
			out = append(out, '\n')
		case r < 0x80:
			out = append(out, byte(r))
		case r >= 0xA0 && r <= 0xFF:
			out = append(out, byte(r))
		default:
			c, ok := win1252Back[r]
			if !ok {
				return nil, fmt.Errorf("%q (U+%04X, line %d) has no windows-1252 byte", r, r, line)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// note is the line read_file puts before the numbered lines of a file that
// is not valid UTF-8 ("" for UTF-8).
func (e textEncoding) note(rel string) string {
	switch {
	case e.name == encWindows1252:
		return fmt.Sprintf("[%s is not UTF-8 (a legacy 8-bit encoding): shown decoded as windows-1252. Edits are written back in windows-1252, so every byte you do not change stays as it is; use only characters windows-1252 has.]\n", rel)
	case e.invalid > 0:
		return fmt.Sprintf("[%s is UTF-8 with %s not valid as UTF-8, shown as \uFFFD. Edits keep them as they are, but oldText cannot match them: choose oldText around them.]\n", rel, plural(e.invalid, "byte"))
	}
	return ""
}

// label is the encoding named in results: "" for clean UTF-8.
func (e textEncoding) label() string {
	switch {
	case e.name != "":
		return e.name
	case e.invalid > 0:
		return "utf-8 (invalid bytes)"
	}
	return ""
}
