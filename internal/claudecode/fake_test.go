package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// This file is the fake Anthropic Messages API the real Claude Code CLI is
// pointed at (ANTHROPIC_BASE_URL), and the harness that starts runs
// against it. The CLI comes from TASK_X_CLAUDE_BIN (.ci/run installs the
// pinned npm package); the tests skip only when it is absent.

// turn is one scripted model answer: text, then tool calls.
type turn struct {
	text  string
	calls []call
}

type call struct {
	name  string
	input map[string]any
}

// fakeModel answers request n (counting only the main conversation's
// requests: those that carry tools) with script[n]; past the script it
// answers "done.". hold, when set for a turn index, blocks that answer
// until the channel is closed.
type fakeModel struct {
	script []turn
	mu     sync.Mutex
	reqs   []map[string]any
	n      int
	hold   map[int]chan struct{}
	seen   chan int // request indexes, as they arrive
}

func newFakeModel(t *testing.T, script []turn) (*fakeModel, string) {
	m := &fakeModel{script: script, hold: map[int]chan struct{}{}, seen: make(chan int, 64)}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL
}

func (m *fakeModel) requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.reqs...)
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/messages" {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, 404)
		return
	}
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, 400)
		return
	}
	tools, _ := req["tools"].([]any)
	m.mu.Lock()
	var st turn
	idx := -1
	if len(tools) == 0 {
		st = turn{text: "Side request."}
	} else {
		idx = m.n
		m.n++
		m.reqs = append(m.reqs, req)
		if idx < len(m.script) {
			st = m.script[idx]
		} else {
			st = turn{text: "done."}
		}
	}
	hold := m.hold[idx]
	m.mu.Unlock()
	if idx >= 0 {
		m.seen <- idx
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	writeSSE(w, idx, st)
}

func writeSSE(w http.ResponseWriter, n int, st turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	ev := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": fmt.Sprintf("msg_%d", n+1), "type": "message", "role": "assistant",
		"content": []any{}, "model": "claude-fake-1", "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}})
	idx := 0
	if st.text != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		half := len(st.text) / 2
		for _, part := range []string{st.text[:half], st.text[half:]} {
			if part != "" {
				ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
			}
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for i, c := range st.calls {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.name, "input": map[string]any{}}})
		args, _ := json.Marshal(c.input)
		ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	reason := "end_turn"
	if len(st.calls) > 0 {
		reason = "tool_use"
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	ev("message_stop", map[string]any{})
}

// toolResults returns the tool_result blocks of the last user message of a
// request, by tool_use_id, as text.
func toolResults(req map[string]any) map[string]string {
	out := map[string]string{}
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		content, _ := mm["content"].([]any)
		for _, c := range content {
			b, _ := c.(map[string]any)
			if b["type"] != "tool_result" {
				continue
			}
			id, _ := b["tool_use_id"].(string)
			switch v := b["content"].(type) {
			case string:
				out[id] = v
			case []any:
				var s strings.Builder
				for _, x := range v {
					if xb, ok := x.(map[string]any); ok {
						t, _ := xb["text"].(string)
						s.WriteString(t)
					}
				}
				out[id] = s.String()
			}
		}
	}
	return out
}

// claudeBin is the CLI under test, or "" when absent.
func claudeBin() string {
	if p := os.Getenv("TASK_X_CLAUDE_BIN"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

var (
	runtimeOnce sync.Once
	runtimeBin  string
	runtimeErr  error
)

// buildRuntime builds cmd/task-x-runtime once (the MCP server and hook).
func buildRuntime(t *testing.T) string {
	runtimeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "claudecode-bin-")
		if err != nil {
			runtimeErr = err
			return
		}
		runtimeBin = filepath.Join(dir, "task-x-runtime")
		out, err := exec.Command("go", "build", "-o", runtimeBin, "github.com/task-x/task-x-runtime/cmd/task-x-runtime").CombinedOutput()
		if err != nil {
			runtimeErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if runtimeErr != nil {
		t.Fatal(runtimeErr)
	}
	return runtimeBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if runtimeBin != "" {
		os.RemoveAll(filepath.Dir(runtimeBin))
	}
	os.Exit(code)
}

// harness is one run against the fake model.
type harness struct {
	t      *testing.T
	dir    string
	model  *fakeModel
	mu     sync.Mutex
	events []protocol.AgentEvent
	evCh   chan protocol.AgentEvent
	run    *Run
	url    string
}

func (h *harness) modelURL() string { return h.url }

func newHarness(t *testing.T, script []turn) *harness {
	bin := claudeBin()
	if bin == "" {
		t.Skip("TASK_X_CLAUDE_BIN is not set to an installed Claude Code CLI (.ci/run installs it)")
	}
	h := &harness{t: t, dir: t.TempDir(), evCh: make(chan protocol.AgentEvent, 1024)}
	h.model, h.url = newFakeModel(t, script)
	return h
}

func (h *harness) options(url string) Options {
	home := h.t.TempDir()
	return Options{
		Bin: claudeBin(), Dir: h.dir, Prompt: "Do the task.", UseTaskTools: true, RuntimeBin: buildRuntime(h.t),
		Model:      "claude-sonnet-4-5",
		ReadTools:  []string{"read_file", "list_files", "search"},
		WriteTools: []string{"replace_text", "write_file"},
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + url,
			"ANTHROPIC_API_KEY=sk-ant-test-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "TMPDIR=" + os.TempDir()},
	}
}

func (h *harness) start(ctx context.Context, url string, o Options, hooks Hooks) {
	hooks.Event = func(e protocol.AgentEvent) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
		h.evCh <- e
	}
	r, err := Start(ctx, o, hooks)
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	h.run = r
}

// waitEvent returns the next event of type E (others are skipped).
func waitEvent[E protocol.AgentEvent](h *harness) E {
	h.t.Helper()
	var zero E
	for e := range h.evCh {
		if e, ok := e.(E); ok {
			return e
		}
		if d, ok := e.(protocol.DoneEvent); ok {
			h.t.Fatalf("run ended (status %s, error %v) before a %s event", d.Status, deref(d.Error), zero.EventType())
		}
	}
	h.t.Fatalf("no %s event", zero.EventType())
	return zero
}

func (h *harness) all() []protocol.AgentEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]protocol.AgentEvent(nil), h.events...)
}

// allOf returns the events of type E so far.
func allOf[E protocol.AgentEvent](h *harness) []E {
	var out []E
	for _, e := range h.all() {
		if e, ok := e.(E); ok {
			out = append(out, e)
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func mustString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func itoa(n int) string { return fmt.Sprint(n) }
