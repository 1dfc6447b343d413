package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"
)

func cmdRun(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	kind := fs.String("provider", "", "provider kind: anthropic, openai, openaiCompatible or ollama")
	model := fs.String("model", "", "model id")
	baseURL := fs.String("base-url", "", "provider base URL (required for openaiCompatible)")
	mode := fs.String("mode", "agent", "chat mode: agent or ask")
	acceptEdits := fs.Bool("accept-edits", false, "run file edits without asking (policy mode acceptEdits)")
	noSandbox := fs.Bool("no-sandbox", false, "run commands without the kernel sandbox (initialize sandbox: false)")
	dataDir := fs.String("data-dir", "", "absolute folder where task files are saved")
	noValidate := fs.Bool("no-validate", false, "do not run the project's checks after the task changed files (validation.enabled: false)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kind == "" || *model == "" || fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprint(os.Stderr, "task-x run: --provider, --model and a prompt are required\n", usage)
		return 2
	}
	dirArg, prompt := "", fs.Arg(0)
	if fs.NArg() == 2 {
		dirArg, prompt = fs.Arg(0), fs.Arg(1)
	}
	prov := map[string]any{"kind": *kind, "model": *model}
	if *baseURL != "" {
		prov["baseUrl"] = *baseURL
	}
	if key := apiKey(*kind); key != "" {
		prov["apiKey"] = key
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := &printer{w: os.Stdout, ew: os.Stderr}
	answers := newTerminal()
	init := map[string]any{"sandbox": !*noSandbox}
	if *dataDir != "" {
		init["dataDir"] = *dataDir
	}
	c, _, code := openWorkspace(ctx, dirArg, init,
		func(method string, params json.RawMessage) {
			if method == "agent/event" {
				out.event(params)
			}
		},
		func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case "agent/requestApproval":
				return map[string]string{"decision": out.approve(params, answers)}, nil
			case "agent/askUser":
				return map[string]any{"answers": out.askUser(params, answers)}, nil
			}
			return nil, fmt.Errorf("unsupported request %s", method)
		})
	if c == nil {
		return code
	}
	defer c.close()
	params := map[string]any{"prompt": prompt, "provider": prov, "chatMode": *mode}
	if *acceptEdits {
		params["policy"] = map[string]any{"mode": "acceptEdits"}
	}
	if *noValidate {
		params["validation"] = map[string]any{"enabled": false}
	}
	var sum struct {
		TaskID       string `json:"taskId"`
		Status       string `json:"status"`
		Error        *string
		ChangedFiles []struct {
			Path    string `json:"path"`
			Kind    string `json:"kind"`
			Added   int    `json:"added"`
			Removed int    `json:"removed"`
		} `json:"changedFiles"`
		Usage struct {
			InputTokens  int `json:"inputTokens"`
			OutputTokens int `json:"outputTokens"`
		} `json:"usage"`
		Iterations  int `json:"iterations"`
		ToolCalls   int `json:"toolCalls"`
		Validations []struct {
			Name   string `json:"name"`
			Passed bool   `json:"passed"`
		} `json:"validations"`
		SkippedChecks []struct {
			Name   string `json:"name"`
			Reason string `json:"reason"`
		} `json:"skippedChecks"`
	}
	if err := c.call(ctx, "agent/run", params, &sum); err != nil {
		out.endLine()
		fmt.Fprintln(os.Stderr, "task-x: agent/run:", rpcMessage(err))
		return 1
	}
	// Responses are routed as they arrive, notifications through the conn's
	// queue: the task's last agent/event notifications (its final text and
	// `done`) may still be queued. Wait for `done` so the answer is printed in
	// full before the summary.
	out.waitDone(sum.TaskID, 5*time.Second)
	out.endLine()
	fmt.Fprintf(os.Stderr, "\n%s: %s, %d iterations, %d tool calls, %d in / %d out tokens\n",
		sum.TaskID, sum.Status, sum.Iterations, sum.ToolCalls, sum.Usage.InputTokens, sum.Usage.OutputTokens)
	if sum.Error != nil {
		fmt.Fprintln(os.Stderr, "error:", *sum.Error)
	}
	if len(sum.ChangedFiles) > 0 {
		fmt.Fprintln(os.Stderr, "changed files:")
		for _, f := range sum.ChangedFiles {
			fmt.Fprintf(os.Stderr, "  %-9s %s (+%d -%d)\n", f.Kind, f.Path, f.Added, f.Removed)
		}
	}
	if len(sum.Validations)+len(sum.SkippedChecks) > 0 {
		fmt.Fprintln(os.Stderr, "checks:")
		for _, v := range sum.Validations {
			outcome := "passed"
			if !v.Passed {
				outcome = "FAILED"
			}
			fmt.Fprintf(os.Stderr, "  %-6s %s\n", outcome, v.Name)
		}
		for _, s := range sum.SkippedChecks {
			fmt.Fprintf(os.Stderr, "  %-6s %s (%s)\n", "skip", s.Name, s.Reason)
		}
	}
	if sum.Status != "completed" {
		return 1
	}
	return 0
}

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

// printer renders agent events: the answer on stdout, tool activity on stderr.
type printer struct {
	mu     sync.Mutex
	w, ew  io.Writer
	inText bool
	done   map[string]chan struct{} // taskId → closed once its `done` event is printed
}

// doneChan returns the channel closed when taskID's `done` event has been
// handled. p.mu must be held.
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

// waitDone waits until the `done` agent/event of taskID has been handled, or
// for at most timeout.
func (p *printer) waitDone(taskID string, timeout time.Duration) {
	p.mu.Lock()
	ch := p.doneChan(taskID)
	p.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(timeout):
	}
}

func (p *printer) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

