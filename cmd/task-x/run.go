package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
)

// Exit codes of run and resume.
const (
	exitFailed     = 1   // the task failed, or the runtime could not run it
	exitUsage      = 2   // bad flags or arguments
	exitUnasked    = 3   // an approval was needed and no one could be asked
	exitCancelled  = 130 // interrupted (Ctrl-C), as a shell reports SIGINT
	taskDoneWait   = 5 * time.Second
	defaultMode    = "agent"
	outputFormats  = "text, json or stream-json"
	formatTextName = "text"
	chatModes      = "agent, ask, plan or team"
)

type runFlags struct {
	provider, model, baseURL, mode string
	prompt, format, cd             string
	acceptEdits, noSandbox, trust  bool
	noValidate                     bool
	contextWindow                  int
}

func addRunFlags(c *cobra.Command, f *runFlags) {
	fl := c.Flags()
	fl.StringVar(&f.provider, "provider", "", "provider kind: anthropic, openai, openaiCompatible or ollama (remembered)")
	fl.StringVar(&f.model, "model", "", "model id (remembered)")
	fl.StringVar(&f.baseURL, "base-url", "", "provider base URL (needed for openaiCompatible; remembered)")
	fl.StringVar(&f.mode, "mode", "", "chat mode: "+chatModes+" (default agent)")
	fl.StringVarP(&f.prompt, "prompt", "p", "", "run this prompt once, without the interactive session")
	fl.StringVarP(&f.cd, "cd", "C", "", "the folder to work in (default: the current folder)")
	fl.StringVar(&f.format, "output-format", formatTextName, "one-shot output: "+outputFormats)
	fl.BoolVar(&f.acceptEdits, "accept-edits", false, "run file edits without asking (policy mode acceptEdits)")
	fl.BoolVar(&f.noSandbox, "no-sandbox", false, "run commands without the kernel sandbox (initialize sandbox: false)")
	fl.BoolVar(&f.noValidate, "no-validate", false, "do not run the project's checks after the task changed files (validation.enabled: false)")
	fl.IntVar(&f.contextWindow, "context-window", 0, "the model's context window in tokens, when the provider reports none or a wrong one (limits.contextWindowTokens)")
	fl.BoolVar(&f.trust, "trust", false, "trust this folder from now on: its .mcp.json and hooks are used")
}

func newRunCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [PROMPT] [-C DIR]",
		Short: "Run an agent task: an interactive session on a terminal, or one prompt with -p",
		Long: `Run an agent task in the current folder, or in DIR with -C DIR (--cd DIR).

On a terminal without a prompt, an interactive session starts: type a prompt, watch the
answer and the tool activity, answer approvals, and type follow-ups in the same task.
Esc or Ctrl-C interrupts the running turn; Ctrl-C twice at the prompt exits (code 130).
Approvals: y allow once, a allow for the rest of the task, n deny and say what to do
instead. Ctrl-O expands the last command output. Type /help in the session for more.

With -p "prompt" (or a PROMPT argument) the task runs once and ends, for scripts and CI.
Exit codes: 0 completed, 1 failed, 2 bad usage, 3 an approval was needed and could not be
asked (stdin is not a terminal and has no answer), 130 interrupted.

The older form "task-x run DIR [PROMPT]" still works when DIR is an existing folder; an
argument that looks like a path (it has a /, or starts with . or ~) and does not exist is an
error, never a prompt.

--provider, --model and --base-url are remembered in the data folder for later runs.`,
		Example: `  task-x run --provider anthropic --model claude-sonnet-4-5
  task-x run -C ../other-repo
  task-x run -p "add a --verbose flag" --provider openai --model gpt-5
  task-x run "where is the config parsed?" --mode ask --output-format json
  task-x run -p "fix the failing test" --output-format stream-json | jq .event.type`,
		// Any number: runArgs says what is wrong with several prompt words
		// (cobra's "accepts at most 2 arg(s)" did not).
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			dir, prompt, err := runArgs(f.cd, f.prompt, args)
			if err != nil {
				return usageError(c, "%s", err)
			}
			return runTask(c, dir, prompt, "", f)
		},
	}
	addRunFlags(c, &f)
	return c
}

