package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// maxListedLines bounds the line numbers named in an ambiguous-match error.
const maxListedLines = 20

type replaceText struct {
	write writeFunc
}

type replaceTextInput struct {
	Path       string  `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
	OldText    *string `json:"oldText" jsonschema:"The exact text to replace, as it appears in the file."`
	NewText    *string `json:"newText" jsonschema:"The text to put in its place (may be empty to delete oldText)."`
	ReplaceAll bool    `json:"replaceAll,omitempty" jsonschema:"Replace every occurrence of oldText instead of requiring exactly one. Default false."`
}

const replaceTextDescription = `
Replace exact text in an existing file: oldText must match the file character for character, including indentation (tabs or spaces) and blank lines; line numbers shown by read_file are not part of the file.
oldText must match exactly once: include enough surrounding lines to make it unique, or set replaceAll to replace every occurrence. When nothing matches, the error shows the most similar passage of the file with its line numbers.
The file keeps its line endings (CRLF or LF), a byte order mark and its encoding; write oldText and newText with plain "\n" newlines. The file must not have changed on disk since you last read it. Files under .git/ cannot be edited.`

var replaceTextSchema = tool.InputSchema[replaceTextInput](tool.Constraints{
	"oldText": {MinLength: tool.N(1)},
})

func (*replaceText) Spec() tool.Spec {
	return tool.Spec{
		Name:        "replace_text",
		Description: renderDescription(replaceTextDescription, nil),
		InputSchema: replaceTextSchema,
		Permission:  tool.ClassEdit,
	}
}

// Run replaces oldText by newText: Plan, then the plan's Apply.
func (t *replaceText) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	pl, err := t.Plan(ctx, env, input)
	if err != nil {
		return tool.Result{}, err
	}
	return pl.Apply(ctx)
}

// Plan computes the replacement and its diff without writing. Failures:
// invalidInput (empty oldText, oldText equal to newText, binary file,
// folder, a character the file's encoding lacks), notFound, staleEdit,
// noMatch (with the nearest candidate), ambiguous (several or overlapping
// matches without replaceAll; overlapping ones even with it).
func (t *replaceText) Plan(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Plan, error) {
	var in replaceTextInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	if in.OldText == nil || in.NewText == nil {
		return nil, tool.Errorf(tool.ErrInvalidInput, "path, oldText and newText are required")
	}
	oldText, newText := *in.OldText, *in.NewText
	if oldText == "" {
		return nil, tool.Errorf(tool.ErrInvalidInput, "oldText is empty; to create or overwrite a whole file use write_file")
	}
	if oldText == newText {
		return nil, tool.Errorf(tool.ErrInvalidInput, "oldText and newText are the same; nothing would change")
	}
	p, err := resolvePath(env, in.Path)
	if err != nil {
		return nil, err
	}
	if err := checkEditable(p); err != nil {
		return nil, err
	}
	root, err := openRoot(env)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := readRegular(root, p.Rel)
	if err != nil {
		return nil, err
	}
	// The edit applies to what the agent sees (the editor's unsaved
	// buffer, when it has one); the edit log checks the disk still holds
	// data when it writes.
	base := editorText(ctx, env, p, data)
	if err := checkStale(env, p, base); err != nil {
		return nil, err
	}

	enc := detectEncoding(base)
	content := enc.decode(base)
	bom := ""
	if strings.HasPrefix(content, utf8BOM) {
		bom = utf8BOM
	}
	body := content[len(bom):]

	pos := matchPositions(body, oldText)
	if len(pos) == 0 {
		// Match the file's line endings: LF text against a CRLF file, or
		// CRLF text against an LF file.
		if strings.Contains(oldText, "\n") && strings.Contains(body, "\r\n") && !strings.Contains(oldText, "\r\n") {
			if p2 := matchPositions(body, toCRLF(oldText)); len(p2) > 0 {
				pos, oldText, newText = p2, toCRLF(oldText), toCRLF(newText)
			}
		} else if strings.Contains(oldText, "\r\n") && !strings.Contains(body, "\r\n") {
			if p2 := matchPositions(body, toLF(oldText)); len(p2) > 0 {
				pos, oldText, newText = p2, toLF(oldText), toLF(newText)
			}
		}
	}
	if len(pos) == 0 && enc.invalid > 0 && strings.ContainsRune(oldText, utf8.RuneError) {
		return nil, tool.Errorf(tool.ErrNoMatch,
			"oldText holds \uFFFD, which read_file shows for the %s of %s not valid as UTF-8; it cannot match them. Choose oldText around those bytes (they are kept as they are).",
			plural(enc.invalid, "byte"), p.Rel)
	}
	if len(pos) == 0 {
		hint := "Read the file again with read_file and copy the text exactly as it is now."
		if !IsSecretPath(p.Rel) || secretApproved(ctx) {
			// A secret-looking file's lines are shown only once approved.
			hint = nearestCandidate(body, oldText)
		}
		return nil, tool.Errorf(tool.ErrNoMatch, "oldText was not found in %s.\n%s", p.Rel, hint)
	}
	lines := make([]int, len(pos))
	for i, off := range pos {
		lines[i] = lineOf(body, off)
	}
	for i := 1; i < len(pos); i++ {
		if pos[i] < pos[i-1]+len(oldText) {
			return nil, tool.Errorf(tool.ErrAmbiguous,
				"oldText matches %d times in %s and the matches overlap (lines %s); include more surrounding text so that it matches once",
				len(pos), p.Rel, listLines(lines))
		}
	}
	if len(pos) > 1 && !in.ReplaceAll {
		return nil, tool.Errorf(tool.ErrAmbiguous,
			"oldText matches %d times in %s (lines %s); include more surrounding lines so that it matches once, or set replaceAll to replace every occurrence",
			len(pos), p.Rel, listLines(lines))
	}

	// The new text takes the file's line endings (a CRLF file stays CRLF
	// when newText holds plain "\n").
	if lineEnding(body, oldText, pos[0]) == "\r\n" {
		newText = toCRLF(newText)
	} else {
		newText = toLF(newText)
	}
	if newText == oldText {
		return nil, tool.Errorf(tool.ErrInvalidInput, "oldText and newText differ only in line endings, and the file keeps its own; nothing would change")
	}
	var nb strings.Builder
	nb.Grow(len(content) + len(pos)*(len(newText)-len(oldText)))
	nb.WriteString(bom)
	last := 0
	for _, off := range pos {
		nb.WriteString(body[last:off])
		nb.WriteString(newText)
		last = off + len(oldText)
	}
	nb.WriteString(body[last:])
	out, err := enc.encode(nb.String())
	if err != nil {
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is in %s (not UTF-8) and newText holds %v; use characters that encoding has", p.Rel, enc.name, err)
	}
	e, err := planEdit(p, data, true, out)
	if err != nil {
		return nil, err
	}
	apply := func(ctx context.Context) (tool.Result, error) {
		d, change, opID, err := e.commit(ctx, env, t.write, "replace_text")
		if err != nil {
			return tool.Result{}, err
		}
		d.Replacements = len(pos)
		msg := fmt.Sprintf("Replaced %s in %s at line %s (+%d -%d).",
			plural(len(pos), "occurrence"), p.Rel, listLines(lines), d.Added, d.Removed)
		return tool.Result{Content: msg, Data: d, Changes: []tool.FileChange{change}, Operation: opID}, nil
	}
	return &tool.Plan{Preview: e.preview(), Apply: apply}, nil
}

// matchPositions returns the byte offsets of every occurrence of sub in s,
// overlapping ones included.
func matchPositions(s, sub string) []int {
	var pos []int
	for i := 0; i <= len(s)-len(sub); {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		pos = append(pos, i+j)
		i += j + 1
	}
	return pos
}

// lineEnding is the line ending the new text of a match at offset at of
// body takes: the file's when all its lines end alike (LF when it has no
// CRLF); in a file with mixed endings, the one oldText holds, else the one
// ending the line the match is on.
func lineEnding(body, oldText string, at int) string {
	crlf := strings.Count(body, "\r\n")
	lf := strings.Count(body, "\n") - crlf
	switch {
	case crlf == 0:
		return "\n"
	case lf == 0:
		return "\r\n"
	case strings.Contains(oldText, "\r\n"):
		return "\r\n"
	case strings.Contains(oldText, "\n"):
		return "\n"
	}
	if i := strings.IndexByte(body[at:], '\n'); i > 0 && body[at+i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func toLF(s string) string   { return strings.ReplaceAll(s, "\r\n", "\n") }
func toCRLF(s string) string { return strings.ReplaceAll(toLF(s), "\n", "\r\n") }

// listLines formats line numbers "3, 9, 12", naming at most maxListedLines.
func listLines(lines []int) string {
	var b strings.Builder
	for i, l := range lines {
		if i == maxListedLines {
			fmt.Fprintf(&b, " and %d more", len(lines)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, l)
	}
	return b.String()
}
