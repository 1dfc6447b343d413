package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// smallWorkspace writes a tiny Go project and returns its root.
func smallWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.mod"] = "module demo\n\ngo 1.22\n"
	files["parser.go"] = "package demo\n\n// Parse parses a line.\nfunc Parse(line string) string { return line }\n"
	for rel, text := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestHooksBlockAgentToolCall: config/hooks through the binary, workspace
// hooks only when trusted, and an agent task whose run_command is blocked
// by a PreToolUse hook (exit 2): the command never runs, the model gets the
// hook's stderr, and a hook event reports it.
func TestHooksBlockAgentToolCall(t *testing.T) {
	root := smallWorkspace(t, map[string]string{
		".task-x/hooks.json": `{"PostToolUse": [{"matcher": "read_file", "hooks": [{"type": "command", "command": "exit 0"}]}]}`,
	})
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": "echo ran > ran.txt"}}}},
		{text: "The hook refused the command."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-hooks-1"}
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})

	user := map[string]any{"PreToolUse": []any{map[string]any{"matcher": "run_command|replace_text",
		"hooks": []any{map[string]any{"type": "command", "command": "cat > hook-input.json; echo 'commands are frozen today' >&2; exit 2", "timeout": 30}}}}}
	var res struct {
		Hooks          map[string]json.RawMessage `json:"hooks"`
		WorkspaceHooks map[string]json.RawMessage `json:"workspaceHooks"`
	}
	json.Unmarshal(p.mustCall("config/hooks", map[string]any{"hooks": user, "workspaceTrusted": false}), &res)
	if len(res.Hooks["PreToolUse"]) == 0 || len(res.WorkspaceHooks) != 0 {
		t.Fatalf("untrusted: %+v", res)
	}
	json.Unmarshal(p.mustCall("config/hooks", map[string]any{"hooks": user, "workspaceTrusted": true}), &res)
	if len(res.WorkspaceHooks["PostToolUse"]) == 0 {
		t.Fatalf("trusted: %+v", res)
	}
	if _, e := p.call("config/hooks", map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "(", "hooks": []any{}}}}}); e == nil || e.Code != -32602 {
		t.Fatalf("bad matcher: %v", e)
	}

	var sum struct {
		Status string `json:"status"`
	}
	json.Unmarshal(p.mustCall("agent/run", map[string]any{"prompt": "run it", "provider": prov, "chatMode": "agent",
		"policy": map[string]any{"mode": "default", "allowAll": true}}), &sum)
	if sum.Status != "completed" {
		t.Fatalf("status %s", sum.Status)
	}
	if _, err := os.Stat(filepath.Join(root, "ran.txt")); err == nil {
		t.Fatal("the blocked command ran")
	}
	in, _ := os.ReadFile(filepath.Join(root, "hook-input.json"))
	if !strings.Contains(string(in), `"tool_name":"run_command"`) || !strings.Contains(string(in), `"hook_event_name":"PreToolUse"`) {
		t.Fatalf("hook stdin = %s", in)
	}
	var hookEv map[string]any
	for _, n := range p.notifications("agent/event") {
		var ev struct {
			Event map[string]any `json:"event"`
		}
		json.Unmarshal(n.Params, &ev)
		if ev.Event["type"] == "hook" {
			hookEv = ev.Event
		}
	}
	if hookEv == nil || hookEv["event"] != "PreToolUse" || hookEv["blocked"] != true || hookEv["exitCode"] != float64(2) ||
		hookEv["output"] != "commands are frozen today\n" || hookEv["matcher"] != "run_command|replace_text" {
		t.Fatalf("hook event = %v", hookEv)
	}
	bodies := model.bodies()
	if len(bodies) != 2 || !strings.Contains(mustJSON(bodies[1]["messages"]), "commands are frozen today") {
		t.Fatalf("the model did not get the hook's stderr: %d requests", len(bodies))
	}
}

