package toolcall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/claudecode"
	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/sandbox"
	"github.com/task-x/task-x-runtime/internal/session"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/tool/builtin"
	"github.com/task-x/task-x-runtime/internal/toolcall"
	"github.com/task-x/task-x-runtime/internal/validate"
)

func TestMain(m *testing.M) {
	sandbox.HelperMain() // hook commands run under the sandbox helper
	os.Exit(m.Run())
}

// The configuration every path gets: deny and allow rules, a PreToolUse
// hook that blocks delete_path, a PostToolUse hook that adds feedback to
// read_file, and a user who allows move_path and denies anything else.
const (
	policyJSON = `{"mode":"default","allow":["replace_text(a.txt)"],"deny":["write_file"]}`
	hooksJSON  = `{"PreToolUse": [{"matcher": "delete_path", "hooks": [{"type": "command", "command": "echo 'no deletes here' >&2; exit 2"}]}],
		"PostToolUse": [{"matcher": "read_file", "hooks": [{"type": "command", "command": "echo 'post: checked' >&2; exit 2"}]}]}`
)

// outcome is what one call gave: the text the model or client sees,
// whether it is an error, and the previews the user was asked with.
type outcome struct {
	Text     string
	IsError  bool
	Previews []string
}

// pathCase is one call and the decision every path must make.
type pathCase struct {
	name, tool, input string
	check             func(t *testing.T, o outcome)
}

var pathCases = []pathCase{
	{"read runs, PostToolUse adds its feedback", "read_file", `{"path":"a.txt"}`, func(t *testing.T, o outcome) {
		if o.IsError || !strings.Contains(o.Text, "hello") || !strings.Contains(o.Text, "post: checked") || len(o.Previews) != 0 {
			t.Errorf("%+v", o)
		}
	}},
	{"deny rule", "write_file", `{"path":"b.txt","content":"x\n"}`, func(t *testing.T, o outcome) {
		if !o.IsError || !strings.HasPrefix(o.Text, "denied by policy: ") || len(o.Previews) != 0 {
			t.Errorf("%+v", o)
		}
	}},
	{"allow rule runs without asking", "replace_text", `{"path":"a.txt","oldText":"hello","newText":"bye"}`, func(t *testing.T, o outcome) {
		if o.IsError || len(o.Previews) != 0 {
			t.Errorf("%+v", o)
		}
	}},
	{"allowed call, tool error", "replace_text", `{"path":"a.txt","oldText":"zzz","newText":"y"}`, func(t *testing.T, o outcome) {
		if !o.IsError || o.Text == "" || len(o.Previews) != 0 {
			t.Errorf("%+v", o)
		}
	}},
	{"ask with the real diff, denied", "replace_text", `{"path":"d.txt","oldText":"one","newText":"two"}`, func(t *testing.T, o outcome) {
		if !o.IsError || o.Text != toolcall.ResultDenied || len(o.Previews) != 1 ||
			!strings.Contains(o.Previews[0], "-one") || !strings.Contains(o.Previews[0], "+two") {
			t.Errorf("%+v", o)
		}
	}},
	{"ask with the input's preview, allowed", "move_path", `{"from":"a.txt","to":"c.txt"}`, func(t *testing.T, o outcome) {
		if o.IsError || len(o.Previews) != 1 || o.Previews[0] != "move a.txt → c.txt" {
			t.Errorf("%+v", o)
		}
	}},
	{"a PreToolUse hook blocks", "delete_path", `{"path":"a.txt"}`, func(t *testing.T, o outcome) {
		if !o.IsError || !strings.Contains(o.Text, "no deletes here") || len(o.Previews) != 0 {
			t.Errorf("%+v", o)
		}
	}},
}

// fixture is one fresh workspace: its root, project, registry and the
// recorder of the approvals asked.
type fixture struct {
	root  string
	proj  *project.Project
	tools *tool.Registry
	pol   policy.Policy
	hooks *hooks.Runner

	mu       sync.Mutex
	previews []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(root, "d.txt"), []byte("one\n"), 0o644)
	proj, err := project.Open(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proj.Close() })
	pol, err := policy.Parse(json.RawMessage(policyJSON))
	if err != nil {
		t.Fatal(err)
	}
	conf, err := hooks.Parse([]byte(hooksJSON))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{root: root, proj: proj, tools: builtin.Registry(nil), pol: pol,
		hooks: hooks.NewRunner(hooks.Options{User: conf, Root: root})}
}

// decide is the user: move_path is allowed, anything else denied; each
// preview is recorded as agent/requestApproval carries it.
func (f *fixture) decide(name, preview string) bool {
	f.mu.Lock()
	f.previews = append(f.previews, toolcall.CutPreview(preview))
	f.mu.Unlock()
	return name == "move_path"
}

// job is the task a front end's hooks run in.
func (f *fixture) job(env *tool.Env) *task.Job {
	return &task.Job{TaskID: "task-paths", Tools: f.tools, Env: env, Hooks: f.hooks, Emit: func(protocol.AgentEvent) {}}
}

