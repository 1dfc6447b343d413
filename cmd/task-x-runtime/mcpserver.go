package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
)

// runMCPServer is `task-x-runtime --mcp-server [--root DIR] [--data-dir D]
// [--task-id T] [--no-tools] [--forward]`:
// it opens the workspace index of root (default the current folder) and
// serves the runtime's tool registry plus the approve tool as an MCP server
// on stdio (protocol.md, Claude Code engine; addendum §1). With --data-dir
// the edit log is the one the protocol runtime keeps for that root, so
// edits made through MCP are undoable with edits/undo; with --task-id they
// are recorded under that task (claude/run: the task's operations and
// changed files come from the log), each with the call id Claude Code
// sends in _meta. With --forward (claude/run) it opens nothing: every
// tool call goes to the parent runtime over the TASK_X_APPROVAL connection
// and runs there in the task's own environment. Commands run in
// the sandbox; TASK_X_APPROVAL names the parent runtime's approval endpoint.
func runMCPServer(ctx context.Context, root, dataDir, taskID string, noTools, forward bool, log *slog.Logger, secrets *logx.Secrets) int {
	opts := &mcp.ServeOptions{NoTools: noTools, Approval: os.Getenv(mcp.ApprovalEnv), Logger: log, Version: version}
	var proj *project.Project
	switch {
	case forward && !noTools:
		// The registry only names the tools; the parent runs them.
		opts.Registry = builtin.Registry(&builtin.Options{Logger: log})
		opts.Forward = true
	case !noTools:
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
		// The same project layer as workspace/open: parsed symbols, graph,
		// retrieval and an edit log, so every tool works as it does
		// through the protocol.
		proj, err = project.Open(ctx, abs, &project.Options{Home: home, Logger: log, DataDir: dataDir, Redact: secrets.Redact})
		if err != nil {
			log.Error("--mcp-server: opening the workspace", "err", err)
			return 2
		}
		opts.Registry = builtin.Registry(&builtin.Options{Secrets: secrets.List(), Logger: log})
		opts.Env = proj.Env(true, taskID)
		opts.Env.Secrets = secrets.List
		opts.OnChanges = func(ctx context.Context, changes []tool.FileChange) {
			paths := make([]string, len(changes))
			for i, c := range changes {
				paths[i] = c.Path
			}
			proj.Changed(ctx, paths)
		}
	}
	err := mcp.Serve(ctx, os.Stdin, os.Stdout, opts)
	if proj != nil {
		if cerr := proj.Close(); cerr != nil {
			log.Warn("--mcp-server: saving the index", "err", cerr)
		}
	}
	if err != nil && ctx.Err() == nil {
		log.Error("mcp server ended", "err", err)
		return 1
	}
	return 0
}
