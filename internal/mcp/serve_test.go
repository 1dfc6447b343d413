package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
)

type fixedIndex struct{ files []string }

func (f fixedIndex) Files() []string                      { return f.files }
func (f fixedIndex) Excluded(rel string, isDir bool) bool { return false }

// serveClient runs Serve on pipes and returns a connected client session.
func serveClient(t *testing.T, opts *ServeOptions) *sdk.ClientSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, sr, sw, opts)
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		cancel()
		sr.Close()
		<-done
	})
	return sess
}

func approveText(t *testing.T, sess *sdk.ClientSession, args string) map[string]any {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: ApproveTool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("approve answered %d blocks", len(res.Content))
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestServeToolsAndApprove(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	var asked []ApprovalRequest
	l, err := NewApprovalListener(func(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error) {
		asked = append(asked, req)
		switch req.ToolName {
		case "mcp__task-x__replace_text":
			return ApprovalDecision{Allow: true, Session: true}, nil
		case "Bash":
			return ApprovalDecision{}, errors.New("client gone")
		}
		return ApprovalDecision{Allow: false, Message: "not today"}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reg := tool.NewRegistry(builtin.New(nil)...)
	sess := serveClient(t, &ServeOptions{Registry: reg, Env: tool.NewEnv(root, fixedIndex{[]string{"a.txt"}}, true, ""), Approval: l.Env()})

	var names []string
	for tl, err := range sess.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "read_file") || !strings.Contains(got, "replace_text") || !strings.Contains(got, "approve") {
		t.Fatalf("tools = %s", got)
	}
	// Containment: a path outside the root is a tool failure.
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../../etc/passwd"}})
	if err != nil || !res.IsError {
		t.Fatalf("read outside the root: %+v, %v", res, err)
	}
	res, err = sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "one") {
		t.Fatalf("read_file: %+v, %v", res, err)
	}
	// Stale edit: the file changed on disk after the read.
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("two\n"), 0o644)
	res, err = sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "replace_text", Arguments: map[string]any{"path": "a.txt", "oldText": "two", "newText": "three"}})
	if err != nil || !res.IsError {
		t.Fatalf("stale edit allowed: %+v, %v", res, err)
	}

	v := approveText(t, sess, `{"tool_name":"mcp__task-x__replace_text","input":{"path":"a.txt"},"tool_use_id":"toolu_1"}`)
	if v["behavior"] != "allow" || v["updatedInput"].(map[string]any)["path"] != "a.txt" || v["updatedPermissions"] == nil {
		t.Fatalf("allow answer = %v", v)
	}
	v = approveText(t, sess, `{"tool_name":"mcp__task-x__write_file","input":{}}`)
	if v["behavior"] != "deny" || v["message"] != "not today" {
		t.Fatalf("deny answer = %v", v)
	}
	v = approveText(t, sess, `{"tool_name":"Bash","input":{"command":"ls"}}`)
	if v["behavior"] != "deny" || v["message"] == "" {
		t.Fatalf("error answer = %v", v)
	}
	if len(asked) != 3 || asked[0].ToolUseID != "toolu_1" || string(asked[0].Input) != `{"path":"a.txt"}` {
		t.Fatalf("asked = %+v", asked)
	}
}