// middleware is the hooks and policy a front end without the agent loop
// puts in its pipeline.
func (f *fixture) middleware(env *tool.Env) []toolcall.Middleware {
	job := f.job(env)
	return []toolcall.Middleware{toolcall.WithHooks(toolcall.Hooks{Pre: job.PreToolUse, Post: job.PostToolUse}), f.gate()}
}

// gate is the fixture's policy with its user.
func (f *fixture) gate() toolcall.Middleware {
	return toolcall.PolicyGate(f.pol, func(ctx context.Context, c *toolcall.Call, preview string) bool { return f.decide(c.Name, preview) })
}

// scripted is a model that makes one call, then ends.
type scripted struct {
	mu   sync.Mutex
	n    int
	call provider.ToolCall
}

func (s *scripted) Config() provider.Config {
	return provider.Config{Kind: provider.Anthropic, Model: "fake-model"}
}

func (s *scripted) Stream(ctx context.Context, req *provider.Request, emit func(provider.Event)) (*provider.Result, error) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if n == 1 {
		return &provider.Result{ToolCalls: []provider.ToolCall{s.call}, StopReason: provider.StopToolUse}, nil
	}
	return &provider.Result{Text: "done", StopReason: provider.StopEndTurn}, nil
}

func (s *scripted) ListModels(context.Context) ([]provider.ModelInfo, error) {
	return nil, provider.ErrCannotList
}

func (s *scripted) Describe(context.Context) (provider.ModelInfo, error) {
	return provider.ModelInfo{}, provider.ErrCannotList
}

// The four paths a tool call takes.
var paths = []struct {
	name string
	run  func(t *testing.T, f *fixture, name string, input json.RawMessage) outcome
}{
	{"agent/run", func(t *testing.T, f *fixture, name string, input json.RawMessage) outcome {
		off := false
		env := f.proj.Env(false, "task-paths")
		_, msgs := agent.Run(context.Background(),
			agent.Params{TaskID: "task-paths", Prompt: "go", ChatMode: "agent", Policy: f.pol, Validation: validateOff(&off)},
			agent.Options{Provider: &scripted{call: provider.ToolCall{ID: "call_1", Name: name, Input: input}}, Tools: f.tools, Env: env,
				Hooks: f.hooks, Approve: func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
					if f.decide(req.Tool, req.Preview) {
						return task.Answer{Decision: task.DecisionAllow}, nil
					}
					return task.Answer{Decision: task.DecisionDeny}, nil
				}})
		for _, m := range msgs {
			for _, p := range m.Content {
				if p.Type == provider.PartToolResult && p.ToolUseID == "call_1" {
					return outcome{Text: p.Content, IsError: p.IsError}
				}
			}
		}
		t.Fatalf("no tool result in %+v", msgs)
		return outcome{}
	}},
	{"claude/run forwarded", func(t *testing.T, f *fixture, name string, input json.RawMessage) outcome {
		env := f.proj.Env(false, "task-paths")
		// As the engine wires it: the run's Permissions gate the
		// forwarded calls in their pipeline.
		perms := claudecode.NewPermissions(claudecode.Hooks{Policy: f.pol, TaskID: "task-paths",
			ClassOf: func(name string) tool.Class { return claudecode.ClassOf(f.tools, name) },
			Approve: func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
				if f.decide(req.Tool, req.Preview) {
					return task.Answer{Decision: task.DecisionAllow}, nil
				}
				return task.Answer{Decision: task.DecisionDeny}, nil
			}})
		fw := claudecode.NewForwarded(f.job(env), perms.ForwardGate())
		ans := fw.Run(context.Background(), mcp.ToolCall{Name: name, Input: input, CallID: "call_1"})
		return outcome{Text: ans.Content, IsError: ans.IsError}
	}},
	{"--mcp-server", func(t *testing.T, f *fixture, name string, input json.RawMessage) outcome {
		// As runMCPServer wires it: the session's hooks (config/hooks)
		// and policy in ServedTools' middleware; here with a user to ask.
		sess := f.session(t)
		served, err := sess.ServedTools("", &f.pol, func(ctx context.Context, c *toolcall.Call, preview string) bool { return f.decide(c.Name, preview) })
		if err != nil {
			t.Fatal(err)
		}
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			mcp.Serve(ctx, sr, sw, &mcp.ServeOptions{Registry: served.Tools, Env: served.Env, OnChanges: served.OnChanges, Middleware: served.Middleware})
		}()
		defer func() { cancel(); sr.Close(); <-done }()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
			Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: input})
		if err != nil {
			t.Fatal(err)
		}
		return outcome{Text: res.Content[0].(*sdk.TextContent).Text, IsError: res.IsError}
	}},
	{"tools/call", func(t *testing.T, f *fixture, name string, input json.RawMessage) outcome {
		// The session's own hooks (config/hooks) run around the call;
		// tools/call has no policy of its own (the user asked for the
		// call), so the policy comes as a front end's middleware.
		sess := f.session(t, f.gate())
		raw, err := sess.CallTool(context.Background(), name, input)
		if err != nil {
			text, isErr := toolcall.Outcome{Err: err}.Text()
			return outcome{Text: text, IsError: isErr}
		}
		var res struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		return outcome{Text: res.Content}
	}},
}

