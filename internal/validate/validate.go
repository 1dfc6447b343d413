// Package validate owns the checks a task runs on its own work before it
// says done (addendum §12): which checks (the client's validation.checks or
// the project's lint, build and test commands), the once-per-command gate
// (policy and approval, given by the caller), running each one bounded by
// its timeout through the caller's command runner (run_command's sandbox),
// the result shapes (Result, Skipped), the bounded and redacted output, and
// the fix-round message that sends a failure back to the model.
//
// It knows nothing of the agent loop or the wire: the task layer calls
// Session.Run at the model's final answer and decides what to do with the
// outcome. docs/validations.md records the decisions.
package validate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/workspace"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Defaults and bounds of Config (addendum §12).
const (
	DefaultFixRounds = 1
	MaxFixRounds     = 3
	DefaultTimeout   = 300_000 * time.Millisecond
	MinTimeout       = 1_000 * time.Millisecond
	MaxTimeout       = 600_000 * time.Millisecond // run_command's own limit
	// OutputChars bounds Result.Output: head and tail kept.
	OutputChars = 4000
)

// DefaultNames are the project commands a task checks, in order.
var DefaultNames = []string{"lint", "build", "test"}

// Reasons of Skipped.
const (
	ReasonNoCommand   = "no such command for this project"
	ReasonBuildFailed = "build failed"
	ReasonCancelled   = "cancelled"
	ReasonDenied      = "denied by the user"
	ReasonNoSandbox   = "no sandbox"
)

// Config is agent/run and agent/bestOf `validation` { enabled?, checks?,
// fixRounds?, timeoutMs? }. The zero value is the default.
type Config struct {
	Enabled   *bool   `json:"enabled,omitempty"`
	Checks    []Check `json:"checks,omitempty"`
	FixRounds *int    `json:"fixRounds,omitempty"`
	TimeoutMs *int64  `json:"timeoutMs,omitempty"`
}

// Check is one command to run, named (lint, build, test, or the client's).
type Check = protocol.ValidationCheck

// Validate reports the first field out of its range.
func (c Config) Validate() error {
	if c.FixRounds != nil && (*c.FixRounds < 0 || *c.FixRounds > MaxFixRounds) {
		return fmt.Errorf("validation.fixRounds must be 0 to %d, got %d", MaxFixRounds, *c.FixRounds)
	}
	if c.TimeoutMs != nil && (*c.TimeoutMs < MinTimeout.Milliseconds() || *c.TimeoutMs > MaxTimeout.Milliseconds()) {
		return fmt.Errorf("validation.timeoutMs must be %d to %d, got %d", MinTimeout.Milliseconds(), MaxTimeout.Milliseconds(), *c.TimeoutMs)
	}
	seen := map[string]bool{}
	for i, ch := range c.Checks {
		switch {
		case strings.TrimSpace(ch.Name) == "":
			return fmt.Errorf("validation.checks[%d].name is empty", i)
		case strings.TrimSpace(ch.Command) == "":
			return fmt.Errorf("validation.checks[%d].command is empty", i)
		case strings.IndexByte(ch.Command, 0) >= 0:
			return fmt.Errorf("validation.checks[%d].command contains a NUL byte", i)
		case seen[ch.Name]:
			return fmt.Errorf("validation.checks[%d].name %q is used twice", i, ch.Name)
		}
		seen[ch.Name] = true
	}
	return nil
}

// On reports whether checks run at all (enabled defaults to true).
func (c Config) On() bool { return c.Enabled == nil || *c.Enabled }

// Rounds is the number of fix rounds (default 1).
func (c Config) Rounds() int {
	if c.FixRounds == nil {
		return DefaultFixRounds
	}
	return *c.FixRounds
}

// Timeout is the time limit of one check (default 5 minutes).
func (c Config) Timeout() time.Duration {
	if c.TimeoutMs == nil {
		return DefaultTimeout
	}
	return time.Duration(*c.TimeoutMs) * time.Millisecond
}

