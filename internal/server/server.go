// Package server owns the runtime's JSON-RPC method table: the lifecycle
// state machine (initialize, shutdown, exit), the mapping between wire shapes
// (internal/protocol) and the domain packages (provider, workspace, agent,
// tool, store), and the error codes each method answers with. One file per
// method group.
//
// Source: ../shared/spec/protocol.md (Lifecycle, Methods, Errors) and
// ../shared/spec/addendum.md.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/provider/all"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/version"
)

// Options configure a Server. A nil *Options is valid.
type Options struct {
	// Version is reported in initialize.serverInfo.version.
	Version string
	// Logger receives diagnostics; default discards.
	Logger *slog.Logger
	// Secrets collects every API key the runtime sees so logs and errors
	// can redact them; default a fresh set.
	Secrets *logx.Secrets
	// Home is the user's home folder (for ~/.task-x); default $HOME.
	Home string
	// NewProvider builds a provider; default all.New.
	NewProvider func(cfg provider.Config) (provider.Provider, error)
}

type lifecycle int

const (
	stateUninitialized lifecycle = iota
	stateRunning
	stateShuttingDown
)

func (l lifecycle) String() string {
	switch l {
	case stateUninitialized:
		return "uninitialized"
	case stateRunning:
		return "running"
	case stateShuttingDown:
		return "shuttingDown"
	}
	return fmt.Sprintf("lifecycle(%d)", int(l))
}

type handlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

// Server serves the protocol on one connection.
type Server struct {
	opts    Options
	log     *slog.Logger
	secrets *logx.Secrets
	methods map[string]handlerFunc
	windows *provider.WindowCache
	runner  *task.Runner // the task layer: agent/run, steer, cancelTool, saved tasks
	mcp     mcpState     // mcp.go: configured MCP servers

	conn *jsonrpc.Conn

	mu      sync.Mutex
	state   lifecycle
	sandbox bool
	proj    *project.Project // the open project (workspace.go), nil before workspace/open
	direct  *tool.Env        // the env of tools/call, per project
	dataDir string           // initialize dataDir, "" without one
	tools   *tool.Registry

	hookConf hooksState // hooks.go: config/hooks
	team     teamState  // team.go: worktrees and subagents of the open project
}

// New returns a Server.
func New(opts *Options) *Server {
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
	s := &Server{opts: o, log: o.Logger, secrets: o.Secrets, sandbox: true, windows: provider.NewWindowCache(nil)}
	s.tools = builtin.Registry(&builtin.Options{Secrets: s.secrets.List(), Logger: s.log})
	s.runner = &task.Runner{Secrets: s.secrets, Tools: s.tools, Home: o.Home, Logger: s.log}
	s.methods = map[string]handlerFunc{
		protocol.MethodInitialize:          s.initialize,
		protocol.MethodShutdown:            s.shutdown,
		protocol.MethodProviderCaps:        s.providerCapabilities,
		protocol.MethodListModels:          s.listModels,
		protocol.MethodModels:              s.models,
		protocol.MethodContextWindow:       s.contextWindow,
		protocol.MethodProviderTest:        s.providerTest,
		protocol.MethodChatSend:            s.chatSend,
		protocol.MethodWorkspaceOpen:       s.workspaceOpen,
		protocol.MethodContextInspect:      s.contextInspect,
		protocol.MethodContextRetrieve:     s.contextRetrieve,
		protocol.MethodAgentRun:            s.agentRun,
		protocol.MethodClaudeRun:           s.claudeRun,
		protocol.MethodAgentSteer:          s.agentSteer,
		protocol.MethodAgentCancelTool:     s.agentCancelTool,
		protocol.MethodAgentCancelSubagent: s.agentCancelSubagent, // teammode.go
		protocol.MethodAgentTasks:          s.agentTasks,
		protocol.MethodAgentTask:           s.agentTask,
		protocol.MethodAgentDeleteTask:     s.agentDeleteTask,
		protocol.MethodAgentReplay:         s.agentReplay,
		protocol.MethodToolsList:           s.toolsList,
		protocol.MethodToolsCall:           s.toolsCall,
		protocol.MethodEditsList:           s.editsList,
		protocol.MethodEditsPending:        s.editsPending,
		protocol.MethodEditsKeep:           s.editsKeep,
		protocol.MethodEditsRevert:         s.editsRevert,
		protocol.MethodEditsUndo:           s.editsUndo,
		protocol.MethodGraphProject:        s.graphProject,
		protocol.MethodGraphFile:           s.graphFile,
		protocol.MethodWorkspaceRefresh:    s.workspaceRefresh,
		protocol.MethodMCPConfigure:        s.mcpConfigure,
		protocol.MethodMCPStatus:           s.mcpStatus,
		protocol.MethodConfigHooks:         s.configHooks,      // hooks.go
		protocol.MethodSkillsList:          s.skillsList,       // skills.go
		protocol.MethodSkillsResolve:       s.skillsResolve,    // skills.go
		protocol.MethodPromptRefine:        s.promptRefine,     // refine.go
		protocol.MethodAgentBestOf:         s.agentBestOf,      // team.go
		protocol.MethodWorktreesApply:      s.worktreesApply,   // team.go
		protocol.MethodWorktreesDiscard:    s.worktreesDiscard, // team.go
		protocol.MethodWorktreesList:       s.worktreesList,    // team.go
	}
	return s
}

