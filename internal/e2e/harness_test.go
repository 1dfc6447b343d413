package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// binDir holds the binaries built once by TestMain.
var binDir string

func TestMain(m *testing.M) {
	if pidFile := os.Getenv("TASK_X_E2E_STUBBORN_MCP"); pidFile != "" {
		os.Exit(stubbornMCP(pidFile)) // the test binary as an MCP server (mcpdeath_test.go)
	}
	dir, err := os.MkdirTemp("", "task-x-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	args := []string{"build", "-o", dir + string(os.PathSeparator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "../../cmd/task-x-runtime", "../../cmd/task-x")
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the binaries:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// task-x keeps tasks, defaults and logs in $XDG_DATA_HOME/task-x: never
	// the user's own folder from a test.
	data, err := os.MkdirTemp("", "task-x-e2e-data-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_DATA_HOME", data)
	code := m.Run()
	if r := schemas.report(); r != "" {
		fmt.Fprintln(os.Stderr, r)
	}
	if *wireUpdate && code == 0 {
		if err := goldens.save(); err != nil {
			fmt.Fprintln(os.Stderr, "saving the wire goldens:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.RemoveAll(data)
	os.Exit(code)
}

// message is one decoded line from the runtime's stdout.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	raw     string
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s %s", e.Code, e.Message, e.Data) }

// proc is a running task-x-runtime driven over stdio, as the extension does.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan *message
	stderr  *syncBuffer
	nextID  int
	exited  chan struct{}
	exitErr error

	// onRequest answers runtime→client requests (agent/requestApproval);
	// nil answers every request with an error.
	onRequest func(method string, params json.RawMessage) any
	// notes collects every notification seen by call and drain.
	mu    sync.Mutex
	notes []*message

	// wire is false for a runtime that does not speak the protocol
	// (--mcp-server); methods holds the method of each request the client
	// sent, by the JSON text of its id, and wireErrs what the runtime's
	// messages departed from the wire goldens (wire_test.go).
	wire     bool
	methods  map[string][]string
	wireErrs []string
	// wireQ carries the lines to check to the checker goroutine, off the
	// reading path (a 30 MB line takes seconds to check under -race);
	// wireDone is closed when it has checked the last one.
	wireQ    chan wireLine
	wireDone chan struct{}
}

// wireLine is one line to check, with the method of the request it
// answers (resolved when it was read: the test may reuse the id later).
type wireLine struct {
	line   []byte
	method string
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start launches the runtime with env added to the test's environment.
func start(t *testing.T, env ...string) *proc {
	t.Helper()
	return startArgs(t, nil, env...)
}

// startArgs is start with command-line flags.
func startArgs(t *testing.T, args []string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "task-x-runtime"), args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, lines: make(chan *message, 1024), stderr: &syncBuffer{}, exited: make(chan struct{}),
		wire: !slices.Contains(args, "--mcp-server"), methods: map[string][]string{},
		wireQ: make(chan wireLine, 1<<14), wireDone: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			m := &message{raw: sc.Text()}
			if err := json.Unmarshal(sc.Bytes(), m); err != nil {
				m = &message{raw: sc.Text(), Method: "!unparsable"}
			}
			if p.wire && len(sc.Bytes()) <= maxWireCheck {
				p.wireQ <- wireLine{bytes.Clone(sc.Bytes()), p.answered(m)}
			}
			p.lines <- m
		}
		close(p.wireQ)
		close(p.lines)
	}()
	go func() {
		defer close(p.wireDone)
		for l := range p.wireQ {
			p.checkWire(l.line, l.method)
		}
	}()
	go func() {
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
		// The lines read so far are checked (a reader stuck on a full
		// p.lines never closes the queue: then what was checked counts).
		select {
		case <-p.wireDone:
		case <-time.After(30 * time.Second):
		}
		p.mu.Lock()
		errs := p.wireErrs
		p.mu.Unlock()
		for i, e := range errs {
			if i == 20 {
				t.Errorf("... and %d more", len(errs)-i)
				break
			}
			t.Errorf("wire: %s", e)
		}
		if len(errs) > 0 {
			t.Errorf("if the change is intended: wire goldens: go test ./internal/e2e -args -wire-update (wire_test.go); " +
				"schema: change the types in internal/protocol, then go test ./internal/protocol/schema -update (schema_test.go)")
		}
		if t.Failed() {
			t.Logf("runtime stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// answered returns the method of the request the response m answers ("" for
// a request or notification, or an id the client did not send): the oldest
// request of that id, or for a duplicate-id refusal (-32600) the newest.
func (p *proc) answered(m *message) string {
	if m.Method != "" || len(m.ID) == 0 {
		return ""
	}
	var id bytes.Buffer
	if json.Compact(&id, m.ID) != nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.methods[id.String()]
	if len(q) == 0 {
		return ""
	}
	var method string
	if m.Error != nil && m.Error.Code == -32600 {
		method, q = q[len(q)-1], q[:len(q)-1]
	} else {
		method, q = q[0], q[1:]
	}
	p.methods[id.String()] = q
	return method
}

// checkWire holds one line the runtime sent to the wire goldens and
// validates it against the committed schema (schema_test.go).
func (p *proc) checkWire(line []byte, method string) {
	methodOf := func(string) string { return method }
	kind, body, err := wireKind(line, methodOf)
	var errs []string
	if err != nil {
		errs = []string{fmt.Sprintf("a line that is not a JSON-RPC message (%v): %.200s", err, line)}
	} else {
		errs = goldens.observe(kind, body)
		errs = append(errs, schemas.validate(line, methodOf)...)
	}
	if len(errs) > 0 {
		p.mu.Lock()
		p.wireErrs = append(p.wireErrs, errs...)
		p.mu.Unlock()
	}
}

// sendRaw writes one line (a newline is added).
func (p *proc) sendRaw(line string) {
	p.t.Helper()
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &req) == nil && len(req.ID) > 0 && req.Method != "" {
		var id bytes.Buffer
		if json.Compact(&id, req.ID) == nil {
			p.mu.Lock()
			p.methods[id.String()] = append(p.methods[id.String()], req.Method)
			p.mu.Unlock()
		}
	}
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing to the runtime: %v", err)
	}
}

func (p *proc) send(v any) {
	p.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	p.sendRaw(string(b))
}

// request sends a request with a fresh integer id and returns the id.
func (p *proc) request(method string, params any) int {
	p.nextID++
	msg := map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	p.send(msg)
	return p.nextID
}

func (p *proc) notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	p.send(msg)
}

// next returns the next message, answering runtime→client requests and
// recording notifications on the way when handle is true.
func (p *proc) next(timeout time.Duration) *message {
	p.t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("the runtime closed stdout; stderr:\n%s", p.stderr.String())
		}
		return m
	case <-time.After(timeout):
		p.t.Fatalf("no message from the runtime within %v", timeout)
	}
	return nil
}

