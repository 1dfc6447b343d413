package claudecode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/proctree"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// MinVersion is the oldest CLI this driver accepts: the version
// notes/claude-code.md was verified against (stop_task, failIfUnavailable,
// --replay-user-messages).
const MinVersion = "2.1.197"

// InstallHint is the command named in errors about the CLI.
const InstallHint = "npm install -g @anthropic-ai/claude-code@latest"

// maxSteerQueue is how many steer messages may wait (protocol.md).
const maxSteerQueue = 10

// maxLine bounds one stream-json line (images and file contents pass).
const maxLine = 32 << 20

// Question is one agent/askUser question.
type Question = tool.Question

// Hooks are the run's ways to reach the client.
type Hooks struct {
	// Event receives every agent event (never concurrently).
	Event func(protocol.AgentEvent)
	// Approve asks the user about one tool call (agent/requestApproval).
	Approve task.Approver
	// Ask sends agent/askUser; nil answers (or an error) mean dismissed.
	Ask func(ctx context.Context, callID string, qs []Question) (map[string][]string, error)
	// ClassOf gives the task-x permission class of a Claude tool name
	// (the mcp__task-x__ prefix removed). Nil: every tool is "command".
	ClassOf func(name string) tool.Class
	// ApproveAll allows every call the CLI asks about, without asking
	// (a deny rule or readOnly of Policy still refuses).
	ApproveAll bool
	// AllowCommands runs the task-x command tools without asking
	// (claude/run's allowCommands: they are in --allowedTools, and the
	// forwarded call is not asked again here); a deny rule or readOnly of
	// Policy still refuses. The commands stay in the sandbox.
	AllowCommands bool
	// Policy is agent/run's policy (mode, allow, deny, allowAll), applied
	// to every call the CLI asks about and to every task-x call it
	// forwards (RunTool): a deny rule or a refused class fails the call
	// without asking, an allowed call runs without asking, the rest is
	// asked with Approve (once: a call the permission prompt approved is
	// not asked again when it is forwarded). The zero value is mode
	// default without rules.
	Policy policy.Policy
	// TaskID goes into approval requests.
	TaskID string
	// Plan computes what a call of a task-x tool (the mcp__task-x__ prefix
	// removed) would change before the user is asked (tool.Previewer): the
	// preview shown, or the error the tool would fail with, in which case
	// the call is denied with that message and nobody is asked. Nil, or a
	// tool that cannot plan: the preview is agent.Preview's.
	Plan func(ctx context.Context, name string, input json.RawMessage) (preview string, err error)

	// Finish may correct the summary before the done event (the engine
	// takes changedFiles and operations from the calls it ran).
	Finish func(sum *task.Summary)
	// RunTool runs a tool call the --forward MCP server sends back
	// (Options.ForwardTools), concurrently with everything else. It
	// judges the call itself: Perms.ForwardGate in its tool-call pipeline
	// (NewForwarded), so that the policy and approvals of the permission
	// prompts apply to it.
	RunTool mcp.ToolFunc
	// Perms are the run's policy and approvals (NewPermissions of these
	// Hooks when nil), shared with RunTool's gate.
	Perms *Permissions

	onTask func(callID string) // tests: a Bash call became cancellable
}

// Run is one running Claude Code process.
type Run struct {
	o     Options
	h     Hooks
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ln    *mcp.ApprovalListener

	evMu sync.Mutex // serialises h.Event

	mu        sync.Mutex
	closed    bool                // stdin closed
	sent      int                 // user messages written (prompt included)
	joined    int                 // replays seen
	pending   []pending           // messages after the prompt, sent but not joined, in order
	tasks     map[string]string   // tool_use_id -> Bash task id (task_started)
	calls     map[string]callInfo // tool_use_id -> call
	ctrl      map[string]chan bool
	change    chan struct{} // closed (and replaced) when tasks or calls change
	ctrlN     int
	stderrBuf tailBuffer

	done chan struct{}
	sum  task.Summary
	err  error

	// The conversation after the prompt, as provider messages (read
	// goroutine only until done): assistant blocks merged by message id,
	// tool results and joined user messages merged into user messages.
	msgs     []provider.Message
	lastAsst string
}