// Serve runs the protocol on in/out until exit, stdin closing, a fatal
// framing error (a line over 32 MiB) or ctx ending. It returns nil after a
// clean exit.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.conn = jsonrpc.NewConn(in, out, jsonrpc.HandlerFunc(s.handle), &jsonrpc.ConnOptions{
		Logger:  s.log,
		Preempt: map[string]bool{protocol.MethodAgentSteer: true, protocol.MethodAgentCancelTool: true, protocol.MethodAgentCancelSubagent: true},
		OnInternalError: func(err error) {
			s.log.Error("internal error", "err", err)
		},
	})
	err := s.conn.Run(ctx)
	s.closeMCP()
	s.closeProject()
	s.mu.Lock()
	s.state = stateShuttingDown
	s.mu.Unlock()
	return err
}

// closeProject closes the open project (its saved index is written when
// it changed); it stays open for requests still running.
func (s *Server) closeProject() {
	s.mu.Lock()
	p := s.proj
	s.mu.Unlock()
	if p != nil {
		closeProject(p, s.log)
	}
}

func (s *Server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if !req.IsCall {
		s.notification(ctx, req)
		return nil, nil
	}
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	switch {
	case req.Method == protocol.MethodInitialize && st != stateUninitialized:
		return nil, jsonrpc.NewError(jsonrpc.ErrInvalidRequest.Code, "initialize was already received")
	case req.Method != protocol.MethodInitialize && st == stateUninitialized:
		return nil, jsonrpc.NewError(jsonrpc.ErrNotInitialized.Code, "the runtime is not initialized: send initialize first")
	case st == stateShuttingDown && req.Method != protocol.MethodShutdown:
		return nil, jsonrpc.NewError(jsonrpc.ErrInvalidRequest.Code, "the runtime is shutting down")
	}
	h, ok := s.methods[req.Method]
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.ErrMethodNotFound.Code, fmt.Sprintf("unknown method %q", req.Method))
	}
	res, err := h(ctx, req.Params)
	if err != nil {
		return nil, s.wireError(err)
	}
	return res, nil
}

func (s *Server) notification(ctx context.Context, req *jsonrpc.Request) {
	switch req.Method {
	case protocol.MethodExit:
		s.conn.Close()
	case protocol.MethodFilesChanged:
		s.workspaceFilesChanged(ctx, req.Params)
	default:
		s.log.Debug("notification ignored", "method", req.Method)
	}
}

// wireError turns a handler error into a *jsonrpc.Error with the protocol's
// code, redacting every secret from its message and data.
func (s *Server) wireError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		cp := *je
		cp.Message = s.secrets.Redact(cp.Message)
		return &cp
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return s.providerError(pe)
	}
	var ie *task.InvalidError
	if errors.As(err, &ie) {
		return invalidParams("%s", s.secrets.Redact(ie.Msg))
	}
	var te *tool.Error
	if errors.As(err, &te) {
		return jsonrpc.NewError(jsonrpc.ErrTool.Code, s.secrets.Redact(te.Message)).
			WithData(protocol.ToolErrorData{Kind: te.Kind, Message: s.secrets.Redact(te.Message)})
	}
	if errors.Is(err, context.Canceled) {
		return jsonrpc.NewError(jsonrpc.ErrRequestCancelled.Code, "request cancelled").WithData(map[string]string{"kind": "cancelled"})
	}
	return jsonrpc.NewError(jsonrpc.ErrInternal.Code, s.secrets.Redact(err.Error()))
}

// providerError maps a *provider.Error: local validation (invalidConfig,
// invalidRequest with a Field) is -32602 with {kind, message, field}
// (addendum §10); anything the provider said is -32001 with a ProviderError.
func (s *Server) providerError(pe *provider.Error) error {
	msg := s.secrets.Redact(pe.Message)
	if (pe.Kind == provider.KindInvalidConfig || pe.Kind == provider.KindInvalidRequest) && pe.Field != "" {
		return jsonrpc.NewError(jsonrpc.ErrInvalidParams.Code, msg).
			WithData(map[string]string{"kind": string(pe.Kind), "message": msg, "field": pe.Field})
	}
	if pe.Kind == provider.KindCancelled {
		return jsonrpc.NewError(jsonrpc.ErrRequestCancelled.Code, "request cancelled").WithData(map[string]string{"kind": "cancelled"})
	}
	return jsonrpc.NewError(jsonrpc.ErrProvider.Code, msg).WithData(providerErrorData(pe, s.secrets))
}

func providerErrorData(pe *provider.Error, secrets *logx.Secrets) protocol.ProviderError {
	d := protocol.ProviderError{Kind: protocol.ProviderErrorKind(pe.Kind), Message: secrets.Redact(pe.Message), Retryable: pe.Retryable()}
	if pe.Status != 0 {
		st := pe.Status
		d.Status = &st
	}
	if pe.RetryAfter > 0 {
		ms := pe.RetryAfter.Milliseconds()
		d.RetryAfterMs = &ms
	}
	return d
}

// invalidParams is a -32602 error.
func invalidParams(format string, args ...any) error {
	return jsonrpc.NewError(jsonrpc.ErrInvalidParams.Code, fmt.Sprintf(format, args...))
}

// decodeParams unmarshals params into v; bad JSON types are -32602.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

// notify sends a notification under a detached context so a cancelled
// request can still report its last events.
func (s *Server) notify(ctx context.Context, method string, params any) {
	if err := s.conn.Notify(context.WithoutCancel(ctx), method, params); err != nil {
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			s.log.Error("notification over the message cap not sent", "method", method, "err", err)
			return
		}
		s.log.Debug("notification not sent", "method", method, "err", err)
	}
}
