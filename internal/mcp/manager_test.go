package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/tool"
)

func newTestManager(t *testing.T, o *Options) *Manager {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	if o.StopGrace == 0 {
		o.StopGrace = 500 * time.Millisecond
	}
	m := NewManager(o)
	t.Cleanup(func() { m.Close() })
	return m
}

func statusOf(t *testing.T, st Status, name string) ServerStatus {
	t.Helper()
	for _, s := range st.Servers {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for %q in %+v", name, st)
	return ServerStatus{}
}

func call(t *testing.T, m *Manager, server, name, args string) (tool.Result, error) {
	t.Helper()
	return m.Call(context.Background(), server, name, json.RawMessage(args))
}

func TestJunkOnStdoutAndLongLines(t *testing.T) {
	m := newTestManager(t, nil)
	st := m.Configure(context.Background(), map[string]ServerConfig{"junk": fake(t, "junk")}, false)
	s := statusOf(t, st, "junk")
	if !s.Running || s.Error != nil {
		t.Fatalf("junk server not running: %+v", s)
	}
	if strings.Join(s.Tools, ",") != "add,die,echo,hang" {
		t.Fatalf("tools = %v", s.Tools)
	}
	long := strings.Repeat("x", 16<<20+1024) // over go-sdk's 16 MiB default
	args, _ := json.Marshal(map[string]string{"text": long})
	res, err := call(t, m, "junk", "echo", string(args))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != maxResultChars+len("\n[output cut at 100000 characters]") || !strings.HasPrefix(res.Content, "xxx") {
		t.Fatalf("echo of a 16 MiB line: got %d chars", len(res.Content))
	}
	// Data (tools/call results, toolFinished events) is bounded too: the
	// whole 16 MiB result would make a line near the client's 32 MiB cap.
	if raw, _ := json.Marshal(res.Data); len(raw) > maxDataBytes || !strings.Contains(string(raw), `"truncated":true`) {
		t.Fatalf("Data of a 16 MiB result: %d bytes, %.200s", len(raw), raw)
	}
	res, err = call(t, m, "junk", "add", `{"a":2,"b":3}`)
	if err != nil || res.Content != "5" {
		t.Fatalf("add after junk between messages = %q, %v", res.Content, err)
	}
	if _, ok := res.Data.(*sdk.CallToolResult); !ok {
		t.Fatalf("Data of a small result = %T, want the MCP result", res.Data)
	}
}

func TestJSONLineReaderCap(t *testing.T) {
	r := newJSONLineReader(nopRC{strings.NewReader("junk\n" + `{"a":1}` + "\n" + strings.Repeat("y", MaxLineBytes+10) + "\n")}, "s", nil2())
	buf := make([]byte, 100)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "{\"a\":1}\n" {
		t.Fatalf("first read = %q, %v", buf[:n], err)
	}
	if _, err := r.Read(buf); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("a line over the cap: err = %v", err)
	}
}

