// Package acp owns the runtime's Agent Client Protocol v1 front end
// (`task-x-runtime --acp`): the protocol Zed, JetBrains IDEs and Neovim
// plugins use to drive a coding agent over stdio. Like internal/server it
// decodes, calls the session layer (internal/session) and encodes: an ACP
// session is a task (its id is the task id), session/prompt runs it, our
// agent/event stream becomes session/update notifications (updates.go),
// our approvals become session/request_permission (permission.go). It
// assembles no task and holds no project state: the open project, the
// tools, the sandbox, the edit log and the saved tasks are the session's.
// internal/archtest keeps its imports to the protocol types, the JSON-RPC
// layer and the session (plus logging and version).
//
// Source: the ACP v1 JSON Schema (@agentclientprotocol/sdk 2.4.0,
// schema/v1/schema.json); ../shared/notes/acp.md; docs/acp.md.
package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/session"
	"github.com/task-x/task-x-runtime/internal/version"
)

// Options configure an Agent. A nil *Options is valid.
type Options struct {
	// Version is reported in initialize.agentInfo.version.
	Version string
	// Logger receives diagnostics; default discards.
	Logger *slog.Logger
	// Secrets collects every API key the runtime sees; default a fresh set.
	Secrets *logx.Secrets
	// Home is the user's home folder (~/.task-x, skills).
	Home string
	// LoadConfig reads the model and task settings (LoadConfig of this
	// package by default); authenticate reads them again.
	LoadConfig func() (*Config, error)
	// Session are further session options (NewProvider, ...); Logger,
	// Secrets, Home, Version and Client are the agent's.
	Session *session.Options
}

// modes are our chat modes as ACP session modes.
var modes = []sessionMode{
	{ID: "ask", Name: "Ask", Description: "Answers questions; reads the repository, changes nothing"},
	{ID: "plan", Name: "Plan", Description: "Reads the repository and writes a plan; changes nothing"},
	{ID: "agent", Name: "Agent", Description: "Edits files and runs commands in the sandbox, asking first"},
	{ID: "team", Name: "Team", Description: "A lead agent that runs a plan of subagents in git worktrees"},
}

const defaultMode = "agent"

// Agent serves ACP on one connection.
type Agent struct {
	opts    Options
	log     *slog.Logger
	secrets *logx.Secrets
	sess    *session.Session
	conn    *jsonrpc.Conn
	// listPage is session/list's page size (listPageSize when 0; tests
	// set a small one).
	listPage int

	mu       sync.Mutex
	inited   bool
	client   clientCapabilities
	cfg      *Config
	root     string                 // the project open in the session ("" none)
	sessions map[string]*acpSession // by ACP session id (= task id)
	tasks    map[string]*acpSession // subagent task id → its session
	// queued are the session/prompt requests read but not yet started
	// (onAccept), so that a session/cancel that overtakes one still ends it.
	queued  map[*jsonrpc.Request]*acpSession
	opening sync.Mutex // one project open at a time
	// mcpApplied is the MCP configuration last given to the session layer
	// (applyMCP; "{}" none); mcpMu serialises applying it.
	mcpApplied string
	mcpMu      sync.Mutex
}

// acpSession is one ACP session: a task and what the client chose for it.
type acpSession struct {
	id  string
	cwd string // the client's path of the folder, as it sent it (cleaned)
	// root is cwd with its symlinks resolved: the project's root, under
	// which the tools' paths are (fs.go maps them back under cwd).
	root string

	mu     sync.Mutex
	mode   string
	cancel context.CancelFunc // the running prompt's, nil when idle
	// cancelQueued: a session/cancel came while a prompt of this session
	// was read but not started; that prompt ends cancelled at once.
	cancelQueued bool
	// fsSilent: the client left an fs/read_text_file of this turn
	// unanswered; the rest of the turn reads the disk (fs.go).
	fsSilent bool
	rejects  map[string]*session.Grants // task id → its reject_always answers (permission.go)
	allows   map[string]*session.Grants // task id → its allow_always answers (permission.go)
	mcp      map[string]json.RawMessage // the client's MCP servers for this session, by name
	updates  *translator
}

