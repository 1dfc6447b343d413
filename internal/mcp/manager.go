package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/version"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Defaults of Options.
const (
	DefaultStartWait        = 5 * time.Second
	DefaultHandshakeTimeout = 15 * time.Second
	DefaultCallTimeout      = 10 * time.Minute
	DefaultStopGrace        = 2 * time.Second
	// handshakeRetryFactor multiplies the handshake timeout for the one
	// retry after a handshake timed out.
	handshakeRetryFactor = 3
	// maxToolsPerServer bounds what one server may add to the registry.
	maxToolsPerServer = 500
)

// Server states reported in ServerStatus.State.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateStopped  = "stopped" // exited after running; restarts on next use
	StateFailed   = "failed"  // could not start, or bad config
	StateDisabled = "disabled"
)

// Tool failure kinds (tools/call -32005 data.kind) of MCP tools, on top of
// tool.ErrTimeout and tool.ErrUnknownTool.
const (
	// ErrServerError: the server answered the call with isError.
	ErrServerError = "mcpError"
	// ErrUnavailable: the server is not running (failed to start, exited
	// during the call, disabled or no longer configured).
	ErrUnavailable = "mcpUnavailable"
)

// Options configure a Manager. A nil *Options is valid.
type Options struct {
	// Logger receives diagnostics (server names, states, skipped stdout
	// lines; never tool arguments or results). Default: discard.
	Logger *slog.Logger
	// Secrets returns the keys the runtime holds: a variable of the
	// runtime's environment whose value is one is not passed to a stdio
	// server (nor are the provider key variables). Optional.
	Secrets func() []string
	// Root returns the open workspace root ("" when none): the default cwd
	// of stdio servers and the folder of .mcp.json and .vscode/mcp.json.
	Root func() string
	// OnToolsChanged is called (from any goroutine, without locks held)
	// after the set of tools from Tools may have changed.
	OnToolsChanged func()
	// StartWait bounds how long Configure waits for servers to start;
	// slower ones stay "starting" and join when ready. Default
	// DefaultStartWait.
	StartWait time.Duration
	// HandshakeTimeout bounds the first start (process start, initialize,
	// tools/list) when a server has no timeoutMs; the one retry after a
	// timeout waits 3 times as long. Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// CallTimeout bounds a tool call when a server has no timeoutMs.
	// Default DefaultCallTimeout.
	CallTimeout time.Duration
	// StopGrace is the wait between SIGTERM and SIGKILL. Default
	// DefaultStopGrace.
	StopGrace time.Duration
	// HTTPClient is used for http and sse servers. Default: a client with
	// no overall timeout (streams are long-lived).
	HTTPClient *http.Client
	// Version is sent as clientInfo.version. Default internal/version's.
	Version string
}

// Manager owns the MCP servers the user configured: their processes or
// connections, sessions, tool lists and state. It is safe for concurrent
// use. Close stops everything.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	servers map[string]*server
	closed  bool
	wg      sync.WaitGroup
}

type server struct {
	name      string
	cfg       ServerConfig
	workspace bool // from .mcp.json or .vscode/mcp.json

	ctx    context.Context // ends when the server is removed
	cancel context.CancelFunc

	// Guarded by Manager.mu.
	state    string
	err      string
	tools    []*sdk.Tool
	session  *sdk.ClientSession
	proc     *process
	starting chan struct{} // non-nil while a start runs; closed when it ends
}

