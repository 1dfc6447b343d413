package builtin

import (
	"context"
	"errors"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// LogEdits returns the tool.EditLog that records the edit tools' changes in
// l. A file that changed since the tool read it is a staleEdit tool failure;
// any other failure of the log is an io tool failure (nothing was written).
func LogEdits(l *editlog.Log) tool.EditLog { return logEdits{l} }

type logEdits struct{ l *editlog.Log }

func (e logEdits) Apply(ctx context.Context, taskID, callID, toolName string, files []tool.FileEdit) (string, error) {
	spec := editlog.OpSpec{TaskID: taskID, CallID: callID, Tool: toolName, Files: make([]editlog.FileSpec, len(files))}
	for i, f := range files {
		spec.Files[i] = editlog.FileSpec{Path: f.Path, Existed: f.Existed, Before: f.Before, Delete: f.Delete, After: f.After, Mode: f.Mode}
	}
	op, err := e.l.Apply(ctx, spec)
	var ce *editlog.ChangedError
	switch {
	case err == nil:
		return op.ID, nil
	case errors.As(err, &ce):
		return "", tool.Errorf(tool.ErrStale, "%s changed on disk while the edit was prepared; read it again with read_file and retry", ce.Path)
	case ctx.Err() != nil:
		return "", tool.Errorf(tool.ErrCancelled, "cancelled before writing")
	default:
		return "", tool.Errorf(tool.ErrIO, "the edit was not made: %v", err)
	}
}

// applyEdits performs files through env.Edits, or, without an edit log,
// through a throwaway in-memory log on env.Root (atomic writes, all or
// nothing, no record). It returns the operation id ("" without a log).
func applyEdits(ctx context.Context, env *tool.Env, toolName string, files []tool.FileEdit) (string, error) {
	if env.Edits != nil {
		return env.Edits.Apply(ctx, env.TaskID, tool.CallID(ctx), toolName, files)
	}
	l, err := editlog.Open(env.Root, "", nil)
	if err != nil {
		return "", tool.Errorf(tool.ErrNoWorkspace, "cannot open the workspace root: %v", err)
	}
	if _, err := LogEdits(l).Apply(ctx, env.TaskID, "", toolName, files); err != nil {
		return "", err
	}
	return "", nil
}

// recordWrites updates the stale-edit record after an edit: written files
// hold their new content, deleted ones are forgotten.
func recordWrites(env *tool.Env, abs func(rel string) string, files []tool.FileEdit) {
	if env.Reads == nil {
		return
	}
	for _, f := range files {
		if f.Delete {
			env.Reads.Forget(abs(f.Path))
		} else {
			env.Reads.Record(abs(f.Path), f.After)
		}
	}
}
