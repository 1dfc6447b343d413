package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// turn is one scripted model answer: text, or tool calls, or a hang until
// the request is cancelled.
type turn struct {
	text  string
	calls []call
	hang  bool
	// status, when set, is the HTTP status of an error answer.
	status int
	// finish, when set, is the finish_reason of the answer.
	finish string
}

type call struct {
	name  string
	input map[string]any
}

// fakeModel is an OpenAI-compatible streaming endpoint: it answers a
// request with script(the last user text, the assistant messages after
// it).
type fakeModel struct {
	script func(prompt string, n int) turn
	hung   chan struct{}

	mu    sync.Mutex
	turns []int // the number of messages of each request
}

func newFakeModel(t *testing.T, script func(prompt string, n int) turn) (*fakeModel, string) {
	m := &fakeModel{script: script, hung: make(chan struct{}, 8)}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv.URL + "/v1"
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	m.mu.Lock()
	m.turns = append(m.turns, len(req.Messages))
	m.mu.Unlock()
	prompt, n := "", 0
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			var s string
			if json.Unmarshal(msg.Content, &s) != nil {
				s = string(msg.Content)
			}
			prompt, n = s, 0
		case "assistant":
			n++
		}
	}
	st := m.script(prompt, n)
	if st.hang {
		m.hung <- struct{}{}
		<-r.Context().Done()
		return
	}
	if st.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st.status)
		fmt.Fprintf(w, `{"error":{"message":"scripted error %d","type":"error"}}`, st.status)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, part := range strings.SplitAfter(st.text, " ") {
		if part != "" {
			chunk(map[string]any{"content": part}, nil)
		}
	}
	for i, c := range st.calls {
		args, _ := json.Marshal(c.input)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", n, i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": string(args)}}}}, nil)
	}
	finish := "stop"
	if len(st.calls) > 0 {
		finish = "tool_calls"
	}
	if st.finish != "" {
		finish = st.finish
	}
	chunk(map[string]any{}, finish)
	b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
}

// msg is one JSON-RPC message from the agent.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// peer is a test ACP client over pipes: it records every message and
// answers permission requests with answer.
type peer struct {
	t      *testing.T
	agent  *Agent
	in     io.WriteCloser
	mu     sync.Mutex
	msgs   []msg
	wake   chan struct{}
	nextID int
	answer func(method string, params json.RawMessage) any
	done   chan error
}

// noAnswer is an answer that leaves the request unanswered.
var noAnswer any = &struct{ none bool }{}

func startAgent(t *testing.T, cfg *Config) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := New(&Options{Home: t.TempDir(), LoadConfig: func() (*Config, error) { c := *cfg; return &c, nil }})
	p := &peer{t: t, agent: a, in: inW, wake: make(chan struct{}, 1), done: make(chan error, 1)}
	go func() { p.done <- a.Serve(context.Background(), inR, outW); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m msg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("bad line %q", sc.Text())
				continue
			}
			if m.Method != "" && m.ID != nil && p.answer != nil {
				if res := p.answer(m.Method, m.Params); res != noAnswer {
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
					p.in.Write(append(b, '\n'))
				}
			}
			p.mu.Lock()
			p.msgs = append(p.msgs, m)
			p.mu.Unlock()
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Error("the agent did not end after stdin closed")
		}
	})
	return p
}

// send writes a request (id > 0) or a notification and returns the id.
func (p *peer) send(method string, params any) int {
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	p.in.Write(append(b, '\n'))
	return id
}

func (p *peer) notify(method string, params any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	p.in.Write(append(b, '\n'))
}

// waitMsg waits for the first message after index from on which ok holds;
// it returns its index.
func (p *peer) waitMsg(from int, ok func(m msg) bool) (int, msg) {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		p.mu.Lock()
		for i := from; i < len(p.msgs); i++ {
			if ok(p.msgs[i]) {
				m := p.msgs[i]
				p.mu.Unlock()
				return i, m
			}
		}
		p.mu.Unlock()
		select {
		case <-p.wake:
		case <-deadline:
			p.t.Fatalf("no such message; got %d messages", len(p.msgs))
		}
	}
}

// reply waits for the reply to id; it returns its index.
func (p *peer) reply(id int) (int, msg) {
	p.t.Helper()
	want := fmt.Sprint(id)
	return p.waitMsg(0, func(m msg) bool { return m.Method == "" && string(m.ID) == want })
}

func (p *peer) call(method string, params any) (int, json.RawMessage) {
	p.t.Helper()
	i, m := p.reply(p.send(method, params))
	if m.Error != nil {
		p.t.Fatalf("%s: %d %s", method, m.Error.Code, m.Error.Message)
	}
	return i, m.Result
}

// updates are the session/update notifications between two indexes,
// decoded.
func (p *peer) updates(from, to int) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, m := range p.msgs[from:min(to, len(p.msgs))] {
		if m.Method != "session/update" {
			continue
		}
		var n struct {
			Update map[string]any `json:"update"`
		}
		json.Unmarshal(m.Params, &n)
		out = append(out, n.Update)
	}
	return out
}
