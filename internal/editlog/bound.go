package editlog

import (
	"fmt"
	"unicode/utf8"
)

// Bounds of the contents one reply carries (protocol.md Framing: no message
// over 32 MiB). A field is cut at MaxContentBytes; once a reply holds
// MaxReplyContentBytes of contents, later fields keep only the marker. Both
// leave room for the JSON escaping of the rest (at worst 6 bytes a byte for
// control characters, far less for text).
const (
	MaxContentBytes      = 1 << 20
	MaxReplyContentBytes = 4 << 20
)

// CutText returns s cut at limit bytes (on a rune boundary) followed by a
// marker saying how much was left out, and whether it cut.
func CutText(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	cut := max(limit, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[task-x: cut here, %d more bytes not shown; the file on disk is whole]", len(s)-cut), true
}

// Budget cuts the contents of one reply: each field at MaxContentBytes, and
// to nothing but the marker once MaxReplyContentBytes were spent.
type Budget struct{ spent int }

// Cut bounds s within the budget and reports whether it cut.
func (b *Budget) Cut(s string) (string, bool) {
	limit := min(MaxContentBytes, max(MaxReplyContentBytes-b.spent, 0))
	out, cut := CutText(s, limit)
	b.spent += min(len(s), limit)
	return out, cut
}

// boundPending cuts Original and Current of out within one Budget.
func boundPending(out []Pending) {
	var b Budget
	for i := range out {
		for _, f := range []**string{&out[i].Original, &out[i].Current} {
			if *f == nil {
				continue
			}
			if s, cut := b.Cut(**f); cut {
				*f = &s
				out[i].Truncated = true
			}
		}
	}
}
