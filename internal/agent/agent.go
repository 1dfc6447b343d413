// Package agent owns the agent loop of agent/run: the system prompt, the
// model turn → tool calls → tool results cycle, approvals through the policy
// and an Approver, the agent/event stream (protocol.AgentEvent, documented
// in docs/events.md) and the task Summary.
//
// For long tasks the loop also owns context compression (compact.go),
// retries, routes and provider fallbacks (retry.go), steering and
// agent/cancelTool through a Control (control.go), background commands,
// costs (costs.go) and limits (limits.go). docs/agent.md records the
// decisions.
//
// Source: ../shared/spec/protocol.md ("Agent, tools, and extensions":
// agent/run, agent/event, agent/requestApproval, agent/steer,
// agent/cancelTool, the policy paragraph; Context compression; Costs;
// Images; Framing for what is logged) and addendum §4, §5, §10, §11.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/hooks"
	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// Defaults of Options.
const (
	DefaultMaxIterations   = 50
	DefaultApprovalTimeout = task.ApprovalTimeout // addendum §10
	DefaultMaxTokens       = 4096                 // protocol.md ChatRequest.maxTokens
)

// Options are the dependencies of Run. Provider is required. Tools nil means
// no tools; Env nil means a fresh Env with no workspace; Approve nil denies
// every call that would ask; Emit nil drops events; Logger nil discards.
type Options struct {
	Provider provider.Provider
	Tools    *tool.Registry
	Env      *tool.Env
	Approve  task.Approver
	// Emit receives every event in order, from Run's goroutine.
	Emit   func(protocol.AgentEvent)
	Logger *slog.Logger
	// MaxIterations bounds the model calls of one task (default 50).
	MaxIterations int
	// ApprovalTimeout bounds the wait for one approval (default 10 minutes).
	ApprovalTimeout time.Duration
	// MaxTokens is each model call's output limit (default 4096).
	MaxTokens int

	// Fallbacks take over in order when the current provider fails for
	// good (agent/run `fallbacks`).
	Fallbacks []provider.Provider
	// Routes pick the first provider by the prompt's task kind (agent/run
	// `routes`); Classify gives the kind when Params.Kind is empty.
	Routes   []Route
	Classify func(prompt string) string
	// Prices come before the built-in Anthropic rates (agent/run `prices`).
	Prices []Price
	// Windows is the server's context-window cache (5 minutes); nil uses
	// the built-in estimate when limits.contextWindowTokens is unset.
	Windows *provider.WindowCache
	// Control receives agent/steer and agent/cancelTool; nil makes one that
	// nobody else holds.
	Control *Control
	// WaitTools, when set, is called once before the task offers its tools:
	// it waits (bounded) for tools still joining Tools, such as an MCP
	// server's that is starting, and returns a warning for each source still
	// missing, sent as `warning` events.
	WaitTools func(ctx context.Context) []string
	// Retry bounds the retries of one model call; zero fields take defaults.
	Retry RetryPolicy
	// Hooks run at SessionStart, UserPromptSubmit, PreToolUse, PostToolUse
	// and Stop (addendum §8, hooks.go); nil runs none.
	Hooks *hooks.Runner
	// Redact removes the runtime's key values from check output before the
	// model or the summary sees it; nil keeps output as is.
	Redact func(string) string
}

// Params describe one task. ChatMode is "ask", "plan", "agent" or "team"
// (team runs as agent in this slice). Images are image Parts joined to the
// prompt's user message (validated by the server, protocol.md Images).
// System is the project context the server built (workspace summary,
// instruction files). History is a saved conversation to continue, or nil.
type Params struct {
	TaskID   string
	Prompt   string
	ChatMode string
	Images   []provider.Part
	Policy   policy.Policy
	System   string
	History  []provider.Message
	// Excerpts are the repository excerpts retrieved for the first request,
	// a block that starts with its own heading. They join the end of the
	// system prompt and are the last thing compaction drops (above 90% of
	// the window).
	Excerpts string
	// Kind is the prompt's task kind (addendum §10) for Options.Routes; ""
	// asks Options.Classify.
	Kind   string
	Limits Limits
	// Skills is the active skills' text (skills.Block), added to the
	// system prompt for the whole task; compaction never drops it.
	Skills string
	// Validation configures the checks at the final answer (addendum §12,
	// validation.go); the zero value runs the project's lint, build and
	// test with one fix round.
	Validation validate.Config
}