// runArgs decides what run's arguments are: the prompt, positional or
// -p, and the folder, -C or (the older form) a first argument that is an
// existing folder. A path-like argument that does not exist is an error
// naming it, never a prompt.
func runArgs(cd, prompt string, args []string) (dir, p string, err error) {
	p = prompt
	var rest []string
	for i, a := range args {
		switch {
		case i == 0 && cd == "" && isDir(a) && (len(args) == 2 || prompt != "" || !strings.ContainsAny(a, " \t\n")):
			dir = a // the older form: run DIR [PROMPT]
		case pathLike(a) && !exists(a):
			return "", "", fmt.Errorf("%s does not exist; pass an existing folder with -C DIR, or quote a prompt that is not a path", a)
		default:
			rest = append(rest, a)
		}
	}
	if cd != "" {
		if !isDir(cd) {
			return "", "", fmt.Errorf("-C %s: no such folder", cd)
		}
		dir = cd
	}
	switch {
	case len(rest) > 1 && p != "":
		return "", "", fmt.Errorf("give the prompt once: -p %s, and %d more words (%s)", shellQuote(p), len(rest), shellQuote(strings.Join(rest, " ")))
	case len(rest) > 1:
		// task-x run fix the bug: the shell split the prompt into words.
		// The advice is copied into a shell: quoted for it, the folder kept.
		words := shellQuote(strings.Join(rest, " "))
		cmd := "task-x run "
		if dir != "" {
			cmd += "-C " + shellQuote(dir) + " "
		}
		return "", "", fmt.Errorf("the prompt is one argument: quote it, %s%s, or pass it with -p %s (got %d words)", cmd, words, words, len(rest))
	case len(rest) == 1 && p != "":
		return "", "", fmt.Errorf("give the prompt once, with -p or as an argument (%q is not a folder)", rest[0])
	case len(rest) == 1:
		p = rest[0]
	}
	return dir, p, nil
}

// shellQuote quotes s for a POSIX shell: a plain word as it is, in double quotes when nothing in
// it is special there, else in single quotes (Go's %q escaped a quote with
// a backslash and left $ and ` to the shell, which expanded them).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@") == "" {
		return s // a plain word: a folder such as ../web
	}
	if !strings.ContainsAny(s, "\"$`\\!") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pathLike reports whether a looks like a path rather than a prompt: one