// pending is a user message written after the prompt: a steer message, or
// the note after a stopped Bash call (no steered event).
type pending struct {
	text  string
	steer bool
}

type callInfo struct {
	name  string
	input json.RawMessage
	start time.Time
}

// tailBuffer keeps the last 4 KiB written (the CLI's stderr, for errors).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

var versionRe = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// CheckVersion runs `bin --version` and returns the version found, or an
// error naming the cause and the install command: not installed, not
// runnable, or older than MinVersion.
func CheckVersion(ctx context.Context, bin string, env []string) (string, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("Claude Code CLI not found (%q): install it with `%s`", bin, InstallHint)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("Claude Code CLI %q did not run (`--version`: %v); reinstall it with `%s`", path, err, InstallHint)
	}
	m := versionRe.FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("Claude Code CLI %q printed no version; reinstall it with `%s`", path, InstallHint)
	}
	if compareVersions(m[0], MinVersion) < 0 {
		return m[0], fmt.Errorf("Claude Code CLI %s is too old (found %s at %q, need %s or later): update it with `%s`", m[0], m[0], path, MinVersion, InstallHint)
	}
	return m[0], nil
}

func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Start checks the CLI, starts it with the prompt and returns the run. The
// run ends when Claude Code has answered every message (Wait), or when ctx
// ends: the CLI and every process it started are killed.
func Start(ctx context.Context, o Options, h Hooks) (*Run, error) {
	if o.Bin == "" {
		o.Bin = "claude"
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if h.Event == nil {
		h.Event = func(protocol.AgentEvent) {}
	}
	if _, err := CheckVersion(ctx, o.Bin, o.Env); err != nil {
		return nil, err
	}
	if h.Perms == nil {
		h.Perms = NewPermissions(h)
	}
	r := &Run{o: o, h: h, tasks: map[string]string{}, calls: map[string]callInfo{},
		ctrl: map[string]chan bool{}, change: make(chan struct{}), done: make(chan struct{})}
	h.Perms.bind(r.emit) // before the listener serves a prompt or a forwarded call
	ln, err := mcp.NewApprovalListener(r.approve, nil)
	if err != nil {
		return nil, fmt.Errorf("approval listener: %w", err)
	}
	r.ln = ln
	if h.RunTool != nil {
		ln.ServeTools(r.runTool)
	}
	args, err := Args(&o, ln.Env())
	if err != nil {
		ln.Close()
		return nil, err
	}
	path, _ := exec.LookPath(o.Bin)
	cmd := exec.Command(path, args...)
	cmd.Dir = o.Dir
	cmd.Env = o.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = &r.stderrBuf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		ln.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		ln.Close()
		return nil, err
	}
	// The CLI dies with the runtime (kill -9 included): SIGKILL as its
	// parent-death signal, forked from the spawner thread, since the signal
	// fires when the forking thread ends (proctree.StartTied).
	if err := proctree.StartTied(cmd, syscall.SIGKILL); err != nil {
		ln.Close()
		return nil, fmt.Errorf("starting Claude Code CLI %q: %v; install it with `%s`", path, err, InstallHint)
	}
	r.cmd, r.stdin = cmd, stdin
	r.sum = task.NewSummary(h.TaskID, o.Model)
	r.sum.Status = task.StatusCompleted
	r.mu.Lock()
	r.sent = 1
	// A CLI that exited at once fails this write; the reader then reports
	// its exit code, stderr and any result line.
	_, _ = stdin.Write(userLine(o.Prompt, o.Images))
	r.mu.Unlock()
	go r.watch(ctx)
	go r.read(stdout)
	return r, nil
}

