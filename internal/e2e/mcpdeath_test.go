package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/proctree"
)

// stubbornMCP is the test binary as a stdio MCP server that does not end
// when its stdin closes (as a wrapper or a daemonising server may not):
// it writes its pid to pidFile, serves an echo tool until end of input,
// then stays, two minutes at most (a failed test leaves nothing for long).
func stubbornMCP(pidFile string) int {
	tmp := pidFile + ".tmp"
	if os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o600) != nil || os.Rename(tmp, pidFile) != nil {
		return 1
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "stubborn", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	_ = srv.Run(context.Background(), &sdk.StdioTransport{})
	time.Sleep(2 * time.Minute)
	return 0
}

// A stdio MCP server started for an ACP session dies with a runtime killed
// with -9 (it cannot stop the server then): the server's parent-death
// signal (proctree.StartTied), though the server outlives its stdin.
func TestACPMCPServerDiesWithRuntime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(repo, 0o755)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644)
	pidFile := filepath.Join(dir, "server.pid")

	cmd := exec.Command(filepath.Join(binDir, "task-x-runtime"), "--acp", "--data-dir", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "HOME="+dir, "TASK_X_ACP_CONFIG=", "TASK_X_PROVIDER=openaiCompatible", "TASK_X_MODEL=fake",
		"TASK_X_BASE_URL=http://127.0.0.1:1/v1", "TASK_X_API_KEY=sk-e2e-unused")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runtimePid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	replies := make(chan map[string]json.RawMessage, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["method"] == nil {
				replies <- m
			}
		}
		close(replies)
	}()
	call := func(id int, method string, params any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		stdin.Write(append(b, '\n'))
		for m := range replies {
			if string(m["id"]) == strconv.Itoa(id) {
				if m["error"] != nil {
					t.Fatalf("%s: %s", method, m["error"])
				}
				return
			}
		}
		t.Fatalf("%s: the runtime ended; stderr:\n%s", method, stderr.String())
	}
	call(1, "initialize", map[string]any{"protocolVersion": 1})
	call(2, "session/new", map[string]any{"cwd": repo, "mcpServers": []any{map[string]any{
		"name": "stubborn", "command": exe, "args": []string{},
		"env": []any{map[string]any{"name": "TASK_X_E2E_STUBBORN_MCP", "value": pidFile}},
	}}})

	var server int
	deadline := time.Now().Add(60 * time.Second)
	for server == 0 {
		if b, err := os.ReadFile(pidFile); err == nil {
			server, _ = strconv.Atoi(string(b))
		} else if time.Now().After(deadline) {
			t.Fatalf("the MCP server did not start; stderr:\n%s", stderr.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Nothing is left behind if the test fails: the server is ours while it
	// runs the test binary.
	t.Cleanup(func() {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", server)); strings.HasPrefix(string(b), exe+"\x00") {
			syscall.Kill(server, syscall.SIGKILL)
		}
	})
	if ppid, _, ok := proctree.Parent(server); !ok || ppid != runtimePid {
		t.Fatalf("the MCP server %d has parent %d, not the runtime %d", server, ppid, runtimePid)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	deadline = time.Now().Add(60 * time.Second)
	for {
		_, zombie, ok := proctree.Parent(server)
		if !ok || zombie {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server %d still runs 10 s after the runtime was killed with -9", server)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
