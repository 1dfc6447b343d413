package builtin

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// maxDiffBytes caps the unified diff put in an edit tool's Data.
const maxDiffBytes = 100_000

// fileDiff is the unified diff of one file change with its line counts.
type fileDiff struct {
	Text    string // unified diff, "a/<rel>" → "b/<rel>", 3 lines of context
	Added   int
	Removed int
}

// diffFiles computes the unified diff from old to new for rel (go-udiff) and
// counts the added and removed lines. A created file diffs from empty.
func diffFiles(rel, old, new string) fileDiff {
	edits := udiff.Strings(old, new)
	if len(edits) == 0 {
		return fileDiff{}
	}
	u, err := udiff.ToUnifiedDiff("a/"+rel, "b/"+rel, old, edits, udiff.DefaultContextLines)
	if err != nil {
		// The edits come from udiff.Strings on the same text; should they
		// ever be inconsistent, fall back to whole-file counts.
		return fileDiff{Added: countLines(new), Removed: countLines(old)}
	}
	var d fileDiff
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				d.Added++
			case udiff.Delete:
				d.Removed++
			}
		}
	}
	text := u.String()
	if cut, ok := truncateRunes(text, maxDiffBytes); ok {
		text = cut + "\n[... diff truncated ...]\n"
	}
	d.Text = text
	return d
}

// countLines counts lines as an editor shows them: a final line without a
// newline counts, an empty text has none.
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