// waitFor reads messages until the response whose id is the JSON text id,
// answering runtime requests and recording notifications.
func (p *proc) waitFor(id string, timeout time.Duration) *message {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m := p.next(time.Until(deadline))
		switch {
		case m.Method != "" && len(m.ID) > 0:
			p.answer(m)
		case m.Method != "":
			p.mu.Lock()
			p.notes = append(p.notes, m)
			p.mu.Unlock()
		case string(m.ID) == id:
			return m
		default:
			p.t.Fatalf("unexpected message while waiting for id %s: %s", id, m.raw)
		}
	}
}

func (p *proc) answer(m *message) {
	var result any
	if p.onRequest != nil {
		result = p.onRequest(m.Method, m.Params)
	}
	if result == nil {
		p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not handled"}})
		return
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// call sends a request and waits for its response (60 s).
func (p *proc) call(method string, params any) (json.RawMessage, *rpcError) {
	p.t.Helper()
	id := p.request(method, params)
	m := p.waitFor(fmt.Sprint(id), 120*time.Second)
	return m.Result, m.Error
}

// mustCall is call that fails the test on an error response.
func (p *proc) mustCall(method string, params any) json.RawMessage {
	p.t.Helper()
	res, err := p.call(method, params)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	return res
}

func (p *proc) initialize(extra map[string]any) json.RawMessage {
	p.t.Helper()
	params := map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "e2e", "version": "0"}}
	for k, v := range extra {
		params[k] = v
	}
	return p.mustCall("initialize", params)
}

// notifications returns (and forgets) the recorded notifications of method.
func (p *proc) notifications(method string) []*message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out, rest []*message
	for _, n := range p.notes {
		if n.Method == method {
			out = append(out, n)
		} else {
			rest = append(rest, n)
		}
	}
	p.notes = rest
	return out
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.t.Fatalf("the runtime did not exit within %v", timeout)
	}
	if p.exitErr == nil {
		return 0
	}
	if ee, ok := p.exitErr.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	p.t.Fatalf("wait: %v", p.exitErr)
	return -1
}

// copyRepo copies this repository's tracked files (or, outside git, its
// source tree) into a temporary folder and returns it.
func copyRepo(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "testdata":
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// A .gitignore'd file the scan must not index.
	os.WriteFile(filepath.Join(dst, ".gitignore"), []byte("ignored.log\nbin/\n"), 0o644)
	os.WriteFile(filepath.Join(dst, "ignored.log"), []byte("secret build output\n"), 0o644)
	if !strings.HasPrefix(dst, os.TempDir()) {
		t.Fatalf("copy outside the temp folder: %s", dst)
	}
	return dst
}
