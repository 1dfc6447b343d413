package editlog

import (
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
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
//
// The edits are computed line by line (lineEdits), as diff -u and git
// compute them: a character-level diff widened to lines would show a
// one-line removal as a changed neighbour too, with wrong counts.
func Diff(p, old, new string, hadBefore, hasAfter bool) (text string, added, removed int) {
	edits := lineEdits(old, new)
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
		// The edits come from lineEdits on the same text; should they
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

// lineEdits is the line-level diff of old and new as udiff edits: every
// distinct line (with its line ending) is numbered, the two sequences of
// numbers are diffed (diffLines) and each difference becomes one edit of
// whole lines at old's byte offsets.
func lineEdits(old, new string) []udiff.Edit {
	if old == new {
		return nil
	}
	ids := map[string]rune{}
	number := func(s string) (seq []rune, lines []string) {
		lines = splitLines(s)
		seq = make([]rune, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = rune(len(ids))
				ids[l] = id
			}
			seq[i] = id
		}
		return seq, lines
	}
	a, aLines := number(old)
	b, bLines := number(new)
	offset := make([]int, len(aLines)+1)
	for i, l := range aLines {
		offset[i+1] = offset[i] + len(l)
	}
	var diffs []lcs.Diff
	diffLines(a, b, 0, 0, &diffs)
	edits := make([]udiff.Edit, 0, len(diffs))
	for _, d := range diffs {
		edits = append(edits, udiff.Edit{Start: offset[d.Start], End: offset[d.End], New: strings.Join(bLines[d.ReplStart:d.ReplEnd], "")})
	}
	return edits
}

// exactDiffs is how many removed plus added lines go-udiff's lcs finds
// exactly (its search depth); past it, its diff is valid but can be far
// longer than needed (a file with a line changed every hundred lines shows
// as wholly rewritten).
const exactDiffs = 50

// diffLines appends to out the differences of a and b (line numbers;
// offsets ai and bi added): the common head and tail are set aside, a
// difference lcs finds within exactDiffs is kept, and a larger one is cut
// at the lines found exactly once in each side, in the same order (as
// patience diff does), and each part diffed the same way.
func diffLines(a, b []rune, ai, bi int, out *[]lcs.Diff) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	a, b, ai, bi = a[p:len(a)-q], b[p:len(b)-q], ai+p, bi+p
	switch {
	case len(a) == 0 && len(b) == 0:
		return
	case len(a) == 0 || len(b) == 0:
		*out = append(*out, lcs.Diff{Start: ai, End: ai + len(a), ReplStart: bi, ReplEnd: bi + len(b)})
		return
	}
	ds := lcs.DiffRunes(a, b)
	size := 0
	for _, d := range ds {
		size += d.End - d.Start + d.ReplEnd - d.ReplStart
	}
	var anchors [][2]int
	if size > exactDiffs {
		anchors = uniqueAnchors(a, b)
	}
	if len(anchors) == 0 {
		for _, d := range ds {
			*out = append(*out, lcs.Diff{Start: ai + d.Start, End: ai + d.End, ReplStart: bi + d.ReplStart, ReplEnd: bi + d.ReplEnd})
		}
		return
	}
	pa, pb := 0, 0
	for _, an := range anchors {
		diffLines(a[pa:an[0]], b[pb:an[1]], ai+pa, bi+pb, out)
		pa, pb = an[0]+1, an[1]+1
	}
	diffLines(a[pa:], b[pb:], ai+pa, bi+pb, out)
}

// uniqueAnchors returns the pairs (i, j) with a[i] == b[j] a line found
// once in a and once in b, the longest run of them increasing in both i
// and j.
func uniqueAnchors(a, b []rune) [][2]int {
	type seen struct{ na, nb, i, j int }
	count := map[rune]*seen{}
	for i, x := range a {
		c := count[x]
		if c == nil {
			c = &seen{}
			count[x] = c
		}
		c.na++
		c.i = i
	}
	for j, x := range b {
		if c := count[x]; c != nil {
			c.nb++
			c.j = j
		}
	}
	var pairs [][2]int // in a's order
	for i, x := range a {
		if c := count[x]; c.na == 1 && c.nb == 1 {
			pairs = append(pairs, [2]int{i, c.j})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longest increasing subsequence of the j's (patience sorting).
	var tops []int // tops[k]: index in pairs ending a run of length k+1
	prev := make([]int, len(pairs))
	for k, pr := range pairs {
		n := sort.Search(len(tops), func(m int) bool { return pairs[tops[m]][1] >= pr[1] })
		if n > 0 {
			prev[k] = tops[n-1]
		} else {
			prev[k] = -1
		}
		if n == len(tops) {
			tops = append(tops, k)
		} else {
			tops[n] = k
		}
	}
	run := make([][2]int, len(tops))
	for k, n := tops[len(tops)-1], len(tops)-1; n >= 0; k, n = prev[k], n-1 {
		run[n] = pairs[k]
	}
	return run
}

// splitLines cuts s after every "\n"; a last line without one is kept.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
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
