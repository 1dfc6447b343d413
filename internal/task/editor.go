package task

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// EditorContext of agent/run (protocol.md EditorContext, addendum §11):
// what the editor shows the user when they send the prompt. It becomes a
// delimited <editor-context> block in front of the task's first user
// message, so the model sees it with the prompt and it is saved with the
// conversation.

// Limits of the editor block. The mention limits are protocol.md's; the
// others keep one editor state from crowding the prompt.
const (
	maxMentions          = 10      // protocol.md: at most 10
	maxMentionChars      = 40_000  // protocol.md: each file's text
	maxMentionTotalChars = 120_000 // protocol.md: all mentioned files together
	maxFolderEntries     = 500     // files listed for one mentioned folder
	maxOpenFiles         = 50      // open files listed
	maxDiagnostics       = 50      // diagnostics listed
	maxDiagnosticChars   = 500     // one diagnostic message
	maxSelectionChars    = 40_000  // the selected text
	maxEditorPathLen     = 4096    // one path, in bytes
)

// Editor is protocol.md EditorContext. Unknown fields are ignored
// (editors send more than the runtime reads).
type Editor struct {
	ActiveFile  string             `json:"activeFile"`
	Selection   *editorSelection   `json:"selection"`
	OpenFiles   []string           `json:"openFiles"`
	Diagnostics []editorDiagnostic `json:"diagnostics"`
	Mentions    []string           `json:"mentions"`
}

// editorSelection is EditorContext.selection; lines are 1-based, inclusive.
type editorSelection struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Text      string `json:"text"`
}

// editorDiagnostic is one EditorContext.diagnostics entry. protocol.md does
// not fix its shape; the runtime reads { path, line, severity, message,
// source? } (line 1-based), the fields VS Code's Diagnostic maps to.
type editorDiagnostic struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Source   string `json:"source"`
}

// ParseEditor decodes agent/run `editor`; absent or null gives nil. A wrong
// shape, more than 10 mentions, a mention outside the workspace root or a
// bad path is -32602.
func ParseEditor(raw json.RawMessage) (*Editor, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var e Editor
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, invalidf("editor: %v", err)
	}
	if len(e.Mentions) > maxMentions {
		return nil, invalidf("editor.mentions: at most %d paths, got %d", maxMentions, len(e.Mentions))
	}
	check := func(field, p string, required bool) error {
		switch {
		case p == "" && required:
			return invalidf("editor.%s: a path is required", field)
		case len(p) > maxEditorPathLen:
			return invalidf("editor.%s: path longer than %d bytes", field, maxEditorPathLen)
		case strings.ContainsRune(p, 0) || !utf8.ValidString(p):
			return invalidf("editor.%s: invalid path", field)
		}
		return nil
	}
	if err := check("activeFile", e.ActiveFile, false); err != nil {
		return nil, err
	}
	if sel := e.Selection; sel != nil {
		if err := check("selection.path", sel.Path, true); err != nil {
			return nil, err
		}
		if sel.StartLine < 1 || sel.EndLine < sel.StartLine {
			return nil, invalidf("editor.selection: need 1 <= startLine <= endLine, got %d..%d", sel.StartLine, sel.EndLine)
		}
	}
	for i, p := range e.OpenFiles {
		if err := check(fmt.Sprintf("openFiles[%d]", i), p, true); err != nil {
			return nil, err
		}
	}
	for i, d := range e.Diagnostics {
		if err := check(fmt.Sprintf("diagnostics[%d].path", i), d.Path, true); err != nil {
			return nil, err
		}
		if d.Line < 0 {
			return nil, invalidf("editor.diagnostics[%d].line: negative", i)
		}
	}
	for i, p := range e.Mentions {
		if err := check(fmt.Sprintf("mentions[%d]", i), p, true); err != nil {
			return nil, err
		}
	}
	return &e, nil
}

