package claudecode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/mcp"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// ChatMode is the chatMode a claude/run task is saved with.
const ChatMode = "claudeCode"

// Engine is the Claude Code CLI as a task.Engine (claude/run). A front end
// fills Options with what it decoded (Bin, Model, PermissionMode,
// UseTaskTools, RuntimeBin, AllowCommands, MCPServers, Env) and
// ApproveAll; everything else comes from the task.Job: the workspace root,
// the prompt (a continued task's earlier conversation in front of it),
// images, the task-x tool names by permission class, the active skills,
// the approver, the asker of AskUserQuestion and the events.
//
// The task-x tools run in this runtime: the CLI's MCP server is
// `task-x-runtime --mcp-server --root <root> --forward`, which serves the
// registry's tools and sends every call back over the approval listener's
// loopback connection (its random token). A call runs with the task's own
// Env (the live index, the edit log, the task's stale-edit record, the
// keys), so each edit is an operation of this task in the workspace's edit
// log (edits/pending, edits/undo) with or without a data folder, is
// followed by fileChanged events, and the summary's changedFiles and
// operations are those of the calls, as in agent/run.
type Engine struct {
	Options    Options
	ApproveAll bool
	// StartErr is why the CLI did not start (missing, too old, options it
	// cannot take); Run sets it and returns a failed summary. A front end
	// answers it as an error.
	StartErr error
}

var _ task.Engine = (*Engine)(nil)

// control lets agent/steer and agent/cancelTool reach the run: a task-x
// call running here is stopped here, a Bash call by the CLI.
type control struct {
	ctx   context.Context
	run   *Run
	tools *Forwarded
}

func (c control) Steer(text string) bool { return c.run.Steer(text) }
func (c control) CancelTool(callID string) bool {
	if c.tools != nil && c.tools.cancel.Cancel(callID) {
		return true
	}
	return c.run.CancelTool(c.ctx, callID)
}

// Run runs the CLI for job to its end.
func (e *Engine) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	o := e.Options
	o.Dir = job.Project.Root()
	o.Prompt = Transcript(job.History, maxTranscript) + job.Prompt
	o.Images = nil
	for _, im := range job.Images {
		o.Images = append(o.Images, Image{MediaType: im.MediaType, Data: im.Data})
	}
	o.System = job.Skills
	o.ReadTools, o.WriteTools, o.CommandTools = nil, nil, nil
	if job.Tools != nil {
		for _, spec := range job.Tools.Specs() {
			switch spec.Permission {
			case tool.ClassRead:
				o.ReadTools = append(o.ReadTools, spec.Name)
			case tool.ClassEdit:
				o.WriteTools = append(o.WriteTools, spec.Name)
			case tool.ClassCommand:
				o.CommandTools = append(o.CommandTools, spec.Name)
			}
		}
	}
	classOf := func(name string) tool.Class { return ClassOf(job.Tools, name) }
	// agent/run's policy governs the run (docs/claude.md "Policy"): what
	// it does not offer is hidden from the model, and every call the CLI
	// asks about or forwards is judged by it.
	pol := job.Policy
	if job.Project != nil {
		pol = pol.WithRoot(job.Project.Root())
	}
	o.Disallowed = Hidden(pol, job.Tools)

	first := provider.Message{Role: provider.RoleUser, Content: append([]provider.Part{{Type: provider.PartText, Text: job.Prompt}}, job.Images...)}
	conv := append(append([]provider.Message{}, job.History...), first)

	job.Emit(protocol.StartedEvent{TaskID: job.TaskID, ChatMode: ChatMode, Model: o.Model})
	h := Hooks{Approve: job.Approve, ClassOf: classOf, ApproveAll: e.ApproveAll || pol.AllowAll, AllowCommands: o.AllowCommands, TaskID: job.TaskID,
		Plan: planner(job), Policy: pol}
	// One policy and approval state for the permission prompts and the
	// forwarded calls, whose gate sits in their tool-call pipeline.
	h.Perms = NewPermissions(h)
	// The task-x tools run here (the --forward child sends every call
	// back): the task's Env, so its index, edit log, stale-edit record and
	// live keys. calls keeps what each call changed, for fileChanged
	// events at its toolFinished and for the summary.
	var tools *Forwarded
	emit := job.Emit
	if o.UseTaskTools && job.Tools != nil && job.Env != nil {
		o.ForwardTools = true
		tools = NewForwarded(job, h.Perms.ForwardGate())
		emit = func(ev protocol.AgentEvent) {
			if fin, ok := ev.(protocol.ToolFinishedEvent); ok {
				for _, c := range tools.take(fin.CallID) {
					job.Emit(task.FileChanged(fin.CallID, c))
				}
			}
			job.Emit(ev)
		}
	}
	h.Event = emit
	if job.Env != nil && job.Env.Ask != nil {
		ask := job.Env.Ask
		h.Ask = func(ctx context.Context, callID string, qs []Question) (map[string][]string, error) {
			return ask(ctx, job.TaskID, callID, qs)
		}
	}
	if tools != nil {
		h.RunTool = func(ctx context.Context, call mcp.ToolCall) mcp.ToolAnswer {
			return tools.Run(ctx, call)
		}
		h.Finish = func(sum *task.Summary) {
			sum.ChangedFiles, sum.Operations = tools.summary()
		}
	}
	run, err := Start(ctx, o, h)
	if err != nil {
		e.StartErr = err
		msg := err.Error()
		job.Emit(protocol.DoneEvent{Status: "failed", Error: &msg})
		sum := task.NewSummary(job.TaskID, o.Model)
		sum.Status, sum.Error = task.StatusFailed, &msg
		return sum, conv
	}
	job.Attach(control{ctx: ctx, run: run, tools: tools})
	sum, _ := run.Wait()
	if tools == nil {
		// Claude's own file tools: the index learns of the edits here.
		job.Project.Changed(ctx, tool.ChangedPaths(sum.ChangedFiles))
	}
	return sum, append(conv, run.Messages()...)
}

