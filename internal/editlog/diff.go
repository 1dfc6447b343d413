package editlog

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// maxDiffBytes caps the diff kept with an operation.
const maxDiffBytes = 200_000

type diffResult struct {
	text           string
	added, removed int
}

// diffOf is Diff of byte contents.
func diffOf(p string, before, after []byte, hadBefore, hasAfter bool) diffResult {
	text, added, removed := Diff(p, string(before), string(after), hadBefore, hasAfter)
	return diffResult{text: text, added: added, removed: removed}
}

// Diff is the unified diff ("a/<path>" → "b/<path>", "/dev/null" for an
// absent side, 3 lines of context, github.com/aymanbagabas/go-udiff) of one
// file change, uncapped, with its added and removed line counts. Equal texts
// give "" and 0, 0.
func Diff(p, old, new string, hadBefore, hasAfter bool) (text string, added, removed int) {
	edits := udiff.Strings(old, new)
	if len(edits) == 0 {
		return "", 0, 0
	}
	from, to := "a/"+p, "b/"+p
	if !hadBefore {
		from = "/dev/null"
	}
	if !hasAfter {
		to = "/dev/null"
	}
	u, err := udiff.ToUnifiedDiff(from, to, old, edits, udiff.DefaultContextLines)
	if err != nil {
		// The edits come from udiff.Strings on the same text; should they
		// ever be inconsistent, fall back to whole-file counts.
		return "", CountLines(new), CountLines(old)
	}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				added++
			case udiff.Delete:
				removed++
			}
		}
	}
	return u.String(), added, removed
}

func capDiff(s string) string {
	if len(s) <= maxDiffBytes {
		return s
	}
	cut := maxDiffBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "\n[... diff truncated ...]\n"
}

// CountLines counts lines as an editor shows them: a final line without a
// newline counts, an empty text has none.
func CountLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
