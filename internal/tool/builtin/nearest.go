package builtin

import (
	"fmt"
	"slices"
	"strings"
)

// Limits of the nearest-candidate search of replace_text.
const (
	nearestMinScore   = 0.5       // below this no passage is shown
	nearestMaxWork    = 4_000_000 // file lines × oldText lines
	nearestShownLines = 30
	nearestLineBytes  = 300
)

// nearestCandidate describes the passage of body most similar to oldText: a
// window of as many lines as oldText has, scored by the mean Dice
// coefficient of the character bigrams of the trimmed lines. A window equal
// to oldText up to whitespace wins over any score and is reported as such
// (naming tabs versus spaces when that is the difference).
func nearestCandidate(body, oldText string) string {
	const advice = "Read the file again with read_file and copy the text exactly as it is now (without the line numbers)."
	fileLines := splitLines(toLF(body))
	oldLines := splitLines(toLF(oldText))
	k := len(oldLines)
	n := len(fileLines)
	if k == 0 || n == 0 {
		return advice
	}
	k = min(k, n)
	if n*k > nearestMaxWork {
		return "The file is too large to look for a similar passage. " + advice
	}
	fileBigrams := make([][]uint64, n)
	fileFlat := make([]string, n)
	for i, l := range fileLines {
		fileBigrams[i] = bigrams(strings.TrimSpace(l))
		fileFlat[i] = collapseSpace(l)
	}
	oldBigrams := make([][]uint64, k)
	oldFlat := make([]string, k)
	for j, l := range oldLines[:k] {
		oldBigrams[j] = bigrams(strings.TrimSpace(l))
		oldFlat[j] = collapseSpace(l)
	}

	best, bestScore, wsOnly := -1, -1.0, false
	for i := 0; i+k <= n; i++ {
		sum, same := 0.0, true
		for j := range k {
			a, b := strings.TrimSpace(fileLines[i+j]), strings.TrimSpace(oldLines[j])
			if a == b {
				sum++
			} else {
				sum += dice(fileBigrams[i+j], oldBigrams[j])
			}
			if same && fileFlat[i+j] != oldFlat[j] {
				same = false
			}
		}
		score := sum / float64(k)
		if same && !wsOnly {
			best, bestScore, wsOnly = i, score, true
			continue
		}
		if !wsOnly && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || (!wsOnly && bestScore < nearestMinScore) {
		return "No similar passage was found. " + advice
	}

	var b strings.Builder
	first, last := best+1, best+k
	if first == last {
		fmt.Fprintf(&b, "The most similar text is line %d", first)
	} else {
		fmt.Fprintf(&b, "The most similar text is lines %d-%d", first, last)
	}
	if wsOnly {
		b.WriteString("; it differs from oldText only in whitespace")
		if why := whitespaceDifference(fileLines[best:best+k], oldLines[:k]); why != "" {
			b.WriteString(" (" + why + ")")
		}
	}
	b.WriteString(":\n")
	for i := best; i < best+k && i < best+nearestShownLines; i++ {
		line, cut := truncateRunes(strings.TrimSuffix(fileLines[i], "\r"), nearestLineBytes)
		if cut {
			line += " …"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, line)
	}
	if k > nearestShownLines {
		fmt.Fprintf(&b, "[... %d more lines]\n", k-nearestShownLines)
	}
	b.WriteString(advice)
	return b.String()
}

// whitespaceDifference names how the file's lines differ from oldText's in
// whitespace: tabs versus spaces in the indentation, or other spacing.
func whitespaceDifference(file, old []string) string {
	fileTabs, fileSpaces := indentKinds(file)
	oldTabs, oldSpaces := indentKinds(old)
	switch {
	case fileTabs && !oldTabs && oldSpaces:
		return "the file indents with tabs, oldText with spaces"
	case oldTabs && !fileTabs && fileSpaces:
		return "the file indents with spaces, oldText with tabs"
	}
	for i := range file {
		f, o := strings.TrimRight(file[i], " \t\r"), strings.TrimRight(old[i], " \t\r")
		if f == o && file[i] != old[i] {
			return "trailing whitespace differs"
		}
	}
	return "spacing or indentation differs"
}

// indentKinds reports whether any line is indented with a tab or a space.
func indentKinds(lines []string) (tabs, spaces bool) {
	for _, l := range lines {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		tabs = tabs || strings.Contains(indent, "\t")
		spaces = spaces || strings.Contains(indent, " ")
	}
	return tabs, spaces
}

// collapseSpace trims s and collapses its runs of whitespace to one space.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// bigrams returns the sorted character bigrams of s, each two runes packed
// in a uint64.
func bigrams(s string) []uint64 {
	r := []rune(s)
	if len(r) < 2 {
		return nil
	}
	out := make([]uint64, 0, len(r)-1)
	for i := 0; i+1 < len(r); i++ {
		out = append(out, uint64(uint32(r[i]))<<32|uint64(uint32(r[i+1])))
	}
	slices.Sort(out)
	return out
}

// dice is the Sørensen–Dice coefficient of two sorted bigram multisets.
func dice(a, b []uint64) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}