// editorBlock renders the editor context for the first user message, or ""
// when there is nothing to say. Mentioned files are attached only when the
// index holds them (excluded, binary, too large or unknown files are named
// with the reason instead), read through os.Root so a symlink cannot leave
// the root; mentions outside the root are refused with -32602.
func editorBlock(proj *project.Project, e *Editor) (string, error) {
	if e == nil {
		return "", nil
	}
	root := proj.Root()
	snap := proj.Snapshot()
	var b strings.Builder
	show := func(p string) string {
		if rel, err := proj.Rel(p); err == nil {
			return rel
		}
		return filepath.ToSlash(p)
	}
	if e.ActiveFile != "" {
		fmt.Fprintf(&b, "Active file: %s\n", show(e.ActiveFile))
	}
	if sel := e.Selection; sel != nil {
		text, cut := cutChars(sel.Text, maxSelectionChars)
		fmt.Fprintf(&b, "Selection in %s, lines %d-%d:\n<selection>\n%s%s\n</selection>\n", show(sel.Path), sel.StartLine, sel.EndLine, text, cutMarker(cut, fmt.Sprintf("%d characters selected", utf8.RuneCountInString(sel.Text))))
	}
	if len(e.OpenFiles) > 0 {
		b.WriteString("Open files:")
		for i, p := range e.OpenFiles {
			if i == maxOpenFiles {
				fmt.Fprintf(&b, " … (%d more)", len(e.OpenFiles)-i)
				break
			}
			b.WriteString(" " + show(p))
		}
		b.WriteString("\n")
	}
	if len(e.Diagnostics) > 0 {
		b.WriteString("Diagnostics:\n")
		for i, d := range e.Diagnostics {
			if i == maxDiagnostics {
				fmt.Fprintf(&b, "… (%d more diagnostics)\n", len(e.Diagnostics)-i)
				break
			}
			msg, _ := cutChars(strings.Join(strings.Fields(d.Message), " "), maxDiagnosticChars)
			sev := d.Severity
			if sev == "" {
				sev = "info"
			}
			if d.Source != "" {
				msg = d.Source + ": " + msg
			}
			fmt.Fprintf(&b, "- %s:%d %s %s\n", show(d.Path), d.Line, sev, msg)
		}
	}
	budget := maxMentionTotalChars
	for i, m := range e.Mentions {
		rel, err := proj.Rel(m)
		if err != nil {
			return "", invalidf("editor.mentions[%d]: %q is outside the workspace root", i, m)
		}
		if rel == "." {
			rel = ""
		}
		if f, ok := snap.File(rel); ok {
			text, err := readIndexed(root, f.Path)
			full := fmt.Sprintf("the file has %d bytes", f.Size)
			if err != nil {
				fmt.Fprintf(&b, "<mention path=%q>not attached: %s</mention>\n", rel, err)
				continue
			}
			limit := min(maxMentionChars, budget)
			shown, cut := cutChars(text, limit)
			budget -= utf8.RuneCountInString(shown)
			fmt.Fprintf(&b, "<mention path=%q>\n%s%s\n</mention>\n", rel, shown, cutMarker(cut, full))
			continue
		}
		if files := folderFiles(snap, rel); files != nil {
			fmt.Fprintf(&b, "<mention path=%q kind=\"folder\">\n", rel)
			for j, f := range files {
				if j == maxFolderEntries {
					fmt.Fprintf(&b, "… (%d more files)\n", len(files)-j)
					break
				}
				b.WriteString(f + "\n")
			}
			b.WriteString("</mention>\n")
			continue
		}
		reason := "not in the index"
		if snap.Excluded(rel, false) {
			reason = "excluded"
		}
		fmt.Fprintf(&b, "<mention path=%q>not attached: %s</mention>\n", rel, reason)
	}
	if b.Len() == 0 {
		return "", nil
	}
	return "<editor-context>\n" + b.String() + "</editor-context>\n\n", nil
}

// folderFiles lists the indexed files under dir ("" is the root); nil when
// none is.
func folderFiles(snap *workspace.Snapshot, dir string) []string {
	var out []string
	prefix := dir + "/"
	for _, f := range snap.Files() {
		if dir == "" || strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return out
}

// readIndexed reads an indexed file through os.Root, at most a little more
// than maxMentionChars runes' worth of bytes.
func readIndexed(root, rel string) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", fmt.Errorf("cannot open the workspace root")
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(rel))
	if err != nil {
		return "", fmt.Errorf("cannot be read")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4*maxMentionChars+4))
	if err != nil {
		return "", fmt.Errorf("cannot be read")
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), nil
}

// cutChars keeps the first n characters (runes) of s; cut reports whether
// anything was dropped.
func cutChars(s string, n int) (string, bool) {
	if n <= 0 {
		return "", s != ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

// cutMarker is the line that says a text was cut, with what the whole was.
func cutMarker(cut bool, whole string) string {
	if !cut {
		return ""
	}
	return "\n[… cut here: " + whole + "; the rest is not attached]"
}