// New returns an Agent.
func New(opts *Options) *Agent {
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
	if o.LoadConfig == nil {
		home := o.Home
		o.LoadConfig = func() (*Config, error) { return LoadConfig(home, nil) }
	}
	a := &Agent{opts: o, log: o.Logger, secrets: o.Secrets, sessions: map[string]*acpSession{}, tasks: map[string]*acpSession{},
		queued: map[*jsonrpc.Request]*acpSession{}, mcpApplied: "{}"}
	var so session.Options
	if o.Session != nil {
		so = *o.Session
	}
	so.Version, so.Logger, so.Secrets, so.Home, so.Client = o.Version, o.Logger, o.Secrets, o.Home, client{a}
	so.Editor = editorFS{a} // fs.go: used when the client offers its fs methods
	a.sess = session.New(&so)
	return a
}

// Serve runs ACP on in/out until in closes, a fatal framing error (a line
// over 32 MiB) or ctx ending.
func (a *Agent) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	a.conn = jsonrpc.NewConn(in, out, jsonrpc.HandlerFunc(a.handle), &jsonrpc.ConnOptions{
		Logger:        a.log,
		Preempt:       map[string]bool{methodSessionCancel: true},
		OnAccept:      a.onAccept,
		CancelMethod:  cancelRequestMethod,
		CancelIDField: "requestId",
		CancelOnDone:  true,
		// A parse error keeps a readable id (JSON-RPC 2.0; the SDK client
		// leaves a request answered with id null pending).
		ParseErrorKeepsID: true,
		OnInternalError: func(err error) {
			a.log.Error("internal error", "err", err)
		},
	})
	err := a.conn.Run(ctx)
	a.sess.Close()
	return err
}

func (a *Agent) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	base := ctx
	ctx = session.WithDetach(ctx, func() { jsonrpc.Async(base) })
	if !req.IsCall {
		if req.Method == methodSessionCancel {
			var p sessionIDParams
			if decode(req.Params, &p) == nil {
				a.cancel(p.SessionID)
			}
		} else {
			a.log.Debug("notification ignored", "method", req.Method)
		}
		return nil, nil
	}
	a.mu.Lock()
	inited := a.inited
	a.mu.Unlock()
	if req.Method != methodInitialize && !inited {
		return nil, jsonrpc.NewError(jsonrpc.ErrInvalidRequest.Code, "send initialize first")
	}
	var res any
	var err error
	switch req.Method {
	case methodInitialize:
		res, err = a.initialize(req.Params)
	case methodAuthenticate:
		res, err = a.authenticate(req.Params)
	case methodSessionNew:
		res, err = a.newSession(ctx, req.Params)
	case methodSessionLoad:
		res, err = a.loadSession(ctx, req.Params)
	case methodSessionList:
		res, err = a.listSessions(req.Params)
	case methodSessionPrompt:
		res, err = a.prompt(ctx, req)
	case methodSessionSetMode:
		res, err = a.setMode(ctx, req.Params)
	case methodSessionCancel:
		// ACP sends session/cancel as a notification; a client that sends
		// it as a request gets the same cancel and a null result rather
		// than "unknown method" with its prompt still running.
		var p sessionIDParams
		if err = decode(req.Params, &p); err == nil {
			a.cancel(p.SessionID)
		}
	default:
		return nil, jsonrpc.NewError(jsonrpc.ErrMethodNotFound.Code, fmt.Sprintf("unknown method %q", req.Method))
	}
	if err != nil {
		return nil, a.wireError(err)
	}
	return res, nil
}

// decode reads params into v: absent params are v's zero value, unknown
// members are ignored, a wrong shape is invalid params.
func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("invalid params: %v", err)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return jsonrpc.NewError(jsonrpc.ErrInvalidParams.Code, fmt.Sprintf(format, args...))
}

// wireError maps an error to ACP's codes: the session's kinds (invalid
// params, cancelled; a provider's auth failure is ACP's auth_required;
// everything else internal), every key redacted.
func (a *Agent) wireError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		cp := *je
		cp.Message = a.secrets.Redact(cp.Message)
		return &cp
	}
	f := a.sess.Classify(err)
	code := jsonrpc.ErrInternal.Code
	switch f.Kind {
	case session.KindInvalidParams:
		code = jsonrpc.ErrInvalidParams.Code
	case session.KindCancelled:
		code = jsonrpc.ErrRequestCancelled.Code
	case session.KindProvider:
		if pe, ok := f.Data.(protocol.ProviderError); ok && pe.Kind == "auth" {
			code = codeAuthRequired
		}
	}
	e := jsonrpc.NewError(code, f.Message)
	if f.Data != nil {
		e = e.WithData(f.Data)
	}
	return e
}