func TestApproveDeniesWithoutParent(t *testing.T) {
	l, err := NewApprovalListener(func(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error) {
		t.Error("callback reached with a wrong token")
		return ApprovalDecision{Allow: true}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr, _, _ := strings.Cut(l.Env(), " ")
	for _, env := range []string{"", addr + " wrong-token", "10.1.2.3:9 tok", "127.0.0.1:1 tok"} {
		sess := serveClient(t, &ServeOptions{NoTools: true, Approval: env})
		v := approveText(t, sess, `{"tool_name":"x","input":{}}`)
		if v["behavior"] != "deny" || v["message"] == "" {
			t.Fatalf("env %q: answer = %v", env, v)
		}
	}
	// --no-tools serves approve only.
	sess := serveClient(t, &ServeOptions{NoTools: true, Registry: tool.NewRegistry(builtin.New(nil)...)})
	res, err := sess.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != ApproveTool {
		t.Fatalf("--no-tools tools = %+v, %v", res, err)
	}
}

// With Forward, every registry tool call goes to the parent over the
// approval connection (with Claude's call id) and its answer is the
// result; a wrong token or no parent is an error result, never a local run.
func TestServeForwardsTools(t *testing.T) {
	l, err := NewApprovalListener(func(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error) {
		return ApprovalDecision{}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var got []ToolCall
	l.ServeTools(func(ctx context.Context, call ToolCall) ToolAnswer {
		mu.Lock()
		got = append(got, call)
		mu.Unlock()
		if call.Name == "write_file" {
			return ToolAnswer{Content: "refused here", IsError: true}
		}
		return ToolAnswer{Content: "ran " + call.Name}
	})
	reg := tool.NewRegistry(builtin.New(nil)...)
	sess := serveClient(t, &ServeOptions{Registry: reg, Forward: true, Approval: l.Env()})
	call := func(s *sdk.ClientSession, name string) (string, bool) {
		t.Helper()
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Meta: sdk.Meta{"claudecode/toolUseId": "toolu_9"},
			Name: name, Arguments: map[string]any{"path": "a.txt"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	if text, isErr := call(sess, "read_file"); text != "ran read_file" || isErr {
		t.Errorf("read_file: %q %v", text, isErr)
	}
	if text, isErr := call(sess, "write_file"); text != "refused here" || !isErr {
		t.Errorf("write_file: %q %v", text, isErr)
	}
	mu.Lock()
	if len(got) != 2 || got[0].CallID != "toolu_9" || string(got[0].Input) != `{"path":"a.txt"}` {
		t.Errorf("forwarded %+v", got)
	}
	mu.Unlock()
	addr, _, _ := strings.Cut(l.Env(), " ")
	for _, env := range []string{addr + " wrong-token", ""} {
		s := serveClient(t, &ServeOptions{Registry: reg, Forward: true, Approval: env})
		if text, isErr := call(s, "read_file"); !isErr || text == "" || strings.HasPrefix(text, "ran") {
			t.Errorf("approval env %q: %q %v", env, text, isErr)
		}
	}
	mu.Lock()
	if len(got) != 2 {
		t.Errorf("a call with a wrong token reached the parent: %+v", got)
	}
	mu.Unlock()
}

// lockedBuffer is an io.Writer safe for Serve's concurrent replies.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeRepliesBeforeStdinCloses: a client that writes initialize,
// notifications/initialized, tools/list and a tools/call and closes stdin
// at once gets every reply before Serve returns (as the runtime does on
// stdin close: up to 5 s for open replies, then exit). A request the
// client cancelled is not waited for.
func TestServeRepliesBeforeStdinCloses(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello from a\n"), 0o644)
	reg := tool.NewRegistry(builtin.New(nil)...)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`,
	}, "\n") + "\n"
	var out lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Serve(ctx, strings.NewReader(in), &out, &ServeOptions{Registry: reg, Env: tool.NewEnv(root, fixedIndex{[]string{"a.txt"}}, true, "")}); err != nil && !errors.Is(err, io.EOF) {
		t.Logf("Serve: %v", err)
	}
	replies := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && len(m.ID) > 0 {
			replies[string(m.ID)] = line
		}
	}
	if len(replies) != 3 || !strings.Contains(replies["2"], `"read_file"`) || !strings.Contains(replies[`"three"`], "hello from a") {
		t.Fatalf("replies after stdin closed: %d of 3\n%s", len(replies), out.String())
	}
}

// TestReplyTracker: requests open by id (1 and "1" are two), replies and
// notifications/cancelled close them, batches count each message, and a
// notification opens nothing.
func TestReplyTracker(t *testing.T) {
	tr := newReplyTracker()
	idle := func() bool {
		select {
		case <-tr.idle:
			return true
		default:
			return false
		}
	}
	tr.read([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if !idle() {
		t.Fatal("a notification opened a request")
	}
	tr.read([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	tr.read([]byte(`{"jsonrpc":"2.0","id":"1","method":"tools/list"}`))
	tr.read([]byte(`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`))
	tr.wrote([]byte(`{"jsonrpc":"2.0","id":"1","result":{}}`))
	tr.wrote([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
	tr.wrote([]byte(`[{"jsonrpc":"2.0","id":7,"result":{}}]`))
	tr.read([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`))
	if idle() || len(tr.open) != 1 || tr.open["1"] != 1 {
		t.Fatalf("open %v, want only the id 1", tr.open)
	}
	tr.wrote([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`))
	if !idle() {
		t.Fatalf("open %v after every reply", tr.open)
	}
	tr.wait(context.Background(), time.Hour) // returns at once when idle
}