// planner is the Plan hook of a job: a task-x edit tool's plan over the
// job's Env (the tool, root, read record and checks the approved call then
// runs with, forwarded back by the --mcp-server child), so the approval
// shows the file's real diff and an edit that cannot apply is refused
// without asking. The edit log re-checks the file when the call applies.
func planner(job *task.Job) func(ctx context.Context, name string, input json.RawMessage) (string, error) {
	if job.Tools == nil || job.Env == nil {
		return nil
	}
	return func(ctx context.Context, name string, input json.RawMessage) (string, error) {
		t, ok := job.Tools.Get(name)
		if !ok {
			return "", nil
		}
		pv, ok := t.(tool.Previewer)
		if !ok {
			return "", nil
		}
		pl, err := pv.Plan(ctx, job.Env, input)
		if err != nil {
			return "", err // a *tool.Error's text is its message
		}
		return pl.Preview, nil
	}
}

// Forwarded runs the task-x calls of one claude/run (the --forward
// child sends every call back) through the tool-call pipeline and keeps
// what they changed.
type Forwarded struct {
	pipe   *toolcall.Pipeline
	cancel toolcall.Registry // calls running, by call id (agent/cancelTool)

	mu      sync.Mutex
	byCall  map[string][]tool.FileChange // not yet reported by fileChanged
	changes []tool.FileChange            // every change, in order
	ops     []string                     // edit-log operations, in order
}

// NewForwarded runs job's calls as the agent loop runs its own: the job's
// hooks around each (docs/hooks.md), then gate (claude/run:
// Permissions.ForwardGate, the run's policy and approvals), the
// changes recorded, the call stoppable by agent/cancelTool, a background
// command waited for; commands stay in the sandbox whatever the session's
// setting (protocol.md: Claude Code's commands never leave it).
func NewForwarded(job *task.Job, gate ...toolcall.Middleware) *Forwarded {
	l := &Forwarded{byCall: map[string][]tool.FileChange{}}
	mw := []toolcall.Middleware{toolcall.WithHooks(toolcall.Hooks{Pre: job.PreToolUse, Post: job.PostToolUse})}
	mw = append(mw, gate...)
	mw = append(mw,
		toolcall.WithChanges(func(_ context.Context, c *toolcall.Call, res tool.Result) { l.record(c.ID, res) }),
		toolcall.WithCancel(&l.cancel, nil),
		toolcall.WaitBackground(),
	)
	l.pipe = &toolcall.Pipeline{Tools: job.Tools, Env: toolcall.Sandboxed(job.Env), Middleware: mw}
	return l
}