// Plan returns the checks to consider for the project in dir: the client's
// checks, or lint, build and test from workspace.Commands (a default with
// no command is skipped with ReasonNoCommand).
func (c Config) Plan(dir string) ([]Check, []Skipped) {
	if len(c.Checks) > 0 {
		return append([]Check(nil), c.Checks...), nil
	}
	cmds := workspace.Commands(dir)
	var checks []Check
	var skipped []Skipped
	for _, n := range DefaultNames {
		if cmd := cmds[n]; cmd != "" {
			checks = append(checks, Check{Name: n, Command: cmd})
		} else {
			skipped = append(skipped, Skipped{Name: n, Reason: ReasonNoCommand})
		}
	}
	return checks, skipped
}

// Result is one check that ran: summary `validations[]` { name, command,
// passed, exitCode, timedOut, durationMs, output }. ExitCode is -1 when the
// command was killed (timeout, cancel).
type Result = protocol.ValidationResult

// Skipped is summary `skippedChecks[]` { name, reason }.
type Skipped = protocol.SkippedCheck

// Gate decides whether a command may run: the policy (deny rules,
// readOnly), grants, and else one approval. It returns ok, or the reason
// it may not. Session calls it once per distinct command.
type Gate func(ctx context.Context, command string) (ok bool, reason string)

// Exec runs one command to its end under the sandbox and policy of
// run_command. Cancelled reports that ctx ended it. An error of
// ErrNoSandbox means the kernel cannot confine it.
type Exec func(ctx context.Context, command string, timeout time.Duration) (ExecResult, error)

// ExecResult is what Exec reports of one command.
type ExecResult struct {
	ExitCode  int
	TimedOut  bool
	Cancelled bool
	Duration  time.Duration
	Output    string
}

// ErrNoSandbox is wrapped by an Exec error when the command cannot be
// confined (the check is skipped with ReasonNoSandbox).
var ErrNoSandbox = errors.New("no sandbox")

// Hooks are the Session's callbacks; nil ones are not called.
type Hooks struct {
	// Started and Finished bracket each check that runs (the
	// validationStarted and validationFinished events).
	Started  func(name, command string)
	Finished func(r Result)
	// Redact removes key values from output before anything sees it.
	Redact func(string) string
}

// Session is the checks of one task (or one subagent): it remembers the
// gate's answer per command across fix rounds, so each distinct command is
// approved at most once per task.
type Session struct {
	cfg     Config
	gate    Gate
	exec    Exec
	hooks   Hooks
	decided map[string]gateAnswer
	rounds  int // fix rounds used
}

type gateAnswer struct {
	ok     bool
	reason string
}

// NewSession returns the checks of one task.
func NewSession(cfg Config, gate Gate, exec Exec, hooks Hooks) *Session {
	return &Session{cfg: cfg, gate: gate, exec: exec, hooks: hooks, decided: map[string]gateAnswer{}}
}

// Config is the session's configuration.
func (s *Session) Config() Config { return s.cfg }

// Outcome is one round of checks.
type Outcome struct {
	Results []Result
	Skipped []Skipped
	// Ran is true when at least one check ran.
	Ran bool
}

// Failed returns the results that did not pass.
func (o Outcome) Failed() []Result {
	var f []Result
	for _, r := range o.Results {
		if !r.Passed {
			f = append(f, r)
		}
	}
	return f
}