func TestSlowServerHoldsUpNobody(t *testing.T) {
	var changes atomic.Int32
	// The wait is long enough for the fast server to start on a loaded
	// machine (a -race test binary under CI load took over 700 ms), and the
	// slow server cannot be ready before its delay, well past the wait.
	m := newTestManager(t, &Options{StartWait: 4 * time.Second, OnToolsChanged: func() { changes.Add(1) }})
	began := time.Now()
	st := m.Configure(context.Background(), map[string]ServerConfig{
		"fast": fake(t, "plain"),
		"slow": fake(t, "slow", "FAKE_MCP_DELAY_MS=9000"),
	}, false)
	if d := time.Since(began); d > 8*time.Second {
		t.Fatalf("Configure waited %s for the slow server", d)
	}
	if s := statusOf(t, st, "fast"); !s.Running {
		t.Fatalf("fast: %+v", s)
	}
	if s := statusOf(t, st, "slow"); s.Running || s.State != StateStarting {
		t.Fatalf("slow: %+v", s)
	}
	// The fast server's tools are usable while the slow one starts.
	if res, err := call(t, m, "fast", "echo", `{"text":"hi"}`); err != nil || res.Content != "hi" {
		t.Fatalf("fast echo = %q, %v", res.Content, err)
	}
	for _, tl := range m.Tools() {
		if strings.HasPrefix(tl.Spec().Name, "mcp__slow__") {
			t.Fatalf("slow server's tool listed before it is ready: %s", tl.Spec().Name)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for !statusOf(t, m.Status(), "slow").Running {
		if time.Now().After(deadline) {
			t.Fatalf("slow server never joined: %+v", m.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
	names := map[string]bool{}
	for _, tl := range m.Tools() {
		names[tl.Spec().Name] = true
		if tl.Spec().Permission != tool.ClassMCP {
			t.Fatalf("%s has class %s", tl.Spec().Name, tl.Spec().Permission)
		}
	}
	if !names["mcp__slow__echo"] || !names["mcp__fast__add"] {
		t.Fatalf("tools = %v", names)
	}
	if changes.Load() < 2 {
		t.Fatalf("OnToolsChanged called %d times", changes.Load())
	}
}

func TestServerDiesMidCall(t *testing.T) {
	m := newTestManager(t, &Options{CallTimeout: time.Minute})
	m.Configure(context.Background(), map[string]ServerConfig{"d": fake(t, "plain")}, false)
	began := time.Now()
	_, err := call(t, m, "d", "die", `{}`)
	te, ok := tool.AsError(err)
	if !ok || te.Kind != ErrUnavailable {
		t.Fatalf("die: err = %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("the call failed only after %s", d)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := statusOf(t, m.Status(), "d")
		if !s.Running && s.State == StateStopped && s.Error != nil && len(s.Tools) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status after the crash: %+v", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Tools stay offered, and the next use restarts the server.
	if len(m.Tools()) != 4 {
		t.Fatalf("tools after crash = %d", len(m.Tools()))
	}
	res, err := call(t, m, "d", "echo", `{"text":"back"}`)
	if err != nil || res.Content != "back" {
		t.Fatalf("echo after restart = %q, %v", res.Content, err)
	}
	if s := statusOf(t, m.Status(), "d"); !s.Running || s.Error != nil {
		t.Fatalf("status after restart: %+v", s)
	}
}

func TestHangingCallTimesOut(t *testing.T) {
	m := newTestManager(t, nil)
	cfg := fake(t, "plain")
	cfg.TimeoutMs = 2000
	m.Configure(context.Background(), map[string]ServerConfig{"h": cfg}, false)
	began := time.Now()
	_, err := call(t, m, "h", "hang", `{}`)
	te, ok := tool.AsError(err)
	if !ok || te.Kind != tool.ErrTimeout {
		t.Fatalf("hang: err = %v", err)
	}
	if d := time.Since(began); d < 1900*time.Millisecond || d > 6*time.Second {
		t.Fatalf("timed out after %s, want about 2s", d)
	}
	// The server is still usable.
	if res, err := call(t, m, "h", "echo", `{"text":"ok"}`); err != nil || res.Content != "ok" {
		t.Fatalf("echo after a timeout = %q, %v", res.Content, err)
	}
}

func TestHandshakeTimeoutRetried(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "started")
	m := newTestManager(t, &Options{HandshakeTimeout: 800 * time.Millisecond, StartWait: 10 * time.Second})
	st := m.Configure(context.Background(), map[string]ServerConfig{"r": fake(t, "once-hang", "FAKE_MCP_MARK="+mark)}, false)
	if s := statusOf(t, st, "r"); !s.Running {
		t.Fatalf("not running after the retry: %+v", s)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the first start did not happen")
	}
}

func TestRemovedServerStopsWithItsTree(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "pid")
	m := newTestManager(t, nil)
	m.Configure(context.Background(), map[string]ServerConfig{"tree": fake(t, "spawn", "FAKE_MCP_MARK="+mark), "other": fake(t, "plain")}, false)
	data, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(data))
	if !alive(child) {
		t.Fatal("grandchild not running")
	}
	t.Cleanup(func() { // not left behind when the test fails
		if alive(child) {
			syscall.Kill(child, syscall.SIGKILL)
		}
	})
	m.mu.Lock()
	serverPid := m.servers["tree"].proc.cmd.Process.Pid
	m.mu.Unlock()
	st := m.Configure(context.Background(), map[string]ServerConfig{"other": fake(t, "plain")}, false)
	if len(st.Servers) != 1 || st.Servers[0].Name != "other" || !st.Servers[0].Running {
		t.Fatalf("status = %+v", st)
	}
	// The stop runs in the background: wait for its effect (bounded).
	deadline := time.Now().Add(60 * time.Second)
	for alive(child) || alive(serverPid) {
		if time.Now().After(deadline) {
			t.Fatalf("still alive: server %v, setsid grandchild %v", alive(serverPid), alive(child))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, tl := range m.Tools() {
		if strings.HasPrefix(tl.Spec().Name, "mcp__tree__") {
			t.Fatalf("removed server's tool still listed: %s", tl.Spec().Name)
		}
	}
	_, err = call(t, m, "tree", "echo", `{"text":"x"}`)
	if te, ok := tool.AsError(err); !ok || te.Kind != ErrUnavailable {
		t.Fatalf("call to a removed server: %v", err)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	m := NewManager(&Options{StopGrace: 300 * time.Millisecond})
	m.Configure(context.Background(), map[string]ServerConfig{"a": fake(t, "plain"), "b": fake(t, "plain")}, false)
	var pids []int
	m.mu.Lock()
	for _, s := range m.servers {
		pids = append(pids, s.proc.cmd.Process.Pid)
	}
	m.mu.Unlock()
	m.Close()
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("pid %d alive after Close", pid)
		}
	}
	if st := m.Status(); len(st.Servers) != 0 {
		t.Fatalf("status after Close = %+v", st)
	}
}

func TestConfigStates(t *testing.T) {
	m := newTestManager(t, nil)
	st := m.Configure(context.Background(), map[string]ServerConfig{
		"off":     {Command: "nonexistent-cmd", Disabled: true},
		"bad":     {Type: "carrier-pigeon"},
		"missing": {Command: filepath.Join(t.TempDir(), "no-such-binary")},
		"remote":  {URL: "ftp://x"},
	}, false)
	if s := statusOf(t, st, "off"); !s.Disabled || s.Running || s.State != StateDisabled || s.Command != "nonexistent-cmd" {
		t.Fatalf("off: %+v", s)
	}
	for _, n := range []string{"bad", "missing", "remote"} {
		if s := statusOf(t, st, n); s.Running || s.Error == nil || s.State != StateFailed {
			t.Fatalf("%s: %+v", n, s)
		}
	}
	if s := statusOf(t, st, "remote"); s.Command != "ftp://x" {
		t.Fatalf("remote command = %q", s.Command)
	}
}

func TestWorkspaceServersNeedTrust(t *testing.T) {
	root := t.TempDir()
	exe, _ := os.Executable()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"ws":    map[string]any{"command": exe, "env": map[string]string{"FAKE_MCP_MODE": "plain"}, "unknownField": 1},
		"clash": map[string]any{"command": "from-workspace"},
	}})
	os.WriteFile(filepath.Join(root, ".mcp.json"), cfg, 0o644)
	os.MkdirAll(filepath.Join(root, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(root, ".vscode", "mcp.json"), []byte(`{"servers":{"vs":{"type":"stdio","command":"${workspaceFolder}/bin","disabled":true}},"inputs":[]}`), 0o644)
	m := newTestManager(t, &Options{Root: func() string { return root }})
	given := map[string]ServerConfig{"clash": fake(t, "plain")}
	st := m.Configure(context.Background(), given, false)
	if len(st.Servers) != 1 {
		t.Fatalf("untrusted workspace servers started: %+v", st)
	}
	st = m.Configure(context.Background(), given, true)
	if len(st.Servers) != 3 {
		t.Fatalf("trusted: %+v", st)
	}
	if s := statusOf(t, st, "ws"); !s.Running || !s.Workspace {
		t.Fatalf("ws: %+v", s)
	}
	if s := statusOf(t, st, "clash"); s.Command == "from-workspace" || s.Workspace {
		t.Fatalf("given server must win a clash: %+v", s)
	}
	if s := statusOf(t, st, "vs"); s.Command != root+"/bin" || !s.Disabled {
		t.Fatalf("vs: %+v", s)
	}
}

func TestStreamableHTTPServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "greet", Description: "greets"}, func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello " + in.Text}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var authOK atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authOK.Store(true)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the manager's Cleanup closed the sessions
	m := newTestManager(t, nil)
	st := m.Configure(context.Background(), map[string]ServerConfig{
		"remote": {Type: "http", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer t0k"}},
		"noauth": {URL: ts.URL},
	}, false)
	if s := statusOf(t, st, "remote"); !s.Running || s.Command != ts.URL || s.Type != TypeHTTP || strings.Join(s.Tools, ",") != "greet" {
		t.Fatalf("remote: %+v", s)
	}
	if s := statusOf(t, st, "noauth"); s.Running || s.Error == nil {
		t.Fatalf("noauth: %+v", s)
	}
	tools := m.Tools()
	if len(tools) != 1 || tools[0].Spec().Name != "mcp__remote__greet" {
		t.Fatalf("tools = %v", tools)
	}
	res, err := tools[0].Run(context.Background(), nil, json.RawMessage(`{"text":"you"}`))
	if err != nil || res.Content != "hello you" {
		t.Fatalf("greet = %q, %v", res.Content, err)
	}
}

func TestToolName(t *testing.T) {
	if got := ToolName("my server", "do.it"); got != "mcp__my_server__do_it" {
		t.Fatal(got)
	}
	if got := ToolName(strings.Repeat("s", 100), strings.Repeat("t", 100)); len(got) != 128 {
		t.Fatal(len(got))
	}
}

func nil2() *slog.Logger { return slog.New(slog.DiscardHandler) }

// WaitStarting returns once no server is starting (the slow one's tools are
// then listed), and names the servers still starting when its bound ends.
func TestWaitStarting(t *testing.T) {
	m := newTestManager(t, &Options{StartWait: time.Millisecond})
	if got := m.WaitStarting(context.Background(), time.Second); got != nil {
		t.Fatalf("no servers: %v", got)
	}
	m.Configure(context.Background(), map[string]ServerConfig{
		"slow":  fake(t, "slow", "FAKE_MCP_DELAY_MS=800"),
		"stuck": fake(t, "stuck", "FAKE_MCP_DELAY_MS=600000"),
	}, false)
	// The bound ends before "stuck" could start; "slow" may or may not be up.
	got := m.WaitStarting(context.Background(), 50*time.Millisecond)
	if len(got) == 0 || got[len(got)-1] != "stuck" {
		t.Fatalf("still starting after a short wait: %v", got)
	}
	m.Configure(context.Background(), map[string]ServerConfig{"slow": fake(t, "slow", "FAKE_MCP_DELAY_MS=800")}, false)
	if got := m.WaitStarting(context.Background(), 20*time.Second); got != nil {
		t.Fatalf("still starting after the wait: %v", got)
	}
	var listed bool
	for _, tl := range m.Tools() {
		listed = listed || tl.Spec().Name == "mcp__slow__echo"
	}
	if !listed {
		t.Fatal("the slow server's tools are not listed after WaitStarting")
	}
}

// A remote server's URL carries its token: the status, the error and the
// log show it redacted.
func TestRemoteURLRedacted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: the start fails with the URL in its error
	const token = "sk-mcp-url-token-4242"
	var logs strings.Builder
	var mu sync.Mutex
	m := newTestManager(t, &Options{Logger: slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	st := m.Configure(context.Background(), map[string]ServerConfig{
		"q": {Type: TypeHTTP, URL: "http://" + addr + "/mcp?token=" + token + "&v=1"},
		"u": {Type: TypeSSE, URL: "http://user:" + token + "@" + addr + "/sse"},
	}, false)
	for _, n := range []string{"q", "u"} {
		s := statusOf(t, st, n)
		if s.Error == nil || s.State != StateFailed {
			t.Fatalf("%s: %+v", n, s)
		}
		if strings.Contains(s.Command, token) || strings.Contains(*s.Error, token) || !strings.Contains(s.Command, addr) {
			t.Fatalf("%s shows the token: %q %q", n, s.Command, *s.Error)
		}
	}
	if _, err := call(t, m, "q", "x", "{}"); err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("call: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "did not start") || strings.Contains(logs.String(), token) {
		t.Fatalf("log: %s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// A stdio server does not inherit the provider keys nor a variable whose
// value is a key the runtime holds; the env configured for it is passed.
func TestStdioServerEnvWithoutKeys(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-parent-openai-1")
	t.Setenv("TASK_X_API_KEY", "sk-parent-taskx-2")
	t.Setenv("SOME_OTHER_NAME", "sk-held-by-runtime-3")
	t.Setenv("PLAIN_SETTING", "kept")
	m := newTestManager(t, &Options{Secrets: func() []string { return []string{"sk-held-by-runtime-3"} }})
	st := m.Configure(context.Background(), map[string]ServerConfig{"e": fake(t, "env", "GIVEN_API_KEY=given-4")}, false)
	if s := statusOf(t, st, "e"); !s.Running {
		t.Fatalf("not running: %+v", s)
	}
	for name, want := range map[string]string{"OPENAI_API_KEY": "unset", "TASK_X_API_KEY": "unset", "SOME_OTHER_NAME": "unset",
		"PLAIN_SETTING": "kept", "GIVEN_API_KEY": "given-4"} {
		res, err := call(t, m, "e", "getenv", `{"text":"`+name+`"}`)
		if err != nil || res.Content != want {
			t.Errorf("%s = %q, %v; want %q", name, res.Content, err, want)
		}
	}
}
