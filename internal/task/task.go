// Package task owns the task layer under every front end: the Runner
// starts or resumes a task (the saved task and its conversation, editor
// context and mentions, the project context and instructions, repository
// excerpts, skills, recording in a Store, the summary) and runs it with an
// Engine. The agent loop (agent.Engine) is the first engine; the Claude
// Code CLI, team subagents and best-of candidates are engines or callers
// of the same Runner. Steering, cancelTool and approvals go through the
// engine-neutral Control and the Job's Approve. The task layer owns the
// vocabulary every engine shares (summary.go: Summary, MergeChange,
// approvals, and the helpers that build the protocol's events from domain
// values), so the Claude Code engine and team mode never import the agent
// loop; it knows no front end: front ends decode their params into a
// Request and encode the Summary. docs/layers.md describes how an engine or
// a front end plugs in.
//
// Source: ../shared/spec/protocol.md (agent/run, agent/steer,
// agent/cancelTool, agent/tasks, agent/task, agent/deleteTask; Team mode;
// Best of N; Claude Code engine) and addendum §4, §7, §11.
package task

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/skills"
	"github.com/task-x/task-x-runtime/internal/store"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// ExcerptsBudget is the token budget of the repository excerpts given to a
// task's first request (addendum §3: about 3000-8000 tokens).
const ExcerptsBudget = 6000

// Store is where tasks are saved: *store.Store (dataDir/tasks, an
// append-only log per running task and a snapshot when it ends) and
// *store.Memory (a session without a dataDir) implement it. Load returns
// store.ErrNotFound for an unknown id; Begin opens the log a running task
// is recorded in (store.ErrLocked when it runs already, here or in
// another runtime on the same data folder).
type Store interface {
	Save(t *store.Task) error
	Load(id string) (*store.Task, error)
	Delete(id string) (bool, error)
	List() ([]store.Info, error)
	Begin(t *store.Task) (store.Log, error)
}

// Control reaches a running task whatever its engine: agent/steer queues a
// message, agent/cancelTool stops one running tool call. *agent.Control
// implements it; an engine attaches its Control to the Job (Job.Attach).
type Control interface {
	Steer(text string) bool
	CancelTool(callID string) bool
}

// Engine runs one task to its end. It never returns an error: a failure is
// a Summary with status failed. It emits agent events in order through
// job.Emit (the first `started`, the last `done`), asks approvals with
// job.Approve, calls tools from job.Tools in job.Env, attaches its Control
// with job.Attach once it can take steering, and returns the summary and
// the whole conversation to save.
type Engine interface {
	Run(ctx context.Context, job *Job) (Summary, []provider.Message)
}

// Job is what the Runner hands an engine: the task as assembled from the
// saved task, the request and the project.
type Job struct {
	TaskID string
	// Prompt is the user's prompt with the editor block in front.
	Prompt string
	// Raw is the user's prompt as sent (for classification and routes).
	Raw      string
	Images   []provider.Part
	ChatMode string
	Policy   policy.Policy
	// System is the project context (workspace summary, commands,
	// instruction files).
	System string
	// Excerpts are the repository excerpts for the first request.
	Excerpts string
	// Skills is the active skills' text.
	Skills  string
	History []provider.Message
	Project *project.Project
	Env     *tool.Env
	Tools   *tool.Registry
	Approve Approver
	Hooks   *hooks.Runner
	Emit    func(protocol.AgentEvent)
	Logger  *slog.Logger

	handle *handle
}

// Attach makes ctl the task's Control: agent/steer and agent/cancelTool
// reach it from now on.
func (j *Job) Attach(ctl Control) {
	if j.handle != nil {
		j.handle.set(ctl)
	}
}

