// Package session owns what a runtime session holds below its front ends
// (the JSON-RPC server, `task-x-runtime --mcp-server`, next ACP): the open
// project and its open sequence (open → graph → retrieval → ready, with
// progress), the tool registry and the MCP servers whose tools join it, the
// hooks configuration, the sandbox flag, the data folder and its task
// store, the per-project worktrees and team runner, the one engine factory
// (agent.Engine assembled in one place), streaming key redaction and
// prompt/refine. A front end decodes its input, calls a Session method and
// encodes what comes back; it reaches its client through the Client port
// (progress, events, approvals, questions). Errors come back as they are;
// Classify turns one into the protocol's code, message and data, redacted.
//
// Models: gopls's cache.Session below its LSP server, the MCP go-sdk's
// ServerSession. docs/layers.md describes the layers.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/provider/all"
	"github.com/task-x/task-x-runtime/internal/store"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/toolcall"
	"github.com/task-x/task-x-runtime/internal/version"
)

// Options configure a Session. A nil *Options is valid.
type Options struct {
	// Version is the runtime's version (MCP clientInfo); default
	// internal/version's.
	Version string
	// Logger receives diagnostics; default discards.
	Logger *slog.Logger
	// Secrets collects every API key the runtime sees so logs, errors and
	// events can redact them; default a fresh set.
	Secrets *logx.Secrets
	// Home is the user's home folder (for ~/.task-x and skills); default
	// $HOME.
	Home string
	// NewProvider builds a provider; default all.New.
	NewProvider func(cfg provider.Config) (provider.Provider, error)
	// Client is the front end's port to its client; nil sends nothing and
	// denies every approval.
	Client Client
	// Sandbox is the initial sandbox setting (initialize may change it);
	// nil is on.
	Sandbox *bool
	// DataDir is the data folder, "" for none (initialize may set it).
	DataDir string
	// Editor is the client editor's view of the files (the Agent Client
	// Protocol front end's fs/read_text_file and fs/write_text_file): the
	// tools of a task read its unsaved buffers and tell it what they
	// wrote; nil reads the disk only.
	Editor Editor
	// ToolMiddleware wraps CallTool's calls in the tool-call pipeline (a
	// front end's hooks or policy); none for the JSON-RPC server's
	// tools/call, where the user asked for the call.
	ToolMiddleware []toolcall.Middleware
}