// watch kills the process tree when ctx ends before the run does.
func (r *Run) watch(ctx context.Context) {
	select {
	case <-ctx.Done():
		r.mu.Lock()
		if r.err == nil {
			r.err = ctx.Err()
		}
		r.mu.Unlock()
		r.kill()
	case <-r.done:
	}
}

// kill ends the CLI and everything it started: its process group, and
// every descendant found under /proc (bwrap and shells may start their own
// sessions). Descendants are stopped first so none forks meanwhile.
func (r *Run) kill() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	pid := r.cmd.Process.Pid
	desc := proctree.Descendants(pid)
	for _, p := range desc {
		_ = syscall.Kill(p, syscall.SIGSTOP)
	}
	desc = append(desc, proctree.Descendants(pid)...)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, p := range desc {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func (r *Run) emit(e protocol.AgentEvent) {
	r.evMu.Lock()
	defer r.evMu.Unlock()
	r.h.Event(e)
}

// Wait waits for the run to end and returns its summary. The error is the
// reason the run failed (the summary's status says failed or cancelled).
func (r *Run) Wait() (task.Summary, error) {
	<-r.done
	return r.sum, r.err
}

// Done is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Steer sends text as one more user message (agent/steer). False when the
// run no longer takes messages or maxSteerQueue wait already.
func (r *Run) Steer(text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.pending {
		if p.steer {
			n++
		}
	}
	if r.closed || n >= maxSteerQueue {
		return false
	}
	return r.sendLocked(pending{text: text, steer: true})
}

// sendLocked writes one more user message (r.mu held).
func (r *Run) sendLocked(p pending) bool {
	if r.closed {
		return false
	}
	if _, err := r.stdin.Write(userLine(p.text, nil)); err != nil {
		return false
	}
	r.sent++
	r.pending = append(r.pending, p)
	return true
}

// StoppedNote is the user message sent after a Bash call is stopped
// (protocol.md agent/cancelTool).
const StoppedNote = "Task has been stopped by user. Continue with the next step."

// CancelTool stops a running Bash call by its tool_use_id (agent/cancelTool):
// true when the CLI stopped it. The model gets the failed result and the
// turn goes on. The CLI can stop a command only once it reported the
// command's task (task_started, about 3 s after it began): a call asked
// for before that waits for it, or for the call to end (false).
func (r *Run) CancelTool(ctx context.Context, callID string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r.mu.Lock()
	for {
		if _, ok := r.tasks[callID]; ok || r.closed {
			break
		}
		ci, running := r.calls[callID]
		if !running || ci.name != "Bash" {
			break
		}
		wake := r.change
		r.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		case <-r.done:
			return false
		}
		r.mu.Lock()
	}
	task, ok := r.tasks[callID]
	if !ok || r.closed {
		r.mu.Unlock()
		return false
	}
	r.ctrlN++
	id := "task-x-" + strconv.Itoa(r.ctrlN)
	ch := make(chan bool, 1)
	r.ctrl[id] = ch
	line, _ := json.Marshal(map[string]any{"type": "control_request", "request_id": id,
		"request": map[string]any{"subtype": "stop_task", "task_id": task}})
	_, err := r.stdin.Write(append(line, '\n'))
	r.mu.Unlock()
	if err != nil {
		return false
	}
	select {
	case ok := <-ch:
		if ok {
			r.mu.Lock()
			r.sendLocked(pending{text: StoppedNote})
			r.mu.Unlock()
		}
		return ok
	case <-ctx.Done():
		return false
	case <-r.done:
		return false
	}
}