// Run runs one round of checks in dir, one after another. A cancelled ctx
// stops the running check's process tree (Exec's job) and skips it and the
// rest with ReasonCancelled; test is skipped when build failed.
func (s *Session) Run(ctx context.Context, dir string) Outcome {
	checks, skipped := s.cfg.Plan(dir)
	out := Outcome{Results: []Result{}, Skipped: append([]Skipped{}, skipped...)}
	buildFailed := false
	for _, ch := range checks {
		if ctx.Err() != nil {
			out.Skipped = append(out.Skipped, Skipped{Name: ch.Name, Reason: ReasonCancelled})
			continue
		}
		if ch.Name == "test" && buildFailed {
			out.Skipped = append(out.Skipped, Skipped{Name: ch.Name, Reason: ReasonBuildFailed})
			continue
		}
		ans, seen := s.decided[ch.Command]
		if !seen {
			ok, reason := s.gate(ctx, ch.Command)
			ans = gateAnswer{ok, reason}
			if ctx.Err() != nil {
				out.Skipped = append(out.Skipped, Skipped{Name: ch.Name, Reason: ReasonCancelled})
				continue
			}
			s.decided[ch.Command] = ans
		}
		if !ans.ok {
			out.Skipped = append(out.Skipped, Skipped{Name: ch.Name, Reason: ans.reason})
			continue
		}
		if s.hooks.Started != nil {
			s.hooks.Started(ch.Name, ch.Command)
		}
		er, err := s.exec(ctx, ch.Command, s.cfg.Timeout())
		res := Result{Name: ch.Name, Command: ch.Command, ExitCode: er.ExitCode, TimedOut: er.TimedOut,
			DurationMs: er.Duration.Milliseconds()}
		switch {
		case err != nil || er.Cancelled || (ctx.Err() != nil && !er.TimedOut):
			// Finished still closes the started event; the check did not
			// finish, so it is skipped, not a result.
			reason := ReasonCancelled
			if err != nil && ctx.Err() == nil {
				reason = err.Error()
				if errors.Is(err, ErrNoSandbox) {
					reason = ReasonNoSandbox
				}
			}
			res.ExitCode = -1
			if s.hooks.Finished != nil {
				s.hooks.Finished(res)
			}
			out.Skipped = append(out.Skipped, Skipped{Name: ch.Name, Reason: reason})
			if ch.Name == "build" {
				buildFailed = true
			}
			continue
		}
		res.Passed = er.ExitCode == 0 && !er.TimedOut
		res.Output = bound(s.redact(er.Output), OutputChars)
		out.Ran = true
		out.Results = append(out.Results, res)
		if s.hooks.Finished != nil {
			s.hooks.Finished(res)
		}
		if ch.Name == "build" && !res.Passed {
			buildFailed = true
		}
	}
	return out
}

func (s *Session) redact(text string) string {
	if s.hooks.Redact == nil {
		return text
	}
	return s.hooks.Redact(text)
}

// FixRound reports whether the failures of o go back to the model for
// another round, and uses one round when they do.
func (s *Session) FixRound(o Outcome) bool {
	if len(o.Failed()) == 0 || s.rounds >= s.cfg.Rounds() {
		return false
	}
	s.rounds++
	return true
}

// FixMessage is the user message that gives the model the failed checks'
// commands and output.
func FixMessage(failed []Result) string {
	var b strings.Builder
	b.WriteString("The runtime checked your change and these checks failed:\n")
	for _, r := range failed {
		status := fmt.Sprintf("exit code %d", r.ExitCode)
		if r.TimedOut {
			status = fmt.Sprintf("timed out after %d ms", r.DurationMs)
		}
		fmt.Fprintf(&b, "\n## %s: `%s` (%s)\n\n```\n%s\n```\n", r.Name, r.Command, status, strings.TrimRight(r.Output, "\n"))
	}
	b.WriteString("\nFix the cause and finish again; the checks run again when you do.")
	return b.String()
}

// bound keeps the first and last parts of text within limit characters
// (runes), with a marker saying how much was cut.
func bound(text string, limit int) string {
	r := []rune(text)
	if len(r) <= limit {
		return text
	}
	const format = "\n… %d characters cut …\n"
	keep := limit - len([]rune(fmt.Sprintf(format, len(r))))
	if keep < 2 {
		return string(r[:limit])
	}
	marker := fmt.Sprintf(format, len(r)-keep)
	head := keep / 2
	tail := keep - head
	return string(r[:head]) + marker + string(r[len(r)-tail:])
}
