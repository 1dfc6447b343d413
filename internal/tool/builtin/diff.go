package builtin

import "github.com/task-x/task-x-runtime/internal/editlog"

// maxDiffBytes caps the unified diff put in an edit tool's Data.
const maxDiffBytes = 100_000

// fileDiff is the unified diff of one file change with its line counts.
type fileDiff struct {
	Text    string // unified diff, "a/<rel>" → "b/<rel>", 3 lines of context ("" when nothing changes)
	Added   int
	Removed int
}

// diffFiles computes the unified diff from old to new for rel and counts the
// added and removed lines (editlog.Diff). A created file (existed false)
// diffs from /dev/null, a deleted one (exists false) to /dev/null.
func diffFiles(rel, old, new string, existed, exists bool) fileDiff {
	text, added, removed := editlog.Diff(rel, old, new, existed, exists)
	if cut, ok := truncateRunes(text, maxDiffBytes); ok {
		text = cut + "\n[... diff truncated ...]\n"
	}
	return fileDiff{Text: text, Added: added, Removed: removed}
}

// countLines counts lines as an editor shows them (editlog.CountLines).
func countLines(s string) int { return editlog.CountLines(s) }