// Messages the model sees as tool results when no tool output exists.
const (
	resultCancelled   = "The task was cancelled before this tool call finished."
	resultUnknownTool = "Unknown tool %q. Use only the tools you were given."
	resultBadInput    = "The tool input is not a valid JSON object."
)

// Run runs one task to its end and returns its Summary and the full
// conversation (History, the new user message, and every model turn and
// tool-result message), ready to be saved. It never returns an error: a
// failure is a Summary with status failed and Error set, a cancelled ctx
// gives status cancelled with Error "cancelled". The first event is
// `started`, the last is always `done`. Every toolUse in the returned
// conversation has exactly one toolResult in the next message.
func Run(ctx context.Context, p Params, opts Options) (task.Summary, []provider.Message) {
	r := newRun(p, opts)
	r.run(ctx)
	return r.finish()
}

type run struct {
	p        Params
	opts     Options
	log      *slog.Logger
	env      *tool.Env
	grants   *Grants
	messages []provider.Message
	sum      task.Summary
	errMsg   string
	// partial is the text the model call in flight has streamed so far.
	partial strings.Builder
	// checkName is the validation check running (toolOutput callId
	// "validation:<name>").
	checkName string

	ctl       *Control
	chain     []provider.Provider
	cur       int
	prov      provider.Provider
	price     pricer
	window    int
	maxTokens int
	baseSys   string // the system prompt without excerpts
	specChars int

	// Compaction state: the raw estimate of the last request and the real
	// inputTokens of its answer calibrate the next estimate.
	lastRaw, calibRaw, calibInput int
	excerptsDropped               bool
	warnedTruncated, overWindow   bool // warnings already given (compact.go)
	progress                      progress

	bg bgState

	checks         *validate.Session // nil until the first final answer with changes
	validationAsks int               // approvals asked for checks (their callIds)

	stopBlocks int // times Stop hooks sent the model back to work
}