func (a *Agent) initialize(raw json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	a.mu.Lock()
	again := a.inited
	a.mu.Unlock()
	if again {
		// A second Init would mark this runtime's running tasks failed.
		return nil, jsonrpc.NewError(jsonrpc.ErrInvalidRequest.Code, "initialize was already received")
	}
	cfg, err := a.opts.LoadConfig()
	if err != nil {
		return nil, invalid("task-x configuration: %v", err)
	}
	a.addKeys(cfg)
	if _, _, err := a.sess.Init(cfg.DataDir, cfg.Sandbox); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.inited, a.client, a.cfg = true, p.ClientCapabilities, cfg
	a.mu.Unlock()
	var caps agentCapabilities
	caps.LoadSession = true
	caps.PromptCapabilities.Image = true
	caps.PromptCapabilities.EmbeddedContext = true
	caps.MCPCapabilities.HTTP = true
	caps.MCPCapabilities.SSE = true
	return initializeResult{
		ProtocolVersion:   ProtocolVersion,
		AgentCapabilities: caps,
		AuthMethods:       authMethods(cfg),
		AgentInfo:         implementation{Name: "task-x-runtime", Title: "task-x", Version: a.opts.Version},
	}, nil
}

// addKeys adds the settings' keys to the redaction set.
func (a *Agent) addKeys(cfg *Config) {
	for _, k := range cfg.Keys() {
		a.secrets.Add(k)
	}
}

// authMethods offers the one way to authenticate: a key in the
// environment or the config file, read again by authenticate. Listed when
// the configured provider needs a key it lacks.
func authMethods(cfg *Config) []authMethod {
	missing := cfg.missingKey()
	if missing == "" {
		return []authMethod{}
	}
	return []authMethod{{ID: "env", Name: "API key",
		Description: fmt.Sprintf("Set %s in the agent's environment, or apiKey in the provider of ~/.task-x/acp.json", missing)}}
}

func (a *Agent) authenticate(raw json.RawMessage) (any, error) {
	var p authenticateParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if p.MethodID != "env" {
		return nil, invalid("unknown auth method %q", p.MethodID)
	}
	cfg, err := a.opts.LoadConfig()
	if err != nil {
		return nil, invalid("task-x configuration: %v", err)
	}
	a.addKeys(cfg)
	if m := cfg.missingKey(); m != "" {
		return nil, jsonrpc.NewError(codeAuthRequired, "no API key: set "+m)
	}
	a.mu.Lock()
	a.cfg = cfg
	a.mu.Unlock()
	return struct{}{}, nil
}

// config is the settings in force; auth_required when the provider needs
// a key it lacks, invalid params without a provider.
func (a *Agent) config() (*Config, error) {
	a.mu.Lock()
	cfg := a.cfg
	a.mu.Unlock()
	if len(cfg.Run.Provider) == 0 {
		return nil, invalid("no model configured: set TASK_X_PROVIDER and TASK_X_MODEL, or provider in ~/.task-x/acp.json (docs/acp.md)")
	}
	if m := cfg.missingKey(); m != "" {
		return nil, jsonrpc.NewError(codeAuthRequired, "authentication required: set "+m)
	}
	return cfg, nil
}

// open makes cwd the session's project (the saved index makes a second
// open fast) unless it is open already.
func (a *Agent) open(ctx context.Context, cwd string, self *acpSession) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return invalid("cwd must be an absolute path, got %q", cwd)
	}
	cwd = filepath.Clean(cwd)
	a.opening.Lock()
	defer a.opening.Unlock()
	a.mu.Lock()
	prev := a.root
	a.mu.Unlock()
	if prev == cwd || (prev != "" && resolvePath(prev) == resolvePath(cwd)) {
		return nil // the same folder (through a symlink, say): the project is open
	}
	if a.running(self) {
		return invalid("a prompt runs in %s: %s opens when it ends (one folder at a time)", prev, cwd)
	}
	if _, err := a.sess.Open(ctx, cwd, nil); err != nil {
		return err
	}
	a.mu.Lock()
	a.root = cwd
	a.mu.Unlock()
	return nil
}

