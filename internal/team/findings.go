package team

import (
	"bytes"
	"encoding/json"
	"math"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/task"
)

// FindingsLang is the language of the fenced block a review answer ends
// with (protocol.md "Review findings").
const FindingsLang = "task-x-findings"

// Bounds of the findings kept from one answer: a model that loops cannot
// make the event or the summary grow without end.
const (
	MaxFindings       = 200
	MaxFindingMessage = 2000 // characters; a longer message is cut with "…"
	maxFindingPath    = 1024
)

// Finding is one entry of a task-x-findings block: { path, line, severity:
// "error"|"warning"|"info", message }. Path is relative with "/", line is
// 1-based. The type lives in agent because the lead's Summary carries
// them.
type Finding = task.Finding

// ParseFindings returns the findings of every fenced code block of text
// whose language is task-x-findings, in order, without duplicates, at
// most MaxFindings. It never fails: an entry that is not an object with a
// usable path, a whole line number of 1 or more, one of the three
// severities (any case) and a non-empty message is dropped, and so is the
// rest of a block after a JSON syntax error. A path is made relative with
// "/" (a leading "./" dropped, cleaned); an absolute path, one that
// leaves its root ("..") or one with control characters is dropped. The
// text itself is not changed: the caller keeps it as the model wrote it.
func ParseFindings(text string) []Finding {
	out := []Finding{}
	seen := map[Finding]bool{}
	for _, body := range fencedBlocks(text, FindingsLang) {
		for _, raw := range arrayElements(body) {
			f, ok := finding(raw)
			if !ok || seen[f] {
				continue
			}
			if len(out) == MaxFindings {
				return out
			}
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// fencedBlocks returns the contents of the fenced code blocks of text
// (CommonMark: a fence of three or more backticks or tildes indented at
// most three spaces; the language is the first word of the info string;
// the block ends at a fence of the same character at least as long with
// nothing but spaces after it, or at the end of the text) whose language
// is lang, compared without case.
func fencedBlocks(text, lang string) []string {
	var out []string
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		ch, n, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		var body strings.Builder
		j := i + 1
		for ; j < len(lines); j++ {
			if closingFence(lines[j], ch, n) {
				break
			}
			body.WriteString(lines[j])
		}
		if word, _, _ := strings.Cut(strings.TrimSpace(info), " "); strings.EqualFold(word, lang) {
			out = append(out, body.String())
		}
		i = j
	}
	return out
}

func openingFence(line string) (ch byte, n int, info string, ok bool) {
	s := strings.TrimRight(line, "\r\n")
	indent := len(s) - len(strings.TrimLeft(s, " "))
	if indent > 3 {
		return 0, 0, "", false
	}
	s = s[indent:]
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0, "", false
	}
	ch = s[0]
	for n < len(s) && s[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	info = strings.TrimSpace(s[n:])
	if ch == '`' && strings.ContainsRune(info, '`') {
		return 0, 0, "", false
	}
	return ch, n, info, true
}

func closingFence(line string, ch byte, n int) bool {
	s := strings.TrimRight(line, "\r\n")
	indent := len(s) - len(strings.TrimLeft(s, " "))
	if indent > 3 {
		return false
	}
	s = s[indent:]
	k := 0
	for k < len(s) && s[k] == ch {
		k++
	}
	return k >= n && strings.TrimSpace(s[k:]) == ""
}

// arrayElements returns the elements of the JSON array body holds, up to
// the first syntax error (what came before it is kept).
func arrayElements(body string) []json.RawMessage {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		out = append(out, raw)
	}
	return out
}

func finding(raw json.RawMessage) (Finding, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return Finding{}, false
	}
	var e struct {
		Path     *string         `json:"path"`
		Line     json.RawMessage `json:"line"`
		Severity *string         `json:"severity"`
		Message  *string         `json:"message"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil || e.Path == nil || len(e.Line) == 0 || e.Severity == nil || e.Message == nil {
		return Finding{}, false
	}
	p, ok := cleanFindingPath(*e.Path)
	if !ok {
		return Finding{}, false
	}
	line, ok := wholeLine(e.Line)
	if !ok {
		return Finding{}, false
	}
	sev := strings.ToLower(strings.TrimSpace(*e.Severity))
	switch sev {
	case "error", "warning", "info":
	default:
		return Finding{}, false
	}
	msg := strings.TrimSpace(*e.Message)
	if msg == "" || !utf8.ValidString(msg) {
		return Finding{}, false
	}
	if utf8.RuneCountInString(msg) > MaxFindingMessage {
		msg = string([]rune(msg)[:MaxFindingMessage-1]) + "…"
	}
	return Finding{Path: p, Line: line, Severity: sev, Message: msg}, true
}

// cleanFindingPath makes p relative with "/", or refuses it.
func cleanFindingPath(p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || len(p) > maxFindingPath || !utf8.ValidString(p) {
		return "", false
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "", false
		}
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", false
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// wholeLine accepts a JSON number (not a string) that is a whole number from 1 to the
// largest int32 (12 and 12.0; not 0, -1, 1.5 or 1e99).
func wholeLine(raw json.RawMessage) (int, bool) {
	var n json.Number
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		if i < 1 || i > math.MaxInt32 {
			return 0, false
		}
		return int(i), true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// FindingsBlock renders findings as the fenced block the review role is
// asked to write (used by the review prompt's example and the tests).
func FindingsBlock(findings []Finding) string {
	b, _ := json.MarshalIndent(findings, "", "  ")
	if findings == nil {
		b = []byte("[]")
	}
	return "```" + FindingsLang + "\n" + string(b) + "\n```\n"
}
