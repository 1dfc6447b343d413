package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
)

// taskSummary is the agent/run result.
type taskSummary = protocol.AgentSummary

// defaults are the provider settings kept in DATA/config.json, so resume
// and later runs need no flags.
type defaults struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	BaseURL  string `json:"baseUrl,omitempty"`
	Mode     string `json:"-"` // per run: --mode or /mode, not remembered
}

func loadDefaults(dataDir string) defaults {
	var d defaults
	if b, err := os.ReadFile(filepath.Join(dataDir, "config.json")); err == nil {
		json.Unmarshal(b, &d)
	}
	return d
}

func saveDefaults(dataDir string, d defaults) {
	b, _ := json.MarshalIndent(d, "", "  ")
	os.WriteFile(filepath.Join(dataDir, "config.json"), b, 0o600)
}

// providerKinds are ProviderConfig kinds (protocol.md).
var providerKinds = []string{"anthropic", "openai", "openaiCompatible", "ollama"}

// apiKey reads the provider's usual environment variable.
func apiKey(kind string) string {
	switch kind {
	case "anthropic":
		return os.Getenv("ANTHROPIC_API_KEY")
	case "openai":
		return os.Getenv("OPENAI_API_KEY")
	case "openaiCompatible":
		if k := os.Getenv("TASK_X_API_KEY"); k != "" {
			return k
		}
		return os.Getenv("OPENAI_API_KEY")
	case "ollama":
		return os.Getenv("TASK_X_API_KEY")
	}
	return ""
}

// keyVar names the variable apiKey reads first for kind.
func keyVar(kind string) string {
	switch kind {
	case "anthropic":
		return "ANTHROPIC_API_KEY"
	case "openai":
		return "OPENAI_API_KEY"
	}
	return "TASK_X_API_KEY"
}

// runner drives turns of one task over the protocol: agent/run with the
// task's id, its events, approvals and questions.
type runner struct {
	s          *session
	p          *printer
	prov       defaults
	policy     map[string]any
	validation map[string]any
	limits     *protocol.Limits
	taskID     string
	// undoSkipped: operations /undo could not undo (their files changed
	// since); the next /undo goes to the one before.
	undoSkipped map[string]bool
}

func (r *runner) providerConfig() map[string]any {
	prov := map[string]any{"kind": r.prov.Provider, "model": r.prov.Model}
	if r.prov.BaseURL != "" {
		prov["baseUrl"] = r.prov.BaseURL
	}
	if key := apiKey(r.prov.Provider); key != "" {
		prov["apiKey"] = key
	} else if r.prov.Provider == "openaiCompatible" {
		// protocol.md requires an apiKey for openaiCompatible; a keyless
		// server (llama.cpp, vLLM, LM Studio) ignores it. The runtime still
		// refuses it over plain http to a host that is not loopback.
		prov["apiKey"] = keylessPlaceholder
	}
	return prov
}

