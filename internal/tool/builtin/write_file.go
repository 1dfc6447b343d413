package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/tool"
)

type writeFile struct {
	write writeFunc
}

type writeFileInput struct {
	Path    *string `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
	Content *string `json:"content" jsonschema:"The complete new content of the file."`
}

const writeFileDescription = `
Create a file, or replace the whole content of an existing one, with content. Missing parent folders are created. The write is atomic: the file holds either its old or its new content, never a part.
To change part of an existing file prefer replace_text. An existing file you have read must not have changed on disk since; if it did, read it again first. Files under .git/ cannot be written. Content is at most {{.MaxMiB}} MiB.`

var writeFileSchema = tool.InputSchema[writeFileInput](nil)

func (*writeFile) Spec() tool.Spec {
	return tool.Spec{
		Name:        "write_file",
		Description: renderDescription(writeFileDescription, map[string]int{"MaxMiB": maxFileBytes >> 20}),
		InputSchema: writeFileSchema,
		Permission:  tool.ClassEdit,
	}
}

// Run writes the file atomically and returns its FileChange, with the
// unified diff in Data (editData): Plan, then the plan's Apply.
func (t *writeFile) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	pl, err := t.Plan(ctx, env, input)
	if err != nil {
		return tool.Result{}, err
	}
	return pl.Apply(ctx)
}

// Plan computes the write and its diff (from /dev/null for a new file)
// without writing. Failures: invalidInput (too large, a folder, a
// character the file's encoding lacks, U+FFFD over invalid bytes),
// outsideWorkspace, denied (.git), staleEdit.
func (t *writeFile) Plan(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Plan, error) {
	var in writeFileInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	if in.Path == nil || in.Content == nil {
		return nil, tool.Errorf(tool.ErrInvalidInput, "path and content are required")
	}
	if len(*in.Content) > maxFileBytes {
		return nil, tool.Errorf(tool.ErrInvalidInput, "content is over the %d MiB limit", maxFileBytes>>20)
	}
	p, err := resolvePath(env, *in.Path)
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

	var old []byte
	existed := true
	fi, err := root.Stat(osName(p.Rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		existed = false
	case err != nil:
		return nil, fsError(p.Rel, err)
	case fi.IsDir():
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is a directory", p.Rel)
	case !fi.Mode().IsRegular():
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is not a regular file", p.Rel)
	case fi.Size() > maxFileBytes:
		// Too large to diff; a stale check still needs the content.
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is over the %d MiB limit", p.Rel, maxFileBytes>>20)
	default:
		if old, err = root.ReadFile(osName(p.Rel)); err != nil {
			return nil, fsError(p.Rel, err)
		}
		if err := checkStale(env, p, editorText(ctx, env, p, old)); err != nil {
			return nil, err
		}
	}
	newData := []byte(*in.Content)
	// An existing file that is not UTF-8 keeps its encoding (encoding.go).
	switch enc := detectEncoding(old); {
	case !existed || isBinary(old):
	case enc.name != "":
		b, err := enc.encode(*in.Content)
		if err != nil {
			return nil, tool.Errorf(tool.ErrInvalidInput, "%s is in %s (not UTF-8) and content holds %v; use characters that encoding has", p.Rel, enc.name, err)
		}
		newData = b
	case enc.invalid > 0 && strings.ContainsRune(*in.Content, utf8.RuneError):
		return nil, tool.Errorf(tool.ErrInvalidInput,
			"%s has %s not valid as UTF-8 (read_file shows them as \uFFFD); writing \uFFFD would replace them. Change the file with replace_text around those bytes instead",
			p.Rel, plural(enc.invalid, "byte"))
	}
	e, err := planEdit(p, old, existed, newData)
	if err != nil {
		return nil, err
	}
	lines := countLines(*in.Content)
	apply := func(ctx context.Context) (tool.Result, error) {
		d, change, opID, err := e.commit(ctx, env, t.write, "write_file")
		if err != nil {
			return tool.Result{}, err
		}
		var msg string
		if existed {
			msg = fmt.Sprintf("Wrote %s (%s, +%d -%d).", p.Rel, plural(lines, "line"), d.Added, d.Removed)
		} else {
			msg = fmt.Sprintf("Created %s (%s).", p.Rel, plural(lines, "line"))
		}
		return tool.Result{Content: msg, Data: d, Changes: []tool.FileChange{change}, Operation: opID}, nil
	}
	return &tool.Plan{Preview: e.preview(), Apply: apply}, nil
}