// stream-json lines (notes/claude-code.md §1).
type line struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	Model           string          `json:"model"`
	Message         json.RawMessage `json:"message"`
	Event           json.RawMessage `json:"event"`
	IsReplay        bool            `json:"isReplay"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	TaskID          string          `json:"task_id"`
	ToolUseID       string          `json:"tool_use_id"`
	IsError         bool            `json:"is_error"`
	Result          string          `json:"result"`
	Errors          []string        `json:"errors"`
	Usage           *struct {
		Input       int `json:"input_tokens"`
		Output      int `json:"output_tokens"`
		CacheCreate int `json:"cache_creation_input_tokens"`
		CacheRead   int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	TotalCost float64 `json:"total_cost_usd"`
	NumTurns  int     `json:"num_turns"`
	Response  *struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
	} `json:"response"`
}

type message struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Content []json.RawMessage `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// read maps the CLI's stdout to events until it ends, then finishes the run.
func (r *Run) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	st := &readState{msgs: map[string]bool{}}
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		r.handle(&l, st)
	}
	// Drain so the CLI never blocks on a full pipe, then reap it.
	_, _ = io.Copy(io.Discard, stdout)
	werr := r.cmd.Wait()
	r.ln.Close()
	r.mu.Lock()
	r.closed = true
	err := r.err
	r.mu.Unlock()
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		r.sum.Status = "cancelled"
	case err != nil:
		r.sum.Status = "failed"
	case st.results == 0:
		msg := st.resultError
		if msg == "" {
			msg = r.stderrBuf.String()
		}
		code := -1
		if r.cmd.ProcessState != nil {
			code = r.cmd.ProcessState.ExitCode()
		}
		err = fmt.Errorf("Claude Code CLI exited (code %d) before answering: %s", code, firstLines(msg, 6))
		r.sum.Status = "failed"
	case st.resultError != "":
		err = errors.New(st.resultError)
		r.sum.Status = "failed"
	case werr != nil && r.cmd.ProcessState != nil && r.cmd.ProcessState.ExitCode() != 0:
		err = fmt.Errorf("Claude Code CLI exited with code %d: %s", r.cmd.ProcessState.ExitCode(), firstLines(r.stderrBuf.String(), 6))
		r.sum.Status = "failed"
	}
	r.sum.Text = st.lastText
	if r.h.Finish != nil {
		r.h.Finish(&r.sum)
	}
	if err != nil {
		s := err.Error()
		r.sum.Error = &s
		r.err = err
	}
	r.emit(task.Done(r.sum))
	close(r.done)
}

func firstLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, " / ")
}

type readState struct {
	msgs        map[string]bool // assistant message ids seen
	results     int
	lastText    string
	turnText    strings.Builder
	resultError string
	modelSent   bool
}

