package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// graphState is the project graph cache of the server: the graph of the
// latest snapshot, rebuilt on its first use after the workspace changed.
type graphState struct {
	cache graph.Cache
}

// currentGraph returns the graph of the open workspace's current snapshot,
// -32004 without a workspace.
func (s *Server) currentGraph() (*graph.Graph, *workspace.Workspace, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, nil, err
	}
	return s.graph.cache.Get(ws.Snapshot()), ws, nil
}

// graphTool is the get_dependencies tool over the open workspace's graph.
func (s *Server) graphTool() tool.Tool {
	return builtin.NewGetDependencies(func(ctx context.Context) (*graph.Graph, error) {
		g, _, err := s.currentGraph()
		if err != nil {
			return nil, tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
		}
		return g, nil
	})
}

// relPath turns a client path (absolute inside the root, or relative) into
// a root-relative "/" path; ok is false for an absolute path outside it.
func relPath(ws *workspace.Workspace, p string) (string, bool) {
	rel, err := fsx.ClientRel(ws.Root(), p) // the containment of every client path
	return rel, err == nil
}

// graphProject: graph/project {level?, focus?, depth?, maxNodes?,
// importsOnly?} → {nodes, edges, total, stats}; -32004 without a
// workspace, -32602 for bad params or an unknown focus.
func (s *Server) graphProject(ctx context.Context, params json.RawMessage) (any, error) {
	var p graph.ProjectOptions
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	g, ws, err := s.currentGraph()
	if err != nil {
		return nil, err
	}
	if p.Focus != "" {
		rel, ok := relPath(ws, p.Focus)
		if !ok {
			return nil, invalidParams("focus %q is outside the workspace root", p.Focus)
		}
		p.Focus = rel
	}
	res, err := g.Project(p)
	if errors.Is(err, graph.ErrInvalid) {
		return nil, invalidParams("%v", err)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

type graphFileParams struct {
	Path string `json:"path"`
}

// graphFile: graph/file {path} → {path, dependsOn, usedBy, importCycle};
// -32602 when the path is missing or not an indexed file.
func (s *Server) graphFile(ctx context.Context, params json.RawMessage) (any, error) {
	var p graphFileParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	g, ws, err := s.currentGraph()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Path) == "" {
		return nil, invalidParams("path is required")
	}
	rel, ok := relPath(ws, p.Path)
	if !ok {
		return nil, invalidParams("path %q is outside the workspace root", p.Path)
	}
	res, err := g.File(rel)
	if errors.Is(err, graph.ErrNotIndexed) {
		return nil, invalidParams("%s is not an indexed file", rel)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// workspaceRefresh: workspace/refresh scans again (unchanged files are not
// parsed again), builds the graph and answers the workspace summary. It
// emits workspace/progress indexing (from the scan), graph and ready.
func (s *Server) workspaceRefresh(ctx context.Context, params json.RawMessage) (any, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	sum, err := ws.Refresh(ctx)
	if err != nil {
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		return nil, err
	}
	s.graphReady(ctx, ws, sum.Stats.ElapsedMs)
	return sum, nil
}

// graphReady builds the graph of ws's current snapshot, announcing it with
// the graph phase, then sends the ready phase with both stats. scanMs is
// the scan's elapsed time; elapsedMs adds the graph build to it.
func (s *Server) graphReady(ctx context.Context, ws *workspace.Workspace, scanMs int64) {
	start := time.Now()
	snap := ws.Snapshot()
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
		"phase": "graph", "files": snap.Len(), "elapsedMs": scanMs,
	})
	g := s.graph.cache.Get(snap)
	// The retrieval index is built here too, so the first context/retrieve
	// does not pay for it (retrieve.go). A failed build (ctx ended) leaves
	// it to the first query.
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
		"phase": "retrieval", "files": snap.Len(), "elapsedMs": scanMs + time.Since(start).Milliseconds(),
	})
	_, _, _ = s.retrievalIndex(ctx)
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
		"phase": "ready", "stats": snap.Summary().Stats, "graph": g.Stats(),
		"elapsedMs": scanMs + time.Since(start).Milliseconds(),
	})
}

type filesChangedParams struct {
	Paths []string `json:"paths"`
}

// workspaceFilesChanged handles the workspace/filesChanged notification:
// only those paths are updated (deleted ones leave the index), then the
// updated phase goes out; the graph is rebuilt on its next use. Without a
// workspace or with bad params it only logs (a notification has no reply).
func (s *Server) workspaceFilesChanged(ctx context.Context, params json.RawMessage) {
	var p filesChangedParams
	if err := decodeParams(params, &p); err != nil {
		s.log.Debug("workspace/filesChanged: bad params", "err", err)
		return
	}
	ws, err := s.workspace()
	if err != nil {
		s.log.Debug("workspace/filesChanged without a workspace")
		return
	}
	if len(p.Paths) == 0 {
		return
	}
	sum, err := ws.FilesChanged(context.WithoutCancel(ctx), p.Paths)
	if err != nil {
		s.log.Warn("workspace/filesChanged", "err", err)
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		return
	}
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "updated", "stats": sum.Stats})
	// Keep the retrieval index current: rebuild it in the background now
	// rather than at the next query (which waits for a build under way).
	// Bursts of changes share one pending rebuild.
	if s.retrieval.rebuilding.CompareAndSwap(false, true) {
		go func() {
			defer s.retrieval.rebuilding.Store(false)
			_, _, _ = s.retrievalIndex(context.WithoutCancel(ctx))
		}()
	}
}
