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
	dir, err := absDir(dirArg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", err)
		return 1
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
	c, err := startClient(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", err)
		return 1
	}
	defer c.close()

	bar := newProgressBar()
	out := &printer{w: os.Stdout, ew: os.Stderr}
	answers := newTerminal()
	c.mu.Lock()
	c.onNotify = func(method string, params json.RawMessage) {
		switch method {
		case "workspace/progress":
			bar.update(params)
		case "agent/event":
			out.event(params)
		}
	}
	c.onCall = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "agent/requestApproval" {
			return nil, fmt.Errorf("unsupported request %s", method)
		}
		return map[string]string{"decision": out.approve(params, answers)}, nil
	}
	c.mu.Unlock()

	init := map[string]any{"sandbox": !*noSandbox}
	if *dataDir != "" {
		init["dataDir"] = *dataDir
	}
	if err := c.initialize(ctx, init); err != nil {
		fmt.Fprintln(os.Stderr, "task-x: initialize:", rpcMessage(err))
		return 1
	}
	if err := c.call(ctx, "workspace/open", map[string]any{"root": dir}, nil); err != nil {
		bar.clear()
		fmt.Fprintln(os.Stderr, "task-x: workspace/open:", rpcMessage(err))
		return 1
	}
	bar.clear()
	params := map[string]any{"prompt": prompt, "provider": prov, "chatMode": *mode}
	if *acceptEdits {
		params["policy"] = map[string]any{"mode": "acceptEdits"}
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
		Iterations int `json:"iterations"`
		ToolCalls  int `json:"toolCalls"`
	}
	if err := c.call(ctx, "agent/run", params, &sum); err != nil {
		out.endLine()
		fmt.Fprintln(os.Stderr, "task-x: agent/run:", rpcMessage(err))
		return 1
	}
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
		Event struct {
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
	case "toolStarted":
		p.breakText()
		fmt.Fprintf(p.ew, "→ %s %s\n", e.Tool, oneLine(string(e.Input), 120))
	case "toolFinished":
		p.breakText()
		status := "ok"
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
		fmt.Fprintln(p.ew, indent(string(req.Input)))
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