// Request is one task to run, as a front end decoded it.
type Request struct {
	// TaskID continues a saved task; "" starts a new one.
	TaskID   string
	Prompt   string
	Images   []provider.Part
	ChatMode string // ask, plan, agent or team ("" is agent)
	Policy   policy.Policy
	Editor   *Editor
	// Model is recorded with the task.
	Model   string
	Project *project.Project
	Engine  Engine
	// Env is the tools' environment (nil: Project.Env with the sandbox
	// on). The Runner gives it the task id and a fresh stale-edit record.
	Env     *tool.Env
	Approve Approver
	Hooks   *hooks.Runner
	// Emit receives every event of the task in order (after the Runner
	// recorded it).
	Emit func(protocol.AgentEvent)
	// EmitJSON, when set, receives them instead, each with its JSON as
	// recorded (keys redacted), or nil for an event that is not recorded
	// (streamed pieces, live views): a front end sends those bytes and
	// encodes and redacts only the others, one pass per event.
	EmitJSON func(ev protocol.AgentEvent, raw json.RawMessage)
}

// InvalidError is a request the task layer refuses (a front end answers
// with its invalid-params error, -32602 in the protocol).
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// ErrBusy is Run's error for a task id that is already running.
var ErrBusy = errors.New("task: already running")

// Runner starts and resumes tasks. Its zero value is not usable; set
// Store (nil: a store.Memory) and Secrets before the first Run. Safe for
// concurrent use.
type Runner struct {
	// Store saves the tasks; nil keeps them in a store.Memory.
	Store Store
	// Secrets are the keys the runtime holds, redacted from every saved
	// record.
	Secrets *logx.Secrets
	// Tools is the registry every task gets.
	Tools *tool.Registry
	// Home is the user's home folder for skills (default $HOME).
	Home   string
	Logger *slog.Logger

	once    sync.Once
	mu      sync.Mutex
	mem     *store.Memory
	running map[string]*handle
}

func (r *Runner) init() {
	r.once.Do(func() {
		r.mem = store.NewMemory(0)
		r.running = map[string]*handle{}
		if r.Secrets == nil {
			r.Secrets = &logx.Secrets{}
		}
	})
}

func (r *Runner) store() Store {
	r.init()
	if r.Store != nil {
		return r.Store
	}
	return r.mem
}

