package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Limits of read_file output.
const (
	readMaxLines     = 2000
	readMaxBytes     = 256 << 10
	readMaxLineBytes = 2000
)

const utf8BOM = "\ufeff"

type readFile struct{}

type readFileInput struct {
	Path      string `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
	StartLine int    `json:"startLine,omitempty" jsonschema:"First line to read, 1-based. Default 1."`
	EndLine   int    `json:"endLine,omitempty" jsonschema:"Last line to read, inclusive. Default: the end of the file (within the output limit)."`
}

// readFileData is the structured result of read_file.
type readFileData struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine"`
	TotalLines int    `json:"totalLines"`
	Truncated  bool   `json:"truncated"`
	// Encoding is set for a file that is not valid UTF-8: "windows-1252"
	// (a legacy 8-bit file, shown decoded) or "utf-8 (invalid bytes)"
	// (shown with U+FFFD for them). See encoding.go.
	Encoding string `json:"encoding,omitempty"`
}

const readFileDescription = `
Read a text file of the workspace. The result shows numbered lines like "cat -n": the line number, a tab, then the line text (line numbers are not part of the file; never include them in oldText of replace_text).
Give startLine and endLine (1-based, inclusive) to read part of a large file. At most {{.MaxLines}} lines or {{.MaxKiB}} KiB are returned per call; the result then says which startLine to use next. Lines longer than {{.MaxLineBytes}} characters are cut.
The path is relative to the workspace root (absolute paths inside the root work too). Read a file before you edit it: an edit of a file that changed since you last read it is refused.
Binary files cannot be read; for a folder use list_files. A file that is not UTF-8 is shown decoded, with a first line that says its encoding; edits write that encoding back.`

var readFileSchema = tool.InputSchema[readFileInput](tool.Constraints{
	"endLine":   {Min: tool.N(1.0)},
	"startLine": {Min: tool.N(1.0)},
})

func (*readFile) Spec() tool.Spec {
	return tool.Spec{
		Name: "read_file",
		Description: renderDescription(readFileDescription, map[string]int{
			"MaxLines": readMaxLines, "MaxKiB": readMaxBytes >> 10, "MaxLineBytes": readMaxLineBytes,
		}),
		InputSchema: readFileSchema,
		Permission:  tool.ClassRead,
	}
}

// Run reads the file and records its whole content in env.Reads for the
// stale-edit check. A secret-looking file (IsSecretPath) needs
// WithSecretApproved on ctx; otherwise it fails with ErrDenied.
func (*readFile) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in readFileInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	if in.StartLine < 0 || in.EndLine < 0 {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "startLine and endLine are 1-based line numbers")
	}
	if in.EndLine > 0 && in.StartLine > in.EndLine {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "startLine %d is after endLine %d", in.StartLine, in.EndLine)
	}
	p, err := resolvePath(env, in.Path)
	if err != nil {
		return tool.Result{}, err
	}
	if (IsSecretPath(p.Rel) || IsSecretPath(in.Path)) && !secretApproved(ctx) {
		return tool.Result{}, tool.Errorf(tool.ErrDenied, "reading secret-looking files needs approval: %s", p.Rel)
	}
	root, err := openRoot(env)
	if err != nil {
		return tool.Result{}, err
	}
	defer root.Close()
	data, err := readRegular(root, p.Rel)
	if err != nil {
		return tool.Result{}, err
	}
	data = editorText(ctx, env, p, data) // the editor's unsaved buffer wins
	if env.Reads != nil {
		env.Reads.Record(p.Abs, data)
	}

	enc := detectEncoding(data)
	text := strings.TrimPrefix(enc.decode(data), utf8BOM)
	lines := splitLines(text)
	total := len(lines)
	start := max(in.StartLine, 1)
	end := total
	if in.EndLine > 0 && in.EndLine < total {
		end = in.EndLine
	}
	d := readFileData{Path: p.Rel, StartLine: start, TotalLines: total, Encoding: enc.label()}
	if total == 0 {
		d.EndLine = 0
		d.Content = fmt.Sprintf("(%s is empty)", p.Rel)
		return tool.Result{Content: d.Content, Data: d}, nil
	}
	if start > total {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "startLine %d is past the end of %s, which has %s", start, p.Rel, plural(total, "line"))
	}

	var b strings.Builder
	b.WriteString(enc.note(p.Rel))
	last := start - 1
	lineCut := false
	for i := start; i <= end; i++ {
		line := strings.TrimSuffix(lines[i-1], "\r")
		if cut, ok := truncateRunes(line, readMaxLineBytes); ok {
			line = fmt.Sprintf("%s [... line cut, %d more bytes]", cut, len(line)-len(cut))
			lineCut = true
		}
		row := fmt.Sprintf("%6d\t%s\n", i, line)
		if i-start >= readMaxLines || b.Len()+len(row) > readMaxBytes {
			d.Truncated = true
			break
		}
		b.WriteString(row)
		last = i
	}
	d.EndLine = last
	if d.Truncated {
		fmt.Fprintf(&b, "[... output cut at line %d of %d; call read_file with startLine %d to read more]\n", last, total, last+1)
	} else if end < total && in.EndLine > 0 {
		fmt.Fprintf(&b, "[%s has %s]\n", p.Rel, plural(total, "line"))
	}
	// A cut line is content left out too: truncated says so (the marker in
	// the line says where).
	d.Truncated = d.Truncated || lineCut
	d.Content = b.String()
	return tool.Result{Content: d.Content, Data: d}, nil
}

// splitLines splits text into lines without their "\n"; a final newline
// does not start another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