// NewManager returns a Manager with no servers.
func NewManager(opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Root == nil {
		o.Root = func() string { return "" }
	}
	if o.StartWait <= 0 {
		o.StartWait = DefaultStartWait
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Version == "" {
		o.Version = version.Version
	}
	return &Manager{opts: o, log: o.Logger, servers: map[string]*server{}}
}

// ServerStatus is one entry of mcp/status: { name, command, disabled,
// running, tools, error } (protocol.md; addendum §11), plus the additive
// type, state (one of the State constants) and workspace (the server came
// from a workspace file).
type ServerStatus = protocol.MCPServerStatus

// Status is the result of mcp/configure and mcp/status: servers sorted by
// name.
type Status = protocol.MCPStatus

// Configure replaces the configuration. servers are the client's; when
// workspaceTrusted, the workspace's .mcp.json and .vscode/mcp.json servers
// join them (the client's win on a name clash). Servers that were removed
// or whose config changed are stopped with their process trees; new ones
// start concurrently, and so does a failed one configured again. Configure
// waits at most StartWait (or until ctx ends) for the starts, then returns
// the status: a slower server is "starting" and joins when ready.
func (m *Manager) Configure(ctx context.Context, servers map[string]ServerConfig, workspaceTrusted bool) Status {
	return m.Apply(servers, workspaceTrusted)(ctx)
}

// Apply is Configure in two steps: it applies the configuration at once
// (stops, starts) and returns the bounded wait for the starts, so a caller
// can release its request queue in between.
func (m *Manager) Apply(servers map[string]ServerConfig, workspaceTrusted bool) (wait func(ctx context.Context) Status) {
	merged := map[string]*server{}
	if workspaceTrusted {
		if root := m.opts.Root(); root != "" {
			ws, err := WorkspaceServers(root)
			if err != nil {
				m.log.Warn("reading workspace MCP servers", "err", err)
			}
			for name, c := range ws {
				merged[name] = &server{name: name, cfg: c, workspace: true}
			}
		}
	}
	for name, c := range servers {
		merged[name] = &server{name: name, cfg: c}
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return func(context.Context) Status { return m.Status() }
	}
	var stop []*server
	for name, s := range m.servers {
		n, ok := merged[name]
		if ok && n.cfg.equal(s.cfg) && n.workspace == s.workspace {
			continue
		}
		stop = append(stop, s)
		delete(m.servers, name)
	}
	var waits []chan struct{}
	for name, n := range merged {
		if s, ok := m.servers[name]; ok {
			if s.state == StateFailed && s.cfg.Validate() == nil {
				waits = append(waits, m.startLocked(s))
			}
			continue
		}
		n.ctx, n.cancel = context.WithCancel(context.Background())
		m.servers[name] = n
		switch err := n.cfg.Validate(); {
		case n.cfg.Disabled:
			n.state = StateDisabled
		case err != nil:
			n.state, n.err = StateFailed, err.Error()
		default:
			waits = append(waits, m.startLocked(n))
		}
	}
	m.mu.Unlock()

	for _, s := range stop {
		m.stopAsync(s)
	}
	if len(stop) > 0 {
		m.changed()
	}
	return func(ctx context.Context) Status {
		timer := time.NewTimer(m.opts.StartWait)
		defer timer.Stop()
	wait:
		for _, ch := range waits {
			select {
			case <-ch:
			case <-timer.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		return m.Status()
	}
}

// WaitStarting waits until no server is starting, for at most max or until
// ctx ends, and returns the names of those still starting then (sorted). A
// task calls it before it offers tools, so a server configured just before
// the task gets its tools into the task instead of silently missing them.
func (m *Manager) WaitStarting(ctx context.Context, max time.Duration) []string {
	timer := time.NewTimer(max)
	defer timer.Stop()
	for {
		m.mu.Lock()
		var ch chan struct{}
		var names []string
		for _, name := range sortedNames(m.servers) {
			if s := m.servers[name]; s.starting != nil {
				if ch == nil {
					ch = s.starting
				}
				names = append(names, name)
			}
		}
		m.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return names
		case <-ctx.Done():
			return names
		}
	}
}

// Status reports every configured server, sorted by name.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Status{Servers: make([]ServerStatus, 0, len(m.servers))}
	for _, name := range sortedNames(m.servers) {
		s := m.servers[name]
		st := ServerStatus{
			Name: name, Command: s.cfg.display(), Disabled: s.cfg.Disabled,
			Running: s.state == StateRunning, Tools: []string{},
			Type: s.cfg.kind(), State: s.state, Workspace: s.workspace,
		}
		for _, t := range s.tools {
			st.Tools = append(st.Tools, t.Name)
		}
		if s.err != "" {
			e := s.err
			st.Error = &e
		}
		out.Servers = append(out.Servers, st)
	}
	return out
}

// Close stops every server with its process tree and waits for them (at
// most about StopGrace plus a few seconds). Later calls fail.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	var stop []*server
	for name, s := range m.servers {
		stop = append(stop, s)
		delete(m.servers, name)
	}
	m.mu.Unlock()
	for _, s := range stop {
		m.stopAsync(s)
	}
	m.wg.Wait()
	if len(stop) > 0 {
		m.changed()
	}
	return nil
}

func (m *Manager) changed() {
	if m.opts.OnToolsChanged != nil {
		m.opts.OnToolsChanged()
	}
}

// startLocked starts s in the background unless a start already runs, and
// returns the channel closed when that start ends. m.mu is held.
func (m *Manager) startLocked(s *server) chan struct{} {
	if s.starting != nil {
		return s.starting
	}
	done := make(chan struct{})
	s.starting = done
	s.state, s.err = StateStarting, ""
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.start(s, done)
	}()
	return done
}