func (a *Agent) running(except *acpSession) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		if s == except {
			continue
		}
		s.mu.Lock()
		busy := s.cancel != nil
		s.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

// mcpConfig checks an ACP session's mcpServers and returns them as the
// session layer's MCP configuration, by name.
func (a *Agent) mcpConfig(servers []mcpServer) (map[string]json.RawMessage, error) {
	obj := map[string]map[string]any{}
	for i, s := range servers {
		name := strings.TrimSpace(s.Name)
		if name == "" {
			return nil, invalid("mcpServers[%d]: name is required", i)
		}
		if _, dup := obj[name]; dup {
			return nil, invalid("mcpServers[%d]: duplicate name %q", i, name)
		}
		c := map[string]any{}
		switch s.Type {
		case "", "stdio":
			env := map[string]string{}
			for _, e := range s.Env {
				env[e.Name] = e.Value
			}
			c["type"], c["command"], c["args"], c["env"] = "stdio", s.Command, s.Args, env
		case "http", "sse":
			h := map[string]string{}
			for _, e := range s.Headers {
				h[e.Name] = e.Value
				// A header's value is a credential (Authorization:
				// Bearer …), and so is its last word.
				a.secrets.Add(e.Value)
				if f := strings.Fields(e.Value); len(f) > 1 {
					a.secrets.Add(f[len(f)-1])
				}
			}
			a.addURLSecrets(s.URL)
			c["type"], c["url"], c["headers"] = s.Type, s.URL, h
		default:
			return nil, invalid("mcpServers[%d]: unknown type %q", i, s.Type)
		}
		obj[name] = c
	}
	out := make(map[string]json.RawMessage, len(obj))
	for name, c := range obj {
		out[name], _ = json.Marshal(c)
	}
	return out, nil
}

// applyMCP gives the session layer the MCP servers of s and of every other
// session with a prompt running. MCP servers are per ACP session, but the
// session layer holds one set: a session's set is applied when it is
// created or loaded and again when its prompt runs, so another session
// created in between removes nothing from it; while prompts of several
// sessions run, their sets are joined, and a name two of them configure
// differently is invalid params for the later prompt (docs/acp.md). The
// repository's .mcp.json files are not read: a repository plants nothing
// that runs.
func (a *Agent) applyMCP(ctx context.Context, s *acpSession) error {
	a.mcpMu.Lock()
	defer a.mcpMu.Unlock()
	want := map[string]json.RawMessage{}
	a.mu.Lock()
	list := []*acpSession{s}
	for _, o := range a.sessions {
		o.mu.Lock()
		busy := o.cancel != nil
		o.mu.Unlock()
		if o != s && busy {
			list = append(list, o)
		}
	}
	a.mu.Unlock()
	for _, o := range list {
		o.mu.Lock()
		for name, c := range o.mcp {
			if prev, ok := want[name]; ok && string(prev) != string(c) {
				o.mu.Unlock()
				return invalid("MCP server %q is configured differently in session %s, which has a prompt running", name, o.id)
			}
			want[name] = c
		}
		o.mu.Unlock()
	}
	raw, _ := json.Marshal(want)
	if string(raw) == a.mcpApplied {
		return nil
	}
	if _, err := a.sess.ConfigureMCP(ctx, raw, false); err != nil {
		return err
	}
	a.mcpApplied = string(raw)
	return nil
}

// addURLSecrets adds the credentials an MCP server's URL carries (its
// password, query values of 8 bytes or more) to the redaction set.
func (a *Agent) addURLSecrets(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			a.secrets.Add(p)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= 8 {
				a.secrets.Add(v)
			}
		}
	}
}

func (a *Agent) newSession(ctx context.Context, raw json.RawMessage) (any, error) {
	var p newSessionParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if _, err := a.config(); err != nil {
		return nil, err
	}
	servers, err := a.mcpConfig(p.MCPServers)
	if err != nil {
		return nil, err
	}
	if err := a.open(ctx, p.Cwd, nil); err != nil {
		return nil, err
	}
	s := a.newACPSession(session.NewTaskID(), filepath.Clean(p.Cwd), defaultMode, servers)
	if err := a.applyMCP(ctx, s); err != nil {
		return nil, err
	}
	a.addSession(s)
	jsonrpc.AfterReply(ctx, func() { a.sendCommands(s) })
	return sessionResult{SessionID: s.id, Modes: modeState{CurrentModeID: s.mode, AvailableModes: modes}}, nil
}