// formatCost is "$0.0123" (4 decimals under a dollar).
func formatCost(usd float64) string {
	if usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// kTokens is "200k", "1.0M".
func kTokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// remember keeps the provider settings in DATA/config.json for later
// runs, once a turn reached the model with them (a refused --base-url or
// an unknown model is not kept).
func (r *runner) remember() {
	if r.s == nil || r.s.dataDir == "" {
		return
	}
	if loadDefaults(r.s.dataDir) != (defaults{Provider: r.prov.Provider, Model: r.prov.Model, BaseURL: r.prov.BaseURL}) {
		saveDefaults(r.s.dataDir, r.prov)
	}
}

// keylessPlaceholder is the apiKey sent to an OpenAI-compatible server
// when no key variable is set.
const keylessPlaceholder = "no-key"

// turn runs one agent/run (a follow-up when r.taskID is set) and returns
// its summary; ctx's cancel interrupts it ($/cancelRequest).
func (r *runner) turn(ctx context.Context, prompt string) (*taskSummary, error) {
	params := map[string]any{"prompt": prompt, "provider": r.providerConfig(), "chatMode": r.prov.Mode}
	if r.taskID != "" {
		params["taskId"] = r.taskID
	}
	if r.policy != nil {
		params["policy"] = r.policy
	}
	if r.validation != nil {
		params["validation"] = r.validation
	}
	if r.limits != nil {
		params["limits"] = r.limits
	}
	if r.s != nil {
		if ms := mentions(r.s.root, prompt); len(ms) > 0 {
			params["editor"] = protocol.EditorContext{Mentions: ms}
		}
	}
	r.p.mu.Lock()
	r.p.prov = r.prov
	r.p.mu.Unlock()
	r.p.startTurn()
	var raw json.RawMessage
	err := r.s.call(ctx, "agent/run", params, &raw)
	if err != nil && r.taskID != "" && ctx.Err() == nil && isBusy(err) {
		// The interrupted turn before this one has not ended in the
		// runtime yet (a loaded machine): wait for its done, then ask again.
		r.p.waitDone(r.taskID, busyWait)
		err = r.s.call(ctx, "agent/run", params, &raw)
	}
	if err != nil {
		if r.taskID == "" {
			r.taskID = r.p.currentTask()
		}
		if r.taskID != "" && ctx.Err() != nil {
			// Interrupted: the runtime ends the task; wait for its `done`
			// so a follow-up does not find it still running.
			r.p.waitDone(r.taskID, taskDoneWait)
		}
		r.p.endTurn(r.taskID)
		return nil, err
	}
	var sum taskSummary
	if err := json.Unmarshal(raw, &sum); err != nil {
		r.p.endTurn("")
		return nil, err
	}
	r.p.mu.Lock()
	provErr := r.p.provErr
	r.p.mu.Unlock()
	if !provErr {
		r.remember()
	}
	r.taskID = sum.TaskID
	// The response can overtake the task's last agent/event notifications;
	// wait for `done` so the answer is shown in full before the summary.
	r.p.waitDone(sum.TaskID, 5*time.Second)
	r.p.endTurn(sum.TaskID)
	r.p.lastSummary = raw
	return &sum, nil
}

// busyWait bounds the wait for a task that is still ending when a
// follow-up is sent.
const busyWait = 30 * time.Second

// isBusy: agent/run refused the task id because the task is running.
func isBusy(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.ErrInvalidParams.Code && strings.Contains(je.Message, "already running")
}

// printer renders agent events. Text format: the answer on stdout
// (markdown rendered on a terminal), activity on stderr. stream-json: every
// event as one JSON line on stdout. json: nothing until the summary.
type printer struct {
	mu     sync.Mutex
	w, ew  io.Writer
	st     styles
	format string // text, json, stream-json
	tty    bool   // stdout is a terminal: buffer the answer and render markdown
	width  int

	inText      bool
	text        strings.Builder // the answer so far when tty
	done        map[string]chan struct{}
	turnStart   time.Time
	tokens      int
	turnTools   int                      // tool calls finished in this turn
	turnFiles   map[string]bool          // files changed in this turn
	waiting     map[string]time.Time     // callId → when its approval was asked
	waited      map[string]time.Duration // callId → time spent waiting for the user
	spin        *lineSpinner
	lastSummary json.RawMessage
	task        string   // the first task id seen in events
	ewWidth     int      // the width to wrap stderr's lines at, 0 when it is not a terminal
	prov        defaults // the provider of the running turn
	errShown    bool     // an error event was shown in this turn
	provErr     bool     // an error event came in this turn (every format)
}

// currentTask is the task id the events of this session carried.
func (p *printer) currentTask() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.task
}

func newPrinter(format string, color bool) *printer {
	p := &printer{w: os.Stdout, ew: os.Stderr, st: newStyles(color), format: format,
		tty: isTerminal(os.Stdout) && format == "text", width: termWidth(),
		waiting: map[string]time.Time{}, waited: map[string]time.Duration{}}
	if isTerminal(os.Stderr) && format == "text" {
		p.ewWidth = p.width
		p.spin = newSpinner(os.Stderr, p)
	}
	return p
}

func (p *printer) doneChan(taskID string) chan struct{} {
	if p.done == nil {
		p.done = map[string]chan struct{}{}
	}
	ch, ok := p.done[taskID]
	if !ok {
		ch = make(chan struct{})
		p.done[taskID] = ch
	}
	return ch
}

func (p *printer) waitDone(taskID string, timeout time.Duration) {
	p.mu.Lock()
	ch := p.doneChan(taskID)
	p.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(timeout):
	}
}

func (p *printer) startTurn() {
	p.mu.Lock()
	p.turnStart = time.Now()
	p.tokens = 0
	p.turnTools, p.turnFiles = 0, map[string]bool{}
	p.errShown, p.provErr = false, false
	p.mu.Unlock()
	if p.spin != nil {
		p.spin.start()
	}
}