func (m *Manager) start(s *server, done chan struct{}) {
	defer close(done)
	hs := m.opts.HandshakeTimeout
	if s.cfg.TimeoutMs > 0 {
		hs = time.Duration(s.cfg.TimeoutMs) * time.Millisecond
	}
	began := time.Now()
	sess, proc, tools, err := m.connect(s, hs)
	if errors.Is(err, context.DeadlineExceeded) && s.ctx.Err() == nil {
		m.log.Warn("mcp server handshake timed out; trying once more with a longer wait", "server", s.name, "timeout", hs)
		sess, proc, tools, err = m.connect(s, hs*handshakeRetryFactor)
	}
	m.mu.Lock()
	if s.ctx.Err() != nil {
		// Removed or closed while starting.
		s.starting = nil
		m.mu.Unlock()
		// The tree before the session: closing the session closes the
		// server's stdin, and a server that exits on it orphans its
		// children before stop can find them (process.stop).
		if proc != nil {
			proc.stop(m.opts.StopGrace)
		}
		if sess != nil {
			_ = sess.Close()
		}
		return
	}
	s.starting = nil
	if err != nil {
		msg := s.cfg.scrub(err.Error()) // a remote's error names its URL
		s.state, s.err, s.tools = StateFailed, msg, nil
		m.mu.Unlock()
		m.log.Warn("mcp server did not start", "server", s.name, "err", msg)
		m.changed()
		return
	}
	s.state, s.session, s.proc, s.tools = StateRunning, sess, proc, tools
	m.mu.Unlock()
	m.log.Info("mcp server ready", "server", s.name, "tools", len(tools), "elapsedMs", time.Since(began).Milliseconds())
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.watch(s, sess, proc)
	}()
	m.changed()
}

// watch marks s stopped when its session ends by itself (the process
// exited or the connection broke). A stdio server's exit closes the session
// at once, so calls in flight fail instead of waiting for a timeout.
func (m *Manager) watch(s *server, sess *sdk.ClientSession, proc *process) {
	if proc != nil {
		go func() {
			select {
			case <-proc.exited:
				_ = sess.Close()
			case <-s.ctx.Done():
			}
		}()
	}
	werr := sess.Wait()
	m.mu.Lock()
	if s.session != sess {
		m.mu.Unlock()
		return
	}
	s.session, s.proc = nil, nil
	if s.ctx.Err() == nil {
		s.state = StateStopped
		s.err = "the server exited; it restarts on next use"
		if proc != nil {
			select {
			case <-proc.exited:
				if proc.err != nil {
					s.err = fmt.Sprintf("the server exited (%v); it restarts on next use", proc.err)
				}
			default:
			}
		} else if werr != nil {
			s.err = fmt.Sprintf("the connection closed (%v); it reconnects on next use", werr)
		}
	}
	m.mu.Unlock()
	m.log.Warn("mcp server stopped", "server", s.name)
	if proc != nil {
		proc.stop(m.opts.StopGrace)
	}
}

// stopAsync cancels s and ends its session and process tree in the
// background (Close waits for it through wg).
func (m *Manager) stopAsync(s *server) {
	m.mu.Lock()
	s.cancel()
	sess, proc := s.session, s.proc
	s.session, s.proc, s.tools = nil, nil, nil
	if s.state != StateDisabled {
		s.state = StateStopped
	}
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		// The tree before the session (see start).
		if proc != nil {
			proc.stop(m.opts.StopGrace)
		}
		if sess != nil {
			_ = sess.Close()
		}
	}()
}

// connect starts the server, runs the MCP handshake and lists its tools,
// all within timeout.
func (m *Manager) connect(s *server, timeout time.Duration) (*sdk.ClientSession, *process, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "task-x-runtime", Version: m.opts.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { m.refreshTools(s) },
	})
	var (
		transport sdk.Transport
		proc      *process
	)
	switch s.cfg.kind() {
	case TypeStdio:
		cwd := m.opts.Root()
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		var err error
		var secrets []string
		if m.opts.Secrets != nil {
			secrets = m.opts.Secrets()
		}
		if proc, err = startProcess(s.cfg, cwd, s.name, m.log, secrets); err != nil {
			return nil, nil, nil, err
		}
		transport = &sdk.IOTransport{Reader: newJSONLineReader(proc.stdout, s.name, m.log), Writer: proc.stdin, MaxLineLength: MaxLineBytes + 1}
	case TypeHTTP:
		transport = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: m.httpClient(s.cfg.Headers)}
	case TypeSSE:
		transport = &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: m.httpClient(s.cfg.Headers)}
	}
	fail := func(sess *sdk.ClientSession, err error) (*sdk.ClientSession, *process, []*sdk.Tool, error) {
		// The tree before the session (see start).
		if proc != nil {
			proc.stop(m.opts.StopGrace)
			select {
			case <-proc.exited:
				if e := proc.ownExit(); e != nil && ctx.Err() == nil {
					err = fmt.Errorf("%w (the server exited: %v)", err, e)
				}
			default:
			}
		}
		if sess != nil {
			_ = sess.Close()
		}
		if ctx.Err() != nil && s.ctx.Err() == nil {
			return nil, nil, nil, fmt.Errorf("handshake timed out after %s: %w", timeout, context.DeadlineExceeded)
		}
		return nil, nil, nil, err
	}
	// A process that dies during the handshake ends it at once.
	if proc != nil {
		go func() {
			select {
			case <-proc.exited:
				time.Sleep(50 * time.Millisecond) // let its last output be read
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fail(nil, err)
	}
	tools, err := listTools(ctx, sess)
	if err != nil {
		return fail(sess, err)
	}
	return sess, proc, tools, nil
}

func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var tools []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if t == nil || t.Name == "" {
			continue
		}
		if len(tools) == maxToolsPerServer {
			break
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// refreshTools lists the tools again after notifications/tools/list_changed.
func (m *Manager) refreshTools(s *server) {
	m.mu.Lock()
	sess := s.session
	m.mu.Unlock()
	if sess == nil {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, m.opts.HandshakeTimeout)
		defer cancel()
		tools, err := listTools(ctx, sess)
		if err != nil {
			m.log.Warn("mcp tools/list after list_changed", "server", s.name, "err", err)
			return
		}
		m.mu.Lock()
		if s.session == sess {
			s.tools = tools
		}
		m.mu.Unlock()
		m.changed()
	}()
}

// httpClient returns the manager's client with headers added to every
// request.
func (m *Manager) httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return m.opts.HTTPClient
	}
	c := *m.opts.HTTPClient
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = headerTransport{base: base, headers: headers}
	return &c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// session returns a running session of server name, starting it again
