package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/policy"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/session"
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
//
// The tool calls go through the tool-call pipeline with the hooks of
// --hooks FILE (Claude Code's hooks settings; the workspace's
// .task-x/hooks.json too with --workspace-trusted) and, with --policy
// JSON (agent/run's policy), its gate: a deny rule or a refused class
// fails the call, one it would ask about is refused (the MCP client asks
// its own user). Without --policy the client decides, as before.
func runMCPServer(ctx context.Context, root, dataDir, taskID string, noTools, forward bool, mo mcpOptions, log *slog.Logger, secrets *logx.Secrets) int {
	opts := &mcp.ServeOptions{NoTools: noTools, Approval: os.Getenv(mcp.ApprovalEnv), Logger: log, Version: version}
	var sess *session.Session
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
		// The session's open sequence, as workspace/open's: parsed
		// symbols, graph, retrieval and an edit log, so every tool works
		// as it does through the protocol.
		sess = session.New(&session.Options{Home: home, Logger: log, Secrets: secrets, DataDir: dataDir, Version: version})
		if _, err := sess.Open(ctx, abs, nil); err != nil {
			log.Error("--mcp-server: opening the workspace", "err", err)
			return 2
		}
		pol, err := mo.configure(sess)
		if err != nil {
			log.Error("--mcp-server: " + err.Error())
			return 2
		}
		served, err := sess.ServedTools(taskID, pol, nil)
		if err != nil {
			log.Error("--mcp-server: opening the workspace", "err", err)
			return 2
		}
		opts.Registry, opts.Env, opts.OnChanges, opts.Middleware = served.Tools, served.Env, served.OnChanges, served.Middleware
	}
	err := mcp.Serve(ctx, os.Stdin, os.Stdout, opts)
	if sess != nil {
		sess.Close() // writes the saved index when it changed
	}
	if err != nil && ctx.Err() == nil {
		log.Error("mcp server ended", "err", err)
		return 1
	}
	return 0
}

// mcpOptions are --mcp-server's --policy, --hooks and
// --workspace-trusted.
type mcpOptions struct {
	policy, hooksFile string
	trusted           bool
}

// configure gives the session the hooks of --hooks (and trust for the
// workspace's) and returns the --policy (nil without one). A malformed
// flag is an error naming it.
func (mo mcpOptions) configure(sess *session.Session) (*policy.Policy, error) {
	var conf json.RawMessage
	if mo.hooksFile != "" {
		b, err := fsx.ReadRegular(mo.hooksFile, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("--hooks: %w", err)
		}
		conf = b
	}
	if conf != nil || mo.trusted {
		if _, err := sess.ConfigureHooks(conf, mo.trusted); err != nil {
			return nil, fmt.Errorf("--hooks %s: %w", mo.hooksFile, err)
		}
	}
	if mo.policy == "" {
		return nil, nil
	}
	pol, err := policy.Parse(json.RawMessage(mo.policy))
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	return &pol, nil
}