func (r *Run) handle(l *line, st *readState) {
	switch l.Type {
	case "system":
		switch l.Subtype {
		case "init":
			if !st.modelSent {
				st.modelSent = true
				if r.sum.Model == "" {
					r.sum.Model = l.Model
				}
				r.emit(protocol.ModelEvent{Provider: "claudeCode", Model: l.Model})
			}
		case "task_started":
			r.mu.Lock()
			if l.ToolUseID != "" {
				r.tasks[l.ToolUseID] = l.TaskID
				r.changedLocked()
			}
			r.mu.Unlock()
			if r.h.onTask != nil {
				r.h.onTask(l.ToolUseID)
			}
		}
	case "stream_event":
		if l.ParentToolUseID != nil {
			return // a subagent's stream
		}
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if json.Unmarshal(l.Event, &ev) == nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			r.emit(protocol.TextDeltaEvent{Text: ev.Delta.Text})
		}
	case "assistant":
		var m message
		if json.Unmarshal(l.Message, &m) != nil {
			return
		}
		if l.ParentToolUseID == nil && m.ID != "" && !st.msgs[m.ID] {
			st.msgs[m.ID] = true
			r.sum.Iterations++
			r.emit(protocol.IterationEvent{N: r.sum.Iterations})
		}
		for _, raw := range m.Content {
			var b block
			if json.Unmarshal(raw, &b) != nil {
				continue
			}
			switch b.Type {
			case "text":
				if l.ParentToolUseID == nil {
					st.turnText.WriteString(b.Text)
					r.addAssistant(m.ID, provider.Part{Type: provider.PartText, Text: b.Text})
					r.emit(protocol.AssistantMessageEvent{Text: b.Text})
				}
			case "tool_use":
				name := strings.TrimPrefix(b.Name, ToolPrefix)
				in := b.Input
				if len(in) == 0 {
					in = json.RawMessage("{}")
				}
				if l.ParentToolUseID == nil {
					r.addAssistant(m.ID, provider.Part{Type: provider.PartToolUse, ID: b.ID, Name: name, Input: in})
				}
				r.mu.Lock()
				r.calls[b.ID] = callInfo{name: name, input: in, start: time.Now()}
				r.mu.Unlock()
				r.sum.ToolCalls++
				r.emit(protocol.ToolStartedEvent{CallID: b.ID, Tool: name, Input: in, Permission: r.classOf(name)})
			}
		}
	case "user":
		if l.IsReplay {
			r.joinedOne()
			return
		}
		var m message
		if json.Unmarshal(l.Message, &m) != nil {
			return
		}
		for _, raw := range m.Content {
			var b block
			if json.Unmarshal(raw, &b) != nil || b.Type != "tool_result" {
				continue
			}
			r.mu.Lock()
			ci, ok := r.calls[b.ToolUseID]
			delete(r.calls, b.ToolUseID)
			delete(r.tasks, b.ToolUseID)
			r.changedLocked()
			r.mu.Unlock()
			if !ok {
				continue
			}
			text := resultText(b.Content)
			if l.ParentToolUseID == nil {
				r.addUser(provider.Part{Type: provider.PartToolResult, ToolUseID: b.ToolUseID, ToolName: ci.name, Content: text, IsError: b.IsError})
			}
			e := protocol.ToolFinishedEvent{CallID: b.ToolUseID, Tool: ci.name, OK: !b.IsError,
				DurationMs: time.Since(ci.start).Milliseconds()}
			if b.IsError {
				e.Error = &text
			} else {
				var v any
				if json.Unmarshal([]byte(text), &v) == nil {
					e.Result = v
				} else {
					e.Result = text
				}
				r.noteChanges(ci)
			}
			r.emit(e)
		}
	case "result":
		st.results++
		if l.Usage != nil {
			in := l.Usage.Input + l.Usage.CacheCreate + l.Usage.CacheRead
			r.sum.Usage.InputTokens += in
			r.sum.Usage.OutputTokens += l.Usage.Output
			r.sum.Metrics.CostUSD += l.TotalCost
			r.emit(protocol.UsageEvent{InputTokens: in, OutputTokens: l.Usage.Output,
				TotalInputTokens: r.sum.Usage.InputTokens, TotalOutputTokens: r.sum.Usage.OutputTokens, CostUSD: r.sum.Metrics.CostUSD})
		}
		if l.IsError {
			msg := l.Result
			if msg == "" {
				msg = strings.Join(l.Errors, "; ")
			}
			if msg == "" {
				msg = "Claude Code reported an error (" + l.Subtype + ")"
			}
			st.resultError = msg
		} else {
			st.resultError = ""
			if l.Result != "" {
				st.lastText = l.Result
			} else if st.turnText.Len() > 0 {
				st.lastText = st.turnText.String()
			}
		}
		st.turnText.Reset()
		r.maybeClose()
	case "control_response":
		if l.Response == nil {
			return
		}
		r.mu.Lock()
		ch := r.ctrl[l.Response.RequestID]
		delete(r.ctrl, l.Response.RequestID)
		r.mu.Unlock()
		if ch != nil {
			ch <- l.Response.Subtype == "success"
		}
	}
}