func newRun(p Params, opts Options) *run {
	if opts.Tools == nil {
		opts.Tools = tool.NewRegistry()
	}
	if opts.Emit == nil {
		opts.Emit = func(protocol.AgentEvent) {}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = DefaultMaxIterations
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if p.Limits.MaxIterations > 0 {
		opts.MaxIterations = p.Limits.MaxIterations
	}
	if p.Limits.MaxTokensPerCall > 0 {
		opts.MaxTokens = p.Limits.MaxTokensPerCall
	}
	if opts.Control == nil {
		opts.Control = NewControl()
	}
	env := opts.Env
	if env == nil {
		env = tool.NewEnv("", nil, true, p.TaskID)
	}
	if env.Reads == nil {
		e := *env
		e.Reads = tool.NewReadTracker()
		env = &e
	}
	if p.ChatMode == "" {
		p.ChatMode = policy.ChatAgent
	}
	p.Policy = p.Policy.WithRoot(env.Root)
	if p.Kind == "" && opts.Classify != nil && len(opts.Routes) > 0 {
		p.Kind = opts.Classify(p.Prompt)
	}
	r := &run{p: p, opts: opts, env: env, grants: newGrants(), ctl: opts.Control,
		log: opts.Logger.With("taskId", p.TaskID), chain: chain(opts, p.Kind), maxTokens: opts.MaxTokens}
	r.bg.init()
	model := ""
	if len(r.chain) > 0 {
		model = r.chain[0].Config().Model
	}
	r.sum = task.NewSummary(p.TaskID, model)
	r.sum.Status = task.StatusCompleted
	return r
}

// use makes chain[i] the current provider.
func (r *run) use(ctx context.Context, i int) {
	r.cur, r.prov = i, r.chain[i]
	cfg := r.prov.Config()
	r.sum.Model = cfg.Model
	r.price = newPricer(cfg, r.opts.Prices)
	r.window = r.lookupWindow(ctx, r.prov)
	r.calibRaw, r.calibInput = 0, 0
}

// system is the system prompt of the next request.
func (r *run) system() string {
	if r.p.Excerpts == "" || r.excerptsDropped {
		return r.baseSys
	}
	return r.baseSys + "\n\n" + r.p.Excerpts
}

func (r *run) emit(e protocol.AgentEvent) { r.opts.Emit(e) }

// fail ends the task as failed with msg.
func (r *run) fail(msg string) {
	r.sum.Status = task.StatusFailed
	r.errMsg = msg
}

// failBecause fails the task with a typed end reason (the summary's
// endReason) besides the message.
func (r *run) failBecause(reason protocol.TaskEndReason, msg string) {
	r.fail(msg)
	r.sum.EndReason = reason
}

func (r *run) cancel() {
	r.sum.Status = task.StatusCancelled
	r.errMsg = "cancelled"
}

// stopped reports whether ctx ended, and sets the status: failed for the
// wall-clock limit, cancelled otherwise.
func (r *run) stopped(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	if context.Cause(ctx) == errWallClock {
		r.failBecause(protocol.EndMaxWallClock, fmt.Sprintf("the task reached its wall-clock limit of %d ms (limits.maxWallClockMs)", r.p.Limits.MaxWallClockMs))
	} else {
		r.cancel()
	}
	return true
}

func (r *run) run(parent context.Context) {
	// Steering opens before `started` is reported: a client may steer from
	// the moment it sees it (protocol.md agent/steer). Messages queued while
	// the task sets up join before its first model turn.
	r.ctl.start()
	r.emit(protocol.StartedEvent{TaskID: r.p.TaskID, ChatMode: protocol.ChatMode(r.p.ChatMode), Model: r.sum.Model})
	if len(r.chain) == 0 {
		r.fail("agent: no provider configured")
		return
	}
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	if d := r.p.Limits.wallClock(); d > 0 {
		t := time.AfterFunc(d, func() { stop(errWallClock) })
		defer t.Stop()
	}
	r.use(ctx, 0)
	r.emit(protocol.ModelEvent{Provider: string(r.prov.Config().Kind), Model: r.sum.Model})
	if r.p.Prompt == "" && len(r.p.Images) == 0 {
		r.fail("agent: the prompt is empty")
		return
	}
	r.messages = startConversation(r.p.History, r.p.Prompt, r.p.Images)
	extra, ok := r.startHooks(ctx)
	if !ok {
		return
	}
	if r.opts.WaitTools != nil {
		// Tools that are still joining (an MCP server starting) get a bounded
		// wait; any still missing then is said, never silently left out.
		for _, w := range r.opts.WaitTools(ctx) {
			r.emit(protocol.WarningEvent{Message: w})
		}
		if r.stopped(ctx) {
			return
		}
	}

	var specs []provider.ToolSpec
	offered := map[string]tool.Spec{}
	for _, s := range r.opts.Tools.Specs() {
		if r.p.Policy.OfferedTool(s, r.p.ChatMode) {
			offered[s.Name] = s
			specs = append(specs, provider.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema})
			r.specChars += len(s.Name) + len(s.Description) + len(s.InputSchema)
		}
	}
	r.baseSys = systemPrompt(r.env.Root, r.p.ChatMode, r.p.Policy.Mode == policy.ModeReadOnly, r.p.System)
	if sk := strings.TrimSpace(r.p.Skills); sk != "" {
		r.baseSys += "\n\n# Active skills\n\n" + sk
	}
	if extra != "" {
		r.baseSys += "\n\n# Context from the user's hooks\n\n" + extra
	}

	for {
		if r.stopped(ctx) {
			return
		}
		r.joinBackground()
		r.joinSteering()
		if r.sum.Iterations >= r.opts.MaxIterations {
			r.failBecause(protocol.EndMaxIterations, fmt.Sprintf("the task reached the limit of %d model turns (limits.maxIterations) without finishing", r.opts.MaxIterations))
			return
		}
		r.sum.Iterations++
		r.emit(protocol.IterationEvent{N: r.sum.Iterations})
		r.compact()
		res, err := r.callModel(ctx, specs)
		if err != nil {
			if r.stopped(ctx) {
				r.keepPartial(ctx)
				return
			}
			pe := provider.AsError(err)
			r.emit(protocol.ErrorEvent{Message: pe.Message, Kind: protocol.ProviderErrorKind(pe.Kind), Status: pe.Status, Retryable: pe.Retryable()})
			r.log.Warn("model call failed", "kind", pe.Kind, "status", pe.Status, "iteration", r.sum.Iterations)
			r.keepFailed(pe)
			r.fail(pe.Error())
			return
		}
		r.account(res)
		calls := r.recordAssistant(res)
		r.emitContext(res.Usage)
		if len(calls) == 0 {
			switch res.StopReason {
			case provider.StopMaxTokens:
				r.emit(protocol.WarningEvent{Message: "the model's answer was cut at the output token limit", Kind: protocol.WarningOutputCut})
			case provider.StopContentFilter:
				r.emit(protocol.WarningEvent{Message: "the provider stopped the model's answer: a refusal (its content filter)", Kind: protocol.WarningContentFilter})
			}
			// The task does not end while steering messages wait or
			// background commands run.
			if !r.waitForMore(ctx) {
				if r.stopped(ctx) {
					return
				}
				// validation.go: a failed check sends the model back.
				if r.validate(ctx) {
					continue
				}
				if r.stopped(ctx) || !r.stopHook(ctx) {
					return
				}
			}
			continue
		}
		r.runCalls(ctx, calls, offered)
	}
}

