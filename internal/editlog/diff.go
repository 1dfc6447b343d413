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

// diffOf is the unified diff ("a/<path>" → "b/<path>", "/dev/null" for an
// absent side, 3 lines of context) of one file change with its line counts.
func diffOf(p string, before, after []byte, hadBefore, hasAfter bool) diffResult {
	old, new := string(before), string(after)
	edits := udiff.Strings(old, new)
	if len(edits) == 0 {
		return diffResult{}
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
		return diffResult{added: countLines(new), removed: countLines(old)}
	}
	var d diffResult
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				d.added++
			case udiff.Delete:
				d.removed++
			}
		}
	}
	d.text = u.String()
	return d
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

// countLines counts lines as an editor shows them.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