func (p *printer) endTurn(taskID string) {
	if p.spin != nil {
		p.spin.stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if taskID != "" {
		delete(p.done, taskID)
	}
	p.flushText()
}

// flushText ends the streamed answer: renders the buffered markdown on a
// terminal, else ends the line. p.mu held.
func (p *printer) flushText() {
	if p.tty {
		if t := p.text.String(); strings.TrimSpace(t) != "" {
			p.spin.clearLine()
			fmt.Fprint(p.w, renderMarkdown(t, p.st.color, p.width))
		}
		p.text.Reset()
		return
	}
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

// agentEvent is one agent/event notification: its task, whether
// agent/replay sent it, and the event as its protocol type.
type agentEvent struct {
	TaskID string
	Replay bool
	E      protocol.AgentEvent
}

// parseEvent decodes the params of an agent/event notification.
func parseEvent(params json.RawMessage) (agentEvent, error) {
	var p protocol.AgentEventParams
	if err := json.Unmarshal(params, &p); err != nil {
		return agentEvent{}, err
	}
	return agentEvent{TaskID: p.TaskID, Replay: p.Replay, E: p.Event}, nil
}

// rawJSON is v (a tool's result) encoded again.
func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// deref is *s, "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// warningText is a warning as task-x says it: a setting of agent/run the
// runtime names is given as the flag that sets it (w.window).
func warningText(msg string, w fixWords) string {
	return strings.ReplaceAll(msg, "Set limits.contextWindowTokens to the model's real window", w.window)
}

// errorLine is the text of an `error` event: a provider error as one
// sentence naming the fix (the details with --verbose).
func errorLine(e protocol.ErrorEvent, prov defaults, w fixWords) string {
	return showProviderError(e, prov, w)
}

func (p *printer) event(params json.RawMessage) {
	if p.format == "stream-json" {
		p.mu.Lock()
		fmt.Fprintf(p.w, "%s\n", compactJSON(params))
		p.mu.Unlock()
	}
	ev, err := parseEvent(params)
	if err != nil || ev.Replay {
		return // a replayed event is an earlier turn's: the session shows it, nothing here counts it
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.TaskID != "" && p.task == "" {
		p.task = ev.TaskID
	}
	switch e := ev.E.(type) {
	case protocol.DoneEvent:
		ch := p.doneChan(ev.TaskID)
		select {
		case <-ch:
		default:
			close(ch)
		}
	case protocol.ErrorEvent:
		p.provErr = true
	case protocol.UsageEvent:
		p.tokens = e.TotalInputTokens + e.TotalOutputTokens
	case protocol.ToolFinishedEvent:
		p.turnTools++
	case protocol.FileChangedEvent:
		if p.turnFiles == nil {
			p.turnFiles = map[string]bool{}
		}
		p.turnFiles[e.Path] = true
	case protocol.ApprovalRequestedEvent:
		p.waiting[e.CallID] = time.Now()
	case protocol.ApprovalResolvedEvent:
		if t, ok := p.waiting[e.CallID]; ok {
			p.waited[e.CallID] += time.Since(t)
			delete(p.waiting, e.CallID)
		}
	}
	if p.format == "json" || p.format == "stream-json" || p.format == "tui" {
		return
	}
	switch e := ev.E.(type) {
	case protocol.TextDeltaEvent:
		if p.tty {
			p.text.WriteString(e.Text)
			return
		}
		fmt.Fprint(p.w, e.Text)
		p.inText = true
	case protocol.ToolStartedEvent:
		p.flushText()
		p.spin.clearLine()
		fmt.Fprintf(p.ew, "%s %s\n", p.st.tool.Render("● "+e.Tool), truncate(plainJSON(e.Input), max(20, p.width-len(e.Tool)-4)))
	case protocol.ToolFinishedEvent:
		p.flushText()
		p.spin.clearLine()
		p.toolFinished(e.Tool, e.CallID, e.OK, deref(e.Error), rawJSON(e.Result), e.DurationMs)
	case protocol.FileChangedEvent:
		p.flushText()
		p.spin.clearLine()
		fmt.Fprintf(p.ew, "  %s %s\n", p.st.dim.Render(string(e.Kind)), e.Path)
	case protocol.WarningEvent:
		p.flushText()
		p.spin.clearLine()
		fmt.Fprintf(p.ew, "%s %s\n", p.st.warn.Render("warning:"), wrapText(warningText(e.Message, flagWords), p.ewWidth, "  "))
	case protocol.ErrorEvent:
		p.flushText()
		p.spin.clearLine()
		p.errShown = true
		fmt.Fprintf(p.ew, "%s %s\n", p.st.bad.Render("error:"), wrapText(errorLine(e, p.prov, flagWords), p.ewWidth, "  "))
	case protocol.ValidationStartedEvent:
		p.flushText()
		p.spin.clearLine()
		fmt.Fprintf(p.ew, "%s %s\n", p.st.tool.Render("● check "+e.Name+":"), truncate(e.Command, max(20, p.width-len(e.Name)-10)))
	case protocol.ValidationFinishedEvent:
		p.flushText()
		p.spin.clearLine()
		fmt.Fprintf(p.ew, "  ⎿ check %s %s %s\n", e.Name, checkOutcome(p.st, e), p.st.dim.Render("("+formatDuration(time.Duration(e.DurationMs)*time.Millisecond)+")"))
	}
}

// checkOutcome is "passed", "FAILED (exit code 1)", …, styled.
func checkOutcome(st styles, e protocol.ValidationFinishedEvent) string {
	switch {
	case e.TimedOut:
		return st.bad.Render("FAILED (timed out)")
	case e.ExitCode < 0:
		return st.warn.Render("stopped")
	case !e.Passed:
		return st.bad.Render(fmt.Sprintf("FAILED (exit code %d)", e.ExitCode))
	}
	return st.ok.Render("passed")
}

// commandLines is how many lines of a command's output are shown.
const commandLines = 5

// toolFinished prints "⎿ ok (1.2s)" with the duration less the approval
// wait, and a command's last lines. p.mu held.
func (p *printer) toolFinished(tool, callID string, ok bool, errText string, result json.RawMessage, ms int64) {
	d := time.Duration(ms)*time.Millisecond - p.waited[callID]
	delete(p.waited, callID)
	if d < 0 {
		d = 0
	}
	fmt.Fprintf(p.ew, "  ⎿ %s\n", toolStatus(p.st, ok, errText, result, d, p.width))
	var r struct {
		Output *string `json:"output"`
	}
	if tool == "run_command" && json.Unmarshal(result, &r) == nil && r.Output != nil {
		lines, hidden := lastLines(*r.Output, commandLines)
		if hidden > 0 {
			fmt.Fprintf(p.ew, "    %s\n", p.st.dim.Render(fmt.Sprintf("… %d earlier lines", hidden)))
		}
		for _, l := range lines {
			fmt.Fprintf(p.ew, "    %s\n", p.st.dim.Render(truncateLine(l, max(20, p.width-6))))
		}
	}
}

// printSummary prints the one-line summary of a turn and its changed files
// on stderr.
func (p *printer) printSummary(sum *taskSummary, elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.ew, "\n"+formatSummary(p.st, sum, elapsed, p.prov, p.errShown, p.ewWidth, flagWords))
}

// formatSummary is the summary of a turn: a line with the status, counts
// and time, then the changed files and the checks.
// The error of a failed turn is left out when an error event showed it
// (errShown); a provider error is its sentence. Lines wrap at width.
func formatSummary(st styles, sum *taskSummary, elapsed time.Duration, prov defaults, errShown bool, width int, w fixWords) string {
	var b strings.Builder
	s := st.ok
	mark := "✓"
	switch sum.Status {
	case "failed":
		s, mark = st.bad, "✗"
	case "cancelled":
		s, mark = st.warn, "■"
	}
	var usage protocol.Usage // absent in a crash-swept task's summary
	if sum.Usage != nil {
		usage = *sum.Usage
	}
	took := "" // a replayed turn's time is not known
	if sum.Metrics != nil && sum.Metrics.CostUSD > 0 {
		took += ", " + formatCost(sum.Metrics.CostUSD)
	}
	if elapsed >= 0 {
		took += ", " + formatDuration(elapsed)
	}
	fmt.Fprintf(&b, "%s %s: %s, %s, %s, %d in / %d out tokens%s\n",
		s.Render(mark), sum.TaskID, s.Render(string(sum.Status)), plural(sum.Iterations, "iteration"), plural(sum.ToolCalls, "tool call"),
		usage.InputTokens, usage.OutputTokens, took)
	if sum.Error != nil && sum.Status != "cancelled" && !errShown {
		fmt.Fprintln(&b, st.bad.Render("error:"), wrapText(summaryError(*sum.Error, prov, w), width, "  "))
	}
	if len(sum.ChangedFiles) > 0 {
		fmt.Fprintln(&b, "changed files:")
		for _, f := range sum.ChangedFiles {
			fmt.Fprintf(&b, "  %-9s %s (%s %s)\n", f.Kind, f.Path, st.add.Render(fmt.Sprintf("+%d", f.Added)), st.del.Render(fmt.Sprintf("-%d", f.Removed)))
		}
	}
	if len(sum.Validations)+len(sum.SkippedChecks) > 0 {
		fmt.Fprintln(&b, "checks:")
		for _, v := range sum.Validations {
			outcome := st.ok.Render("passed")
			if !v.Passed {
				outcome = st.bad.Render("FAILED")
			}
			fmt.Fprintf(&b, "  %s %s\n", outcome, v.Name)
			if !v.Passed {
				// Why it failed: the last lines of its output.
				lines, _ := lastLines(v.Output, 3)
				for _, l := range lines {
					fmt.Fprintf(&b, "    %s\n", st.dim.Render(l))
				}
			}
		}
		for _, sk := range sum.SkippedChecks {
			fmt.Fprintf(&b, "  %s %s (%s)\n", st.dim.Render("skip"), sk.Name, sk.Reason)
		}
	}
	return b.String()
}

// interrupted prints what the interrupted turn did, on stderr.
func (p *printer) interrupted(taskID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spin.clearLine()
	s := interruptedSummary(p.st, time.Since(p.turnStart), p.turnTools, p.tokens, p.turnFiles)
	s = strings.Replace(s, "type a follow-up, or /undo", "task-x resume "+taskID+" continues it", 1)
	if taskID == "" {
		s = strings.SplitN(s, "\n  ", 2)[0]
	}
	fmt.Fprintln(p.ew, s)
}

// say prints a line of activity on stderr, between spinner frames.
func (p *printer) say(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spin.clearLine()
	fmt.Fprintf(p.ew, format, a...)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// lineSpinner shows "⠋ working 3.2s · 1234 tokens" on stderr while a turn runs.
type lineSpinner struct {
	w     io.Writer
	p     *printer
	mu    sync.Mutex
	stopC chan struct{}
	wg    sync.WaitGroup
	shown bool
	pause bool
}

func newSpinner(w io.Writer, p *printer) *lineSpinner { return &lineSpinner{w: w, p: p} }

func (s *lineSpinner) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopC != nil {
		return
	}
	s.stopC = make(chan struct{})
	s.pause = false
	s.wg.Add(1)
	go s.loop(s.stopC)
}

func (s *lineSpinner) loop(stop chan struct{}) {
	defer s.wg.Done()
	frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
	t := time.NewTicker(120 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.p.mu.Lock()
		elapsed, tokens := time.Since(s.p.turnStart), s.p.tokens
		s.mu.Lock()
		if !s.pause {
			fmt.Fprintf(s.w, "\r\033[K%s working %s · %d tokens · Esc to interrupt", s.p.st.prompt.Render(string(frames[i%len(frames)])), formatDuration(elapsed), tokens)
			s.shown = true
		}
		s.mu.Unlock()
		s.p.mu.Unlock()
	}
}

func (s *lineSpinner) stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	stop := s.stopC
	s.stopC = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		s.wg.Wait()
	}
	s.clearLine()
}

