package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
)

// client is a running task-x-runtime and the JSON-RPC connection to it.
type client struct {
	cmd  *exec.Cmd
	conn *jsonrpc.Conn
	done chan error

	mu       sync.Mutex
	onNotify func(method string, params json.RawMessage)
	onCall   func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// runtimePath finds task-x-runtime: $TASK_X_RUNTIME, next to this program,
// then PATH.
func runtimePath() (string, error) {
	if p := os.Getenv("TASK_X_RUNTIME"); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "task-x-runtime")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("task-x-runtime")
	if err != nil {
		return "", errors.New("task-x-runtime not found: build it next to task-x (go build -o bin/ ./cmd/...) or set TASK_X_RUNTIME")
	}
	return p, nil
}

// startClient starts the runtime; its log lines go to logPath (appended),
// not into the output.
func startClient(ctx context.Context, logPath string) (*client, error) {
	path, err := runtimePath()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path)
	if logPath != "" {
		if f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			cmd.Stderr = f
			defer f.Close()
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	c := &client{cmd: cmd, done: make(chan error, 1)}
	c.conn = jsonrpc.NewConn(stdout, stdin, jsonrpc.HandlerFunc(c.handle), &jsonrpc.ConnOptions{CancelOnDone: true})
	go func() {
		err := c.conn.Run(context.WithoutCancel(ctx))
		stdin.Close()
		c.done <- err
	}()
	return c, nil
}

func (c *client) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	c.mu.Lock()
	onNotify, onCall := c.onNotify, c.onCall
	c.mu.Unlock()
	if !req.IsCall {
		if onNotify != nil {
			onNotify(req.Method, req.Params)
		}
		return nil, nil
	}
	if onCall == nil {
		return nil, jsonrpc.NewError(jsonrpc.ErrMethodNotFound.Code, "not handled: "+req.Method)
	}
	jsonrpc.Async(ctx)
	return onCall(ctx, req.Method, req.Params)
}

func (c *client) call(ctx context.Context, method string, params, result any) error {
	raw, err := c.conn.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(raw, result)
}

// close sends shutdown and exit, and waits for the runtime to end.
func (c *client) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = c.call(ctx, "shutdown", nil, nil)
	_ = c.conn.Notify(ctx, "exit", nil)
	waited := make(chan struct{})
	go func() { c.cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(7 * time.Second):
		c.cmd.Process.Kill()
		<-waited
	}
	c.conn.Close()
}

func (c *client) initialize(ctx context.Context, params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	params["protocolVersion"] = 1
	params["clientInfo"] = map[string]string{"name": "task-x", "version": version}
	return c.call(ctx, "initialize", params, nil)
}

func absDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("the folder %s does not exist; pass an existing folder", abs)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is a file, not a folder; pass the folder that holds it", abs)
	}
	return abs, nil
}

// openOpts are openWorkspace's optional parts.
type openOpts struct {
	init     map[string]any // extra initialize fields
	onNotify func(method string, params json.RawMessage)
	onCall   func(ctx context.Context, method string, params json.RawMessage) (any, error)
	trust    bool // trust the workspace (its .mcp.json and hooks) from now on
}

// session is an open workspace: the runtime, the folder and the data folder.
type session struct {
	*client
	root    string
	dataDir string
	summary json.RawMessage
}

// openWorkspace starts the runtime, sends initialize (dataDir, sandbox and
// o.init), the user's and the trusted workspace's MCP servers, and
// workspace/open for dir (made absolute; "" is the current folder), showing
// indexing progress on stderr. On failure it prints one sentence and returns
// the exit code.
func openWorkspace(ctx context.Context, dir string, o openOpts) (*session, int) {
	fail := func(msg string) (*session, int) {
		fmt.Fprintln(os.Stderr, "task-x:", msg)
		return nil, 1
	}
	root, err := absDir(dir)
	if err != nil {
		// A DIR argument that is not a folder: bad usage.
		fmt.Fprintln(os.Stderr, "task-x:", err)
		return nil, exitUsage
	}
	dataDir, err := resolveDataDir()
	if err != nil {
		return fail(err.Error())
	}
	logPath := filepath.Join(dataDir, "runtime.log")
	c, err := startClient(ctx, logPath)
	if err != nil {
		return fail(err.Error())
	}
	if g.verbose {
		fmt.Fprintln(os.Stderr, "task-x: runtime log:", logPath)
	}
	bar := newProgressBar(loadTotal(dataDir, root))
	c.mu.Lock()
	c.onNotify = func(method string, params json.RawMessage) {
		if method == "workspace/progress" {
			bar.update(params)
		} else if o.onNotify != nil {
			o.onNotify(method, params)
		}
	}
	c.onCall = o.onCall
	c.mu.Unlock()
	init := map[string]any{"dataDir": dataDir}
	for k, v := range o.init {
		init[k] = v
	}
	if err := c.initialize(ctx, init); err != nil {
		c.close()
		return fail(friendly(err))
	}
	if o.trust {
		trust(dataDir, root)
	}
	servers, err := userMCPServers()
	if err != nil {
		c.close()
		return fail(err.Error())
	}
	isTrusted := trusted(dataDir, root)
	if len(servers) > 0 || isTrusted {
		if servers == nil {
			servers = map[string]json.RawMessage{}
		}
		if err := c.call(ctx, "mcp/configure", map[string]any{"servers": servers, "workspaceTrusted": isTrusted}, nil); err != nil {
			fmt.Fprintln(os.Stderr, "task-x: MCP servers not started:", friendly(err))
		}
	}
	var summary json.RawMessage
	err = c.call(ctx, "workspace/open", map[string]any{"root": root}, &summary)
	bar.clear()
	if err != nil {
		c.close()
		return fail(friendly(err))
	}
	var st protocol.WorkspaceSummary
	if json.Unmarshal(summary, &st) == nil && st.Stats.Files > 0 {
		saveTotal(dataDir, root, st.Stats.Files)
	}
	return &session{client: c, root: root, dataDir: dataDir, summary: summary}, 0
}