// joinedOne records a replayed user message: the prompt first, then each
// steer message in order (a steered event when it joins).
func (r *Run) joinedOne() {
	r.mu.Lock()
	r.joined++
	var text string
	steered, joined := false, false
	if r.joined > 1 && len(r.pending) > 0 {
		text, steered, joined = r.pending[0].text, r.pending[0].steer, true
		r.pending = r.pending[1:]
	}
	r.mu.Unlock()
	if joined {
		r.addUser(provider.Part{Type: provider.PartText, Text: text})
	}
	if steered {
		r.emit(protocol.SteeredEvent{Text: text})
	}
}

// changedLocked wakes CancelTool calls waiting for a task id (r.mu held).
func (r *Run) changedLocked() {
	close(r.change)
	r.change = make(chan struct{})
}

// addAssistant adds one block of assistant message id (the CLI prints one
// line per block, repeating the id) to the conversation.
func (r *Run) addAssistant(id string, p provider.Part) {
	if n := len(r.msgs); n > 0 && r.msgs[n-1].Role == provider.RoleAssistant && (id == "" || id == r.lastAsst) {
		r.msgs[n-1].Content = append(r.msgs[n-1].Content, p)
		return
	}
	r.lastAsst = id
	r.msgs = append(r.msgs, provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{p}})
}

// addUser adds a tool result or a joined user message; consecutive ones
// form one user message, as the model saw them.
func (r *Run) addUser(p provider.Part) {
	if n := len(r.msgs); n > 0 && r.msgs[n-1].Role == provider.RoleUser {
		r.msgs[n-1].Content = append(r.msgs[n-1].Content, p)
		return
	}
	r.msgs = append(r.msgs, provider.Message{Role: provider.RoleUser, Content: []provider.Part{p}})
}

// Messages is the conversation after the prompt once the run has ended:
// the assistant messages (text and tool calls, task-x tool names without
// their prefix), the tool results and every user message that joined
// (steering, the note after a stopped Bash call). Nil before Done.
func (r *Run) Messages() []provider.Message {
	select {
	case <-r.done:
		return r.msgs
	default:
		return nil
	}
}

// maybeClose closes stdin once every message written has joined and been
// answered (a result came after the last join): the CLI then exits.
func (r *Run) maybeClose() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.joined < r.sent {
		return
	}
	r.closed = true
	_ = r.stdin.Close()
}

// noteChanges adds the files a successful edit call named (a task-x
// tool's path, from, to inputs; Claude's own file_path or notebook_path,
// made relative to the root) to the summary. (With a shared edit log the
// engine replaces them with the log's operations.)
func (r *Run) noteChanges(ci callInfo) {
	if c := r.classOf(ci.name); c != tool.ClassEdit && c != tool.ClassDestructive {
		return
	}
	var in map[string]any
	if json.Unmarshal(ci.input, &in) != nil {
		return
	}
	for _, key := range []string{"path", "from", "to", "file_path", "notebook_path"} {
		p, ok := in[key].(string)
		if !ok || p == "" {
			continue
		}
		if filepath.IsAbs(p) { // Claude's own Write, Edit, NotebookEdit
			rel, err := filepath.Rel(r.o.Dir, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			p = filepath.ToSlash(rel)
		}
		seen := false
		for _, c := range r.sum.ChangedFiles {
			if c.Path == p {
				seen = true
				break
			}
		}
		if !seen {
			r.sum.ChangedFiles = append(r.sum.ChangedFiles, tool.FileChange{Path: p, Kind: "modified"})
		}
	}
}

func (r *Run) classOf(name string) tool.Class {
	if r.h.ClassOf != nil {
		return r.h.ClassOf(name)
	}
	return tool.ClassCommand
}

// resultText is a tool_result's content as text (a string, or its text
// blocks joined).
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []block
	if json.Unmarshal(raw, &bs) == nil {
		var b strings.Builder
		for _, x := range bs {
			if x.Type == "text" {
				b.WriteString(x.Text)
			}
		}
		return b.String()
	}
	return string(raw)
}