func (a *Agent) newACPSession(id, cwd, mode string, servers map[string]json.RawMessage) *acpSession {
	s := &acpSession{id: id, cwd: cwd, root: resolvePath(cwd), mode: mode, rejects: map[string]*session.Grants{}, allows: map[string]*session.Grants{}, mcp: servers}
	s.updates = newTranslator(a, s)
	return s
}

func (a *Agent) addSession(s *acpSession) {
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
}

func (a *Agent) session(id string) (*acpSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, jsonrpc.NewError(codeResourceNotFound, fmt.Sprintf("no session %q", id))
	}
	return s, nil
}

// loadSession opens a saved task as a session: its recorded events are
// sent again as session/update, then it continues with the next prompt.
func (a *Agent) loadSession(ctx context.Context, raw json.RawMessage) (any, error) {
	var p loadSessionParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if _, err := a.config(); err != nil {
		return nil, err
	}
	mode := defaultMode
	found := false
	infos, err := a.sess.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range infos {
		if t.TaskID == p.SessionID {
			found = true
			// The task's edits, index and conversation are of its folder:
			// loaded in another, its tools would act on the wrong files.
			if t.Root != "" && filepath.IsAbs(p.Cwd) && !sameFolder(p.Cwd, t.Root) {
				return nil, invalid("session %s was saved in %s, not %s: load it with that cwd", p.SessionID, t.Root, filepath.Clean(p.Cwd))
			}
			if slices.ContainsFunc(modes, func(m sessionMode) bool { return m.ID == string(t.ChatMode) }) {
				mode = string(t.ChatMode)
			}
		}
	}
	if !found {
		return nil, jsonrpc.NewError(codeResourceNotFound, fmt.Sprintf("no saved session %q", p.SessionID))
	}
	if s, _ := a.session(p.SessionID); s != nil {
		s.mu.Lock()
		busy := s.cancel != nil
		s.mu.Unlock()
		if busy {
			return nil, invalid("session %s has a prompt running", p.SessionID)
		}
	}
	servers, err := a.mcpConfig(p.MCPServers)
	if err != nil {
		return nil, err
	}
	if err := a.open(ctx, p.Cwd, nil); err != nil {
		return nil, err
	}
	s := a.newACPSession(p.SessionID, filepath.Clean(p.Cwd), mode, servers)
	if err := a.applyMCP(ctx, s); err != nil {
		return nil, err
	}
	a.addSession(s)
	if _, err := a.sess.Replay(ctx, p.SessionID); err != nil {
		return nil, err
	}
	jsonrpc.AfterReply(ctx, func() { a.sendCommands(s) })
	return sessionResult{Modes: modeState{CurrentModeID: mode, AvailableModes: modes}}, nil
}

// listSessions lists the saved tasks of a folder (every folder without
// cwd), newest first; tasks saved without their folder are left out.
// listPageSize is how many sessions one session/list page holds.
const listPageSize = 100

// listCursor is the position after the last session of a session/list
// page, in its order (updatedAt newest first, then sessionId): a keyset, so
// a session saved or updated between two pages neither shifts nor repeats
// the ones after it (an updated session moves to the front, before a later
// page). On the wire it is opaque: base64url of its JSON.
type listCursor struct {
	UpdatedAt time.Time `json:"u"`
	SessionID string    `json:"s"`
}

// passed reports whether the session (updated, id) is at or before the
// cursor's position in the order: it was on an earlier page.
func (c *listCursor) passed(updated time.Time, id string) bool {
	if !updated.Equal(c.UpdatedAt) {
		return updated.After(c.UpdatedAt)
	}
	return id <= c.SessionID
}

func (c listCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*listCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c listCursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.SessionID == "" {
		return nil, invalid("cursor: not a nextCursor of session/list")
	}
	return &c, nil
}

