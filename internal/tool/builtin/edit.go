package builtin

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// writeFunc writes data atomically to name inside root (fsx.WriteFileAtomicIn).
type writeFunc func(root *os.Root, name string, data []byte, perm fs.FileMode) error

// editData is the structured result of write_file and replace_text.
type editData struct {
	Path         string `json:"path"`
	Kind         string `json:"kind"` // "created" or "modified"
	Added        int    `json:"added"`
	Removed      int    `json:"removed"`
	Replacements int    `json:"replacements,omitempty"`
	Diff         string `json:"diff"`
	Operation    string `json:"operation,omitempty"` // edit-log operation id
}

// checkEditable refuses the root and any path with a .git component (a
// nested repository's or submodule's .git too); every writing tool calls it
// for each path it writes, moves or deletes.
// checkPlaceholder refuses a write that adds the redaction placeholder
// (logx.Placeholder) to a file: the model sees every key the runtime holds
// as the placeholder (read_file, diffs), so writing what it saw back would
// replace the key in the user's file (a .env) with the placeholder. The
// runtime never writes a key back on the model's behalf (docs/tools.md,
// "Keys in files"); an edit that keeps the placeholders already in the
// file, or edits lines around a key, is fine.
func checkPlaceholder(p fsx.Resolved, old, newData []byte) error {
	ph := []byte(logx.Placeholder)
	if bytes.Count(newData, ph) > bytes.Count(old, ph) {
		return tool.Errorf(tool.ErrInvalidInput,
			"%s: the new content holds %s, the placeholder of a key the runtime hides; the key is not written back. "+
				"Edit only the lines around it (replace_text), or ask the user to change the key", p.Rel, logx.Placeholder)
	}
	return nil
}

func checkEditable(p fsx.Resolved) error {
	if p.Rel == "." {
		return tool.Errorf(tool.ErrInvalidInput, "the workspace root is a folder, not a file")
	}
	if inGitDir(p.Rel) {
		return tool.Errorf(tool.ErrDenied, "%s is inside a .git folder; a repository's internals are not edited by tools", p.Rel)
	}
	return nil
}

// checkStale fails with ErrStale when the file changed on disk since the
// agent last read or wrote it (addendum §4).
func checkStale(env *tool.Env, p fsx.Resolved, current []byte) error {
	if env.Reads != nil && env.Reads.Stale(p.Abs, current) {
		return tool.Errorf(tool.ErrStale,
			"%s changed on disk since you last read it; read it again with read_file before editing it", p.Rel)
	}
	return nil
}

// commitEdit writes newData to p: through the edit log when env has one
// (the operation id is returned), else atomically with write (creating its
// parent folders for a new file). It records the write in env.Reads and
// builds the change and its diff. A failed write leaves the old file whole.
func commitEdit(ctx context.Context, env *tool.Env, root *os.Root, write writeFunc, toolName string, p fsx.Resolved, old []byte, existed bool, newData []byte) (editData, tool.FileChange, string, error) {
	if err := checkPlaceholder(p, old, newData); err != nil {
		return editData{}, tool.FileChange{}, "", err
	}
	var opID string
	if env.Edits != nil {
		id, err := env.Edits.Apply(ctx, env.TaskID, tool.CallID(ctx), toolName,
			[]tool.FileEdit{{Path: p.Rel, Existed: existed, Before: old, After: newData}})
		if err != nil {
			return editData{}, tool.FileChange{}, "", err
		}
		opID = id
	} else {
		if !existed {
			if dir := path.Dir(p.Rel); dir != "." {
				if err := root.MkdirAll(osName(dir), 0o755); err != nil {
					return editData{}, tool.FileChange{}, "", fsError(dir, err)
				}
			}
		}
		if err := write(root, osName(p.Rel), newData, 0o644); err != nil {
			return editData{}, tool.FileChange{}, "", fsError(p.Rel, err)
		}
	}
	if env.Reads != nil {
		env.Reads.Record(p.Abs, newData)
	}
	kind := "modified"
	if !existed {
		kind = "created"
	}
	df := diffFiles(p.Rel, string(old), string(newData))
	d := editData{Path: p.Rel, Kind: kind, Added: df.Added, Removed: df.Removed, Diff: df.Text, Operation: opID}
	return d, tool.FileChange{Path: p.Rel, Kind: kind, Added: df.Added, Removed: df.Removed}, opID, nil
}
