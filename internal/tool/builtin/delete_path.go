package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/task-x/task-x-runtime/internal/tool"
)

type deletePath struct{}

type deletePathInput struct {
	Path string `json:"path" jsonschema:"The file or empty folder to delete, relative to the workspace root or absolute inside it."`
}

const deletePathDescription = `
Delete a file, or an empty folder, inside the workspace. A folder that still holds entries is not deleted: delete its files first. The deletion is recorded in the edit log, so the user can undo it. The file must not have changed on disk since you last read it. Files under .git/ cannot be deleted.`

var deletePathSchema = tool.InputSchema[deletePathInput](nil)

func (*deletePath) Spec() tool.Spec {
	return tool.Spec{
		Name:        "delete_path",
		Description: renderDescription(deletePathDescription, nil),
		InputSchema: deletePathSchema,
		Permission:  tool.ClassDestructive,
	}
}

// deleteData is the structured result of delete_path.
type deleteData struct {
	Path      string `json:"path"`
	Folder    bool   `json:"folder,omitempty"`
	Operation string `json:"operation,omitempty"`
}

// Run deletes a file through the edit log (a "deleted" FileChange), or an
// empty folder directly (nothing to restore, no FileChange). Failures:
// invalidInput (the root, a folder with entries, a symlink), notFound,
// outsideWorkspace, denied (.git/), staleEdit.
func (t *deletePath) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in deletePathInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	p, err := resolvePath(env, in.Path)
	if err != nil {
		return tool.Result{}, err
	}
	if p.Rel == "." {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "the workspace root cannot be deleted")
	}
	if err := checkEditable(p); err != nil {
		return tool.Result{}, err
	}
	root, err := openRoot(env)
	if err != nil {
		return tool.Result{}, err
	}
	defer root.Close()
	if fi, err := root.Lstat(osName(p.Rel)); err == nil && fi.IsDir() {
		d, err := root.Open(osName(p.Rel))
		if err != nil {
			return tool.Result{}, fsError(p.Rel, err)
		}
		names, rerr := d.Readdirnames(1)
		d.Close()
		if len(names) > 0 {
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "%s is a folder that is not empty; delete_path removes files and empty folders: delete the files in it first", p.Rel)
		}
		if rerr != nil && rerr != io.EOF {
			return tool.Result{}, fsError(p.Rel, rerr)
		}
		if err := root.Remove(osName(p.Rel)); err != nil {
			return tool.Result{}, fsError(p.Rel, err)
		}
		return tool.Result{Content: fmt.Sprintf("Deleted the empty folder %s.", p.Rel), Data: deleteData{Path: p.Rel, Folder: true}}, nil
	}
	data, _, err := readForMove(root, p.Rel)
	if err != nil {
		return tool.Result{}, err
	}
	if err := checkStale(env, p, data); err != nil {
		return tool.Result{}, err
	}
	files := []tool.FileEdit{{Path: p.Rel, Existed: true, Before: data, Delete: true}}
	opID, err := applyEdits(ctx, env, "delete_path", files)
	if err != nil {
		return tool.Result{}, err
	}
	recordWrites(env, func(string) string { return p.Abs }, files)
	n := 0
	if !isBinary(data) {
		n = countLines(string(data))
	}
	return tool.Result{
		Content:   fmt.Sprintf("Deleted %s.", p.Rel),
		Data:      deleteData{Path: p.Rel, Operation: opID},
		Changes:   []tool.FileChange{{Path: p.Rel, Kind: "deleted", Removed: n}},
		Operation: opID,
	}, nil
}
