package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestBoundKeepsHeadAndTail(t *testing.T) {
	if got := bound("short", 10); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	text := "HEAD" + strings.Repeat("é", 10000) + "TAIL"
	got := bound(text, OutputChars)
	if n := utf8.RuneCountInString(got); n > OutputChars {
		t.Errorf("%d characters, want at most %d", n, OutputChars)
	}
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "characters cut") {
		t.Errorf("head, tail or marker lost: %.60q … %.60q", got[:60], got[len(got)-60:])
	}
	if !utf8.ValidString(got) {
		t.Error("cut inside a character")
	}
}

func TestConfigValidate(t *testing.T) {
	n := func(v int) *int { return &v }
	ms := func(v int64) *int64 { return &v }
	bad := []Config{
		{FixRounds: n(-1)}, {FixRounds: n(4)}, {TimeoutMs: ms(999)}, {TimeoutMs: ms(600_001)},
		{Checks: []Check{{Name: "", Command: "x"}}}, {Checks: []Check{{Name: "a", Command: " "}}},
		{Checks: []Check{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	good := Config{FixRounds: n(3), TimeoutMs: ms(1000), Checks: []Check{{Name: "a", Command: "x"}}}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
	var def Config
	if !def.On() || def.Rounds() != 1 || def.Timeout() != 300*time.Second {
		t.Errorf("defaults: on %v rounds %d timeout %v", def.On(), def.Rounds(), def.Timeout())
	}
}

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts":{"test":"jest","lint":"eslint ."}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "pnpm-lock.yaml"), nil, 0o644)
	checks, skipped := Config{}.Plan(dir)
	if len(checks) != 2 || checks[0] != (Check{Name: "lint", Command: "pnpm run lint"}) || checks[1] != (Check{Name: "test", Command: "pnpm test"}) {
		t.Errorf("checks %v", checks)
	}
	if len(skipped) != 1 || skipped[0] != (Skipped{Name: "build", Reason: ReasonNoCommand}) {
		t.Errorf("skipped %v", skipped)
	}
	own := []Check{{Name: "x", Command: "make x"}}
	if checks, skipped := (Config{Checks: own}).Plan(dir); len(checks) != 1 || checks[0] != own[0] || len(skipped) != 0 {
		t.Errorf("own checks: %v %v", checks, skipped)
	}
}

// TestSessionGateOncePerCommand: the gate is asked once per distinct command
// over all rounds, a refusal skips with its reason, a failed build skips
// test, output is redacted, and fix rounds run out.
func TestSessionGateOncePerCommand(t *testing.T) {
	asked := map[string]int{}
	gate := func(_ context.Context, cmd string) (bool, string) {
		asked[cmd]++
		if cmd == "no" {
			return false, ReasonDenied
		}
		return true, ""
	}
	exec := func(_ context.Context, cmd string, timeout time.Duration) (ExecResult, error) {
		if timeout != 2*time.Second {
			t.Errorf("timeout %v", timeout)
		}
		code := 0
		if strings.HasPrefix(cmd, "fail") {
			code = 1
		}
		return ExecResult{ExitCode: code, Output: "key sk-123 in " + cmd}, nil
	}
	var started, finished int
	ms := int64(2000)
	s := NewSession(Config{TimeoutMs: &ms, Checks: []Check{{Name: "lint", Command: "ok"}, {Name: "deny", Command: "no"}, {Name: "build", Command: "fail build"}, {Name: "test", Command: "ok"}}},
		gate, exec, Hooks{Started: func(string, string) { started++ }, Finished: func(Result) { finished++ },
			Redact: func(s string) string { return strings.ReplaceAll(s, "sk-123", "[redacted]") }})
	for round := 0; round < 2; round++ {
		out := s.Run(context.Background(), t.TempDir())
		if len(out.Results) != 2 || !out.Results[0].Passed || out.Results[1].Passed || !out.Ran {
			t.Fatalf("round %d results %+v", round, out.Results)
		}
		if out.Results[1].Output != "key [redacted] in fail build" {
			t.Errorf("output %q", out.Results[1].Output)
		}
		if len(out.Skipped) != 2 || out.Skipped[0] != (Skipped{Name: "deny", Reason: ReasonDenied}) || out.Skipped[1] != (Skipped{Name: "test", Reason: ReasonBuildFailed}) {
			t.Errorf("skipped %+v", out.Skipped)
		}
		if got := s.FixRound(out); got != (round == 0) {
			t.Errorf("round %d: FixRound %v", round, got)
		}
	}
	if asked["ok"] != 1 || asked["no"] != 1 || asked["fail build"] != 1 {
		t.Errorf("asked %v", asked)
	}
	if started != 4 || finished != 4 {
		t.Errorf("started %d finished %d", started, finished)
	}
	if msg := FixMessage([]Result{{Name: "build", Command: "fail build", ExitCode: 1, Output: "boom\n"}}); !strings.Contains(msg, "`fail build` (exit code 1)") || !strings.Contains(msg, "boom") {
		t.Errorf("fix message %q", msg)
	}
}

func TestSessionCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	exec := func(ctx context.Context, cmd string, _ time.Duration) (ExecResult, error) {
		cancel()
		return ExecResult{ExitCode: -1, Cancelled: true}, nil
	}
	s := NewSession(Config{Checks: []Check{{Name: "a", Command: "x"}, {Name: "b", Command: "y"}}}, func(context.Context, string) (bool, string) { return true, "" }, exec, Hooks{})
	out := s.Run(ctx, t.TempDir())
	if out.Ran || len(out.Results) != 0 || len(out.Skipped) != 2 || out.Skipped[0] != (Skipped{Name: "a", Reason: ReasonCancelled}) || out.Skipped[1] != (Skipped{Name: "b", Reason: ReasonCancelled}) {
		t.Errorf("outcome %+v", out)
	}
}