// stoppedNote and timedOutNote end the text of an answer stopped
// mid-stream in the history: by the user, or by the wall-clock limit.
const (
	stoppedNote  = "\n\n[The user stopped this answer here.]"
	timedOutNote = "\n\n[This answer was stopped here: the task reached its time limit.]"
)

// keepPartial records the text an answer had streamed when the task was
// stopped as the assistant's turn, marked as cut: a follow-up in the same
// task then shows the model what the user saw (QA: the model read the
// stopped prompt joined with the follow-up, and never its own answer).
func (r *run) keepPartial(ctx context.Context) {
	text := r.partial.String()
	r.partial.Reset()
	if strings.TrimSpace(text) == "" {
		return
	}
	note := stoppedNote
	if context.Cause(ctx) == errWallClock {
		note = timedOutNote
	}
	r.messages = append(r.messages, provider.Message{Role: provider.RoleAssistant,
		Content: []provider.Part{{Type: provider.PartText, Text: text + note}}})
}

// keepFailed records, when a model call failed, the assistant's turn the
// history lacks: the text streamed before the failure (if any) and a note
// of the failure's kind. Without it a follow-up in the same task reached
// the model joined with the prompt that failed, as one user message (QA,
// ACP), and the model could not tell that prompt went unanswered.
func (r *run) keepFailed(pe *provider.Error) {
	text := r.partial.String()
	r.partial.Reset()
	note := fmt.Sprintf("[No answer: the model call failed (%s).]", pe.Kind)
	if strings.TrimSpace(text) != "" {
		note = text + fmt.Sprintf("\n\n[This answer was cut here: the model call failed (%s).]", pe.Kind)
	}
	r.messages = append(r.messages, provider.Message{Role: provider.RoleAssistant,
		Content: []provider.Part{{Type: provider.PartText, Text: note}}})
}

// account adds res's usage and cost to the summary and calibrates the next
// estimate.
func (r *run) account(res *provider.Result) {
	if !res.UsageReported {
		// No counts is no measurement: the summary says how many calls
		// went uncounted instead of adding {0, 0} as if measured.
		r.sum.UnreportedUsageCalls++
		return
	}
	u := res.Usage
	r.sum.Usage.InputTokens += u.InputTokens
	r.sum.Usage.OutputTokens += u.OutputTokens
	usd, unpriced := r.price.cost(u)
	r.sum.Metrics.CostUSD += usd
	r.sum.Metrics.UnpricedTokens += unpriced
	r.calibrate(u.InputTokens)
}

