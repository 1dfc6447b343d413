package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPServerPolicyAndHooks: `--mcp-server --policy JSON --hooks FILE`
// runs every call through the session's tool-call pipeline with that
// policy and the PreToolUse hooks of the settings file: a deny rule and a
// refused class fail the call, one the policy would ask about is refused
// (nobody to ask), a blocking hook blocks, an allowed call runs; a bad
// flag ends the server with a message naming it.
func TestMCPServerPolicyAndHooks(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644)
	settings := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(settings, []byte(`{"hooks":{"PreToolUse":[{"matcher":"read_file","hooks":[{"type":"command","command":"echo 'hook says no' >&2; exit 2"}]}]}}`), 0o644)
	ctx := context.Background()
	cmd := exec.Command(filepath.Join(binDir, "task-x-runtime"), "--mcp-server", "--root", root,
		"--policy", `{"mode":"default","allow":["replace_text(a.txt)"],"deny":["write_file"]}`, "--hooks", settings)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string // "" runs
	}{
		{"write_file", map[string]any{"path": "b.txt", "content": "x\n"}, "denied by policy"},
		{"move_path", map[string]any{"from": "a.txt", "to": "c.txt"}, "nobody to ask"},
		{"read_file", map[string]any{"path": "a.txt"}, "hook says no"},
		{"replace_text", map[string]any{"path": "a.txt", "oldText": "hello", "newText": "bye"}, ""},
		{"list_files", map[string]any{}, ""},
	} {
		text, isErr := call(c.name, c.args)
		if c.want == "" {
			if isErr {
				t.Errorf("%s refused: %s", c.name, text)
			}
		} else if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s: %q (error %v), want %q", c.name, text, isErr, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "bye\n" {
		t.Errorf("a.txt %q", b)
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s written by a refused call", f)
		}
	}

	// A malformed flag: exit 2 with the flag named.
	for _, args := range [][]string{{"--policy", `{"mode":"yolo"}`}, {"--hooks", filepath.Join(root, "absent.json")}} {
		out, err := exec.Command(filepath.Join(binDir, "task-x-runtime"), append([]string{"--mcp-server", "--root", root}, args...)...).CombinedOutput()
		var ee *exec.ExitError
		if err == nil || !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), args[0]) {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}

// TestToolsCallRunsTheHooks: a client's tools/call runs the hooks of
// config/hooks: a blocking PreToolUse hook answers -32005 with kind
// denied and the hook's message, and the tool does not run; a call the
// hook lets through runs.
func TestToolsCallRunsTheHooks(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644)
	p := start(t)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": root})
	p.mustCall("config/hooks", map[string]any{"workspaceTrusted": false, "hooks": map[string]any{"PreToolUse": []any{map[string]any{
		"matcher": "delete_path", "hooks": []any{map[string]any{"type": "command", "command": "echo 'no deletes here' >&2; exit 2"}}}}}})
	_, rerr := p.call("tools/call", map[string]any{"name": "delete_path", "input": map[string]any{"path": "a.txt"}})
	var data struct{ Kind, Message string }
	if rerr == nil || rerr.Code != -32005 || json.Unmarshal(rerr.Data, &data) != nil || data.Kind != "denied" || !strings.Contains(data.Message, "no deletes here") {
		t.Fatalf("tools/call delete_path: %v", rerr)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
		t.Fatalf("a.txt deleted: %v", err)
	}
	p.mustCall("tools/call", map[string]any{"name": "read_file", "input": map[string]any{"path": "a.txt"}})
}
