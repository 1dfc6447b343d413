package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/protocol"
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

// plannedEdit is one file's planned write (write_file, replace_text): what
// the tool read (old; existed false for a file it creates), what it will
// write, and the diff between them. Plan computes it, Apply commits it.
type plannedEdit struct {
	p       fsx.Resolved
	old     []byte
	existed bool
	newData []byte
	diff    fileDiff
}

// planEdit checks a write of newData over old to p (the placeholder guard)
// and computes its diff; nothing is written.
func planEdit(p fsx.Resolved, old []byte, existed bool, newData []byte) (*plannedEdit, error) {
	if err := checkPlaceholder(p, old, newData); err != nil {
		return nil, err
	}
	return &plannedEdit{p: p, old: old, existed: existed, newData: newData,
		diff: diffFiles(p.Rel, string(old), string(newData), existed, true)}, nil
}

// preview is what the user approves: the file's unified diff.
func (e *plannedEdit) preview() string {
	if e.diff.Text == "" {
		return fmt.Sprintf("%s already holds this content; nothing changes.", e.p.Rel)
	}
	return e.diff.Text
}

// commit writes the planned content: through the edit log when env has one
// (the operation id is returned), else atomically with write (creating the
// parent folders of a new file). Either way the file must still hold what
// the plan was computed from (ErrStale otherwise: it changed while the user
// was asked). It records the write in env.Reads and returns the change. A
// failed write leaves the old file whole.
func (e *plannedEdit) commit(ctx context.Context, env *tool.Env, write writeFunc, toolName string) (editData, tool.FileChange, string, error) {
	p := e.p
	if ctx.Err() != nil {
		return editData{}, tool.FileChange{}, "", tool.Errorf(tool.ErrCancelled, "cancelled before writing %s", p.Rel)
	}
	var opID string
	if env.Edits != nil {
		id, err := env.Edits.Apply(ctx, env.TaskID, tool.CallID(ctx), toolName,
			[]tool.FileEdit{{Path: p.Rel, Existed: e.existed, Before: e.old, After: e.newData}})
		if err != nil {
			return editData{}, tool.FileChange{}, "", err
		}
		opID = id
	} else {
		root, err := openRoot(env)
		if err != nil {
			return editData{}, tool.FileChange{}, "", err
		}
		defer root.Close()
		cur, err := root.ReadFile(osName(p.Rel))
		gone := errors.Is(err, fs.ErrNotExist)
		switch {
		case err != nil && !gone:
			return editData{}, tool.FileChange{}, "", fsError(p.Rel, err)
		case e.existed && gone:
			return editData{}, tool.FileChange{}, "", tool.Errorf(tool.ErrStale, "%s was removed while the edit was prepared; nothing was written", p.Rel)
		case !e.existed && !gone:
			return editData{}, tool.FileChange{}, "", tool.Errorf(tool.ErrStale, "%s was created while the edit was prepared; read it with read_file and retry", p.Rel)
		case e.existed && !bytes.Equal(cur, e.old):
			return editData{}, tool.FileChange{}, "", tool.Errorf(tool.ErrStale, "%s changed on disk while the edit was prepared; read it again with read_file and retry", p.Rel)
		}
		if !e.existed {
			if dir := path.Dir(p.Rel); dir != "." {
				if err := root.MkdirAll(osName(dir), 0o755); err != nil {
					return editData{}, tool.FileChange{}, "", fsError(dir, err)
				}
			}
		}
		if err := write(root, osName(p.Rel), e.newData, 0o644); err != nil {
			return editData{}, tool.FileChange{}, "", fsError(p.Rel, err)
		}
	}
	if env.Reads != nil {
		env.Reads.Record(p.Abs, e.newData)
	}
	if env.Editor != nil {
		env.Editor.Wrote(ctx, env.TaskID, p.Abs, e.newData)
	}
	kind := "modified"
	if !e.existed {
		kind = "created"
	}
	d := editData{Path: p.Rel, Kind: kind, Added: e.diff.Added, Removed: e.diff.Removed, Diff: e.diff.Text, Operation: opID}
	return d, tool.FileChange{Path: p.Rel, Kind: protocol.FileChangeKind(kind), Added: e.diff.Added, Removed: e.diff.Removed}, opID, nil
}
