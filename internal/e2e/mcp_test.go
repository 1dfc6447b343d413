package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// inspector returns the MCP Inspector command: the bin installed by .ci/run
// under $TASK_X_MCP_NPM, else npx with the pinned version.
func inspector(t *testing.T) []string {
	t.Helper()
	if dir := os.Getenv("TASK_X_MCP_NPM"); dir != "" {
		return []string{filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")}
	}
	if npx, err := exec.LookPath("npx"); err == nil {
		return []string{npx, "-y", "@modelcontextprotocol/inspector@2.12.0"}
	}
	t.Skip("TASK_X_MCP_NPM is unset and npx is unavailable: install the MCP Inspector with .ci/run")
	return nil
}

func TestInspectorListsAndCallsTaskXTools(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# Inspected\nhello from the readme\n"), 0o644)
	run := func(args ...string) map[string]any {
		t.Helper()
		cmdline := append(inspector(t), "--cli", filepath.Join(binDir, "task-x-runtime"), "--mcp-server", "--root", root)
		cmd := exec.Command(cmdline[0], append(cmdline[1:], args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		// The inspector exits with status 5 when the tool answered isError.
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 5 {
			err = nil
		}
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector output: %v\n%s", err, out)
		}
		return v
	}
	list := run("--method", "tools/list")
	var names []string
	for _, tl := range list["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"approve", "read_file", "list_files", "search_text", "write_file", "replace_text", "run_command"} {
		if !strings.Contains(got, want) {
			t.Fatalf("tools/list lacks %s: %s", want, got)
		}
	}
	res := run("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=README.md")
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, "hello from the readme") || res["isError"] == true {
		t.Fatalf("read_file result = %v", res)
	}
	res = run("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=../outside.txt")
	if res["isError"] != true {
		t.Fatalf("read outside the root = %v", res)
	}
}

// TestMCPConfigureThroughRuntime configures the runtime's own --mcp-server
// as an MCP server of another runtime: its tools join tools/list as
// mcp__tx__*, a direct tools/call works, and removing it takes them away.
func TestMCPConfigureThroughRuntime(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("mcp round trip\n"), 0o644)
	p := start(t)
	p.initialize(nil)
	servers := map[string]any{
		"tx":  map[string]any{"command": filepath.Join(binDir, "task-x-runtime"), "args": []string{"--mcp-server", "--root", root}, "someClaudeField": true},
		"off": map[string]any{"command": "never-started", "disabled": true},
	}
	var st struct {
		Servers []struct {
			Name     string   `json:"name"`
			Command  string   `json:"command"`
			Disabled bool     `json:"disabled"`
			Running  bool     `json:"running"`
			Tools    []string `json:"tools"`
			Error    *string  `json:"error"`
		} `json:"servers"`
	}
	json.Unmarshal(p.mustCall("mcp/configure", map[string]any{"servers": servers, "workspaceTrusted": false}), &st)
	if len(st.Servers) != 2 || st.Servers[0].Name != "off" || !st.Servers[0].Disabled || st.Servers[1].Name != "tx" || !st.Servers[1].Running {
		t.Fatalf("mcp/configure = %+v", st)
	}
	if !strings.Contains(strings.Join(st.Servers[1].Tools, ","), "read_file") {
		t.Fatalf("tx tools = %v", st.Servers[1].Tools)
	}
	var list struct {
		Tools []struct {
			Name       string `json:"name"`
			Permission string `json:"permission"`
		} `json:"tools"`
	}
	json.Unmarshal(p.mustCall("tools/list", nil), &list)
	found := false
	for _, tl := range list.Tools {
		if tl.Name == "mcp__tx__read_file" {
			found = tl.Permission == "mcp"
		}
	}
	if !found {
		t.Fatalf("tools/list lacks mcp__tx__read_file with class mcp: %+v", list.Tools)
	}
	p.mustCall("workspace/open", map[string]any{"root": root})
	var res struct {
		Content string `json:"content"`
	}
	json.Unmarshal(p.mustCall("tools/call", map[string]any{"name": "mcp__tx__read_file", "input": map[string]any{"path": "notes.txt"}}), &res)
	if !strings.Contains(res.Content, "mcp round trip") {
		t.Fatalf("tools/call mcp__tx__read_file = %+v", res)
	}
	json.Unmarshal(p.mustCall("mcp/configure", map[string]any{"servers": map[string]any{}}), &st)
	if len(st.Servers) != 0 {
		t.Fatalf("after removal: %+v", st)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		list.Tools = nil
		json.Unmarshal(p.mustCall("tools/list", nil), &list)
		gone := true
		for _, tl := range list.Tools {
			if strings.HasPrefix(tl.Name, "mcp__tx__") {
				gone = false
			}
		}
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("mcp__tx__ tools still listed after removal")
		}
		time.Sleep(50 * time.Millisecond)
	}
	json.Unmarshal(p.mustCall("mcp/status", nil), &st)
	if len(st.Servers) != 0 {
		t.Fatalf("mcp/status = %+v", st)
	}
}

// A stdio MCP server the JSON-RPC mode starts (a shell that writes its
// environment, then the runtime's own MCP server) does not inherit the
// provider keys of the runtime's environment (run_command's rule).
func TestMCPServerEnvWithoutProviderKeys(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env.txt")
	p := start(t, "OPENAI_API_KEY=sk-e2e-openai-7777", "TASK_X_API_KEY=sk-e2e-taskx-8888", "PLAIN_SETTING=kept")
	p.initialize(nil)
	p.mustCall("mcp/configure", map[string]any{"servers": map[string]any{
		"dump": map[string]any{"command": "/bin/sh", "args": []string{"-c", `env > "$0"; exec "$1" --mcp-server --root "$2"`, out,
			filepath.Join(binDir, "task-x-runtime"), t.TempDir()}},
	}})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the server did not run: %v", err)
	}
	env := string(b)
	if strings.Contains(env, "sk-e2e-") || !strings.Contains(env, "PLAIN_SETTING=kept") {
		t.Fatalf("the server's environment:\n%s", env)
	}
}
