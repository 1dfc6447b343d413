package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A unified diff as apply_patch reads it: "--- a/path" and "+++ b/path"
// headers ("/dev/null" for a created or deleted file), then hunks
// "@@ -l,s +l,s @@" of context (' '), removed ('-') and added ('+') lines and
// "\ No newline at end of file" markers. Lines outside a file section
// ("diff --git", "index", prose) are ignored.

type patchFile struct {
	oldPath, newPath string // "" for /dev/null
	hunks            []hunk
}

// path is the file the section changes.
func (f *patchFile) path() string {
	if f.newPath != "" {
		return f.newPath
	}
	return f.oldPath
}

type hunkLine struct {
	kind byte // ' ', '-', '+'
	text string
}

type hunk struct {
	header   string
	oldStart int // 1-based; for an empty old side, the line after which to insert
	oldCount int
	lines    []hunkLine
	oldNoEOL bool // the old side's last line has no newline
	newNoEOL bool // the new side's last line has no newline
	number   int  // 1-based within its file section
}

func (h *hunk) sides() (old, new []string) {
	for _, l := range h.lines {
		if l.kind != '+' {
			old = append(old, l.text)
		}
		if l.kind != '-' {
			new = append(new, l.text)
		}
	}
	return old, new
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parsePatch reads a unified diff. Errors name the line number of the patch.
func parsePatch(text string) ([]*patchFile, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var files []*patchFile
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "--- ") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
			if strings.HasPrefix(lines[i], "@@ ") {
				return nil, fmt.Errorf("line %d: a hunk without a file header; each file needs --- a/path and +++ b/path lines before its hunks", i+1)
			}
			i++
			continue
		}
		f := &patchFile{oldPath: headerPath(lines[i][4:]), newPath: headerPath(lines[i+1][4:])}
		if strings.HasPrefix(f.oldPath, "a/") && (strings.HasPrefix(f.newPath, "b/") || f.newPath == "") ||
			f.oldPath == "" && strings.HasPrefix(f.newPath, "b/") {
			f.oldPath = strings.TrimPrefix(f.oldPath, "a/")
			f.newPath = strings.TrimPrefix(f.newPath, "b/")
		}
		if f.oldPath == "" && f.newPath == "" {
			return nil, fmt.Errorf("line %d: both sides of the file header are /dev/null", i+1)
		}
		if f.oldPath != "" && f.newPath != "" && f.oldPath != f.newPath {
			return nil, fmt.Errorf("line %d: the patch renames %s to %s; renames are not supported in a patch, use move_path first", i+1, f.oldPath, f.newPath)
		}
		i += 2
		for i < len(lines) && strings.HasPrefix(lines[i], "@@") {
			h, next, err := parseHunk(lines, i)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.path(), err)
			}
			h.number = len(f.hunks) + 1
			f.hunks = append(f.hunks, h)
			i = next
		}
		if len(f.hunks) == 0 && f.newPath != "" {
			return nil, fmt.Errorf("%s: no hunks (@@ -l,s +l,s @@) after the file header", f.path())
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no file headers found; the patch must be a unified diff with --- a/path and +++ b/path lines and @@ hunks")
	}
	return files, nil
}

// headerPath takes the path of a ---/+++ line, without a tab-separated
// timestamp; "" for /dev/null.
func headerPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	if s == "/dev/null" {
		return ""
	}
	return s
}

