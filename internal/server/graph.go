package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// graphProject: graph/project {level?, focus?, depth?, maxNodes?,
// importsOnly?} → {nodes, edges, total, stats}; -32004 without a
// workspace, -32602 for bad params or an unknown focus.
func (s *Server) graphProject(ctx context.Context, params json.RawMessage) (any, error) {
	var p graph.ProjectOptions
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	if p.Focus != "" {
		if p.Focus, err = clientRel(proj, "focus", p.Focus); err != nil {
			return nil, err
		}
	}
	g := proj.Graph()
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
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Path) == "" {
		return nil, invalidParams("path is required")
	}
	rel, err := clientRel(proj, "path", p.Path)
	if err != nil {
		return nil, err
	}
	res, err := proj.Graph().File(rel)
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
	start := time.Now()
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	sum, err := proj.Refresh(ctx)
	if err != nil {
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		return nil, err
	}
	s.graphReady(ctx, proj, start)
	return sum, nil
}

// graphReady builds the graph of ws's current snapshot, announcing it with
// the graph phase, then sends the ready phase with both stats. Every
// elapsedMs counts from since, the request's start, like the open's own
// loading and indexing phases (so they never go back in time).
func (s *Server) graphReady(ctx context.Context, proj *project.Project, since time.Time) {
	snap := proj.Snapshot()
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
		"phase": "graph", "files": snap.Len(), "elapsedMs": time.Since(since).Milliseconds(),
	})
	g := proj.Graph()
	// The retrieval index is built here too, so the first context/retrieve
	// does not pay for it: still phase graph (protocol.md's phases are a
	// closed set), with the additive stage saying which part runs.
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
		"phase": "graph", "stage": "retrieval", "files": snap.Len(), "elapsedMs": time.Since(since).Milliseconds(),
	})
	proj.BuildRetrieval(ctx)
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{
		"phase": "ready", "stats": snap.Summary().Stats, "graph": g.ReadyStats(), // importCycles as a preview
		"elapsedMs": time.Since(since).Milliseconds(),
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
	proj, err := s.project()
	if err != nil {
		s.log.Debug("workspace/filesChanged without a workspace")
		return
	}
	if len(p.Paths) == 0 {
		return
	}
	sum, err := proj.FilesChanged(context.WithoutCancel(ctx), p.Paths)
	if err != nil {
		s.log.Warn("workspace/filesChanged", "err", err)
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		return
	}
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "updated", "stats": sum.Stats})
	proj.RebuildRetrievalSoon() // keep the retrieval index current
}
