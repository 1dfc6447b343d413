package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/sandbox"
)

// Output limits.
const (
	// ReportOutputMax is how much stderr a Report keeps (characters).
	ReportOutputMax = 2000
	// FeedbackMax is how much stderr (or stdout context) reaches the model.
	FeedbackMax = 10_000
)

// Input is what a hook receives on stdin, as JSON with Claude Code's field
// names (snake_case) plus task_id: session_id and task_id (both the task
// id), hook_event_name, cwd, and per event tool_name and tool_input
// (PreToolUse, PostToolUse), tool_response (PostToolUse), prompt
// (UserPromptSubmit), stop_hook_active (Stop), source (SessionStart:
// "startup" or "resume").
type Input struct {
	TaskID         string          `json:"task_id"`
	SessionID      string          `json:"session_id"`
	Event          string          `json:"hook_event_name"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse   any             `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	StopHookActive bool            `json:"stop_hook_active,omitempty"`
	Source         string          `json:"source,omitempty"`
}

// Report is one hook run, the `hook` agent event's fields: the event, the
// group's matcher, the command line, its exit code (-1 when it was killed
// or did not start), the duration in milliseconds, whether it blocked, and
// its stderr cut at ReportOutputMax characters (or why it did not run).
type Report struct {
	Event      string `json:"event"`
	Matcher    string `json:"matcher"`
	Command    string `json:"command"`
	ExitCode   int    `json:"exitCode"`
	DurationMs int64  `json:"durationMs"`
	Blocked    bool   `json:"blocked"`
	Output     string `json:"output"`
}

// Outcome is the decision of every hook of one event.
type Outcome struct {
	// Blocked is true when a hook exited 2 (or, for PreToolUse, failed to
	// run or timed out).
	Blocked bool
	// Feedback is the blocking hooks' stderr (for the model), joined by
	// blank lines and cut at FeedbackMax characters.
	Feedback string
	// Context is the stdout of hooks that exited 0 on UserPromptSubmit and
	// SessionStart, which joins the model's context (as Claude Code does).
	Context string
	// Reports has one entry per command run, in order.
	Reports []Report
}

// Options configure a Runner. User and Workspace are the two sources
// (Workspace only when the workspace is trusted; the caller decides).
type Options struct {
	User      Config
	Workspace Config
	// Root is the workspace root: the hooks' working folder and the folder
	// a sandboxed hook may write. "" runs them in the home folder (or the
	// temp folder) with nothing writable but their temp folder.
	Root string
	// Sandboxed runs hooks confined (addendum §6).
	Sandboxed bool
	// Secrets are key values a hook's environment must not hold.
	Secrets []string
	// Env is the hooks' base environment; nil means os.Environ().
	Env []string
	// Exec runs one command; nil means sandbox.Run.
	Exec   func(ctx context.Context, spec sandbox.Spec) (sandbox.Result, error)
	Logger *slog.Logger
}

// Runner runs the configured hooks. A nil *Runner runs nothing. Its
// methods are safe for concurrent use.
type Runner struct {
	o Options
}

// NewRunner returns a Runner over o.
func NewRunner(o Options) *Runner {
	if o.Exec == nil {
		o.Exec = sandbox.Run
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	return &Runner{o: o}
}

// Has reports whether any hook is configured for event.
func (r *Runner) Has(event string) bool {
	return r != nil && (len(r.o.User[event]) > 0 || len(r.o.Workspace[event]) > 0)
}

// Run runs every hook of in.Event whose matcher matches (the tool name for
// PreToolUse and PostToolUse, in.Source for SessionStart), user hooks
// first, then workspace hooks, each in file order, one after the other.
// All matching hooks run even after one blocks, so each is reported.
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	var out Outcome
	if r == nil {
		return out
	}
	target := in.ToolName
	if in.Event == SessionStart {
		target = in.Source
	}
	if in.Cwd == "" {
		in.Cwd = r.o.Root
	}
	if in.SessionID == "" {
		in.SessionID = in.TaskID
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		stdin = []byte("{}")
	}
	var feedback, extra []string
	for _, cfg := range []Config{r.o.User, r.o.Workspace} {
		for i := range cfg[in.Event] {
			g := &cfg[in.Event][i]
			if !g.matches(in.Event, target) {
				continue
			}
			for _, h := range g.Hooks {
				rep, stderr, stdout := r.runOne(ctx, in.Event, g.Matcher, h, stdin)
				out.Reports = append(out.Reports, rep)
				if rep.Blocked {
					out.Blocked = true
					if strings.TrimSpace(stderr) == "" {
						stderr = fmt.Sprintf("The %s hook %q blocked this without a message (exit code %d).", in.Event, h.Command, rep.ExitCode)
					}
					feedback = append(feedback, strings.TrimSpace(stderr))
				} else if rep.ExitCode == 0 && (in.Event == UserPromptSubmit || in.Event == SessionStart) && strings.TrimSpace(stdout) != "" {
					extra = append(extra, strings.TrimSpace(stdout))
				}
			}
		}
	}
	out.Feedback = Cut(strings.Join(feedback, "\n\n"), FeedbackMax)
	out.Context = Cut(strings.Join(extra, "\n\n"), FeedbackMax)
	return out
}

