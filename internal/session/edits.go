package session

import (
	"context"
	"errors"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// editLog returns the open project's edit log, ErrNoWorkspace without
// one. With a dataDir it is loaded from (and saved to)
// dataDir/checkpoints/<workspace id>.json (project.Open); without one it
// lives in memory.
func (s *Session) editLog() (*editlog.Log, error) {
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	return proj.Edits(), nil
}

// EditsList is the edit log's operations, oldest first (edits/list).
func (s *Session) EditsList() ([]protocol.EditOperation, error) {
	l, err := s.editLog()
	if err != nil {
		return nil, err
	}
	ops := l.List()
	out := make([]protocol.EditOperation, 0, len(ops))
	var budget editlog.Budget // the diffs stay under the message cap (protocol.md Framing)
	for _, op := range ops {
		diff, cut := budget.Cut(s.secrets.Redact(op.Diff))
		w := protocol.EditOperation{ID: op.ID, TaskID: op.TaskID, CallID: op.CallID, Tool: op.Tool,
			Time: op.Time.Format("2006-01-02T15:04:05.000Z07:00"), Diff: diff, DiffTruncated: cut, Settled: op.Settled(),
			Undone: op.Undone, Undoable: !op.Undone && !op.Dropped, Files: make([]protocol.EditFile, len(op.Files))}
		for i, f := range op.Files {
			w.Files[i] = protocol.EditFile{Path: f.Path, Kind: protocol.FileChangeKind(f.Kind()), BeforeHash: f.BeforeHash, AfterHash: f.AfterHash,
				Added: f.Added, Removed: f.Removed, Settled: f.Settled}
		}
		out = append(out, w)
	}
	return out, nil
}

// EditsPending is the files with pending agent edits (edits/pending):
// { path, original, current, added, removed, operations, changedOutside },
// current being the file on disk now.
func (s *Session) EditsPending() ([]editlog.Pending, error) {
	l, err := s.editLog()
	if err != nil {
		return nil, err
	}
	return l.Pending()
}

// editPaths is the open workspace's edit log (ErrNoWorkspace without
// one) and the client paths of edits/keep and edits/revert relative to
// its root (invalid params for one outside it).
func (s *Session) editPaths(clientPaths []string) (*editlog.Log, []string, error) {
	proj, err := s.project()
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, 0, len(clientPaths))
	for _, c := range clientPaths {
		if c == "" {
			return nil, nil, Invalid("paths: empty path")
		}
		rel, err := clientRel(proj, "paths", c)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, rel)
	}
	return proj.Edits(), paths, nil
}

// Keep accepts the pending edits of paths (all without any) and answers
// the paths kept (edits/keep).
func (s *Session) Keep(paths []string) ([]string, error) {
	l, paths, err := s.editPaths(paths)
	if err != nil {
		return nil, err
	}
	kept, err := l.Keep(paths)
	switch {
	case err != nil && kept == nil:
		return nil, err
	case err != nil:
		s.log.Warn("edit log: saving after keep", "err", err)
	}
	return kept, nil
}

// Revert restores the pending edits of paths (all without any) and
// answers the paths reverted and the conflicts (edits/revert). A file the
// user changed after the agent's edit is a conflict and left untouched.
func (s *Session) Revert(ctx context.Context, paths []string) ([]string, []string, error) {
	l, paths, err := s.editPaths(paths)
	if err != nil {
		return nil, nil, err
	}
	reverted, conflicts, err := l.Revert(paths)
	switch {
	case err != nil && reverted == nil:
		return nil, nil, err
	case err != nil:
		s.log.Warn("edit log: saving after revert", "err", err)
	}
	s.changed(ctx, reverted)
	return reverted, conflicts, nil
}

// Undo undoes one operation of the edit log and answers the paths
// restored and the conflicts (edits/undo); invalid params for an unknown
// operation, one already undone and one "too old to undo".
func (s *Session) Undo(ctx context.Context, operation string) ([]string, []string, error) {
	if operation == "" {
		return nil, nil, Invalid("operation is required")
	}
	l, err := s.editLog()
	if err != nil {
		return nil, nil, err
	}
	restored, conflicts, err := l.Undo(operation)
	switch {
	case errors.Is(err, editlog.ErrTooOld):
		return nil, nil, Invalid("too old to undo: the contents of operation %s were dropped from the edit log", operation)
	case errors.Is(err, editlog.ErrUnknownOperation):
		return nil, nil, Invalid("unknown operation %q", operation)
	case errors.Is(err, editlog.ErrAlreadyUndone):
		return nil, nil, Invalid("operation %s was already undone", operation)
	case err != nil && restored == nil:
		return nil, nil, err
	case err != nil:
		s.log.Warn("edit log: saving after undo", "err", err)
	}
	s.changed(ctx, restored)
	return restored, conflicts, nil
}

// CallChanges is what one tool call of a task changed, from the edit log:
// each file's content before and after the call (keys redacted, bounded):
// the Agent Client Protocol front end's diff of a tool call. Nil without
// a workspace or for a call that changed nothing.
func (s *Session) CallChanges(taskID, callID string) ([]CallChange, error) {
	l, err := s.editLog()
	if err != nil {
		return nil, err
	}
	return l.CallChanges(taskID, callID)
}