// TestSkillsThroughBinary: skills/list and skills/resolve with a workspace
// skill overriding a user skill of the same name, and an agent task whose
// system prompt carries the active skill.
func TestSkillsThroughBinary(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".task-x/skills/release"), 0o755)
	os.WriteFile(filepath.Join(home, ".task-x/skills/release/SKILL.md"), []byte("---\nname: release\ndescription: user one\n---\nuser body\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".task-x/skills/style"), 0o755)
	os.WriteFile(filepath.Join(home, ".task-x/skills/style/SKILL.md"), []byte("---\ndescription: Go style\npaths: ['**/*.go']\n---\nUse gofmt.\n"), 0o644)
	root := smallWorkspace(t, map[string]string{
		".claude/skills/release/SKILL.md": "---\nname: release\ndescription: Cut a release\ntriggers: [release]\nparams: [version, notes]\n---\nTag v{{version}}: {{notes}}\n",
	})
	p := start(t, "HOME="+home)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": root})
	var list struct {
		Skills []struct {
			Name, Description, Source string
		} `json:"skills"`
	}
	json.Unmarshal(p.mustCall("skills/list", map[string]any{}), &list)
	if len(list.Skills) != 2 || list.Skills[0].Name != "release" || list.Skills[0].Source != "workspace" ||
		list.Skills[0].Description != "Cut a release" || list.Skills[1].Name != "style" {
		t.Fatalf("skills/list = %+v", list)
	}
	var act struct {
		Active []struct{ Name, Reason, Source, Text string } `json:"active"`
	}
	json.Unmarshal(p.mustCall("skills/resolve", map[string]any{"prompt": "/release 1.2.0 first stable", "paths": []string{"parser.go"}}), &act)
	if len(act.Active) != 2 || act.Active[0].Text != "Tag v1.2.0: first stable" || act.Active[0].Reason != "command /release" ||
		act.Active[1].Name != "style" || act.Active[1].Source != "user" {
		t.Fatalf("skills/resolve = %+v", act)
	}
	if _, e := p.call("skills/resolve", map[string]any{"prompt": " "}); e == nil || e.Code != -32602 {
		t.Fatalf("empty prompt: %v", e)
	}

	model, srv := newScriptedModel(t, "anthropic", []step{{text: "ok"}})
	prov := map[string]any{"kind": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": srv.URL, "apiKey": "sk-ant-e2e-skills"}
	p.mustCall("agent/run", map[string]any{"prompt": "prepare the release notes", "provider": prov, "chatMode": "ask"})
	sys := mustJSON(model.bodies()[0]["system"])
	if !strings.Contains(sys, "Tag v: ") || !strings.Contains(sys, `reason=\"trigger \\\"release\\\"\"`) {
		t.Fatalf("system prompt lacks the active skill: %s", sys)
	}
}

// ollamaChunks serves /api/chat streaming the given content pieces and
// records the requests.
type ollamaChunks struct {
	mu     sync.Mutex
	pieces []string
	reqs   []map[string]any
}

func (o *ollamaChunks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	o.mu.Lock()
	o.reqs = append(o.reqs, req)
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for _, c := range o.pieces {
		enc.Encode(map[string]any{"model": req["model"], "message": map[string]any{"role": "assistant", "content": c}, "done": false})
		w.(http.Flusher).Flush()
	}
	enc.Encode(map[string]any{"model": req["model"], "message": map[string]any{"role": "assistant", "content": ""}, "done": true,
		"done_reason": "stop", "prompt_eval_count": 900, "eval_count": 120})
}

// TestPromptRefineThroughBinary: a real Ollama stream whose answer has a
// think block, a fence and <request> tags, each split across chunks;
// routing by task kind; the -32602 cases.
func TestPromptRefineThroughBinary(t *testing.T) {
	fake := &ollamaChunks{pieces: []string{"<thi", "nk>the user wants", " a fix</th", "ink>\n``", "`text\n<req", "uest>Fix the crash in `Parse` (parser.go) when the line is empty; add a test.</re", "quest>\n`", "``"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	routed := map[string]any{"kind": "ollama", "model": "bugfixer:7b", "baseUrl": srv.URL}
	plain := map[string]any{"kind": "ollama", "model": "qwen3:latest", "baseUrl": srv.URL}
	root := smallWorkspace(t, map[string]string{})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})

	// No workspace, no route for the kind: the plain provider.
	var res struct {
		Text, Kind, Model string
		Routed            bool
		Usage             struct{ InputTokens, OutputTokens int }
	}
	json.Unmarshal(p.mustCall("prompt/refine", map[string]any{"prompt": "fix the crash in Parse", "provider": plain,
		"routes": []any{map[string]any{"kinds": []string{"documentation"}, "provider": routed}}}), &res)
	want := "Fix the crash in `Parse` (parser.go) when the line is empty; add a test."
	if res.Text != want || res.Kind != "bugFix" || res.Model != "qwen3:latest" || res.Routed || res.Usage.InputTokens != 900 || res.Usage.OutputTokens != 120 {
		t.Fatalf("refine = %+v", res)
	}
	// With a workspace: the route for bugFix, and excerpts with focusPaths.
	p.mustCall("workspace/open", map[string]any{"root": root})
	json.Unmarshal(p.mustCall("prompt/refine", map[string]any{"prompt": "fix the crash in Parse",
		"routes": []any{map[string]any{"kinds": []string{"bugFix", "testing"}, "provider": routed}}, "focusPaths": []string{"parser.go"}}), &res)
	if res.Text != want || !res.Routed || res.Model != "bugfixer:7b" {
		t.Fatalf("routed refine = %+v", res)
	}
	fake.mu.Lock()
	last := mustJSON(fake.reqs[len(fake.reqs)-1]["messages"])
	fake.mu.Unlock()
	if !strings.Contains(last, "parser.go") || !strings.Contains(last, "func Parse") || !strings.Contains(last, "Rewrite this request (task kind: bugFix)") {
		t.Fatalf("the request lacks the excerpts or the prompt: %s", last)
	}
	for name, params := range map[string]map[string]any{
		"no route, no provider": {"prompt": "fix the crash", "routes": []any{map[string]any{"kinds": []string{"review"}, "provider": routed}}},
		"empty prompt":          {"prompt": "", "provider": plain},
		"prompt too long":       {"prompt": strings.Repeat("a", 100_001), "provider": plain},
		"bad route kind":        {"prompt": "x", "provider": plain, "routes": []any{map[string]any{"kinds": []string{"nope"}, "provider": routed}}},
	} {
		if _, e := p.call("prompt/refine", params); e == nil || e.Code != -32602 {
			t.Errorf("%s: %v", name, e)
		}
	}
	// 100 000 characters exactly is accepted.
	if _, e := p.call("prompt/refine", map[string]any{"prompt": strings.Repeat("a", 100_000), "provider": plain}); e != nil {
		t.Errorf("100 000 characters: %v", e)
	}
}