// blocking reports whether exit code 2 blocks for event (SessionStart
// cannot block: there is nothing to refuse).
func blocking(event string) bool { return event != SessionStart }

// runOne runs one command and returns its report, stderr and stdout.
func (r *Runner) runOne(ctx context.Context, event, matcher string, h Command, stdin []byte) (Report, string, string) {
	rep := Report{Event: event, Matcher: matcher, Command: h.Command, ExitCode: -1}
	start := time.Now()
	timeout := time.Duration(h.Timeout * float64(time.Second))
	if timeout <= 0 {
		timeout = DefaultTimeoutSec * time.Second
	}
	failClosed := event == PreToolUse
	tmp, err := os.MkdirTemp("", "task-x-hook-")
	if err != nil {
		rep.Output = "the hook did not run: " + err.Error()
		rep.Blocked = failClosed
		return rep, rep.Output, ""
	}
	defer os.RemoveAll(tmp)
	inPath, outPath := filepath.Join(tmp, "input.json"), filepath.Join(tmp, "stdout")
	if err := os.WriteFile(inPath, stdin, 0o600); err != nil {
		rep.Output = "the hook did not run: " + err.Error()
		rep.Blocked = failClosed
		return rep, rep.Output, ""
	}
	// stdin from the input file, stdout to a file: the captured output
	// is stderr alone. The braces keep the command's own exit status.
	line := "{\n" + h.Command + "\n} <" + shellQuote(inPath) + " >" + shellQuote(outPath)
	dir := r.o.Root
	if dir == "" {
		dir, _ = os.UserHomeDir()
		if dir == "" {
			dir = os.TempDir()
		}
	}
	env := append([]string(nil), r.o.Env...)
	if r.o.Root != "" {
		env = append(env, "CLAUDE_PROJECT_DIR="+r.o.Root, "TASK_X_PROJECT_DIR="+r.o.Root)
	}
	spec := sandbox.Spec{
		Command:      line,
		Dir:          dir,
		Env:          env,
		Secrets:      r.o.Secrets,
		WritableDirs: []string{tmp},
		Timeout:      timeout,
		OutputCap:    2 * FeedbackMax,
		Sandboxed:    r.o.Sandboxed,
	}
	if r.o.Root != "" {
		spec.WritableDirs = append(spec.WritableDirs, r.o.Root)
	}
	res, err := r.o.Exec(ctx, spec)
	rep.DurationMs = time.Since(start).Milliseconds()
	if err != nil {
		rep.Output = "the hook did not run: " + err.Error()
		rep.Blocked = failClosed
		r.o.Logger.Warn("hook did not run", "event", event, "error", err)
		return rep, rep.Output, ""
	}
	stdout := readCut(outPath, FeedbackMax)
	stderr := res.Output
	rep.ExitCode = res.ExitCode
	switch {
	case res.TimedOut:
		rep.Blocked = failClosed
		stderr = fmt.Sprintf("The %s hook %q timed out after %s and was stopped.", event, h.Command, timeout)
		if s := strings.TrimSpace(res.Output); s != "" {
			stderr += "\n" + s
		}
	case res.Cancelled || ctx.Err() != nil:
		rep.Blocked = failClosed
		stderr = "the hook was stopped because the task ended"
	case res.ExitCode == 2:
		rep.Blocked = blocking(event)
	case res.ExitCode == 126 || res.ExitCode == 127:
		// The shell could not find or execute the command: it failed to run.
		rep.Blocked = failClosed
	}
	rep.Output = Cut(stderr, ReportOutputMax)
	r.o.Logger.Info("hook ran", "event", event, "exitCode", rep.ExitCode, "blocked", rep.Blocked, "durationMs", rep.DurationMs)
	return rep, stderr, stdout
}

func readCut(path string, max int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4*max)
	n, _ := f.Read(buf)
	return Cut(strings.ToValidUTF8(string(buf[:n]), "\uFFFD"), max)
}

// Cut returns s cut at max characters, with a note of how many were left
// out.
func Cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf("\n[... %d characters cut]", len(r)-max)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// BlockedCall is the error result the model gets for a tool call a
// PreToolUse hook blocked: the blocking hooks' feedback.
func BlockedCall(feedback string) string {
	return "A PreToolUse hook blocked this tool call:\n" + feedback
}

// WithPostFeedback is a tool result with a blocking PostToolUse hook's
// feedback appended.
func WithPostFeedback(content, feedback string) string {
	return content + "\n\nA PostToolUse hook reported a problem with this result:\n" + feedback
}