// listSessions is session/list: the saved tasks with a folder (of cwd
// when given), newest first, a page of listPageSize at most; nextCursor
// when more follow (ACP's cursor pagination).
func (a *Agent) listSessions(raw json.RawMessage) (any, error) {
	var p listSessionsParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	var after *listCursor
	if p.Cursor != nil {
		c, err := decodeCursor(*p.Cursor)
		if err != nil {
			return nil, err
		}
		after = c
	}
	infos, err := a.sess.Tasks()
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(infos, func(x, y protocol.TaskInfo) int {
		if c := y.UpdatedAt.Compare(x.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.TaskID, y.TaskID)
	})
	page := a.listPage
	if page <= 0 {
		page = listPageSize
	}
	out := listSessionsResult{Sessions: []sessionInfo{}}
	var last listCursor
	var want string   // the cwd asked for, resolved
	var same sameRoot // each saved root compared once
	if p.Cwd != nil {
		want = resolvePath(*p.Cwd)
	}
	for _, t := range infos {
		if t.Root == "" || (p.Cwd != nil && !same.is(want, t.Root)) {
			continue
		}
		if after != nil && after.passed(t.UpdatedAt, t.TaskID) {
			continue
		}
		if len(out.Sessions) == page {
			out.NextCursor = last.encode()
			break
		}
		last = listCursor{UpdatedAt: t.UpdatedAt, SessionID: t.TaskID}
		cwd := t.Root
		if p.Cwd != nil {
			cwd = filepath.Clean(*p.Cwd) // the folder as the client knows it (through a symlink, say)
		}
		out.Sessions = append(out.Sessions, sessionInfo{SessionID: t.TaskID, Cwd: cwd, Title: t.Title,
			UpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339)})
	}
	return out, nil
}

// resolvePath is p cleaned with its symlinks resolved (cleaned only when
// it cannot be resolved): the project root of a folder, as the session
// layer opens it (a task's saved root is resolved).
func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// sameFolder reports whether the client's folder cwd is a saved task's
// root: the same path, or the same folder through symlinks.
func sameFolder(cwd, root string) bool {
	return filepath.Clean(cwd) == filepath.Clean(root) || resolvePath(cwd) == resolvePath(root)
}

// sameRoot compares a resolved cwd with saved roots, resolving each root
// once.
type sameRoot map[string]string

func (m *sameRoot) is(resolvedCwd, root string) bool {
	if *m == nil {
		*m = map[string]string{}
	}
	r, ok := (*m)[root]
	if !ok {
		r = resolvePath(root)
		(*m)[root] = r
	}
	return r == resolvedCwd
}

func (a *Agent) setMode(ctx context.Context, raw json.RawMessage) (any, error) {
	var p setModeParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(modes, func(m sessionMode) bool { return m.ID == p.ModeID }) {
		return nil, invalid("unknown mode %q: ask, plan, agent or team", p.ModeID)
	}
	s.mu.Lock()
	s.mode = p.ModeID
	s.mu.Unlock()
	jsonrpc.AfterReply(ctx, func() {
		a.update(s.id, modeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: p.ModeID})
	})
	return struct{}{}, nil
}

// sendCommands sends the skills as available commands (/name).
func (a *Agent) sendCommands(s *acpSession) {
	list := a.sess.Skills().Skills
	cmds := make([]command, 0, len(list))
	for _, sk := range list {
		c := command{Name: sk.Name, Description: sk.Description}
		if len(sk.Params) > 0 {
			names := make([]string, len(sk.Params))
			for i, p := range sk.Params {
				names[i] = p.Name
			}
			c.Input = &commandInput{Hint: strings.Join(names, " ")}
		}
		cmds = append(cmds, c)
	}
	a.update(s.id, commandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds})
}

// update sends one session/update.
func (a *Agent) update(sessionID string, u any) {
	if err := a.conn.Notify(context.Background(), methodSessionUpdate, sessionNotification{SessionID: sessionID, Update: u}); err != nil {
		a.log.Debug("session/update not sent", "err", err)
	}
}

// cancel is session/cancel: the running prompt stops (its open permission
// requests are withdrawn) and answers stopReason cancelled.
// A prompt read before the cancel but not started yet ends cancelled as
// soon as it starts.
func (a *Agent) cancel(id string) {
	a.mu.Lock()
	s := a.sessions[id]
	if s == nil {
		a.mu.Unlock()
		return
	}
	queued := false
	for _, q := range a.queued {
		queued = queued || q == s
	}
	s.mu.Lock()
	c := s.cancel
	if c == nil && queued {
		s.cancelQueued = true
	}
	s.mu.Unlock()
	a.mu.Unlock()
	if c != nil {
		c()
	}
}