// parseHunk reads the hunk whose header is lines[i]. The header's counts say
// how many lines to read; a hunk that ends early (at the next header or the
// end of the patch) is taken as it is, since models often miscount.
func parseHunk(lines []string, i int) (hunk, int, error) {
	m := hunkHeader.FindStringSubmatch(lines[i])
	if m == nil {
		return hunk{}, 0, fmt.Errorf("line %d: malformed hunk header %q; want @@ -start,count +start,count @@", i+1, lines[i])
	}
	h := hunk{header: m[0]}
	h.oldStart, _ = strconv.Atoi(m[1])
	oldCount, newCount := 1, 1
	if m[2] != "" {
		oldCount, _ = strconv.Atoi(m[2])
	}
	if m[4] != "" {
		newCount, _ = strconv.Atoi(m[4])
	}
	h.oldCount = oldCount
	i++
	oldSeen, newSeen := 0, 0
	for i < len(lines) {
		l := lines[i]
		if oldSeen >= oldCount && newSeen >= newCount {
			if strings.HasPrefix(l, `\`) {
				h.markNoEOL()
				i++
			}
			break
		}
		if l == "" {
			// An empty context line whose leading space was lost.
			l = " "
		}
		switch l[0] {
		case ' ':
			oldSeen++
			newSeen++
		case '-':
			if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
				goto done
			}
			oldSeen++
		case '+':
			newSeen++
		case '\\':
			h.markNoEOL()
			i++
			continue
		default:
			goto done
		}
		h.lines = append(h.lines, hunkLine{kind: l[0], text: l[1:]})
		i++
	}
done:
	if len(h.lines) == 0 {
		return hunk{}, 0, fmt.Errorf("hunk %s has no lines", h.header)
	}
	return h, i, nil
}

// markNoEOL applies a "\ No newline at end of file" marker to the side of
// the line before it.
func (h *hunk) markNoEOL() {
	if len(h.lines) == 0 {
		return
	}
	switch h.lines[len(h.lines)-1].kind {
	case '-':
		h.oldNoEOL = true
	case '+':
		h.newNoEOL = true
	default:
		h.oldNoEOL, h.newNoEOL = true, true
	}
}

// applyHunks applies hunks to content. A UTF-8 BOM is kept, and a file whose
// every line ends in CRLF keeps CRLF (the patch's lines match without CR).
// Each hunk is searched near its header's line (shifted by the earlier
// hunks), first exactly, then ignoring trailing white space; hunks apply in
// order and may not overlap.
func applyHunks(rel, content string, hunks []hunk) (string, error) {
	bom := ""
	if strings.HasPrefix(content, utf8BOM) {
		bom = utf8BOM
		content = content[len(bom):]
	}
	n := strings.Count(content, "\n")
	crlf := n > 0 && strings.Count(content, "\r\n") == n
	if crlf {
		content = toLF(content)
	}
	var lines []string
	eofNL := true
	if content != "" {
		eofNL = strings.HasSuffix(content, "\n")
		lines = strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	}
	offset := 0 // shift of the running result against the original numbering
	prevEnd := 0
	prevOldEnd := 0
	for k := range hunks {
		h := &hunks[k]
		old, new := h.sides()
		origStart := h.oldStart - 1
		if len(old) == 0 {
			origStart = h.oldStart
		}
		if k > 0 && origStart < prevOldEnd {
			return "", fmt.Errorf("hunk %d of %s (%s) overlaps hunk %d: hunks must be in file order and not share lines", h.number, rel, h.header, hunks[k-1].number)
		}
		prevOldEnd = origStart + len(old)
		at := findLines(lines, old, origStart+offset, prevEnd, func(a, b string) bool { return a == b })
		if at < 0 {
			at = findLines(lines, old, origStart+offset, prevEnd, func(a, b string) bool {
				return strings.TrimRight(a, " \t\r") == strings.TrimRight(b, " \t\r")
			})
		}
		if at < 0 {
			first := ""
			if len(old) > 0 {
				first = fmt.Sprintf(" (it starts with %q)", truncateLine(old[0]))
			}
			return "", fmt.Errorf("hunk %d of %s (%s) does not apply: its %d context and removed lines%s were not found at line %d or nearby",
				h.number, rel, h.header, len(old), first, max(origStart+offset, 0)+1)
		}
		touchesEnd := at+len(old) == len(lines)
		// Context lines keep the file's text (a white-space-tolerant match
		// must not rewrite them).
		new = new[:0:0]
		oi := 0
		for _, l := range h.lines {
			switch l.kind {
			case ' ':
				new = append(new, lines[at+oi])
				oi++
			case '-':
				oi++
			case '+':
				new = append(new, l.text)
			}
		}
		lines = append(lines[:at:at], append(new, lines[at+len(old):]...)...)
		offset = at - origStart + len(new) - len(old)
		prevEnd = at + len(new)
		if touchesEnd {
			switch {
			case h.newNoEOL:
				eofNL = false
			case h.oldNoEOL:
				eofNL = true
			}
		}
	}
	out := strings.Join(lines, "\n")
	if len(lines) > 0 && eofNL {
		out += "\n"
	}
	if crlf {
		out = toCRLF(out)
	}
	return bom + out, nil
}

// findLines returns the index at or after min where want matches lines,
// nearest to expected, or -1.
func findLines(lines, want []string, expected, min int, eq func(a, b string) bool) int {
	match := func(at int) bool {
		if at < min || at+len(want) > len(lines) {
			return false
		}
		for i, w := range want {
			if !eq(lines[at+i], w) {
				return false
			}
		}
		return true
	}
	if expected < min {
		expected = min
	}
	if expected > len(lines) {
		expected = len(lines)
	}
	for d := 0; d <= len(lines); d++ {
		if match(expected + d) {
			return expected + d
		}
		if d > 0 && match(expected-d) {
			return expected - d
		}
	}
	return -1
}

func truncateLine(s string) string {
	if t, cut := truncateRunes(s, 80); cut {
		return t + "…"
	}
	return s
}