// word with a slash, or starting with . or ~.
func pathLike(a string) bool {
	if a == "" || strings.ContainsAny(a, " \t\n") {
		return false
	}
	return strings.Contains(a, "/") || strings.HasPrefix(a, ".") || strings.HasPrefix(a, "~")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func newResumeCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "resume [TASK-ID] [-C DIR]",
		Short: "Continue a saved task (the newest by default) in an interactive session or with -p",
		Example: `  task-x resume
  task-x resume task-1a2b3c -p "now add a test for it"
  task-x resume -C ../other-repo`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id := "newest"
			if len(args) == 1 {
				id = args[0]
			}
			dir := f.cd
			if d, _ := c.Flags().GetString("dir"); d != "" {
				dir = d
			}
			if dir != "" && !isDir(dir) {
				return usageError(c, "-C %s: no such folder", dir)
			}
			return runTask(c, dir, f.prompt, id, f)
		},
	}
	addRunFlags(c, &f)
	c.Flags().String("dir", "", "the task's folder (older name of -C)")
	c.Flags().MarkHidden("dir")
	return c
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// runTask opens dir and runs the prompt once, or the interactive session
// when there is no prompt and stdin is a terminal. resume is a task id to
// continue ("newest" for the newest saved task).
func runTask(c *cobra.Command, dir, prompt, resume string, f runFlags) error {
	switch f.format {
	case "text", "json", "stream-json":
	default:
		return usageError(c, "--output-format must be %s, not %q", outputFormats, f.format)
	}
	switch f.mode {
	case "", "agent", "ask", "plan", "team":
	default:
		return usageError(c, "--mode must be %s, not %q", chatModes, f.mode)
	}
	stdin := bufio.NewReader(os.Stdin)
	piped := false // stdin's text went into the prompt
	if !isTerminal(os.Stdin) {
		wait := time.Duration(0) // no prompt: stdin is the prompt, however long it takes
		if prompt != "" {
			wait = stdinWait
		}
		text, rest, isAnswers, err := pipedText(stdin, wait)
		if err != nil {
			return usageError(c, "%s", err)
		}
		switch {
		case isAnswers:
			stdin = rest
			if first := strings.TrimSpace(text); first != "" && prompt != "" {
				// Not sent with the prompt: say so, never drop it silently.
				fmt.Fprintf(os.Stderr, "task-x: stdin starts with %q, an approval answer: it answers approvals and is not sent with the prompt (to send it, start it with another line)\n", first)
			}
		case strings.TrimSpace(text) != "":
			prompt, piped = withPiped(prompt, text), true
		}
	}
	interactive := prompt == ""
	if interactive && !isTerminal(os.Stdin) {
		return usageError(c, `no prompt: pass -p "prompt", pipe one on stdin, or run in a terminal for an interactive session`)
	}
	if interactive && f.format != "text" {
		return usageError(c, "--output-format %s needs a prompt (-p)", f.format)
	}
	dataDir, err := resolveDataDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", err)
		return exitCode(exitFailed)
	}
	d := loadDefaults(dataDir)
	if f.provider != "" {
		if f.provider != d.Provider {
			d.BaseURL = ""
		}
		d.Provider = f.provider
	}
	if f.model != "" {
		d.Model = f.model
	}
	if f.baseURL != "" {
		d.BaseURL = f.baseURL
	}
	if d.Mode == "" {
		d.Mode = defaultMode
	}
	if f.mode != "" {
		d.Mode = f.mode
	}
	switch {
	case d.Provider == "" && d.Model == "":
		return usageError(c, "no provider yet: pass --provider KIND --model MODEL once (they are remembered)")
	case d.Provider == "":
		return usageError(c, "no provider yet: pass --provider KIND (anthropic, openai, openaiCompatible or ollama; remembered)")
	case d.Model == "":
		return usageError(c, "no model yet: pass --model MODEL for %s (remembered)", d.Provider)
	case !slices.Contains(providerKinds, d.Provider):
		return usageError(c, "--provider %q is not a provider kind: use anthropic, openai, openaiCompatible or ollama", d.Provider)
	case d.Provider == "openaiCompatible" && d.BaseURL == "":
		return usageError(c, "openaiCompatible needs --base-url URL (e.g. http://127.0.0.1:8000/v1)")
	case (d.Provider == "anthropic" || d.Provider == "openai") && apiKey(d.Provider) == "":
		fmt.Fprintf(os.Stderr, "task-x: no API key for %s: set %s (export %s=...)\n", d.Provider, keyVar(d.Provider), keyVar(d.Provider))
		return exitCode(exitFailed)
	}
	// Remembered once a turn reached the model with them (runner.remember):
	// a refused --base-url is not kept for later runs.

	format := f.format
	if interactive {
		format = "tui" // the session's program shows the events
	}
	p := newPrinter(format, useColor(os.Stderr))
	ans := &answers{r: stdin}
	if piped {
		ans.eof = true // stdin was the text: no answers on it
	}
	var prog atomic.Pointer[tea.Program]
	r := &runner{p: p, prov: d}
	if f.acceptEdits {
		r.policy = map[string]any{"mode": "acceptEdits"}
	}
	if f.noValidate {
		r.validation = map[string]any{"enabled": false}
	}
	if f.contextWindow < 0 {
		return usageError(c, "--context-window must be a number of tokens, not %d", f.contextWindow)
	}
	if f.contextWindow > 0 {
		r.limits = &protocol.Limits{ContextWindowTokens: f.contextWindow}
	}
	unasked := "" // the advice for the last approval no one could answer
	ctx := context.Background()
	s, code := openWorkspace(ctx, dir, openOpts{
		init:  map[string]any{"sandbox": !f.noSandbox},
		trust: f.trust,
		onNotify: func(method string, params json.RawMessage) {
			if method == "agent/event" {
				p.event(params)
				if tp := prog.Load(); tp != nil {
					if ev, err := parseEvent(params); err == nil {
						tp.Send(eventMsg{ev})
					}
				}
			}
		},
		onCall: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case "agent/requestApproval":
				var a approval
				if tp := prog.Load(); tp != nil {
					reply := make(chan approval, 1)
					tp.Send(approvalMsg{params: params, reply: reply, gone: ctx.Done()})
					select {
					case a = <-reply:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				} else {
					a = p.approve(params, ans)
				}
				if a.unasked {
					var req protocol.RequestApprovalParams
					json.Unmarshal(params, &req)
					unasked = unaskedAdvice(string(req.Permission), f.noValidate)
					p.say("%s\n", p.st.bad.Render("denied: no one to ask (stdin is not a terminal); "+unasked))
				}
				if n := len(a.message); n > protocol.MaxDenyMessage {
					// The runtime would cut it: not sent rather than cut.
					p.say("%s\n", p.st.bad.Render(fmt.Sprintf("denied; your message was not sent (%d bytes, at most %d)", n, protocol.MaxDenyMessage)))
					a.message = ""
				}
				// A deny's message goes in the answer: the model reads it
				// in the denied call's result, in the same turn.
				return protocol.RequestApprovalResult{Decision: protocol.Decision(a.decision), Message: a.message}, nil
			case "agent/askUser":
				if tp := prog.Load(); tp != nil {
					reply := make(chan map[string][]string, 1)
					tp.Send(questionMsg{params: params, reply: reply, gone: ctx.Done()})
					select {
					case a := <-reply:
						return map[string]any{"answers": a}, nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return map[string]any{"answers": p.askUser(params, ans)}, nil
			}
			return nil, fmt.Errorf("unsupported request %s", method)
		},
	})
	if s == nil {
		return exitCode(code)
	}
	defer s.close()
	r.s = s
	if resume != "" {
		id, err := findTask(s, resume)
		if err != nil {
			fmt.Fprintln(os.Stderr, "task-x:", err)
			return exitCode(exitFailed)
		}
		r.taskID = id
		fmt.Fprintf(os.Stderr, "resuming %s\n", id)
	}
	if interactive {
		return exitCode(tuiSession(r, newStyles(useColor(os.Stdout)), &prog))
	}

	// One-shot: Ctrl-C cancels the task and exits 130.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	sum, err := r.turn(ctx, prompt)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			p.interrupted(r.taskID)
			return exitCode(exitCancelled)
		}
		fmt.Fprintln(os.Stderr, "task-x:", friendly(err))
		return exitCode(exitFailed)
	}
	switch f.format {
	case "json":
		fmt.Fprintln(os.Stdout, string(p.lastSummary))
	case "stream-json":
		fmt.Fprintf(os.Stdout, `{"type":"result","summary":%s}`+"\n", compactJSON(p.lastSummary))
	default:
		p.printSummary(sum, time.Since(start))
	}
	switch {
	case sum.Status == "cancelled":
		return exitCode(exitCancelled)
	case sum.Status != "completed":
		if f.format != "text" && sum.Error != nil {
			fmt.Fprintln(os.Stderr, "task-x: the task failed:", summaryError(*sum.Error, r.prov, flagWords))
		}
		return exitCode(exitFailed)
	case unasked != "":
		fmt.Fprintln(os.Stderr, "task-x: an approval was needed and could not be asked; "+unasked)
		return exitCode(exitUnasked)
	}
	return nil
}

