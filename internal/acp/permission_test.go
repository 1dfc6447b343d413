package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// allow_always is the runtime's allowSession, kept for the ACP session: it
// covers only the programs of the command shown (a later `ls pkg` runs
// unasked, in this prompt and the next; `touch x` asks);
// reject_always refuses later commands of the programs shown without
// asking and nothing else; a subagent's reject_always is its own, not its
// lead's.
func TestPermissionScope(t *testing.T) {
	cmds := []string{"ls", "touch x", "ls .", "touch y", "echo hi"}
	_, url := newFakeModel(t, func(prompt string, n int) turn {
		if strings.Contains(prompt, "run them") && n < len(cmds) {
			return turn{calls: []call{{"run_command", map[string]any{"command": cmds[n]}}}}
		}
		return turn{text: "done"}
	})
	cfg := testConfig(t, url)
	off := false
	cfg.Sandbox = &off
	p := startAgent(t, cfg)
	var mu sync.Mutex
	var asked []string
	p.answer = func(_ string, params json.RawMessage) any {
		var r struct {
			ToolCall struct {
				RawInput struct{ Command string } `json:"rawInput"`
			} `json:"toolCall"`
		}
		json.Unmarshal(params, &r)
		c := r.ToolCall.RawInput.Command
		mu.Lock()
		asked = append(asked, c)
		mu.Unlock()
		choice := map[string]string{"ls": "allow_always", "touch x": "reject_always", "rm a": "reject_always"}[c]
		if choice == "" {
			choice = "reject_once"
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}}
	}
	p.call("initialize", map[string]any{"protocolVersion": 1})
	dir := workspace(t)
	_, res := p.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	var ns struct{ SessionID string }
	json.Unmarshal(res, &ns)
	p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "run them"}}})
	mu.Lock()
	got := strings.Join(asked, "|")
	mu.Unlock()
	if got != "ls|touch x|echo hi" {
		t.Fatalf("asked about %q, want ls|touch x|echo hi (ls . covered by allow_always of ls, touch y refused by reject_always of touch x)", got)
	}
	for _, f := range []string{"x", "y"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}

	// Both always answers hold for the rest of the ACP session: the next
	// prompt runs ls unasked and refuses touch unasked; echo (answered
	// reject_once) is asked again.
	mu.Lock()
	asked = nil
	mu.Unlock()
	p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "run them"}}})
	mu.Lock()
	got = strings.Join(asked, "|")
	mu.Unlock()
	if got != "echo hi" {
		t.Fatalf("second prompt asked about %q, want echo hi (allow_always of ls and reject_always of touch are the session's)", got)
	}

	// A subagent's reject_always stays its own.
	a := p.agent
	s, err := a.session(ns.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	a.subagent("sub-1", s)
	ask := func(task, cmd string) protocol.Decision {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		raw, err := a.requestPermission(context.Background(), protocol.RequestApprovalParams{TaskID: task, CallID: "c-" + cmd, Tool: "run_command",
			Permission: protocol.Permission("command"), Input: in})
		if err != nil {
			t.Fatal(err)
		}
		var r protocol.RequestApprovalResult
		json.Unmarshal(raw, &r)
		return r.Decision
	}
	mu.Lock()
	asked = nil
	mu.Unlock()
	if d := ask("sub-1", "rm a"); d != protocol.DecisionDeny {
		t.Fatalf("subagent reject_always: %s", d)
	}
	ask("sub-1", "rm b")
	ask(ns.SessionID, "rm c")
	ask(ns.SessionID, "touch z")
	mu.Lock()
	got = strings.Join(asked, "|")
	mu.Unlock()
	if got != "rm a|rm c" {
		t.Fatalf("asked about %q, want rm a|rm c (the subagent's reject of rm is not its lead's; the lead's reject of touch holds)", got)
	}
}

// A permission request the client answers with a line that cannot be read
// (invalid UTF-8, a response without "jsonrpc") is a failed request, so a
// deny: the turn goes on instead of waiting for an answer that has come.
func TestPermissionUnreadableAnswer(t *testing.T) {
	for name, answer := range map[string]string{
		"invalid UTF-8": `{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}},"x":"` + "\xff" + `"}`,
		"no jsonrpc":    `{"id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, url := newFakeModel(t, func(prompt string, n int) turn {
				if n == 0 {
					return turn{calls: []call{{"write_file", map[string]any{"path": "w.txt", "content": "w\n"}}}}
				}
				return turn{text: "done"}
			})
			p := startAgent(t, testConfig(t, url))
			p.call("initialize", map[string]any{"protocolVersion": 1})
			dir := workspace(t)
			_, res := p.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
			var ns struct{ SessionID string }
			json.Unmarshal(res, &ns)
			id := p.send("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "write"}}})
			_, req := p.waitMsg(0, func(m msg) bool { return m.Method == "session/request_permission" })
			fmt.Fprintf(p.in, answer+"\n", req.ID)
			_, m := p.reply(id)
			if m.Error != nil || !strings.Contains(string(m.Result), `"end_turn"`) {
				t.Fatalf("prompt: %s %+v", m.Result, m.Error)
			}
			if _, err := os.Stat(filepath.Join(dir, "w.txt")); err == nil {
				t.Fatal("w.txt was written: an unreadable answer allowed the call")
			}
		})
	}
}