// Run runs one forwarded call; interactive tools and other MCP servers'
// tools are not the runtime's to run here.
func (l *Forwarded) Run(ctx context.Context, call mcp.ToolCall) mcp.ToolAnswer {
	if t, ok := l.pipe.Tools.Get(call.Name); !ok || t.Spec().Permission == tool.ClassInteractive || strings.HasPrefix(call.Name, "mcp__") {
		return mcp.ToolAnswer{Content: "unknown tool " + call.Name, IsError: true}
	}
	out := l.pipe.Invoke(ctx, toolcall.Call{ID: call.CallID, Name: call.Name, Input: call.Input})
	text, isErr := out.Text()
	return mcp.ToolAnswer{Content: text, IsError: isErr}
}

// record keeps what a call changed.
func (l *Forwarded) record(callID string, res tool.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(res.Changes) > 0 {
		l.byCall[callID] = append(l.byCall[callID], res.Changes...)
		l.changes = append(l.changes, res.Changes...)
	}
	if res.Operation != "" {
		l.ops = append(l.ops, res.Operation)
	}
}

// take returns the changes of callID not reported yet.
func (l *Forwarded) take(callID string) []tool.FileChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.byCall[callID]
	delete(l.byCall, callID)
	return c
}

// summary is the run's changedFiles (merged per path) and operations.
func (l *Forwarded) summary() ([]tool.FileChange, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	files := []tool.FileChange{}
	for _, c := range l.changes {
		files = task.MergeChange(files, c)
	}
	return files, append([]string{}, l.ops...)
}

// ClassOf is the task-x permission class of a tool name Claude Code uses
// (the mcp__task-x__ prefix removed): a registry tool's own class, else
// Claude's built-ins by what they do, else mcp (another server's tool).
func ClassOf(reg *tool.Registry, name string) tool.Class {
	if reg != nil {
		if t, ok := reg.Get(name); ok {
			return t.Spec().Permission
		}
	}
	switch name {
	case "Bash":
		return tool.ClassCommand
	case "Read":
		return tool.ClassRead
	case "Edit", "Write", "NotebookEdit":
		return tool.ClassEdit
	case "AskUserQuestion":
		return tool.ClassInteractive
	}
	return tool.ClassMCP
}

// Bounds of the earlier conversation given to the CLI when a task goes on.
const (
	maxTranscript     = 60000 // characters, newest kept
	maxTranscriptPart = 2000  // characters of one text, input or result
)

// Transcript is a continued task's earlier conversation as text for the
// first message to the CLI (which has no session of it): each user and
// assistant text, tool call and result, every part cut at 2000 characters
// and the whole at limit, the newest kept. "" without history.
func Transcript(history []provider.Message, limit int) string {
	if len(history) == 0 {
		return ""
	}
	var entries []string
	for _, m := range history {
		for _, p := range m.Content {
			var s string
			switch p.Type {
			case provider.PartText:
				if strings.TrimSpace(p.Text) == "" {
					continue
				}
				s = "[" + string(m.Role) + "] " + cut(p.Text)
			case provider.PartToolUse:
				s = "[tool call " + p.Name + "] " + cut(string(compactJSON(p.Input)))
			case provider.PartToolResult:
				label := "[tool result " + p.ToolName + "] "
				if p.IsError {
					label = "[tool error " + p.ToolName + "] "
				}
				s = label + cut(p.Content)
			case provider.PartImage:
				s = "[" + string(m.Role) + " image " + p.MediaType + "]"
			default:
				continue
			}
			entries = append(entries, s)
		}
	}
	total, start := 0, len(entries)
	for start > 0 && total+len(entries[start-1])+1 <= limit {
		start--
		total += len(entries[start]) + 1
	}
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("This task continues an earlier conversation (shown for context; its tool calls already ran):\n<earlier-conversation>\n")
	if start > 0 {
		b.WriteString("[… earlier messages left out]\n")
	}
	for _, s := range entries[start:] {
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString("</earlier-conversation>\n\n")
	return b.String()
}

func cut(s string) string {
	if len(s) <= maxTranscriptPart {
		return s
	}
	n := maxTranscriptPart
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " […]"
}

func compactJSON(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}
