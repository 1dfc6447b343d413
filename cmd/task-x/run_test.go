package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"fmt"
	"strings"

	"bytes"
	"encoding/json"
	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"testing"
	"time"
)

func TestPlainJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"command":"make \u0026\u0026 make test"}`, `{"command":"make && make test"}`},
		{`{"a":"\u003cb\u003e","b":"\u003Cc\u003E"}`, `{"a":"<b>","b":"<c>"}`},
		// An escaped backslash before "u0026" is text, not an escape.
		{`{"p":"C:\\u0026"}`, `{"p":"C:\\u0026"}`},
		// Other escapes and the key order stay as they are.
		{`{"z":"a\nb\"c","a":1}`, `{"z":"a\nb\"c","a":1}`},
		{`"\u00e9"`, `"\u00e9"`},
		{`"trailing \`, `"trailing \`},
		{`"\u00`, `"\u00`},
	} {
		if got := plainJSON(json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("plainJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// What encoding/json produces comes back as the user typed it.
	raw, _ := json.Marshal(map[string]string{"command": "a && b > c"})
	if got := plainJSON(raw); got != `{"command":"a && b > c"}` {
		t.Errorf("round trip: %s", got)
	}
}

// TestWaitDone: the summary waits for the task's `done` event (which may still
// be queued when the agent/run response arrives), and only for that task's.
func TestWaitDone(t *testing.T) {
	var out, errb bytes.Buffer
	p := &printer{w: &out, ew: &errb}
	go func() {
		time.Sleep(50 * time.Millisecond)
		p.event(json.RawMessage(`{"taskId":"sub","event":{"type":"done"}}`))
		p.event(json.RawMessage(`{"taskId":"t1","event":{"type":"textDelta","text":"answer"}}`))
		p.event(json.RawMessage(`{"taskId":"t1","event":{"type":"done"}}`))
		p.event(json.RawMessage(`{"taskId":"t1","event":{"type":"done"}}`)) // a repeat must not panic
	}()
	start := time.Now()
	p.waitDone("t1", 5*time.Second)
	if time.Since(start) >= 5*time.Second {
		t.Fatal("waitDone timed out although done arrived")
	}
	p.mu.Lock()
	got := out.String()
	p.mu.Unlock()
	if got != "answer" {
		t.Fatalf("after waitDone stdout = %q, want the whole answer", got)
	}
	// A task whose done never comes: waitDone gives up after the timeout.
	start = time.Now()
	p.waitDone("never", 100*time.Millisecond)
	if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
		t.Fatalf("waitDone without done returned after %v", d)
	}
}

func TestCommandStatus(t *testing.T) {
	for in, want := range map[string]string{
		`{"exitCode":0,"output":"x"}`:     "ok",
		`{"exitCode":2}`:                  "exit code 2",
		`{"exitCode":-1,"timedOut":true}`: "timed out",
		`{"cancelled":true}`:              "cancelled",
		`"some text"`:                     "ok",
		``:                                "ok",
	} {
		if got := commandStatus(json.RawMessage(in)); got != want {
			t.Errorf("commandStatus(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestFriendly: protocol errors read as one sentence naming the fix; the
// code and the runtime's message only with --verbose.
func TestFriendly(t *testing.T) {
	auth := &jsonrpc.Error{Code: -32001, Message: "provider error", Data: map[string]any{"kind": "auth", "message": "invalid x-api-key"}}
	network := &jsonrpc.Error{Code: -32001, Message: "dial tcp 127.0.0.1:9: connection refused", Data: map[string]any{"kind": "network"}}
	cfg := &jsonrpc.Error{Code: -32602, Message: "invalid params", Data: map[string]any{"kind": "invalidConfig", "field": "provider.model"}}
	defer func() { g.verbose = false }()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{auth, "the provider refused the API key; set ANTHROPIC_API_KEY, OPENAI_API_KEY or TASK_X_API_KEY for this provider"},
		{network, "the provider could not be reached; check --base-url and that the server is running"},
		{cfg, "the provider settings are not valid (provider.model); fix them with --provider, --model or --base-url"},
		{&jsonrpc.Error{Code: -32004, Message: "no workspace"}, "no folder is open in the runtime; pass the folder to work on"},
		{&jsonrpc.Error{Code: -32602, Message: "invalid provider config: apiKey", Data: map[string]any{"kind": "invalidConfig", "field": "provider.apiKey",
			"message": "an apiKey is only sent over https unless the host is loopback (localhost, 127.0.0.0/8, ::1); use https for 192.168.1.5"}},
			"nothing was sent: a key goes only over https or to this machine (localhost, 127.0.0.1, ::1), and --base-url is plain http to 192.168.1.5; use an https URL, or reach the server through 127.0.0.1 (e.g. ssh -L)"},
		{&jsonrpc.Error{Code: -32602, Message: "invalid provider config: apiKey is required", Data: map[string]any{"kind": "invalidConfig", "field": "provider.apiKey",
			"message": "apiKey is required for kind openai"}},
			"nothing was sent: this provider needs an API key; set ANTHROPIC_API_KEY, OPENAI_API_KEY or TASK_X_API_KEY"},
	} {
		g.verbose = false
		got := friendly(tc.err)
		if got != tc.want {
			t.Errorf("friendly(%v) = %q, want %q", tc.err, got, tc.want)
		}
		if strings.Contains(got, "code -3") {
			t.Errorf("a code without --verbose: %q", got)
		}
		g.verbose = true
		if v := friendly(tc.err); !strings.HasPrefix(v, tc.want) || !strings.Contains(v, fmt.Sprintf("code %d", tc.err.(*jsonrpc.Error).Code)) {
			t.Errorf("--verbose: %q", v)
		}
	}
}

// TestWarningNamesFlag: the runtime's hint names limits.contextWindowTokens,
// which task-x sets with --context-window (issue 38 item 8).
func TestWarningNamesFlag(t *testing.T) {
	got := warningText("it may have cut the prompt. Set limits.contextWindowTokens to the model's real window", flagWords)
	if !strings.Contains(got, "--context-window") || strings.Contains(got, "limits.") {
		t.Errorf("warningText = %q", got)
	}
	// In the session no command sets it: start again with the flag.
	if got := warningText("Set limits.contextWindowTokens to the model's real window", sessionWords); !strings.HasPrefix(got, "Start task-x again with --context-window") {
		t.Errorf("in the session: %q", got)
	}
	if approvalTitle(protocol.RequestApprovalParams{Tool: "replace_text", Permission: "edit", Input: []byte(`{"path":"a.go"}`)}) != "the agent wants to edit a.go (replace_text)" {
		t.Error("approvalTitle for an edit")
	}
}

// TestDefaultToRun: with no command, the arguments are run's (task-x -p
// "explain", task-x "prompt"); a command, --help and --version are kept.
func TestDefaultToRun(t *testing.T) {
	root := newRoot()
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"-p", "explain"}, "run -p explain"},
		{[]string{"fix the bug"}, "run fix the bug"},
		{nil, "run"},
		{[]string{"--data-dir", "/x", "tasks"}, "--data-dir /x tasks"},
		{[]string{"graph", "."}, "graph ."},
		{[]string{"--help"}, "--help"},
		{[]string{"-C", "src", "--version"}, "-C src --version"},
	} {
		if got := strings.Join(defaultToRun(root, c.in), " "); got != c.want {
			t.Errorf("defaultToRun(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSummaryFailedCheckOutput: a failed check shows why (the last lines
// of its output) under its name; the fresh pass found "FAILED lint" with
// nothing to say it could not create the Go build cache.
func TestSummaryFailedCheckOutput(t *testing.T) {
	sum := &taskSummary{TaskID: "t1", Status: "completed", Validations: []protocol.ValidationResult{
		{Name: "lint", Passed: false, ExitCode: 1, Output: "a\nb\nfailed to initialize build cache: permission denied\n"},
		{Name: "test", Passed: true, Output: "ok\n"},
	}}
	got := formatSummary(newStyles(false), sum, time.Second, defaults{}, false, 0, flagWords)
	if !strings.Contains(got, "  FAILED lint\n    a\n    b\n    failed to initialize build cache: permission denied\n  passed test\n") {
		t.Errorf("summary:\n%s", got)
	}
}