// when it stopped (restart on next use) and waiting for a start in
// progress, within ctx.
func (m *Manager) session(ctx context.Context, name string) (*sdk.ClientSession, *server, error) {
	m.mu.Lock()
	s, ok := m.servers[name]
	if !ok || m.closed {
		m.mu.Unlock()
		return nil, nil, tool.Errorf(ErrUnavailable, "mcp server %q is not configured", name)
	}
	if s.state == StateDisabled {
		m.mu.Unlock()
		return nil, nil, tool.Errorf(ErrUnavailable, "mcp server %q is disabled", name)
	}
	if s.session != nil {
		sess := s.session
		m.mu.Unlock()
		return sess, s, nil
	}
	if err := s.cfg.Validate(); err != nil {
		m.mu.Unlock()
		return nil, nil, tool.Errorf(ErrUnavailable, "mcp server %q: %v", name, err)
	}
	if s.state == StateStopped {
		m.log.Info("restarting mcp server on use", "server", name)
	}
	ch := s.starting
	if ch == nil {
		ch = m.startLocked(s)
	}
	m.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.session == nil {
		return nil, nil, tool.Errorf(ErrUnavailable, "mcp server %q is not running: %s", name, s.err)
	}
	return s.session, s, nil
}

// Call runs tool toolName of server with args (a JSON object; empty means
// {}). A stopped server is started again first. The call is bounded by the
// server's timeoutMs (else CallTimeout). Failures are *tool.Error: kind
// ErrServerError when the server answered isError, ErrUnavailable when it is
// not running or exited during the call (at once, not at the timeout),
// tool.ErrTimeout when it did not answer in time. The Result's Content is
// the text of the content blocks; Data is the MCP CallToolResult.
func (m *Manager) Call(ctx context.Context, serverName, toolName string, args json.RawMessage) (tool.Result, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	m.mu.Lock()
	timeout := m.opts.CallTimeout
	if s, ok := m.servers[serverName]; ok && s.cfg.TimeoutMs > 0 {
		timeout = time.Duration(s.cfg.TimeoutMs) * time.Millisecond
	}
	m.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	timedOut := func() error {
		return tool.Errorf(tool.ErrTimeout, "mcp server %q did not answer %s within %s", serverName, toolName, timeout)
	}
	sess, s, err := m.session(cctx, serverName)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if cctx.Err() != nil {
			return tool.Result{}, timedOut()
		}
		return tool.Result{}, err
	}
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: toolName, Arguments: args})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, ctx.Err()
		case cctx.Err() != nil:
			return tool.Result{}, timedOut()
		}
		m.mu.Lock()
		gone := s.session != sess
		if p := s.proc; p != nil && !gone {
			select {
			case <-p.exited:
				gone = true
			default:
			}
		}
		m.mu.Unlock()
		if gone || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return tool.Result{}, tool.Errorf(ErrUnavailable, "mcp server %q stopped during the call to %s; it restarts on next use", serverName, toolName)
		}
		return tool.Result{}, tool.Errorf(ErrServerError, "mcp server %q: %s: %s", serverName, toolName, s.cfg.scrub(err.Error()))
	}
	text := resultText(res)
	if res.IsError {
		if text == "" {
			text = "the tool reported an error"
		}
		return tool.Result{}, tool.Errorf(ErrServerError, "%s", text)
	}
	return tool.Result{Content: text, Data: resultData(res, text)}, nil
}
