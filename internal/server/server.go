// Package server owns the runtime's JSON-RPC front end: the lifecycle
// state machine (initialize, shutdown, exit), the method table (each
// method's params and result types, decoded, checked and encoded in one
// place, methods.go) and the mapping of errors to the protocol's codes.
// Everything a method does is the session's (internal/session): the
// server decodes, calls and encodes. internal/archtest keeps it importing
// only the protocol types, the JSON-RPC layer and the session (plus
// logging and version).
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
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/session"
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
	// Session are further session options (NewProvider, ...); Logger,
	// Secrets, Home, Version and Client are the server's.
	Session *session.Options
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

// Server serves the protocol on one connection.
type Server struct {
	opts    Options
	log     *slog.Logger
	secrets *logx.Secrets
	sess    *session.Session
	methods map[string]methodInfo

	conn *jsonrpc.Conn

	mu    sync.Mutex
	state lifecycle
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
	s := &Server{opts: o, log: o.Logger, secrets: o.Secrets}
	var so session.Options
	if o.Session != nil {
		so = *o.Session
	}
	so.Version, so.Logger, so.Secrets, so.Home, so.Client = o.Version, o.Logger, o.Secrets, o.Home, client{s}
	s.sess = session.New(&so)
	s.methods = s.table()
	return s
}

// client is the session's port to this connection's client.
type client struct{ s *Server }

// Notify sends a notification; one over the message cap is logged, not
// sent.
func (c client) Notify(ctx context.Context, method string, params any) {
	if err := c.s.conn.Notify(ctx, method, params); err != nil {
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			c.s.log.Error("notification over the message cap not sent", "method", method, "err", err)
			return
		}
		c.s.log.Debug("notification not sent", "method", method, "err", err)
	}
}

// Call sends a request to the client and waits for its result.
func (c client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.s.conn.Call(ctx, method, params)
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
	s.sess.Close()
	s.mu.Lock()
	s.state = stateShuttingDown
	s.mu.Unlock()
	return err
}

func (s *Server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	base := ctx
	ctx = session.WithDetach(ctx, func() { jsonrpc.Async(base) })
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
	m, ok := s.methods[req.Method]
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.ErrMethodNotFound.Code, fmt.Sprintf("unknown method %q", req.Method))
	}
	res, err := m.call(ctx, req.Params)
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
		var p protocol.FilesChangedParams
		if err := decodeParams(req.Params, &p); err != nil {
			s.log.Debug("workspace/filesChanged: bad params", "err", err)
			return
		}
		s.sess.FilesChanged(ctx, p.Paths)
	default:
		s.log.Debug("notification ignored", "method", req.Method)
	}
}

// kindCodes are the protocol's codes of the session's failures.
var kindCodes = map[session.Kind]int64{
	session.KindInternal:      jsonrpc.ErrInternal.Code,
	session.KindInvalidParams: jsonrpc.ErrInvalidParams.Code,
	session.KindNoWorkspace:   jsonrpc.ErrNoWorkspace.Code,
	session.KindProvider:      jsonrpc.ErrProvider.Code,
	session.KindTool:          jsonrpc.ErrTool.Code,
	session.KindCancelled:     jsonrpc.ErrRequestCancelled.Code,
}

// wireError turns a method's error into a *jsonrpc.Error with the
// protocol's code (session.Classify), every secret redacted from its
// message and data.
func (s *Server) wireError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		cp := *je
		cp.Message = s.secrets.Redact(cp.Message)
		return &cp
	}
	f := s.sess.Classify(err)
	e := jsonrpc.NewError(kindCodes[f.Kind], f.Message)
	if f.Data != nil {
		e = e.WithData(f.Data)
	}
	return e
}

// invalidParams is a -32602 error.
func invalidParams(format string, args ...any) error {
	return jsonrpc.NewError(jsonrpc.ErrInvalidParams.Code, fmt.Sprintf(format, args...))
}