// unaskedAdvice names the way to let a one-shot run do what it could not
// ask about: --accept-edits covers file edits only; a command (the model's
// or a project check) is answered by a y/a/n line on stdin.
func unaskedAdvice(permission string, noValidate bool) string {
	if permission == "edit" {
		return "pass --accept-edits, answer on stdin (a y, a or n line per approval) or run in a terminal"
	}
	s := "--accept-edits does not cover " + cmp.Or(permission, "this") + " calls: answer on stdin (a y, a or n line per approval, e.g. yes a | task-x run -p ...) or run in a terminal"
	if !noValidate {
		s += "; --no-validate skips the project's checks"
	}
	return s
}

// findTask resolves "newest" or an id (a unique prefix is enough) against
// the tasks of this folder (agent/tasks, whose `root` names each task's
// folder). A task of another folder is refused with the folder to resume it
// in: continuing it here would give it a workspace it never saw.
func findTask(s *session, id string) (string, error) {
	all, err := listAllTasks(s)
	if err != nil {
		return "", errors.New(friendly(err))
	}
	tasks := s.ofThisFolder(all)
	if id == "newest" {
		switch {
		case len(tasks) > 0:
			return tasks[0].TaskID, nil
		case len(all) > 0:
			return "", fmt.Errorf("no saved task of %s (the newest is of %s: task-x resume -C %s)", s.root, all[0].Root, all[0].Root)
		}
		return "", errors.New("there is no saved task to resume; start one with task-x run")
	}
	// This folder's tasks first: a prefix another folder's task shares
	// does not hide one of here.
	var found []string
	for _, t := range tasks {
		if t.TaskID == id {
			return id, nil
		}
		if strings.HasPrefix(t.TaskID, id) {
			found = append(found, t.TaskID)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	if len(found) == 0 {
		for _, t := range all {
			if strings.HasPrefix(t.TaskID, id) && !s.isThisFolder(t) {
				return "", fmt.Errorf("task %s ran in %s, not here; resume it there: task-x resume %s -C %s", t.TaskID, t.Root, t.TaskID, t.Root)
			}
		}
	}
	return "", fmt.Errorf("no saved task %q; task-x tasks lists them", id)
}

// taskMeta is one task of agent/tasks.
type taskMeta = protocol.TaskInfo

// listTasks is agent/tasks of this folder, newest first.
func listTasks(s *session) ([]taskMeta, error) {
	all, err := listAllTasks(s)
	return s.ofThisFolder(all), err
}

// isThisFolder: t ran in the session's folder (or predates `root`).
func (s *session) isThisFolder(t taskMeta) bool {
	if t.Root == "" || t.Root == s.root {
		return true
	}
	a, err1 := filepath.EvalSymlinks(t.Root)
	b, err2 := filepath.EvalSymlinks(s.root)
	return err1 == nil && err2 == nil && a == b
}

func (s *session) ofThisFolder(all []taskMeta) []taskMeta {
	var out []taskMeta
	for _, t := range all {
		if s.isThisFolder(t) {
			out = append(out, t)
		}
	}
	return out
}

// listAllTasks is agent/tasks, every folder's, newest first.
func listAllTasks(s *session) ([]taskMeta, error) {
	var res protocol.TasksResult
	if err := s.call(context.Background(), protocol.MethodAgentTasks, nil, &res); err != nil {
		return nil, err
	}
	t := res.Tasks
	for i := 1; i < len(t); i++ {
		for j := i; j > 0 && t[j].UpdatedAt.After(t[j-1].UpdatedAt); j-- {
			t[j], t[j-1] = t[j-1], t[j]
		}
	}
	return t, nil
}

func printTasks(w io.Writer, st styles, tasks []taskMeta, width int) {
	if len(tasks) == 0 {
		fmt.Fprintln(w, "no saved tasks")
		return
	}
	for _, t := range tasks {
		fmt.Fprintf(w, "%s  %-9s %s  %s\n", st.file.Render(t.TaskID), t.Status, t.UpdatedAt.Local().Format("2006-01-02 15:04"),
			truncate(t.Title, max(20, width-len(t.TaskID)-32)))
	}
}

func newTasksCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "tasks [DIR]",
		Short:   "List the saved tasks, newest first",
		Example: "  task-x tasks\n  task-x tasks --data-dir ~/tx-data",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			s, code := openWorkspace(context.Background(), dir, openOpts{})
			if s == nil {
				return exitCode(code)
			}
			defer s.close()
			tasks, err := listTasks(s)
			if err != nil {
				fmt.Fprintln(os.Stderr, "task-x:", friendly(err))
				return exitCode(exitFailed)
			}
			printTasks(os.Stdout, newStyles(useColor(os.Stdout)), tasks, termWidth())
			return nil
		},
	}
}
