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

// everythingServer returns the mcp/configure entry of the npm
// @modelcontextprotocol/server-everything over stdio: the bin .ci/run
// installed under $TASK_X_MCP_NPM, else npx with the pinned version.
func everythingServer(t *testing.T) map[string]any {
	t.Helper()
	if dir := os.Getenv("TASK_X_MCP_NPM"); dir != "" {
		bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("TASK_X_MCP_NPM is set but %s is missing: run .ci/run", bin)
		}
		return map[string]any{"type": "stdio", "command": bin, "args": []string{"stdio"}}
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("TASK_X_MCP_NPM is unset and npx is unavailable: install the npm MCP servers with .ci/run")
	}
	return map[string]any{"type": "stdio", "command": npx, "args": []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"}}
}

// configureEverything configures server-everything as "everything" and waits
// (mcp/configure waits at most 5 s; npm servers can start slower) until
// mcp/status reports it running with its echo tool.
func configureEverything(t *testing.T, p *proc) {
	t.Helper()
	p.mustCall("mcp/configure", map[string]any{"servers": map[string]any{"everything": everythingServer(t)}, "workspaceTrusted": false})
	deadline := time.Now().Add(90 * time.Second)
	for {
		var st struct {
			Servers []struct {
				Name    string   `json:"name"`
				Running bool     `json:"running"`
				Tools   []string `json:"tools"`
				Error   *string  `json:"error"`
			} `json:"servers"`
		}
		raw := p.mustCall("mcp/status", nil)
		json.Unmarshal(raw, &st)
		if len(st.Servers) == 1 && st.Servers[0].Running && contains(st.Servers[0].Tools, "echo") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not start: %s", raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// toolNames returns the names of the tools offered in an OpenAI request body.
func toolNames(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		fn, _ := x.(map[string]any)["function"].(map[string]any)
		if name, ok := fn["name"].(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// TestAgentCallsMCPToolWithApproval: an agent task in agent mode whose model
// calls mcp__everything__echo of the real npm server-everything. The call
// asks agent/requestApproval with permission "mcp" (approvalRequested and
// approvalResolved events); after allow, the echo reaches the model as the
// tool result. A second call in the same task, denied, never reaches the
// server and the model is told so.
func TestAgentCallsMCPToolWithApproval(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "mcp__everything__echo", input: map[string]any{"message": "hello-through-mcp-42"}}}},
		{calls: []scriptedCall{{name: "mcp__everything__echo", input: map[string]any{"message": "denied-echo-77"}}}},
		{text: "The server echoed it."},
	})
	p := start(t)
	var approvals []map[string]any
	p.onRequest = func(method string, params json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		var req map[string]any
		json.Unmarshal(params, &req)
		approvals = append(approvals, req)
		if in, _ := req["input"].(map[string]any); in["message"] == "denied-echo-77" {
			return map[string]any{"decision": "deny"}
		}
		return map[string]any{"decision": "allow"}
	}
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	configureEverything(t, p)

	res := p.mustCall("agent/run", map[string]any{"prompt": "Echo a message through the MCP server.", "provider": openaiProvider(srv.URL, "sk-mcp-agent-key"), "chatMode": "agent"})
	var sum struct {
		Status    string `json:"status"`
		ToolCalls int    `json:"toolCalls"`
	}
	json.Unmarshal(res, &sum)
	if sum.Status != "completed" || sum.ToolCalls != 2 {
		t.Fatalf("summary: %s", res)
	}
	if len(approvals) != 2 {
		t.Fatalf("approvals: %v", approvals)
	}
	for _, a := range approvals {
		if a["tool"] != "mcp__everything__echo" || a["permission"] != "mcp" || a["taskId"] == nil || a["callId"] == nil {
			t.Fatalf("approval request: %v", a)
		}
	}
	if in, _ := approvals[0]["input"].(map[string]any); in["message"] != "hello-through-mcp-42" {
		t.Fatalf("approval input: %v", approvals[0]["input"])
	}
	bodies := model.bodies()
	if len(bodies) != 3 {
		t.Fatalf("model received %d requests", len(bodies))
	}
	if !contains(toolNames(bodies[0]), "mcp__everything__echo") {
		t.Fatalf("agent mode does not offer the MCP tool: %v", toolNames(bodies[0]))
	}
	// The allowed echo's result (the server's "Echo: <message>") is the tool
	// result of the second request; the denied one never ran.
	second := mustJSON(bodies[1]["messages"])
	if !strings.Contains(second, "Echo: hello-through-mcp-42") {
		t.Fatalf("the echo result did not reach the model: %.2000s", second)
	}
	third := mustJSON(bodies[2]["messages"])
	if strings.Contains(third, "Echo: denied-echo-77") {
		t.Fatalf("the denied call ran: %.2000s", third)
	}
	checkToolPairs(t, "openai", bodies)
	types := eventTypes(p.notifications("agent/event"))
	for _, want := range []string{"approvalRequested", "approvalResolved", "toolStarted", "toolFinished", "done"} {
		if !contains(types, want) {
			t.Errorf("no %s event; got %v", want, types)
		}
	}
}

// TestAgentCallsMCPToolAllowAllInAskMode: with policy allowAll, the MCP tool
// is offered in the read-only ask mode (protocol.md, policy) and runs with no
// agent/requestApproval; without allowAll, ask mode does not offer it.
func TestAgentCallsMCPToolAllowAllInAskMode(t *testing.T) {
	repo := smallRepo(t, "unused")
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "mcp__everything__echo", input: map[string]any{"message": "allow-all-echo-9"}}}},
		{text: "Echoed."},
	})
	p := start(t)
	asked := 0
	p.onRequest = func(method string, params json.RawMessage) any {
		if method == "agent/requestApproval" {
			asked++
			return map[string]any{"decision": "deny"}
		}
		return nil
	}
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	configureEverything(t, p)

	res := p.mustCall("agent/run", map[string]any{
		"prompt": "Echo through MCP.", "provider": openaiProvider(srv.URL, "sk-mcp-agent-key"), "chatMode": "ask",
		"policy": map[string]any{"mode": "default", "allowAll": true},
	})
	var sum struct {
		Status string `json:"status"`
	}
	json.Unmarshal(res, &sum)
	if sum.Status != "completed" || asked != 0 {
		t.Fatalf("summary %s, approvals asked %d", res, asked)
	}
	bodies := model.bodies()
	if len(bodies) != 2 {
		t.Fatalf("model received %d requests", len(bodies))
	}
	offered := toolNames(bodies[0])
	if !contains(offered, "mcp__everything__echo") {
		t.Fatalf("ask mode with allowAll does not offer the MCP tool: %v", offered)
	}
	if contains(offered, "write_file") || contains(offered, "run_command") {
		t.Fatalf("ask mode offers write tools: %v", offered)
	}
	if !strings.Contains(mustJSON(bodies[1]["messages"]), "Echo: allow-all-echo-9") {
		t.Fatalf("the echo result did not reach the model: %.2000s", mustJSON(bodies[1]["messages"]))
	}
	checkToolPairs(t, "openai", bodies)

	// Without allowAll, ask mode offers no MCP tool.
	model2, srv2 := newScriptedModel(t, "openai", []step{{text: "No tools needed."}})
	p.mustCall("agent/run", map[string]any{"prompt": "Just answer.", "provider": openaiProvider(srv2.URL, "sk-mcp-agent-key"), "chatMode": "ask"})
	if offered := toolNames(model2.bodies()[0]); contains(offered, "mcp__everything__echo") {
		t.Fatalf("ask mode without allowAll offers the MCP tool: %v", offered)
	}
}