// Client is a front end's port to its client: notifications it sends
// (workspace/progress, agent/event, ...) and requests it makes
// (agent/requestApproval, agent/askUser). Notify never blocks on a slow
// client for long and never fails the caller.
type Client interface {
	Notify(ctx context.Context, method string, params any)
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

type nopClient struct{}

func (nopClient) Notify(context.Context, string, any) {}
func (nopClient) Call(context.Context, string, any) (json.RawMessage, error) {
	return nil, errors.New("session: no client")
}

// Session is one runtime session below its front end. Safe for concurrent
// use.
type Session struct {
	opts    Options
	log     *slog.Logger
	secrets *logx.Secrets
	client  Client
	windows *provider.WindowCache
	runner  *task.Runner // the task layer: runs, steer, cancelTool, saved tasks
	tools   *tool.Registry
	mcp     mcpState   // mcp.go: configured MCP servers
	hooks   hooksState // hooks.go: config/hooks
	team    teamState  // team.go: worktrees and subagents of the open project

	mu      sync.Mutex
	sandbox bool
	proj    *project.Project // the open project, nil before Open
	direct  *tool.Env        // the env of CallTool, per project
	dataDir string           // "" without one
}

// New returns a Session.
func New(opts *Options) *Session {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Secrets == nil {
		o.Secrets = &logx.Secrets{}
	}
	if o.Version == "" {
		o.Version = version.Version
	}
	if o.NewProvider == nil {
		o.NewProvider = func(cfg provider.Config) (provider.Provider, error) {
			return all.New(cfg, &all.Options{Logger: o.Logger})
		}
	}
	if o.Client == nil {
		o.Client = nopClient{}
	}
	s := &Session{opts: o, log: o.Logger, secrets: o.Secrets, client: o.Client, sandbox: o.Sandbox == nil || *o.Sandbox,
		windows: provider.NewWindowCache(nil), dataDir: o.DataDir}
	s.tools = builtin.Registry(&builtin.Options{Secrets: s.secrets.List(), Logger: s.log})
	s.runner = &task.Runner{Secrets: s.secrets, Tools: s.tools, Home: o.Home, Logger: s.log}
	return s
}

// Secrets is the session's key set.
func (s *Session) Secrets() *logx.Secrets { return s.secrets }

// Init applies initialize's settings: the data folder (absolute; its task
// store opened and tasks a dead runtime left running marked failed) and
// the sandbox (nil: on). It answers the data folder in force (nil for none)
// and the sandbox setting.
func (s *Session) Init(dataDir string, sandbox *bool) (*string, bool, error) {
	var st *store.Store
	if dataDir != "" {
		if !filepath.IsAbs(dataDir) {
			return nil, false, Invalid("dataDir must be an absolute path")
		}
		var err error
		if st, err = store.Open(filepath.Clean(dataDir)); err != nil {
			return nil, false, Invalid("dataDir: %v", err)
		}
		if failed, err := st.FailOrphans(nil); err != nil {
			s.log.Warn("marking orphaned tasks failed", "err", err)
		} else if len(failed) > 0 {
			s.log.Info("orphaned running tasks marked failed", "count", len(failed))
		}
	}
	on := sandbox == nil || *sandbox
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sandbox = on
	if st == nil {
		return nil, on, nil
	}
	s.runner.Store = st
	d := filepath.Clean(dataDir)
	s.dataDir = d
	return &d, on, nil
}

// Providers lists the provider kinds with their capabilities
// (initialize.providers, provider/capabilities).
func Providers() []protocol.ProviderInfo {
	out := make([]protocol.ProviderInfo, 0, len(provider.Kinds))
	for _, k := range provider.Kinds {
		c := all.Capabilities(k)
		out = append(out, protocol.ProviderInfo{Kind: protocol.ProviderKind(k), Capabilities: protocol.ProviderCapabilities{
			Streaming: c.Streaming, Tools: c.Tools, Vision: c.Vision, Thinking: c.Thinking,
			ListModels: c.ListModels, ModelInfo: c.ModelInfo, ContextWindow: c.ContextWindow,
		}, RequiresAPIKey: all.RequiresAPIKey(k)})
	}
	return out
}

// Close stops every MCP server with its process tree and closes the open
// project (its saved index written when it changed). Requests still
// running keep what they hold.
func (s *Session) Close() {
	s.closeMCP()
	s.mu.Lock()
	p := s.proj
	s.mu.Unlock()
	if p != nil {
		closeProject(p, s.log)
	}
}

// sandboxOn is the sandbox setting.
func (s *Session) sandboxOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sandbox
}

// project returns the open project, ErrNoWorkspace without one.
func (s *Session) project() (*project.Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proj == nil {
		return nil, ErrNoWorkspace
	}
	return s.proj, nil
}

// toolEnv is the tool environment of a task (taskID "" for tools/call) in
// proj: the project's env plus this session's asker and live key set.
func (s *Session) toolEnv(proj *project.Project, taskID string) *tool.Env {
	env := proj.Env(s.sandboxOn(), taskID)
	env.Ask = s.askUser
	env.Secrets = s.secrets.List
	env.Editor = s.opts.Editor
	return env
}

// notify sends a notification under a detached context so a cancelled
// request can still report its last events.
func (s *Session) notify(ctx context.Context, method string, params any) {
	s.client.Notify(context.WithoutCancel(ctx), method, params)
}

// ErrNoWorkspace is the error of a method that needs an open workspace
// (the protocol's -32004).
var ErrNoWorkspace = errors.New("no workspace is open: send workspace/open first")

// InvalidError is a request the session refuses (the protocol's -32602).
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Invalid is an *InvalidError.
func Invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// mustJSON marshals a value the runtime built (events, summaries).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// asyncKey is the context key of a front end's Detach function.
type asyncKey struct{}

// WithDetach returns ctx carrying detach, which the session calls once a
// request's params are checked and it starts waiting for long work
// (models, tasks, MCP starts): the JSON-RPC server lets requests after it
// go on (jsonrpc.Async).
func WithDetach(ctx context.Context, detach func()) context.Context {
	return context.WithValue(ctx, asyncKey{}, detach)
}

// detach calls ctx's Detach function, if any.
func detach(ctx context.Context) {
	if f, ok := ctx.Value(asyncKey{}).(func()); ok && f != nil {
		f()
	}
}
