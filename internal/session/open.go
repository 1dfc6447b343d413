package session

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// Open opens root (absolute) as the session's project, replacing any open
// one: the scan with workspace/progress (loading, indexing), then the
// graph and the retrieval index (graph, retrieval), then ready; every
// elapsedMs counts from the call. A bad root or exclude glob is invalid
// params.
func (s *Session) Open(ctx context.Context, root string, exclude []string) (protocol.WorkspaceSummary, error) {
	start := time.Now()
	if root == "" {
		return protocol.WorkspaceSummary{}, Invalid("root is required")
	}
	if !filepath.IsAbs(root) {
		return protocol.WorkspaceSummary{}, Invalid("root must be an absolute path, got %q", root)
	}
	// A bad exclude glob is the client's params, not an internal error:
	// check it here with the same rule workspace.Open applies (`**`).
	for _, g := range exclude {
		if g == "" || !doublestar.ValidatePattern(g) {
			return protocol.WorkspaceSummary{}, Invalid("exclude: invalid glob %q", g)
		}
	}
	s.mu.Lock()
	dataDir := s.dataDir
	s.mu.Unlock()
	proj, err := project.Open(ctx, filepath.Clean(root), &project.Options{
		DataDir:        dataDir,
		Exclude:        exclude,
		BuildRetrieval: true, // graphReady builds it before the reply (the first save waits for it)
		Home:           s.opts.Home,
		Logger:         s.log,
		Redact:         s.secrets.Redact,
		Progress: func(pr workspace.Progress) {
			msg := map[string]any{"phase": pr.Phase, "files": pr.Files, "parsed": pr.Parsed, "elapsedMs": pr.ElapsedMs}
			if pr.Stage != "" {
				msg["stage"] = pr.Stage
			}
			if pr.Total > 0 {
				msg["total"] = pr.Total
			}
			s.notify(ctx, protocol.MethodWorkspaceProg, msg)
		},
	})
	if err != nil {
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		if errors.Is(err, workspace.ErrInvalidRoot) {
			return protocol.WorkspaceSummary{}, Invalid("%v", err)
		}
		return protocol.WorkspaceSummary{}, err
	}
	sum := proj.Summary()
	direct := s.toolEnv(proj, "")
	s.mu.Lock()
	prev := s.proj
	s.proj = proj
	s.direct = direct
	s.mu.Unlock()
	s.team.mu.Lock()
	s.team.exclude = exclude
	s.team.mu.Unlock()
	if prev != nil {
		go closeProject(prev, s.log) // saves what changed since its last save
	}
	s.graphReady(ctx, proj, start)
	return sum, nil
}

// Project is the open project, ErrNoWorkspace without one.
func (s *Session) Project() (*project.Project, error) { return s.project() }

// Summary is the open workspace's summary (context/inspect).
func (s *Session) Summary() (protocol.WorkspaceSummary, error) {
	proj, err := s.project()
	if err != nil {
		return protocol.WorkspaceSummary{}, err
	}
	return proj.Summary(), nil
}

// Refresh scans the open workspace again (unchanged files are not parsed
// again), builds the graph and answers the summary, with the progress of
// Open (indexing from the scan, graph, retrieval, ready).
func (s *Session) Refresh(ctx context.Context) (protocol.WorkspaceSummary, error) {
	start := time.Now()
	proj, err := s.project()
	if err != nil {
		return protocol.WorkspaceSummary{}, err
	}
	sum, err := proj.Refresh(ctx)
	if err != nil {
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		return protocol.WorkspaceSummary{}, err
	}
	s.graphReady(ctx, proj, start)
	return sum, nil
}

// graphReady builds the graph of proj's current snapshot, announcing it
// with the graph phase, then the retrieval index, then sends the ready
// phase with both stats. Every elapsedMs counts from since, the request's
// start, like the open's own loading and indexing phases.
func (s *Session) graphReady(ctx context.Context, proj *project.Project, since time.Time) {
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

// FilesChanged updates only paths in the open workspace (deleted ones
// leave the index), then sends the updated phase; the graph is rebuilt on
// its next use. Without a workspace it only logs (a notification has no
// reply).
func (s *Session) FilesChanged(ctx context.Context, paths []string) {
	proj, err := s.project()
	if err != nil {
		s.log.Debug("workspace/filesChanged without a workspace")
		return
	}
	if len(paths) == 0 {
		return
	}
	sum, err := proj.FilesChanged(context.WithoutCancel(ctx), paths)
	if err != nil {
		s.log.Warn("workspace/filesChanged", "err", err)
		s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "failed", "error": err.Error()})
		return
	}
	s.notify(ctx, protocol.MethodWorkspaceProg, map[string]any{"phase": "updated", "stats": sum.Stats})
	proj.RebuildRetrievalSoon() // keep the retrieval index current
}

// changed tells the open project's index about files a call or the edit
// log rewrote.
func (s *Session) changed(ctx context.Context, paths []string) {
	if len(paths) == 0 {
		return
	}
	if proj, err := s.project(); err == nil {
		proj.Changed(ctx, paths)
	}
}

// clientRel turns a client path into a root-relative one with
// project.Rel; invalid params naming field for a path outside the root.
func clientRel(proj *project.Project, field, p string) (string, error) {
	rel, err := proj.Rel(p)
	if err != nil {
		return "", Invalid("%s: %q is outside the workspace root", field, p)
	}
	return rel, nil
}

// closeProject closes a project the session no longer serves (its saved
// index written when it changed), logging a failure.
func closeProject(p *project.Project, log interface{ Warn(string, ...any) }) {
	if err := p.Close(); err != nil {
		log.Warn("saving the index", "err", err)
	}
}