// onAccept notes a session/prompt as it is read, before the queue starts
// it (jsonrpc.ConnOptions.OnAccept).
func (a *Agent) onAccept(req *jsonrpc.Request) {
	if req.Method != methodSessionPrompt || !req.IsCall {
		return
	}
	var p sessionIDParams
	if decode(req.Params, &p) != nil {
		return
	}
	a.mu.Lock()
	if s := a.sessions[p.SessionID]; s != nil {
		a.queued[req] = s
	}
	a.mu.Unlock()
}

// start makes cancel the running prompt's of s (the prompt req is no
// longer queued); a session/cancel that came while it was queued cancels
// it at once. An error when s has a prompt running.
func (a *Agent) start(req *jsonrpc.Request, s *acpSession, cancel context.CancelFunc) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.queued, req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return invalid("session %s already has a prompt running", s.id)
	}
	s.cancel = cancel
	if s.cancelQueued {
		s.cancelQueued = false
		cancel()
	}
	return nil
}

func (a *Agent) dequeue(req *jsonrpc.Request) {
	a.mu.Lock()
	delete(a.queued, req)
	a.mu.Unlock()
}

// prompt runs the session's task with the prompt: its events stream as
// session/update, the end of the task is the stop reason.
// The prompt's cancel function is registered first, so a session/cancel
// at any point (even one read while the prompt was queued) ends the turn
// with stopReason cancelled.
func (a *Agent) prompt(ctx context.Context, req *jsonrpc.Request) (any, error) {
	defer a.dequeue(req)
	var p promptParams
	if err := decode(req.Params, &p); err != nil {
		return nil, err
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := a.start(req, s, cancel); err != nil {
		return nil, err
	}
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	// ended is the answer to an error: cancelled when the turn was.
	ended := func(err error) (any, error) {
		if rctx.Err() != nil && ctx.Err() == nil {
			return promptResult{StopReason: "cancelled"}, nil
		}
		return nil, err
	}
	if rctx.Err() != nil {
		return ended(rctx.Err())
	}
	cfg, err := a.config()
	if err != nil {
		return ended(err)
	}
	text, images, mentions, err := promptInput(p.Prompt, s.cwd)
	if err != nil {
		return ended(err)
	}
	if err := a.open(rctx, s.cwd, s); err != nil {
		return ended(err)
	}
	if err := a.applyMCP(rctx, s); err != nil {
		return ended(err)
	}
	if rctx.Err() != nil {
		return ended(rctx.Err())
	}
	run := cfg.Run // a copy: the prompt's fields are set below
	run.Prompt, run.Images, run.TaskID = text, images, s.id
	if len(mentions) > 0 {
		run.Editor, _ = json.Marshal(map[string]any{"mentions": mentions, "openFiles": []string{}, "diagnostics": []any{}})
	}
	s.mu.Lock()
	run.ChatMode = s.mode
	s.fsSilent = false
	s.mu.Unlock()
	s.updates.begin()
	res, err := a.sess.Run(rctx, &run)
	if err != nil {
		return ended(err)
	}
	var end taskEnd
	if err := json.Unmarshal(res, &end); err != nil {
		return nil, err
	}
	return s.updates.stopReason(end)
}

// maxMentions is agent/run's cap on editor mentions.
const maxMentions = 10

// promptInput turns ACP content blocks into our prompt: text as it is,
// images as images (checked as agent/run checks them, the error naming
// prompt[i]), a resource link to a file in the folder as an @ mention
// (other links as their URI in the text; a link given twice once; a
// #L10:20 or #L10 fragment as "(lines 10-20)"), an embedded text resource
// as a fenced block of the prompt (fence: a ``` in the text cannot end
// it). A prompt of images only gets imageOnlyText. Audio and blobs are
// invalid params (initialize offers neither).
func promptInput(blocks []contentBlock, cwd string) (string, []session.Image, []string, error) {
	var b strings.Builder
	var images []session.Image
	var mentions []string
	linked := map[string]bool{}
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
	}
	for i, c := range blocks {
		switch c.Type {
		case "text":
			sep()
			b.WriteString(c.Text)
		case "image":
			im := session.Image{MediaType: c.MimeType, Data: c.Data}
			if err := session.CheckImage(im); err != nil {
				return "", nil, nil, invalid("prompt[%d]: image %v", i, err)
			}
			if len(images) == session.MaxImages {
				return "", nil, nil, invalid("prompt[%d]: at most %d images per prompt", i, session.MaxImages)
			}
			images = append(images, im)
		case "resource_link":
			if linked[c.URI] {
				continue
			}
			linked[c.URI] = true
			sep()
			if p, ok := filePath(c.URI, cwd); ok {
				if !slices.Contains(mentions, p) && len(mentions) < maxMentions {
					mentions = append(mentions, p)
				}
				b.WriteString("@" + relTo(cwd, p) + lineRange(c.URI))
				continue
			}
			b.WriteString("@" + c.URI)
		case "resource":
			if c.Resource == nil || c.Resource.Text == nil {
				return "", nil, nil, invalid("prompt[%d]: only text resources are supported", i)
			}
			name := c.Resource.URI
			if p, ok := filePath(c.Resource.URI, cwd); ok {
				name = relTo(cwd, p) + lineRange(c.Resource.URI)
			}
			sep()
			fmt.Fprintf(&b, "@%s (as the editor holds it):\n%s", name, fence(*c.Resource.Text))
		default:
			return "", nil, nil, invalid("prompt[%d]: content type %q is not supported", i, c.Type)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		if len(images) == 0 {
			return "", nil, nil, invalid("prompt: no text")
		}
		return imageOnlyText(len(images)), images, mentions, nil
	}
	return b.String(), images, mentions, nil
}

// imageOnlyText is the prompt text of a prompt of images only (agent/run
// needs text).
func imageOnlyText(n int) string {
	if n == 1 {
		return "(The user sent an image without text.)"
	}
	return fmt.Sprintf("(The user sent %d images without text.)", n)
}

// lineRange is " (lines 10-20)" for a URI ending in #L10:20 or #L10-20,
// " (line 10)" for #L10, "" otherwise.
func lineRange(uri string) string {
	_, frag, ok := strings.Cut(uri, "#")
	if !ok || !strings.HasPrefix(frag, "L") {
		return ""
	}
	from, to, hasTo := strings.Cut(frag[1:], ":")
	if !hasTo {
		from, to, hasTo = strings.Cut(frag[1:], "-")
	}
	to = strings.TrimPrefix(to, "L")
	a, err := strconv.Atoi(from)
	if err != nil || a < 1 {
		return ""
	}
	if !hasTo {
		return fmt.Sprintf(" (line %d)", a)
	}
	z, err := strconv.Atoi(to)
	if err != nil || z < a {
		return ""
	}
	if z == a {
		return fmt.Sprintf(" (line %d)", a)
	}
	return fmt.Sprintf(" (lines %d-%d)", a, z)
}

// filePath is the absolute path of a file:// URI inside cwd.
func filePath(uri, cwd string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	p := filepath.Clean(filepath.FromSlash(u.Path))
	rel, err := filepath.Rel(cwd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return p, true
}

func relTo(cwd, p string) string {
	if rel, err := filepath.Rel(cwd, p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}

// client is the session's port to the ACP client: our events become
// session/update, our approvals session/request_permission.
type client struct{ a *Agent }

// eventParams is agent/event's params as the session sends them.
type eventParams struct {
	TaskID string          `json:"taskId"`
	Event  json.RawMessage `json:"event"`
	Replay bool            `json:"replay"`
}

func (c client) Notify(ctx context.Context, method string, params any) {
	if method != protocol.MethodAgentEvent {
		return // workspace/progress and the like have no ACP counterpart
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return
	}
	var p eventParams
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	s := c.a.sessionOfTask(p.TaskID)
	if s == nil {
		return
	}
	s.updates.event(p.TaskID, p.Event, p.Replay)
}

func (c client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	switch method {
	case protocol.MethodRequestApproval:
		return c.a.requestPermission(ctx, params)
	case protocol.MethodAskUser:
		return c.a.askUser(ctx, params)
	}
	return nil, fmt.Errorf("acp: %s has no ACP counterpart", method)
}

// sessionOfTask is the session a task's events and approvals belong to:
// its own, or, for a subagent, its lead's.
func (a *Agent) sessionOfTask(taskID string) *acpSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[taskID]; s != nil {
		return s
	}
	return a.tasks[taskID]
}

// subagent records that a subagent's task belongs to s.
func (a *Agent) subagent(taskID string, s *acpSession) {
	a.mu.Lock()
	a.tasks[taskID] = s
	a.mu.Unlock()
}
