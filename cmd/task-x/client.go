package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

func startClient(ctx context.Context) (*client, error) {
	path, err := runtimePath()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
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
	c.conn = jsonrpc.NewConn(stdout, stdin, jsonrpc.HandlerFunc(c.handle), &jsonrpc.ConnOptions{})
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
	params["clientInfo"] = map[string]string{"name": "task-x", "version": "0.1.0"}
	return c.call(ctx, "initialize", params, nil)
}

// progressBar renders workspace/progress on stderr when it is a terminal.
type progressBar struct {
	w       io.Writer
	enabled bool
	shown   bool
}

func newProgressBar() *progressBar {
	fi, err := os.Stderr.Stat()
	return &progressBar{w: os.Stderr, enabled: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

func (p *progressBar) update(params json.RawMessage) {
	if !p.enabled {
		return
	}
	var pr struct {
		Phase     string `json:"phase"`
		Files     int    `json:"files"`
		Parsed    int    `json:"parsed"`
		ElapsedMs int64  `json:"elapsedMs"`
	}
	if json.Unmarshal(params, &pr) != nil {
		return
	}
	switch pr.Phase {
	case "indexing":
		fmt.Fprintf(p.w, "\rindexing: %d files seen, %d parsed (%.1fs)   ", pr.Files, pr.Parsed, float64(pr.ElapsedMs)/1000)
		p.shown = true
	case "ready", "failed":
		p.clear()
	}
}

func (p *progressBar) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

func absDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return abs, nil
}

func rpcMessage(err error) string {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		if je.Data != nil {
			if b, err := json.Marshal(je.Data); err == nil {
				return fmt.Sprintf("%s (code %d, %s)", je.Message, je.Code, b)
			}
		}
		return fmt.Sprintf("%s (code %d)", je.Message, je.Code)
	}
	return err.Error()
}

// openWorkspace starts the runtime, sends initialize (with init's extra
// fields) and workspace/open for dir (made absolute; "" is the current
// folder), and shows indexing progress on stderr.
// onNotify gets every other notification and onCall the runtime's requests
// (both may be nil). On success it returns the client (the caller closes it)
// and the workspace summary; on failure it prints why and returns the exit
// code.
func openWorkspace(ctx context.Context, dir string, init map[string]any,
	onNotify func(method string, params json.RawMessage),
	onCall func(ctx context.Context, method string, params json.RawMessage) (any, error),
) (*client, json.RawMessage, int) {
	dir, err := absDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", err)
		return nil, nil, 1
	}
	c, err := startClient(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", err)
		return nil, nil, 1
	}
	bar := newProgressBar()
	c.mu.Lock()
	c.onNotify = func(method string, params json.RawMessage) {
		if method == "workspace/progress" {
			bar.update(params)
		} else if onNotify != nil {
			onNotify(method, params)
		}
	}
	c.onCall = onCall
	c.mu.Unlock()
	if err := c.initialize(ctx, init); err != nil {
		fmt.Fprintln(os.Stderr, "task-x: initialize:", rpcMessage(err))
		c.close()
		return nil, nil, 1
	}
	var summary json.RawMessage
	err = c.call(ctx, "workspace/open", map[string]any{"root": dir}, &summary)
	bar.clear()
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x: workspace/open:", rpcMessage(err))
		c.close()
		return nil, nil, 1
	}
	return c, summary, 0
}
