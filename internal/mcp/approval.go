package mcp

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"
)

// ApprovalEnv is the environment variable that gives `--mcp-server` the
// parent runtime's approval endpoint: "<host:port> <token>" (protocol.md,
// Claude Code engine).
const ApprovalEnv = "TASK_X_APPROVAL"

// approvalWait bounds how long the approve tool waits for the parent; the
// parent itself denies after 10 minutes (addendum §10).
const approvalWait = 11 * time.Minute

// ApprovalRequest is one permission prompt from Claude Code, as the approve
// tool received it: the tool Claude wants to run, its input, and the
// optional tool_use_id.
type ApprovalRequest struct {
	ToolName  string          `json:"toolName"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"toolUseId,omitempty"`
}

// ApprovalDecision is the parent's answer. Session means allowSession: the
// approve tool then adds a session rule for the tool (notes/claude-code.md
// §2). Message is the reason given to the model on a deny.
type ApprovalDecision struct {
	Allow   bool   `json:"allow"`
	Session bool   `json:"session,omitempty"`
	Message string `json:"message,omitempty"`
	// UpdatedInput replaces the call's input on an allow (AskUserQuestion
	// gets its answers this way); nil keeps the input as it was.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
}

// ApprovalFunc answers one request. An error is a deny.
type ApprovalFunc func(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error)

// ToolCall is a tools/call the task-x MCP server forwards to the parent
// runtime (--mcp-server --forward): the registry tool's name, its input and
// the caller's call id (Claude Code's tool_use id).
type ToolCall struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	CallID string          `json:"callId,omitempty"`
}

