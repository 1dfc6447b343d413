package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// editLog returns the open project's edit log, -32004 without one. With
// a dataDir it is loaded from (and saved to)
// dataDir/checkpoints/<workspace id>.json (project.Open); without one it
// lives in memory.
func (s *Server) editLog() (*editlog.Log, error) {
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	return proj.Edits(), nil
}

// wireFile is one file of an operation in edits/list.
type wireFile struct {
	Path       string `json:"path"`
	Kind       string `json:"kind"`
	BeforeHash string `json:"beforeHash"`
	AfterHash  string `json:"afterHash"`
	Added      int    `json:"added"`
	Removed    int    `json:"removed"`
	Settled    bool   `json:"settled"`
}

// wireOperation is an operation in edits/list (contents left out).
type wireOperation struct {
	ID       string     `json:"id"`
	TaskID   string     `json:"taskId,omitempty"`
	CallID   string     `json:"callId,omitempty"`
	Tool     string     `json:"tool"`
	Time     string     `json:"time"`
	Files    []wireFile `json:"files"`
	Diff     string     `json:"diff"`
	Settled  bool       `json:"settled"`
	Undone   bool       `json:"undone"`
	Undoable bool       `json:"undoable"`
	// DiffTruncated: Diff was cut to keep the reply under the message cap.
	DiffTruncated bool `json:"diffTruncated,omitempty"`
}

// editsList: edits/list → { operations: [...] }, oldest first.
func (s *Server) editsList(ctx context.Context, params json.RawMessage) (any, error) {
	l, err := s.editLog()
	if err != nil {
		return nil, err
	}
	ops := l.List()
	out := make([]wireOperation, 0, len(ops))
	var budget editlog.Budget // the diffs stay under the message cap (protocol.md Framing)
	for _, op := range ops {
		diff, cut := budget.Cut(s.secrets.Redact(op.Diff))
		w := wireOperation{ID: op.ID, TaskID: op.TaskID, CallID: op.CallID, Tool: op.Tool,
			Time: op.Time.Format("2006-01-02T15:04:05.000Z07:00"), Diff: diff, DiffTruncated: cut, Settled: op.Settled(),
			Undone: op.Undone, Undoable: !op.Undone && !op.Dropped, Files: make([]wireFile, len(op.Files))}
		for i, f := range op.Files {
			w.Files[i] = wireFile{Path: f.Path, Kind: f.Kind(), BeforeHash: f.BeforeHash, AfterHash: f.AfterHash,
				Added: f.Added, Removed: f.Removed, Settled: f.Settled}
		}
		out = append(out, w)
	}
	return map[string]any{"operations": out}, nil
}

// editsPending: edits/pending → { files: [{ path, original, current, added,
// removed, operations, changedOutside }] }; current is the file on disk now.
func (s *Server) editsPending(ctx context.Context, params json.RawMessage) (any, error) {
	l, err := s.editLog()
	if err != nil {
		return nil, err
	}
	files, err := l.Pending()
	if err != nil {
		return nil, err
	}
	return map[string]any{"files": files}, nil
}

type pathsParams struct {
	Paths []string `json:"paths"`
}

// editPaths decodes { paths? } for edits/keep and edits/revert: the open
// workspace's edit log (-32004 without one) and the paths relative to its
// root (-32602 for one outside it).
func (s *Server) editPaths(params json.RawMessage) (*editlog.Log, []string, error) {
	var p pathsParams
	if err := decodeParams(params, &p); err != nil {
		return nil, nil, err
	}
	proj, err := s.project()
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, 0, len(p.Paths))
	for _, c := range p.Paths {
		if c == "" {
			return nil, nil, invalidParams("paths: empty path")
		}
		rel, err := clientRel(proj, "paths", c)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, rel)
	}
	return proj.Edits(), paths, nil
}

// editsKeep: edits/keep { paths? } → { kept }.
func (s *Server) editsKeep(ctx context.Context, params json.RawMessage) (any, error) {
	l, paths, err := s.editPaths(params)
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
	return map[string]any{"kept": kept}, nil
}

// editsRevert: edits/revert { paths? } → { reverted, conflicts }. A file the
// user changed after the agent's edit is a conflict and left untouched.
func (s *Server) editsRevert(ctx context.Context, params json.RawMessage) (any, error) {
	l, paths, err := s.editPaths(params)
	if err != nil {
		return nil, err
	}
	reverted, conflicts, err := l.Revert(paths)
	switch {
	case err != nil && reverted == nil:
		return nil, err
	case err != nil:
		s.log.Warn("edit log: saving after revert", "err", err)
	}
	s.reindex(ctx, reverted)
	return map[string]any{"reverted": reverted, "conflicts": conflicts}, nil
}

type undoParams struct {
	Operation string `json:"operation"`
}

// editsUndo: edits/undo { operation } → { restored, conflicts }; -32602 for
// an unknown operation and for one "too old to undo".
func (s *Server) editsUndo(ctx context.Context, params json.RawMessage) (any, error) {
	var p undoParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Operation == "" {
		return nil, invalidParams("operation is required")
	}
	l, err := s.editLog()
	if err != nil {
		return nil, err
	}
	restored, conflicts, err := l.Undo(p.Operation)
	switch {
	case errors.Is(err, editlog.ErrTooOld):
		return nil, invalidParams("too old to undo: the contents of operation %s were dropped from the edit log", p.Operation)
	case errors.Is(err, editlog.ErrUnknownOperation):
		return nil, invalidParams("unknown operation %q", p.Operation)
	case errors.Is(err, editlog.ErrAlreadyUndone):
		return nil, invalidParams("operation %s was already undone", p.Operation)
	case err != nil && restored == nil:
		return nil, err
	case err != nil:
		s.log.Warn("edit log: saving after undo", "err", err)
	}
	s.reindex(ctx, restored)
	return map[string]any{"restored": restored, "conflicts": conflicts}, nil
}

// reindex tells the workspace index about files the log rewrote.
func (s *Server) reindex(ctx context.Context, paths []string) {
	if len(paths) == 0 {
		return
	}
	changes := make([]tool.FileChange, len(paths))
	for i, p := range paths {
		changes[i] = tool.FileChange{Path: p}
	}
	s.filesChanged(ctx, changes)
}