// session is a session on the fixture's root with its hooks configured
// as config/hooks would (mw: a front end's own middleware for tools/call).
func (f *fixture) session(t *testing.T, mw ...toolcall.Middleware) *session.Session {
	t.Helper()
	sess := session.New(&session.Options{ToolMiddleware: mw})
	t.Cleanup(sess.Close)
	if _, err := sess.Open(context.Background(), f.root, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ConfigureHooks(json.RawMessage(hooksJSON), false); err != nil {
		t.Fatal(err)
	}
	return sess
}

// TestFourPathsSameDecisions runs the same calls through agent/run,
// claude/run's forwarded calls, --mcp-server and tools/call, each with
// the same policy, hooks and user: every path gives the same decision,
// result or error, and preview.
func TestFourPathsSameDecisions(t *testing.T) {
	for _, c := range pathCases {
		t.Run(c.name, func(t *testing.T) {
			var first outcome
			for i, p := range paths {
				f := newFixture(t)
				o := p.run(t, f, c.tool, json.RawMessage(c.input))
				o.Previews = f.previews
				c.check(t, o)
				t.Logf("%s: %q error=%v previews=%q", p.name, o.Text, o.IsError, o.Previews)
				if i == 0 {
					first = o
					continue
				}
				if fmt.Sprintf("%+v", o) != fmt.Sprintf("%+v", first) {
					t.Errorf("%s gave %+v;\n%s gave %+v", p.name, o, paths[0].name, first)
				}
			}
		})
	}
}

func validateOff(off *bool) (c validateConfig) {
	c.Enabled = off
	return c
}

type validateConfig = validate.Config

// TestServedToolsWithoutApprover: --mcp-server with a policy and nobody
// to ask refuses a call the policy asks about (naming why), runs an
// allowed one and refuses a denied one, and runs the session's hooks.
func TestServedToolsWithoutApprover(t *testing.T) {
	f := newFixture(t)
	sess := f.session(t)
	served, err := sess.ServedTools("", &f.pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &toolcall.Pipeline{Tools: served.Tools, Env: served.Env, Middleware: served.Middleware}
	for _, c := range []struct{ tool, input, want string }{
		{"move_path", `{"from":"a.txt","to":"c.txt"}`, "denied by policy: " + session.NoApprover},
		{"write_file", `{"path":"b.txt","content":"x\n"}`, "denied by policy: "},
		{"delete_path", `{"path":"a.txt"}`, "no deletes here"},
		{"replace_text", `{"path":"a.txt","oldText":"hello","newText":"bye"}`, ""},
	} {
		text, isErr := p.Invoke(context.Background(), toolcall.Call{Name: c.tool, Input: json.RawMessage(c.input)}).Text()
		if c.want == "" {
			if isErr {
				t.Errorf("%s: %q", c.tool, text)
			}
			continue
		}
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s: %q (error %v), want %q", c.tool, text, isErr, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.root, "a.txt")); string(b) != "bye\n" {
		t.Errorf("a.txt %q", b)
	}
	if len(f.previews) != 0 {
		t.Errorf("asked %q", f.previews)
	}
	// Without a policy, the MCP client decides: the hooks alone.
	served, err = sess.ServedTools("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p = &toolcall.Pipeline{Tools: served.Tools, Env: served.Env, Middleware: served.Middleware}
	if text, isErr := p.Invoke(context.Background(), toolcall.Call{Name: "move_path", Input: json.RawMessage(`{"from":"a.txt","to":"c.txt"}`)}).Text(); isErr {
		t.Errorf("move_path without a policy: %q", text)
	}
	if text, isErr := p.Invoke(context.Background(), toolcall.Call{Name: "delete_path", Input: json.RawMessage(`{"path":"c.txt"}`)}).Text(); !isErr || !strings.Contains(text, "no deletes here") {
		t.Errorf("delete_path without a policy: %q", text)
	}
}

// TestToolsCallHookBlockIsDenied: through tools/call a PreToolUse hook's
// block is a tool error of the documented kind denied (the protocol's
// kinds are a closed set), with the hook's message; the tool does not run.
func TestToolsCallHookBlockIsDenied(t *testing.T) {
	f := newFixture(t)
	sess := f.session(t)
	_, err := sess.CallTool(context.Background(), "delete_path", json.RawMessage(`{"path":"a.txt"}`))
	te, ok := tool.AsError(err)
	if !ok || te.Kind != tool.ErrDenied || !strings.Contains(te.Message, "no deletes here") {
		t.Fatalf("error %#v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "a.txt")); err != nil {
		t.Fatalf("a.txt deleted: %v", err)
	}
}
