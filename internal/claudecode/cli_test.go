package claudecode

import (
	"context"
	"encoding/json"
	"github.com/task-x/task-x-runtime/internal/provider"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCLI writes a shell script standing in for the CLI.
func fakeCLI(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func cliOptions(t *testing.T, bin string) Options {
	return Options{Bin: bin, Dir: t.TempDir(), Prompt: "hi", UseTaskTools: true, RuntimeBin: "/bin/true",
		Env: []string{"PATH=" + os.Getenv("PATH")}}
}

func TestCLIMissing(t *testing.T) {
	_, err := Start(context.Background(), cliOptions(t, filepath.Join(t.TempDir(), "no-claude")), Hooks{})
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), InstallHint) {
		t.Errorf("err = %v, want not found and the install command", err)
	}
}

func TestCLITooOld(t *testing.T) {
	bin := fakeCLI(t, `echo "2.0.5 (Claude Code)"`)
	_, err := Start(context.Background(), cliOptions(t, bin), Hooks{})
	if err == nil || !strings.Contains(err.Error(), "too old") || !strings.Contains(err.Error(), "2.0.5") ||
		!strings.Contains(err.Error(), MinVersion) || !strings.Contains(err.Error(), InstallHint) {
		t.Errorf("err = %v, want too old, the version found and needed, the install command", err)
	}
}

func TestCLIExitsAtOnce(t *testing.T) {
	bin := fakeCLI(t, `case "$1" in --version) echo "2.1.197 (Claude Code)"; exit 0;; esac
echo "Error: unknown option --bogus" >&2
exit 1`)
	r, err := Start(context.Background(), cliOptions(t, bin), Hooks{})
	if err != nil {
		if !strings.Contains(err.Error(), "exited") {
			t.Errorf("Start: %v", err)
		}
		return
	}
	sum, err := r.Wait()
	if err == nil || !strings.Contains(err.Error(), "code 1") || !strings.Contains(err.Error(), "unknown option") || sum.Status != "failed" {
		t.Errorf("Wait: status %s err %v, want failed with the exit code and stderr", sum.Status, err)
	}
}

// A sandbox that cannot start is reported with the CLI's own reason.
func TestCLIResultError(t *testing.T) {
	bin := fakeCLI(t, `case "$1" in --version) echo "2.1.197 (Claude Code)"; exit 0;; esac
echo '{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["Sandbox required but unavailable: bwrap not installed"]}'
exit 1`)
	r, err := Start(context.Background(), cliOptions(t, bin), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Wait()
	if err == nil || !strings.Contains(err.Error(), "Sandbox required but unavailable") {
		t.Errorf("err = %v", err)
	}
}

func TestArgs(t *testing.T) {
	o := &Options{Dir: "/w", RuntimeBin: "/opt/task x/rt", UseTaskTools: true, PermissionMode: "acceptEdits",
		ReadTools: []string{"read_file"}, WriteTools: []string{"replace_text"}, CommandTools: []string{"run_command"}}
	args, err := Args(o, "127.0.0.1:1 tok")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(args, "\x00")
	for _, want := range []string{"--strict-mcp-config", "--permission-prompt-tool\x00mcp__task-x__approve", "--replay-user-messages",
		`"failIfUnavailable":true`, `"allowUnsandboxedCommands":false`, `"enabled":true`, `'/opt/task x/rt' --hook-shell-edit`,
		"Bash(sed -i:*)", "--allowedTools\x00mcp__task-x__read_file,mcp__task-x__replace_text\x00", `"TASK_X_APPROVAL":"127.0.0.1:1 tok"`,
		`"args":["--mcp-server","--root","/w"]`} {
		if !strings.Contains(s, want) {
			t.Errorf("args lack %q: %q", want, args)
		}
	}
	if strings.Contains(s, "run_command") || strings.Contains(s, "bypassPermissions") || strings.Contains(s, "--data-dir") {
		t.Errorf("args: %q", args)
	}
	// The child shares the data folder's edit log under the task id; the
	// active skills follow the system prompt.
	o.DataDir, o.TaskID, o.System = "/data", "task-1", "<skill name=\"x\">do x</skill>"
	args, _ = Args(o, "a b")
	s = strings.Join(args, "\x00")
	if !strings.Contains(s, `"args":["--mcp-server","--root","/w","--data-dir","/data","--task-id","task-1"]`) ||
		!strings.Contains(s, "--append-system-prompt\x00"+SystemPrompt+"\n\n<skill name=\"x\">do x</skill>") {
		t.Errorf("data dir, task id, skills: %q", args)
	}
	o.ForwardTools = true // the engine's way: the child runs nothing itself
	args, _ = Args(o, "a b")
	if s := strings.Join(args, "\x00"); !strings.Contains(s, `"args":["--mcp-server","--root","/w","--forward"]`) {
		t.Errorf("forward: %q", args)
	}
	o.UseTaskTools, o.PermissionMode = false, ""
	args, _ = Args(o, "x y")
	s = strings.Join(args, "\x00")
	if !strings.Contains(s, `"--mcp-server","--no-tools"`) || strings.Contains(s, "--disallowedTools") || !strings.Contains(s, "TASK_X_HOOK=sandbox") ||
		strings.Contains(s, SystemPrompt) || !strings.Contains(s, "--append-system-prompt\x00<skill") {
		t.Errorf("useTaskTools false: %q", args)
	}
}

func TestArgsReservedName(t *testing.T) {
	o := &Options{Dir: "/w", RuntimeBin: "rt", MCPServers: map[string]json.RawMessage{"task-x": json.RawMessage(`{"command":"evil"}`)}}
	if _, err := Args(o, "a b"); err != ErrReservedServer {
		t.Errorf("err = %v", err)
	}
	o.PermissionMode = "bypassPermissions"
	o.MCPServers = nil
	if _, err := Args(o, "a b"); err == nil {
		t.Error("bypassPermissions accepted")
	}
}

// Transcript gives a continued task's conversation to the CLI: texts, tool
// calls and results in order, each part cut, the newest kept within limit.
func TestTranscript(t *testing.T) {
	if Transcript(nil, 1000) != "" {
		t.Error("no history must give no transcript")
	}
	long := strings.Repeat("x", 5000)
	h := []provider.Message{
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "old question"}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolUse, ID: "t1", Name: "read_file", Input: json.RawMessage(`{"path": "a.txt"}`)}}},
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, ToolUseID: "t1", ToolName: "read_file", Content: long}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: "the answer"}}},
	}
	s := Transcript(h, 100000)
	for _, want := range []string{"[user] old question\n", `[tool call read_file] {"path":"a.txt"}`, "[tool result read_file] xxx", " […]\n", "[assistant] the answer\n</earlier-conversation>"} {
		if !strings.Contains(s, want) {
			t.Errorf("transcript lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, long) {
		t.Error("a long result is not cut")
	}
	s = Transcript(h, 100)
	if strings.Contains(s, "old question") || !strings.Contains(s, "the answer") || !strings.Contains(s, "left out") {
		t.Errorf("limit 100 must keep the newest entries: %s", s)
	}
}