func (r *Runner) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// Prepare checks a request before it runs (the task id, a saved task's
// conversation, the editor's mentions): an *InvalidError or a store
// error. Run calls it too; a front end calls it to answer bad params
// before it turns the request asynchronous.
func (r *Runner) Prepare(req *Request) (*Prepared, error) {
	if req.Project == nil {
		return nil, errors.New("task: no project")
	}
	if req.Engine == nil {
		return nil, errors.New("task: no engine")
	}
	p := &Prepared{req: req, taskID: req.TaskID}
	var err error
	if p.taskID != "" {
		if !store.ValidID(p.taskID) {
			return nil, invalidf("taskId %q is not a valid task id", p.taskID)
		}
		t, err := r.store().Load(p.taskID)
		switch {
		case err == nil:
			p.saved = t
			if len(t.Messages) > 0 {
				if err := json.Unmarshal(t.Messages, &p.history); err != nil {
					return nil, invalidf("saved task %s has an unreadable conversation: %v", p.taskID, err)
				}
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	} else {
		p.taskID = NewID()
	}
	p.read = readFileSpec(r.Tools)
	if p.editor, err = planEditor(req.Project, req.Editor, req.Policy, p.read); err != nil {
		return nil, err
	}
	return p, nil
}

// Prepared is a checked request, ready to Run.
type Prepared struct {
	req     *Request
	taskID  string
	saved   *store.Task
	history []provider.Message
	editor  *editorPlan // the editor block, its mentions decided (approvals wait for Run)
	read    tool.Spec   // read_file's spec: mentions are attached under its policy
}

// TaskID is the task's id (new or continued).
func (p *Prepared) TaskID() string { return p.taskID }

// Run runs a prepared request to its end and returns its summary. ErrBusy
// when a task with that id already runs.
func (r *Runner) Run(ctx context.Context, p *Prepared) (Summary, error) {
	r.init()
	req := p.req
	mode := req.ChatMode
	if mode == "" {
		mode = policy.ChatAgent
	}
	emit := req.EmitJSON
	if emit == nil {
		send := req.Emit
		if send == nil {
			send = func(protocol.AgentEvent) {}
		}
		emit = func(ev protocol.AgentEvent, _ json.RawMessage) { send(ev) }
	}
	h := &handle{}
	if !r.add(p.taskID, h) {
		return Summary{}, ErrBusy
	}
	defer r.remove(p.taskID)

	var rec *taskRecorder
	proj := req.Project
	h.stream.emit = emit
	diffs := &diffDebounce{taskID: p.taskID, proj: proj, send: func(ev protocol.AgentEvent) { h.stream.send(ev, rec) }}
	defer diffs.done() // an engine that sent no done
	// The mentions read_file's policy asks about are asked now, before the
	// prompt exists; their events follow the engine's started (which is
	// always first), or come before done from an engine that sent none.
	held := p.editor.approveMentions(ctx, p.taskID, p.read, req.Approve)
	var heldMu sync.Mutex
	flush := func() {
		heldMu.Lock()
		evs := held
		held = nil
		heldMu.Unlock()
		for _, ev := range evs {
			h.stream.send(ev, rec)
		}
	}
	prompt := p.editor.render(proj.Root()) + req.Prompt
	out := func(ev protocol.AgentEvent) {
		if _, ok := ev.(protocol.DoneEvent); ok {
			flush()
			diffs.done() // the last diff comes before done
		}
		h.stream.send(ev, rec)
		switch ev := ev.(type) {
		case protocol.StartedEvent:
			flush()
		case protocol.FileChangedEvent:
			if ev.Path != "" {
				proj.Changed(ctx, []string{ev.Path})
				diffs.changed()
			}
		}
	}
	record := &store.Task{TaskID: p.taskID, Title: Title(req.Prompt), Status: store.StatusRunning, ChatMode: mode,
		Model: req.Model, Owner: store.Self()}
	if proj != nil {
		record.Root = proj.Root()
	}
	if p.saved != nil {
		record.CreatedAt = p.saved.CreatedAt
		record.Title = p.saved.Title
	}
	var err error
	if rec, err = r.startTask(record, p.saved, p.history, firstMessage(prompt, req.Images), req.Prompt, len(req.Images)); err != nil {
		return Summary{}, ErrBusy // another runtime on the data folder runs it
	}
	defer h.stream.wait() // a replay that holds events sends them before Run returns

	env := req.Env
	if env == nil {
		env = proj.Env(true, "")
	}
	env = env.ForTask(p.taskID)
	job := &Job{
		TaskID:   p.taskID,
		Prompt:   prompt,
		Raw:      req.Prompt,
		Images:   req.Images,
		ChatMode: mode,
		Policy:   req.Policy,
		System:   ProjectContext(proj.Summary()),
		Excerpts: proj.Excerpts(ctx, req.Prompt, ExcerptsBudget, nil),
		Skills:   r.skills(proj.Root(), req.Prompt, EditorPaths(proj.Root(), req.Editor)),
		History:  p.history,
		Project:  proj,
		Env:      env,
		Tools:    r.Tools,
		Approve:  req.Approve,
		Hooks:    req.Hooks,
		Emit:     out,
		Logger:   r.log(),
		handle:   h,
	}
	sum, messages := req.Engine.Run(ctx, job)
	complete(&sum)
	rec.finish(sum, messages)
	return sum, nil
}

// skills is the active skills block for a task: the skills resolved for
// its prompt and the editor's files.
func (r *Runner) skills(root, prompt string, paths []string) string {
	home := r.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return skills.Block(skills.Load(root, home).Resolve(prompt, paths))
}

// Steer queues text for the running task taskID; false when no such task
// runs, its engine takes no steering yet, or its queue is full.
func (r *Runner) Steer(taskID, text string) bool {
	if h := r.get(taskID); h != nil {
		if c := h.get(); c != nil {
			return c.Steer(text)
		}
	}
	return false
}

// CancelTool stops the running tool call callID of task taskID.
func (r *Runner) CancelTool(taskID, callID string) bool {
	if h := r.get(taskID); h != nil {
		if c := h.get(); c != nil {
			return c.CancelTool(callID)
		}
	}
	return false
}

// Running reports whether this runner runs the task taskID.
func (r *Runner) Running(taskID string) bool { return r.get(taskID) != nil }

// Load returns a saved task (store.ErrNotFound when there is none).
func (r *Runner) Load(taskID string) (*store.Task, error) {
	if !store.ValidID(taskID) {
		return nil, store.ErrNotFound
	}
	return r.store().Load(taskID)
}

// List lists the saved tasks, newest first.
func (r *Runner) List() ([]store.Info, error) { return r.store().List() }

// Delete deletes a saved task; false for a task that is running: one this
// runner runs, or one whose saved record is `running` with a live owner
// (another runtime on the same dataDir).
func (r *Runner) Delete(taskID string) (bool, error) {
	if !store.ValidID(taskID) || r.Running(taskID) {
		return false, nil
	}
	st := r.store()
	if t, err := st.Load(taskID); err == nil && t.Status == store.StatusRunning && store.OwnerAlive(t.Owner) && r.Store != nil {
		return false, nil
	}
	return st.Delete(taskID)
}

func (r *Runner) add(id string, h *handle) bool {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.running[id]; busy {
		return false
	}
	r.running[id] = h
	return true
}

func (r *Runner) remove(id string) {
	r.mu.Lock()
	delete(r.running, id)
	r.mu.Unlock()
}

func (r *Runner) get(id string) *handle {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[id]
}

// handle is a running task's entry: the Control its engine attached and
// the stream its events go through (replay.go).
type handle struct {
	mu     sync.Mutex
	ctl    Control
	stream stream
}

func (h *handle) set(c Control) {
	h.mu.Lock()
	h.ctl = c
	h.mu.Unlock()
}

func (h *handle) get() Control {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ctl
}

// NewID returns a fresh task id.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return "task-" + hex.EncodeToString(b[:])
}

// Title is the first line of the prompt, cut at 80 characters.
func Title(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if utf8.RuneCountInString(line) > 80 {
		r := []rune(line)
		line = string(r[:80]) + "…"
	}
	return line
}

// ProjectContext is the workspace part of a task's system prompt: the
// project, its commands and the instructions that apply at the root.
func ProjectContext(sum workspace.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workspace root: %s\n", sum.Root)
	pr := sum.Project
	fmt.Fprintf(&b, "Project: %s", pr.Name)
	if len(pr.Kinds) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(pr.Kinds, ", "))
	}
	b.WriteString("\n")
	if len(pr.Languages) > 0 {
		b.WriteString("Languages:")
		for i, l := range pr.Languages {
			if i == 6 {
				break
			}
			fmt.Fprintf(&b, " %s (%d files)", l.Language, l.Files)
		}
		b.WriteString("\n")
	}
	for _, k := range []string{"build", "test", "lint", "run"} {
		if c, ok := pr.Commands[k]; ok && c != "" {
			fmt.Fprintf(&b, "%s command: %s\n", k, c)
		}
	}
	fmt.Fprintf(&b, "Indexed files: %d\n", sum.Stats.IndexedFiles)
	for _, in := range sum.Instructions {
		if in.Scope == "directory" {
			fmt.Fprintf(&b, "\nInstructions in %s apply to work under %s/ (read them with read_file when you work there).\n", in.Source, in.Dir)
			continue
		}
		fmt.Fprintf(&b, "\n<instructions source=%q scope=%q>\n%s\n</instructions>\n", in.Source, in.Scope, in.Content)
	}
	return b.String()
}

// EditorPaths lists the editor's files (root-relative, "/") for skill path
// patterns: the active file, the selection's file, open files, mentions.
func EditorPaths(root string, e *Editor) []string {
	if e == nil {
		return nil
	}
	all := append([]string{e.ActiveFile}, e.OpenFiles...)
	if e.Selection != nil {
		all = append(all, e.Selection.Path)
	}
	all = append(all, e.Mentions...)
	var out []string
	for _, p := range all {
		if p == "" {
			continue
		}
		if rel, err := project.Rel(root, p); err == nil {
			p = rel
		}
		out = append(out, filepath.ToSlash(p))
	}
	return out
}