// emitContext reports how full the window was after a model response.
func (r *run) emitContext(u provider.Usage) {
	used := u.InputTokens + u.OutputTokens
	if u.InputTokens == 0 {
		used = r.estimate() + u.OutputTokens
	}
	r.emit(protocol.ContextEvent{UsedTokens: used, WindowTokens: r.window})
}

// joinSteering adds the queued steering messages to the conversation, each
// reported by a `steered` event.
func (r *run) joinSteering() {
	for _, text := range r.ctl.drain() {
		r.appendUserText(text)
		r.emit(protocol.SteeredEvent{Text: text})
		r.log.Info("steering message joined")
	}
}

// appendUserText adds text as a user message, joined to a trailing user
// message (tool results) so that roles keep alternating.
func (r *run) appendUserText(text string) {
	part := provider.Part{Type: provider.PartText, Text: text}
	if n := len(r.messages); n > 0 && r.messages[n-1].Role == provider.RoleUser {
		r.messages[n-1].Content = append(r.messages[n-1].Content, part)
		return
	}
	r.messages = append(r.messages, provider.Message{Role: provider.RoleUser, Content: []provider.Part{part}})
}

// waitForMore is called when the model ended its turn without tool calls.
// It reports true when the task goes on: a steering message waits or a
// background command finished (waiting for one while any runs). false
// means the task ends here (or ctx ended).
func (r *run) waitForMore(ctx context.Context) bool {
	for {
		if r.ctl.pending() || r.bg.hasFinished() {
			return true
		}
		if r.bg.running() == 0 {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-r.ctl.wake:
		case <-r.bg.wake:
		}
	}
}

// recordAssistant appends the model turn to the conversation, emits
// assistantMessage and usage, and returns the tool calls with ids and inputs
// made safe to send back (a missing id, or one an earlier call of the
// conversation already has, gets a fresh provider.NewCallID; an input that is
// not a JSON object becomes {} and is answered with an error).
func (r *run) recordAssistant(res *provider.Result) []pendingCall {
	calls := make([]pendingCall, 0, len(res.ToolCalls))
	seen := r.usedCallIDs()
	var parts []provider.Part
	if res.Text != "" {
		parts = append(parts, provider.Part{Type: provider.PartText, Text: res.Text})
		r.sum.Text = res.Text
	}
	for _, tc := range res.ToolCalls {
		pc := pendingCall{ToolCall: tc}
		for pc.ID == "" || seen[pc.ID] {
			pc.ID = provider.NewCallID()
		}
		seen[pc.ID] = true
		if !isObject(pc.Input) {
			pc.badInput = true
			pc.Input = json.RawMessage("{}")
		}
		calls = append(calls, pc)
		parts = append(parts, provider.Part{Type: provider.PartToolUse, ID: pc.ID, Name: pc.Name, Input: pc.Input})
	}
	if len(parts) > 0 {
		r.messages = append(r.messages, provider.Message{Role: provider.RoleAssistant, Content: parts})
	}
	wire := make([]protocol.ToolCall, len(calls))
	for i, c := range calls {
		wire[i] = c.ToolCall
	}
	r.emit(protocol.AssistantMessageEvent{Text: res.Text, ToolCalls: wire})
	if !res.UsageReported {
		return calls // a usage event reports counts the provider gave
	}
	r.emit(protocol.UsageEvent{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
		TotalInputTokens: r.sum.Usage.InputTokens, TotalOutputTokens: r.sum.Usage.OutputTokens, CostUSD: r.sum.Metrics.CostUSD})
	return calls
}

