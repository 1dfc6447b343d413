package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NPMEnv names the folder where .ci/run installed the npm MCP servers
// (npm install --prefix "$TASK_X_MCP_NPM" ...).
const NPMEnv = "TASK_X_MCP_NPM"

// npmServer returns the command line of an npm MCP server: its bin from the
// TASK_X_MCP_NPM install, else npx with the pinned version; the test skips
// only when neither is available.
func npmServer(t *testing.T, bin, pkg string, args ...string) ServerConfig {
	t.Helper()
	if dir := os.Getenv(NPMEnv); dir != "" {
		p := filepath.Join(dir, "node_modules", ".bin", bin)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is set but %s is missing: run .ci/run", NPMEnv, p)
		}
		return ServerConfig{Command: p, Args: args}
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skipf("%s is unset and npx is unavailable: install the npm MCP servers with .ci/run", NPMEnv)
	}
	return ServerConfig{Command: npx, Args: append([]string{"-y", pkg}, args...)}
}

func TestNPMServerEverything(t *testing.T) {
	cfg := npmServer(t, "mcp-server-everything", "@modelcontextprotocol/server-everything@2026.8.31", "stdio")
	m := newTestManager(t, &Options{StartWait: 60 * time.Second, HandshakeTimeout: 60 * time.Second})
	st := m.Configure(context.Background(), map[string]ServerConfig{"everything": cfg}, false)
	s := statusOf(t, st, "everything")
	if !s.Running {
		t.Fatalf("server-everything: %+v", s)
	}
	tools := strings.Join(s.Tools, ",")
	if !strings.Contains(tools, "echo") || !strings.Contains(tools, "get-sum") {
		t.Fatalf("tools = %s", tools)
	}
	res, err := call(t, m, "everything", "echo", `{"message":"hi there"}`)
	if err != nil || !strings.Contains(res.Content, "hi there") {
		t.Fatalf("echo = %q, %v", res.Content, err)
	}
	res, err = call(t, m, "everything", "get-sum", `{"a":2,"b":40}`)
	if err != nil || !strings.Contains(res.Content, "42") {
		t.Fatalf("get-sum = %q, %v", res.Content, err)
	}
	// Bad input is a tool failure the model sees, not a crash.
	if _, err := call(t, m, "everything", "get-sum", `{"a":"x"}`); err == nil {
		t.Fatal("get-sum with a bad input succeeded")
	}
}

func TestNPMServerFilesystem(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	cfg := npmServer(t, "mcp-server-filesystem", "@modelcontextprotocol/server-filesystem@2026.8.31", dir)
	m := newTestManager(t, &Options{StartWait: 60 * time.Second, HandshakeTimeout: 60 * time.Second})
	st := m.Configure(context.Background(), map[string]ServerConfig{"fs": cfg}, false)
	if s := statusOf(t, st, "fs"); !s.Running || !strings.Contains(strings.Join(s.Tools, ","), "list_directory") {
		t.Fatalf("server-filesystem: %+v", s)
	}
	res, err := call(t, m, "fs", "list_directory", `{"path":"`+dir+`"}`)
	if err != nil || !strings.Contains(res.Content, "hello.txt") || !strings.Contains(res.Content, "sub") {
		t.Fatalf("list_directory = %q, %v", res.Content, err)
	}
	// Outside the allowed folder: the server refuses.
	if _, err := call(t, m, "fs", "list_directory", `{"path":"/etc"}`); err == nil {
		t.Fatal("listing /etc was allowed")
	}
}