func (p *printer) event(params json.RawMessage) {
	var ev struct {
		TaskID string `json:"taskId"`
		Event  struct {
			Type       string          `json:"type"`
			Text       string          `json:"text"`
			Tool       string          `json:"tool"`
			Input      json.RawMessage `json:"input"`
			OK         *bool           `json:"ok"`
			Error      any             `json:"error"`
			Message    string          `json:"message"`
			Path       string          `json:"path"`
			Kind       string          `json:"kind"`
			DurationMs int64           `json:"durationMs"`
			Result     json.RawMessage `json:"result"`
			Name       string          `json:"name"`
			Command    string          `json:"command"`
			Passed     bool            `json:"passed"`
			ExitCode   int             `json:"exitCode"`
			TimedOut   bool            `json:"timedOut"`
		} `json:"event"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	e := ev.Event
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case "textDelta":
		fmt.Fprint(p.w, e.Text)
		p.inText = true
		return
	case "done":
		ch := p.doneChan(ev.TaskID)
		select {
		case <-ch:
		default:
			close(ch)
		}
	case "toolStarted":
		p.breakText()
		fmt.Fprintf(p.ew, "→ %s %s\n", e.Tool, oneLine(plainJSON(e.Input), 120))
	case "toolFinished":
		p.breakText()
		status := commandStatus(e.Result)
		if e.OK != nil && !*e.OK {
			status = fmt.Sprintf("failed: %v", e.Error)
		}
		fmt.Fprintf(p.ew, "  %s %s (%d ms)\n", e.Tool, oneLine(status, 160), e.DurationMs)
	case "fileChanged":
		p.breakText()
		fmt.Fprintf(p.ew, "  %s %s\n", e.Kind, e.Path)
	case "warning", "error":
		p.breakText()
		fmt.Fprintf(p.ew, "%s: %s\n", e.Type, e.Message)
	case "validationStarted":
		p.breakText()
		fmt.Fprintf(p.ew, "→ check %s: %s\n", e.Name, oneLine(e.Command, 120))
	case "validationFinished":
		p.breakText()
		outcome := "passed"
		switch {
		case e.TimedOut:
			outcome = "FAILED (timed out)"
		case e.ExitCode < 0:
			outcome = "stopped"
		case !e.Passed:
			outcome = fmt.Sprintf("FAILED (exit code %d)", e.ExitCode)
		}
		fmt.Fprintf(p.ew, "  check %s %s (%d ms)\n", e.Name, outcome, e.DurationMs)
	}
}

func (p *printer) breakText() {
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

// approve asks on the terminal; anything but y, a or yes denies.
func (p *printer) approve(params json.RawMessage, t *terminal) string {
	var req struct {
		Tool       string          `json:"tool"`
		Permission string          `json:"permission"`
		Input      json.RawMessage `json:"input"`
		Preview    string          `json:"preview"`
	}
	json.Unmarshal(params, &req)
	p.mu.Lock()
	p.breakText()
	fmt.Fprintf(p.ew, "\n%s wants to run %s:\n", req.Permission, req.Tool)
	if req.Preview != "" {
		fmt.Fprintln(p.ew, indent(req.Preview))
	} else {
		fmt.Fprintln(p.ew, indent(plainJSON(req.Input)))
	}
	fmt.Fprint(p.ew, "allow? [y]es / [a]lways this task / [N]o: ")
	p.mu.Unlock()
	switch strings.ToLower(strings.TrimSpace(t.readLine())) {
	case "y", "yes":
		return "allow"
	case "a", "always":
		return "allowSession"
	}
	return "deny"
}

// terminal reads answers from /dev/tty, else stdin; at EOF every answer is
// "no".
type terminal struct {
	mu sync.Mutex
	r  *bufio.Reader
}

func newTerminal() *terminal {
	var in io.Reader = os.Stdin
	if tty, err := os.Open("/dev/tty"); err == nil {
		in = tty
	}
	return &terminal{r: bufio.NewReader(in)}
}

func (t *terminal) readLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	line, _ := t.r.ReadString('\n')
	return line
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

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("… %d more lines", len(lines)-40))
	}
	return "    " + strings.Join(lines, "\n    ")
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

// askUser asks agent/askUser's questions on the terminal: a number per
// option (several, separated by spaces or commas, for a checkbox question).
// An empty answer to every question dismisses them (answers: null).
func (p *printer) askUser(params json.RawMessage, t *terminal) map[string][]string {
	var req struct {
		Questions []struct {
			ID      string   `json:"id"`
			Text    string   `json:"text"`
			Kind    string   `json:"kind"`
			Options []string `json:"options"`
		} `json:"questions"`
	}
	if json.Unmarshal(params, &req) != nil {
		return nil
	}
	answers := map[string][]string{}
	answered := false
	for _, q := range req.Questions {
		p.mu.Lock()
		p.breakText()
		fmt.Fprintf(p.ew, "\n%s\n", q.Text)
		for i, o := range q.Options {
			fmt.Fprintf(p.ew, "  %d) %s\n", i+1, o)
		}
		if q.Kind == "checkbox" {
			fmt.Fprint(p.ew, "choose any (e.g. 1 3), empty to skip: ")
		} else {
			fmt.Fprint(p.ew, "choose one, empty to skip: ")
		}
		p.mu.Unlock()
		picked := []string{}
		for _, f := range strings.FieldsFunc(t.readLine(), func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\r' }) {
			var n int
			if _, err := fmt.Sscan(f, &n); err == nil && n >= 1 && n <= len(q.Options) {
				picked = append(picked, q.Options[n-1])
			}
		}
		if len(picked) > 0 {
			answered = true
		}
		answers[q.ID] = picked
	}
	if !answered {
		return nil
	}
	return answers
}