type pendingCall struct {
	provider.ToolCall
	badInput bool
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// runCalls runs the calls in order and appends one user message holding one
// toolResult per call, whatever happened to it.
func (r *run) runCalls(ctx context.Context, calls []pendingCall, offered map[string]tool.Spec) {
	results := make([]provider.Part, 0, len(calls))
	for _, c := range calls {
		r.sum.ToolCalls++
		var content string
		var isErr bool
		if ctx.Err() != nil {
			content, isErr = resultCancelled, true
		} else {
			content, isErr = r.runCall(ctx, c, offered)
		}
		results = append(results, provider.Part{Type: provider.PartToolResult, ToolUseID: c.ID, ToolName: c.Name, Content: content, IsError: isErr})
	}
	r.messages = append(r.messages, provider.Message{Role: provider.RoleUser, Content: results})
}

// runCall takes one call through the policy, the approval and the tool, and
// returns the content the model sees.
func (r *run) runCall(ctx context.Context, c pendingCall, offered map[string]tool.Spec) (string, bool) {
	spec, isOffered := offered[c.Name]
	t, exists := r.opts.Tools.Get(c.Name)
	if !exists {
		spec = tool.Spec{Name: c.Name}
	} else if !isOffered {
		spec = t.Spec()
	}
	r.emit(protocol.ToolStartedEvent{CallID: c.ID, Tool: c.Name, Input: c.Input, Permission: spec.Permission})
	start := time.Now()
	finish := func(content string, ok bool, result any) (string, bool) {
		ev := protocol.ToolFinishedEvent{CallID: c.ID, Tool: c.Name, OK: ok, Result: result, DurationMs: time.Since(start).Milliseconds()}
		if !ok {
			ev.Error = &content
		}
		r.emit(ev)
		outcome := "ok"
		if !ok {
			outcome = "error"
		}
		r.log.Info("tool call", "tool", c.Name, "class", spec.Permission, "outcome", outcome, "durationMs", ev.DurationMs)
		return content, !ok
	}
	if !exists {
		return finish(fmt.Sprintf(resultUnknownTool, c.Name), false, nil)
	}
	if c.badInput {
		return finish(resultBadInput, false, nil)
	}
	var bg tool.Result // a background command's start, its job kept by startBackground
	out := r.pipeline(c, spec, isOffered, &bg).Invoke(ctx, toolcall.Call{ID: c.ID, Name: c.Name, Input: c.Input})
	if out.Err != nil {
		if te, ok := tool.AsError(out.Err); ok {
			if te.Kind == toolcall.KindStopped {
				r.log.Info("tool call stopped by the user", "tool", c.Name)
			}
			return finish(te.Message, false, nil)
		}
		if ctx.Err() != nil {
			return finish(resultCancelled, false, nil)
		}
		r.log.Error("tool runtime failure", "tool", c.Name, "error", out.Err)
		text, _ := out.Text()
		return finish(text, false, nil)
	}
	res := out.Result
	if res.Background != nil {
		ev := protocol.ToolFinishedEvent{CallID: c.ID, Tool: c.Name, OK: true, Background: true,
			Result: backgroundStart(c.Input, res), DurationMs: time.Since(start).Milliseconds()}
		r.emit(ev)
		r.log.Info("tool call", "tool", c.Name, "class", spec.Permission, "outcome", "background", "durationMs", ev.DurationMs)
		return res.Content, false
	}
	var data any = res.Content
	if res.Data != nil {
		data = res.Data
	}
	return finish(res.Content, true, data)
}

// pipeline is the tool-call pipeline of one call of the loop
// (toolcall.Pipeline): the task's PreToolUse and PostToolUse hooks, the
// policy (a tool the mode does not offer is refused) and the approval with
// the real preview, the accounting of the files it changed (fileChanged
// events, the summary, a plan event), the call's own context registered
// for agent/cancelTool (a background command handed to startBackground),
// the question a stopped ask_user withdraws, and a command's live output.
func (r *run) pipeline(c pendingCall, spec tool.Spec, isOffered bool, bg *tool.Result) *toolcall.Pipeline {
	mw := []toolcall.Middleware{
		r.withHooks(c),
		toolcall.WithGate(r.gate(c, spec, isOffered)),
		toolcall.WithChanges(func(_ context.Context, _ *toolcall.Call, res tool.Result) {
			if res.Background != nil {
				return
			}
			for _, ch := range res.Changes {
				r.emit(task.FileChanged(c.ID, ch))
				r.sum.ChangedFiles = task.MergeChange(r.sum.ChangedFiles, ch)
			}
			if res.Operation != "" {
				r.sum.Operations = append(r.sum.Operations, res.Operation)
			}
			r.sum.Operations = append(r.sum.Operations, res.Operations...)
			if plan, ok := res.Data.(tool.PlanUpdate); ok {
				r.emit(planEvent(plan))
			}
		}),
		toolcall.WithCancel(&r.ctl.calls, func(_ *toolcall.Call, res tool.Result, release func()) {
			r.startBackground(c, res, release)
		}),
	}
	if spec.Permission == tool.ClassInteractive {
		mw = append(mw, func(next toolcall.Handler) toolcall.Handler {
			return func(ctx context.Context, call *toolcall.Call) toolcall.Outcome {
				out := next(ctx, call)
				if ctx.Err() != nil {
					// A question (agent/askUser) the task stopped waiting
					// for: the client closes its dialog.
					r.emit(protocol.ApprovalWithdrawnEvent{CallID: c.ID})
				}
				return out
			}
		})
	}
	if spec.Permission == tool.ClassCommand {
		mw = append(mw, r.withLiveOutput(c.ID))
	}
	return &toolcall.Pipeline{Tools: r.opts.Tools, Env: r.env, Middleware: mw}
}

// withHooks is the task's PreToolUse and PostToolUse hooks around call c.
func (r *run) withHooks(c pendingCall) toolcall.Middleware {
	return toolcall.WithHooks(toolcall.Hooks{
		Pre: func(ctx context.Context, _ string, _ json.RawMessage) (bool, string) { return r.preToolUse(ctx, c) },
		Post: func(ctx context.Context, _ string, _ json.RawMessage, content string, data any) string {
			return r.postToolUse(ctx, c, content, data)
		},
	})
}

// gate is the policy and approval of call c: the policy's decision (a
// tool the mode does not offer is refused), an allowSession grant, and
// the user asked with the preview (r.approve). The loop's calls and the
// validation checks (checkGate) are judged by it.
func (r *run) gate(c pendingCall, spec tool.Spec, isOffered bool) toolcall.Gate {
	return toolcall.Gate{
		Env: r.env,
		Decide: func(*toolcall.Call) (policy.Decision, string) {
			decision, reason := r.p.Policy.Decide(spec, c.Input)
			if !isOffered && decision != policy.Deny {
				// A tool the mode does not offer (the model called it anyway).
				decision, reason = policy.Deny, fmt.Sprintf("%s tools are not available in %s mode", spec.Permission, r.chatModeLabel())
			}
			return decision, reason
		},
		Covered: func(*toolcall.Call) bool { return r.grants.covers(c.Name, c.Input) },
		Approve: func(ctx context.Context, _ *toolcall.Call, preview string) (bool, string) {
			return r.approve(ctx, c, spec, preview)
		},
	}
}

// withLiveOutput streams a command's output as toolOutput events of
// callID while it runs (runLive).
func (r *run) withLiveOutput(callID string) toolcall.Middleware {
	return func(next toolcall.Handler) toolcall.Handler {
		return func(ctx context.Context, call *toolcall.Call) toolcall.Outcome {
			res, err := r.runLive(ctx, callID, func(ctx context.Context) (tool.Result, error) {
				out := next(ctx, call)
				return out.Result, out.Err
			})
			return toolcall.Outcome{Result: res, Err: err}
		}
	}
}

func (r *run) chatModeLabel() string {
	if r.p.Policy.Mode == policy.ModeReadOnly {
		return "readOnly"
	}
	return r.p.ChatMode
}

// approve asks the Approver with the approval timeout, showing preview (cut
// at maxPreview); it reports whether the call may run and, for a deny, the
// user's reason (the answer's message), and remembers allowSession.
func (r *run) approve(ctx context.Context, c pendingCall, spec tool.Spec, preview string) (bool, string) {
	req := task.ApprovalRequest{TaskID: r.p.TaskID, CallID: c.ID, Tool: c.Name, Permission: spec.Permission,
		Input: c.Input, Preview: toolcall.CutPreview(preview)}
	r.emit(protocol.ApprovalRequestedEvent{CallID: c.ID, Tool: c.Name, Permission: spec.Permission, Input: c.Input, Preview: req.Preview})
	d, reason := task.DecisionDeny, ""
	if r.opts.Approve != nil {
		actx, stop := context.WithTimeout(ctx, r.opts.ApprovalTimeout)
		got, err := r.opts.Approve(actx, req)
		switch {
		case err != nil:
			r.log.Warn("approval failed; counted as deny", "tool", c.Name, "error", err)
		case actx.Err() != nil:
			r.log.Info("approval timed out or task ended; counted as deny", "tool", c.Name)
		default:
			d = normalise(got.Decision)
			if d == task.DecisionDeny {
				reason = got.Message
			}
		}
		if actx.Err() != nil {
			// The task ended (cancelled) or the wait timed out with the
			// request still open: the client closes its dialog.
			r.emit(protocol.ApprovalWithdrawnEvent{CallID: c.ID})
		}
		stop()
	}
	r.emit(protocol.ApprovalResolvedEvent{CallID: c.ID, Tool: c.Name, Decision: protocol.Decision(d)})
	if d == task.DecisionAllowSession {
		r.grants.remember(c.Name, c.Input)
	}
	return d != task.DecisionDeny, reason
}

// finish stops what the task left running, emits done and returns the
// summary and the conversation.
func (r *run) finish() (task.Summary, []provider.Message) {
	r.ctl.close()
	r.bg.stopAll()
	if r.sum.Status != task.StatusCompleted {
		msg := r.errMsg
		r.sum.Error = &msg
	}
	r.emit(task.Done(r.sum))
	r.log.Info("task done", "status", r.sum.Status, "iterations", r.sum.Iterations, "toolCalls", r.sum.ToolCalls,
		"inputTokens", r.sum.Usage.InputTokens, "outputTokens", r.sum.Usage.OutputTokens)
	return r.sum, r.messages
}

// startConversation copies history, gives any toolUse without a result a
// cancelled result (a saved task may have stopped mid-call), and adds the
// prompt and images as a user message, joined to a trailing user message so
// that roles keep alternating.
func startConversation(history []provider.Message, prompt string, images []provider.Part) []provider.Message {
	msgs := make([]provider.Message, 0, len(history)+2)
	for _, m := range history {
		m.Content = append([]provider.Part(nil), m.Content...)
		msgs = append(msgs, m)
	}
	for i := 0; i < len(msgs); i++ {
		if msgs[i].Role != provider.RoleAssistant {
			continue
		}
		nextIsUser := i+1 < len(msgs) && msgs[i+1].Role == provider.RoleUser
		answered := map[string]bool{}
		if nextIsUser {
			for _, p := range msgs[i+1].Content {
				if p.Type == provider.PartToolResult {
					answered[p.ToolUseID] = true
				}
			}
		}
		var missing []provider.Part
		for _, p := range msgs[i].Content {
			if p.Type == provider.PartToolUse && !answered[p.ID] {
				missing = append(missing, provider.Part{Type: provider.PartToolResult, ToolUseID: p.ID, ToolName: p.Name, Content: resultCancelled, IsError: true})
			}
		}
		switch {
		case len(missing) == 0:
		case nextIsUser:
			msgs[i+1].Content = append(missing, msgs[i+1].Content...)
		default:
			msgs = slices.Insert(msgs, i+1, provider.Message{Role: provider.RoleUser, Content: missing})
		}
	}
	var parts []provider.Part
	if prompt != "" {
		parts = append(parts, provider.Part{Type: provider.PartText, Text: prompt})
	}
	parts = append(parts, images...)
	if n := len(msgs); n > 0 && msgs[n-1].Role == provider.RoleUser {
		msgs[n-1].Content = append(msgs[n-1].Content, parts...)
		return msgs
	}
	return append(msgs, provider.Message{Role: provider.RoleUser, Content: parts})
}

// usedCallIDs returns the tool-call ids the conversation holds: a model that
// repeats an id from an earlier turn (some servers number calls per response)
// would otherwise pair two results with one call.
func (r *run) usedCallIDs() map[string]bool {
	seen := map[string]bool{}
	for _, m := range r.messages {
		for _, p := range m.Content {
			if p.Type == provider.PartToolUse {
				seen[p.ID] = true
			}
		}
	}
	return seen
}
