package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/server"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// runMCPServer is `task-x-runtime --mcp-server [--root DIR] [--no-tools]`:
// it opens the workspace index of root (default the current folder) and
// serves the runtime's tool registry plus the approve tool as an MCP server
// on stdio (protocol.md, Claude Code engine; addendum §1). Commands run in
// the sandbox; TASK_X_APPROVAL names the parent runtime's approval endpoint.
func runMCPServer(ctx context.Context, root string, noTools bool, log *slog.Logger, secrets *logx.Secrets) int {
	opts := &mcp.ServeOptions{NoTools: noTools, Approval: os.Getenv(mcp.ApprovalEnv), Logger: log, Version: version}
	if !noTools {
		if root == "" {
			wd, err := os.Getwd()
			if err != nil {
				log.Error("--mcp-server: no working folder", "err", err)
				return 2
			}
			root = wd
		}
		abs, err := filepath.Abs(root)
		if err != nil {
			log.Error("--mcp-server: bad --root", "err", err)
			return 2
		}
		home, _ := os.UserHomeDir()
		ws, err := workspace.Open(ctx, abs, &workspace.Options{Home: home, Logger: log})
		if err != nil {
			log.Error("--mcp-server: opening the workspace", "err", err)
			return 2
		}
		opts.Registry = server.NewToolRegistry(secrets, log)
		opts.Env = tool.NewEnv(ws.Root(), liveIndex{ws}, true, "")
		opts.OnChanges = func(ctx context.Context, changes []tool.FileChange) {
			paths := make([]string, len(changes))
			for i, c := range changes {
				paths[i] = c.Path
			}
			if _, err := ws.FilesChanged(ctx, paths); err != nil {
				log.Warn("updating the index after an edit", "err", err)
			}
		}
	}
	if err := mcp.Serve(ctx, os.Stdin, os.Stdout, opts); err != nil && ctx.Err() == nil {
		log.Error("mcp server ended", "err", err)
		return 1
	}
	return 0
}

// liveIndex is the tool.Index over the workspace's current snapshot.
type liveIndex struct{ ws *workspace.Workspace }

func (l liveIndex) Files() []string { return l.ws.Snapshot().Files() }
func (l liveIndex) Excluded(rel string, isDir bool) bool {
	return l.ws.Snapshot().Excluded(rel, isDir)
}