// ToolAnswer is the parent's result of a forwarded call: the text the
// model gets, and whether the call failed.
type ToolAnswer struct {
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// ToolFunc runs one forwarded call in the parent. ctx ends when the MCP
// server gives up on the call (its client cancelled it) or the listener
// closes.
type ToolFunc func(ctx context.Context, call ToolCall) ToolAnswer

// wire shapes on the loopback connection: one JSON line each way. Kind
// "tool" carries a forwarded tool call (answered with a ToolAnswer); no
// kind is a permission prompt (answered with an ApprovalDecision).
type approvalWireRequest struct {
	Token string    `json:"token"`
	Kind  string    `json:"kind,omitempty"`
	Tool  *ToolCall `json:"tool,omitempty"`
	ApprovalRequest
}

// ApprovalListener is the parent runtime's side of the approve tool: a
// loopback TCP listener with a random token. Each connection carries one
// request line {token, toolName, input, toolUseId} and gets one answer
// line {allow, session, message}. A wrong token is denied without calling
// the callback.
type ApprovalListener struct {
	ln     net.Listener
	token  string
	fn     ApprovalFunc
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	tools ToolFunc
}

// ServeTools makes the listener run forwarded tool calls with fn (called
// concurrently); without it they fail.
func (l *ApprovalListener) ServeTools(fn ToolFunc) {
	l.mu.Lock()
	l.tools = fn
	l.mu.Unlock()
}

// NewApprovalListener listens on 127.0.0.1:0 and answers each request with
// fn (called concurrently). log may be nil.
func NewApprovalListener(fn ApprovalFunc, log *slog.Logger) (*ApprovalListener, error) {
	if fn == nil {
		return nil, errors.New("mcp: nil ApprovalFunc")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		ln.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &ApprovalListener{ln: ln, token: hex.EncodeToString(b[:]), fn: fn, log: log, ctx: ctx, cancel: cancel}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Env is the value for TASK_X_APPROVAL: "<addr> <token>".
func (l *ApprovalListener) Env() string { return l.ln.Addr().String() + " " + l.token }

// Close stops listening, cancels callbacks in flight (their requests are
// denied) and waits for the connections to end.
func (l *ApprovalListener) Close() error {
	err := l.ln.Close()
	l.cancel()
	l.wg.Wait()
	return err
}

func (l *ApprovalListener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.serve(c)
		}()
	}
}

func (l *ApprovalListener) serve(c net.Conn) {
	defer c.Close()
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = c.SetDeadline(time.Now())
	}()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := readLimitedLine(bufio.NewReader(c), MaxLineBytes)
	if err != nil {
		l.log.Warn("approval request unreadable", "err", err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var req approvalWireRequest
	if json.Unmarshal(line, &req) == nil && req.Kind == "tool" {
		l.serveTool(ctx, cancel, c, &req)
		return
	}
	dec := ApprovalDecision{Message: "denied"}
	switch {
	case json.Unmarshal(line, &req) != nil:
		dec.Message = "malformed approval request"
	case subtle.ConstantTimeCompare([]byte(req.Token), []byte(l.token)) != 1:
		l.log.Warn("approval request with a wrong token denied")
		dec.Message = "approval request rejected: wrong token"
	default:
		d, err := l.fn(ctx, req.ApprovalRequest)
		if err != nil {
			dec.Message = "no approval: " + err.Error()
		} else {
			dec = d
			if !dec.Allow && dec.Message == "" {
				dec.Message = "The user denied this tool call."
			}
		}
	}
	out, _ := json.Marshal(dec)
	_, _ = c.Write(append(out, '\n'))
}

// serveTool runs one forwarded tool call; the call's ctx ends when the
// server closes the connection (it gave up on the call).
func (l *ApprovalListener) serveTool(ctx context.Context, cancel context.CancelFunc, c net.Conn, req *approvalWireRequest) {
	ans := ToolAnswer{IsError: true}
	l.mu.Lock()
	fn := l.tools
	l.mu.Unlock()
	switch {
	case subtle.ConstantTimeCompare([]byte(req.Token), []byte(l.token)) != 1:
		l.log.Warn("forwarded tool call with a wrong token refused")
		ans.Content = "tool call rejected: wrong token"
	case req.Tool == nil || req.Tool.Name == "":
		ans.Content = "malformed tool call"
	case fn == nil:
		ans.Content = "this runtime does not run forwarded tool calls"
	default:
		go func() {
			var b [1]byte
			_, _ = c.Read(b[:]) // EOF: the server closed the connection
			cancel()
		}()
		ans = fn(ctx, *req.Tool)
	}
	out, _ := json.Marshal(ans)
	_, _ = c.Write(append(out, '\n'))
}

// callParent forwards a tool call to the endpoint in env ("<addr>
// <token>") and returns the parent's answer; any failure is an error
// answer naming it. The call ends with ctx.
func callParent(ctx context.Context, env string, call ToolCall) ToolAnswer {
	fail := func(format string, args ...any) ToolAnswer {
		return ToolAnswer{Content: fmt.Sprintf(format, args...), IsError: true}
	}
	addr, token, ok := strings.Cut(strings.TrimSpace(env), " ")
	if !ok || addr == "" || token == "" {
		return fail("no task-x runtime to run the tool (%s is not set)", ApprovalEnv)
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return fail("%s must name a loopback address", ApprovalEnv)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fail("the task-x runtime could not be reached: %v", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	line, _ := json.Marshal(approvalWireRequest{Token: token, Kind: "tool", Tool: &call})
	if _, err := c.Write(append(line, '\n')); err != nil {
		return fail("the task-x runtime could not be reached: %v", err)
	}
	raw, err := readLimitedLine(bufio.NewReader(c), MaxLineBytes)
	if err != nil {
		if ctx.Err() != nil {
			return fail("cancelled")
		}
		return fail("no answer from the task-x runtime: %v", err)
	}
	var ans ToolAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fail("malformed answer from the task-x runtime")
	}
	return ans
}

func readLimitedLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("line over %d bytes", max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(line) == 0 {
			return nil, err
		}
		return line, nil
	}
}

// askParent sends req to the endpoint in env ("<addr> <token>") and returns
// the parent's decision. Any failure (no endpoint, not loopback, no answer
// within ctx or approvalWait, a malformed answer) is a deny with a message.
func askParent(ctx context.Context, env string, req ApprovalRequest) ApprovalDecision {
	deny := func(format string, args ...any) ApprovalDecision {
		return ApprovalDecision{Message: fmt.Sprintf(format, args...)}
	}
	addr, token, ok := strings.Cut(strings.TrimSpace(env), " ")
	if !ok || addr == "" || token == "" {
		return deny("no task-x runtime to ask for approval (%s is not set)", ApprovalEnv)
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return deny("%s must name a loopback address", ApprovalEnv)
	}
	ctx, cancel := context.WithTimeout(ctx, approvalWait)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return deny("the task-x runtime could not be asked for approval: %v", err)
	}
	defer c.Close()
	go func() {
		<-ctx.Done()
		_ = c.SetDeadline(time.Now())
	}()
	line, _ := json.Marshal(approvalWireRequest{Token: token, ApprovalRequest: req})
	if _, err := c.Write(append(line, '\n')); err != nil {
		return deny("the task-x runtime could not be asked for approval: %v", err)
	}
	ans, err := readLimitedLine(bufio.NewReader(c), 1<<20)
	if err != nil {
		return deny("no approval answer from the task-x runtime: %v", err)
	}
	var dec ApprovalDecision
	if err := json.Unmarshal(ans, &dec); err != nil {
		return deny("malformed approval answer")
	}
	if !dec.Allow && dec.Message == "" {
		dec.Message = "The user denied this tool call."
	}
	return dec
}

// promptAnswer renders a decision as the permission-prompt tool's JSON
// text (notes/claude-code.md §2): allow always carries updatedInput (the
// call's input, or {}), plus a session rule for allowSession; deny carries
// message.
func promptAnswer(dec ApprovalDecision, toolName string, input json.RawMessage) string {
	var v map[string]any
	if dec.Allow {
		var in any = map[string]any{}
		if len(dec.UpdatedInput) > 0 {
			var m map[string]any
			if json.Unmarshal(dec.UpdatedInput, &m) == nil && m != nil {
				input = dec.UpdatedInput
			}
		}
		if len(input) > 0 {
			var m map[string]any
			if json.Unmarshal(input, &m) == nil && m != nil {
				in = m
			}
		}
		v = map[string]any{"behavior": "allow", "updatedInput": in}
		if dec.Session && toolName != "" {
			v["updatedPermissions"] = []any{map[string]any{
				"type": "addRules", "rules": []any{map[string]any{"toolName": toolName}},
				"behavior": "allow", "destination": "session",
			}}
		}
	} else {
		msg := dec.Message
		if msg == "" {
			msg = "The user denied this tool call."
		}
		v = map[string]any{"behavior": "deny", "message": msg}
	}
	out, _ := json.Marshal(v)
	return string(out)
}