// approve answers one permission prompt of the CLI (the approve tool over
// the loopback listener): AskUserQuestion goes to agent/askUser; others
// are allowed by ApproveAll or an allowSession answer, or asked with
// agent/requestApproval.
func (r *Run) approve(ctx context.Context, req mcp.ApprovalRequest) (mcp.ApprovalDecision, error) {
	if req.ToolName == "AskUserQuestion" {
		return r.askQuestions(ctx, req)
	}
	name := strings.TrimPrefix(req.ToolName, ToolPrefix)
	callID := req.ToolUseID
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	dec, msg := r.h.Perms.decide(ctx, name, callID, input, strings.HasPrefix(req.ToolName, ToolPrefix))
	switch dec {
	case task.DecisionAllowSession:
		return mcp.ApprovalDecision{Allow: true, Session: true}, nil
	case task.DecisionAllow:
		return mcp.ApprovalDecision{Allow: true}, nil
	}
	return mcp.ApprovalDecision{Message: msg}, nil
}

// runTool runs a task-x call the --forward MCP server sent back: RunTool
// judges it in its pipeline (Permissions.ForwardGate): Claude Code does
// not ask its permission prompt about the tools in --allowedTools, so a
// deny rule, a refused class or a call that needs asking (a
// secret-looking file, an edit the mode does not accept) is judged there,
// where every task-x call passes.
func (r *Run) runTool(ctx context.Context, call mcp.ToolCall) mcp.ToolAnswer {
	if len(call.Input) == 0 {
		call.Input = json.RawMessage("{}")
	}
	return r.h.RunTool(ctx, call)
}

// askQuestions maps AskUserQuestion to agent/askUser (protocol.md): the
// answers go back as updatedInput.answers (question text → labels joined
// by ", "); a dismissal is a deny.
func (r *Run) askQuestions(ctx context.Context, req mcp.ApprovalRequest) (mcp.ApprovalDecision, error) {
	var in struct {
		Questions []struct {
			Question    string `json:"question"`
			MultiSelect bool   `json:"multiSelect"`
			Options     []struct {
				Label string `json:"label"`
			} `json:"options"`
		} `json:"questions"`
	}
	dismiss := mcp.ApprovalDecision{Message: "The user dismissed the questions."}
	if json.Unmarshal(req.Input, &in) != nil || len(in.Questions) == 0 || r.h.Ask == nil {
		return dismiss, nil
	}
	qs := make([]Question, len(in.Questions))
	for i, q := range in.Questions {
		kind := "radio"
		if q.MultiSelect {
			kind = "checkbox"
		}
		opts := make([]string, len(q.Options))
		for j, o := range q.Options {
			opts[j] = o.Label
		}
		qs[i] = Question{ID: "q" + strconv.Itoa(i+1), Text: q.Question, Kind: kind, Options: opts}
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	ans, err := r.h.Ask(actx, req.ToolUseID, qs)
	if actx.Err() != nil {
		r.emit(protocol.ApprovalWithdrawnEvent{CallID: req.ToolUseID})
		ans = nil
	}
	cancel()
	if err != nil || ans == nil {
		return dismiss, nil
	}
	answers := map[string]string{}
	for _, q := range qs {
		var picked []string
		for _, a := range ans[q.ID] {
			for _, o := range q.Options {
				if a == o {
					picked = append(picked, a)
					break
				}
			}
		}
		if q.Kind == "radio" && len(picked) > 1 {
			picked = picked[:1]
		}
		if len(picked) > 0 {
			answers[q.Text] = strings.Join(picked, ", ")
		}
	}
	var full map[string]any
	if json.Unmarshal(req.Input, &full) != nil || full == nil {
		full = map[string]any{}
	}
	full["answers"] = answers
	upd, _ := json.Marshal(full)
	return mcp.ApprovalDecision{Allow: true, UpdatedInput: upd}, nil
}
