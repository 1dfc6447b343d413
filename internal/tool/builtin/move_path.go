package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/task-x/task-x-runtime/internal/tool"
)

type movePath struct{}

type movePathInput struct {
	From string `json:"from" jsonschema:"The file to move, relative to the workspace root or absolute inside it."`
	To   string `json:"to" jsonschema:"The new path, relative to the workspace root or absolute inside it; must not exist."`
}

const movePathDescription = `
Move or rename a file inside the workspace. Missing parent folders of the destination are created. The destination must not exist: an existing file is never overwritten. Folders are not moved by this tool: move the files in them one by one. The file must not have changed on disk since you last read it. Files under .git/ cannot be moved. Files up to {{.MaxMiB}} MiB.`

var movePathSchema = tool.InputSchema[movePathInput](nil)

func (*movePath) Spec() tool.Spec {
	return tool.Spec{
		Name:        "move_path",
		Description: renderDescription(movePathDescription, map[string]int{"MaxMiB": maxFileBytes >> 20}),
		InputSchema: movePathSchema,
		Permission:  tool.ClassEdit,
	}
}

// moveData is the structured result of move_path.
type moveData struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Operation string `json:"operation,omitempty"`
}

// Run moves the file as one edit-log operation (the source deleted, the
// destination created with the same content and permissions), reported as
// two FileChanges: "deleted" for from and "created" for to. Failures:
// invalidInput (same path, a folder, a destination that exists), notFound,
// outsideWorkspace, denied (.git/), staleEdit.
func (t *movePath) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in movePathInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	from, err := resolvePath(env, in.From)
	if err != nil {
		return tool.Result{}, err
	}
	to, err := resolvePath(env, in.To)
	if err != nil {
		return tool.Result{}, err
	}
	for _, p := range []string{from.Rel, to.Rel} {
		if p == "." {
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "the workspace root cannot be moved or replaced")
		}
	}
	if err := checkEditable(from); err != nil {
		return tool.Result{}, err
	}
	if err := checkEditable(to); err != nil {
		return tool.Result{}, err
	}
	if from.Rel == to.Rel {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "from and to are the same path (%s)", from.Rel)
	}
	root, err := openRoot(env)
	if err != nil {
		return tool.Result{}, err
	}
	defer root.Close()
	data, mode, err := readForMove(root, from.Rel)
	if err != nil {
		return tool.Result{}, err
	}
	if err := checkStale(env, from, data); err != nil {
		return tool.Result{}, err
	}
	if _, err := root.Lstat(osName(to.Rel)); err == nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "%s already exists; move_path never overwrites. Delete it first or choose another name", to.Rel)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return tool.Result{}, fsError(to.Rel, err)
	}
	files := []tool.FileEdit{
		{Path: from.Rel, Existed: true, Before: data, Delete: true},
		{Path: to.Rel, After: data, Mode: mode},
	}
	opID, err := applyEdits(ctx, env, "move_path", files)
	if err != nil {
		return tool.Result{}, err
	}
	abs := map[string]string{from.Rel: from.Abs, to.Rel: to.Abs}
	recordWrites(env, func(rel string) string { return abs[rel] }, files)
	n := 0
	if !isBinary(data) {
		n = countLines(string(data))
	}
	changes := []tool.FileChange{
		{Path: from.Rel, Kind: "deleted", Removed: n},
		{Path: to.Rel, Kind: "created", Added: n},
	}
	return tool.Result{
		Content:   fmt.Sprintf("Moved %s to %s.", from.Rel, to.Rel),
		Data:      moveData{From: from.Rel, To: to.Rel, Operation: opID},
		Changes:   changes,
		Operation: opID,
	}, nil
}

// readForMove reads a regular file of any content (binary too) up to
// maxFileBytes, with its permission bits.
func readForMove(root *os.Root, rel string) ([]byte, fs.FileMode, error) {
	fi, err := root.Lstat(osName(rel))
	if err != nil {
		return nil, 0, fsError(rel, err)
	}
	switch {
	case fi.IsDir():
		return nil, 0, tool.Errorf(tool.ErrInvalidInput, "%s is a folder; this tool handles files only: move or delete the files in it one by one", rel)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, 0, tool.Errorf(tool.ErrInvalidInput, "%s is a symbolic link; links are not moved or deleted by this tool", rel)
	case !fi.Mode().IsRegular():
		return nil, 0, tool.Errorf(tool.ErrInvalidInput, "%s is not a regular file", rel)
	case fi.Size() > maxFileBytes:
		return nil, 0, tool.Errorf(tool.ErrInvalidInput, "%s is over the %d MiB limit", rel, maxFileBytes>>20)
	}
	data, err := root.ReadFile(osName(rel))
	if err != nil {
		return nil, 0, fsError(rel, err)
	}
	return data, fi.Mode().Perm(), nil
}