// setPaused stops drawing (while an approval or question is asked).
func (s *lineSpinner) setPaused(v bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.pause = v
	s.mu.Unlock()
	s.clearLine()
}

// clearLine erases the spinner's line; callers print after it.
func (s *lineSpinner) clearLine() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.w, "\r\033[K")
		s.shown = false
	}
}

// plainJSON undoes encoding/json's HTML escapes (\u0026, \u003c, \u003e) in
// raw JSON text, so a command such as `make && make test` reads as typed
// rather than as `make \u0026\u0026 make test`. Key order and every other
// escape are kept; an escaped backslash followed by "u0026" stays as it is.
func plainJSON(raw json.RawMessage) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		if raw[i+1] == 'u' && i+6 <= len(raw) {
			switch string(raw[i+2 : i+6]) {
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			case "003c", "003C":
				b.WriteByte('<')
				i += 5
				continue
			case "003e", "003E":
				b.WriteByte('>')
				i += 5
				continue
			}
		}
		b.WriteByte(c)
		b.WriteByte(raw[i+1])
		i++
	}
	return b.String()
}

// commandStatus is "ok", or for a run_command result that did not exit 0,
// what happened: the exit code, a timeout or a cancel.
func commandStatus(result json.RawMessage) string {
	var r struct {
		ExitCode  *int `json:"exitCode"`
		TimedOut  bool `json:"timedOut"`
		Cancelled bool `json:"cancelled"`
	}
	if json.Unmarshal(result, &r) != nil {
		return "ok"
	}
	switch {
	case r.TimedOut:
		return "timed out"
	case r.Cancelled:
		return "cancelled"
	case r.ExitCode != nil && *r.ExitCode != 0:
		return fmt.Sprintf("exit code %d", *r.ExitCode)
	}
	return "ok"
}
