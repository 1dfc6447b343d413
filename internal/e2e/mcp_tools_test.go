package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPServerModeServesEveryTool drives `task-x-runtime --mcp-server
// --root DIR` with the go-sdk MCP client: every tool of tools/list is called
// and works as through the protocol (the project layer gives find_symbols,
// get_dependencies and retrieve_context the parsed index, the graph and
// retrieval; edits go through the edit log). A tool listed without a case
// here fails the test.
func TestMCPServerModeServesEveryTool(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("config/config.go", "package config\n\n// ParseConfig reads the retry settings.\nfunc ParseConfig() int { return 3 }\n")
	write("main.go", "package main\n\nimport \"example.com/m/config\"\n\nfunc main() { _ = config.ParseConfig() }\n")
	write("notes.txt", "one\ntwo\nthree\n")

	ctx := context.Background()
	cmd := exec.Command(filepath.Join(binDir, "task-x-runtime"), "--mcp-server", "--root", root)
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	ok := func(name string, args map[string]any, want ...string) string {
		t.Helper()
		text, isErr := call(name, args)
		if isErr {
			t.Fatalf("%s failed: %s", name, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Fatalf("%s: result lacks %q:\n%s", name, w, text)
			}
		}
		return text
	}
	cases := map[string]func(){
		"read_file":   func() { ok("read_file", map[string]any{"path": "notes.txt"}, "two") },
		"list_files":  func() { ok("list_files", map[string]any{}, "config/", "main.go") },
		"search_text": func() { ok("search_text", map[string]any{"query": "retry settings"}, "config/config.go") },
		"find_symbols": func() {
			ok("find_symbols", map[string]any{"query": "ParseConfig"}, "config/config.go:4-4 function ParseConfig")
		},
		"get_dependencies": func() {
			ok("get_dependencies", map[string]any{"path": "main.go"}, "config/config.go")
		},
		"retrieve_context": func() {
			ok("retrieve_context", map[string]any{"query": "where are retry settings parsed"}, "## Repository excerpts", "config/config.go")
		},
		"write_file": func() { ok("write_file", map[string]any{"path": "new.txt", "content": "fresh\n"}, "Created new.txt") },
		"replace_text": func() {
			ok("replace_text", map[string]any{"path": "notes.txt", "oldText": "two", "newText": "TWO"}, "Replaced 1 occurrence")
			if text, isErr := call("replace_text", map[string]any{"path": "notes.txt", "oldText": "absent", "newText": "x"}); !isErr || !strings.Contains(text, "not found") {
				t.Fatalf("replace_text without a match: %v %s", isErr, text)
			}
		},
		"apply_patch": func() {
			ok("apply_patch", map[string]any{"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n TWO\n-three\n+3\n"}, "modified notes.txt")
		},
		"move_path": func() {
			ok("move_path", map[string]any{"from": "new.txt", "to": "moved.txt"}, "Moved new.txt to moved.txt")
		},
		"delete_path": func() { ok("delete_path", map[string]any{"path": "moved.txt"}) },
		"run_command": func() {
			text, isErr := call("run_command", map[string]any{"command": "cat notes.txt"})
			if isErr && strings.Contains(text, "sandbox") {
				t.Logf("run_command: the kernel cannot sandbox here: %s", text)
				return
			}
			if isErr || !strings.Contains(text, "one\nTWO\n3") {
				t.Fatalf("run_command: %v %s", isErr, text)
			}
		},
		"approve": func() {
			// Without TASK_X_APPROVAL every permission request is denied.
			ok("approve", map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "ls"}}, `"behavior":"deny"`)
		},
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	for _, want := range []string{"find_symbols", "get_dependencies", "retrieve_context", "search_text", "apply_patch"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	// Edits first in a fixed order, reads after them see the edited tree.
	order := []string{"read_file", "list_files", "search_text", "find_symbols", "get_dependencies", "retrieve_context",
		"write_file", "replace_text", "apply_patch", "move_path", "delete_path", "run_command", "approve"}
	for _, n := range names {
		if cases[n] == nil {
			t.Errorf("tools/list has %s, which this test does not call", n)
		}
	}
	for _, n := range order {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+n+",") {
			t.Errorf("tools/list lacks %s", n)
			continue
		}
		cases[n]()
	}
	if data, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(data) != "one\nTWO\n3\n" {
		t.Fatalf("notes.txt = %q", data)
	}
	if _, err := os.Stat(filepath.Join(root, "moved.txt")); !os.IsNotExist(err) {
		t.Fatalf("moved.txt still exists: %v", err)
	}
}
