package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// failingChecks makes run_command answer like the real tool: exit code 1
// with output for `make t`, 0 for anything else.
func failingChecks(ts map[string]*fakeTool) {
	ts["run_command"] = newTool("run_command", tool.ClassCommand, func(_ context.Context, in json.RawMessage) (tool.Result, error) {
		var a struct{ Command string }
		_ = json.Unmarshal(in, &a)
		code := 0
		if a.Command == "make t" {
			code = 1
		}
		return tool.Result{Content: "out", Data: map[string]any{"exitCode": code, "output": "boom from " + a.Command, "durationMs": 7}}, nil
	})
}

var twoChecks = validate.Config{Checks: []validate.Check{{Name: "t", Command: "make t"}, {Name: "ok", Command: "make ok"}}}

// TestValidationFixRoundInLoop: the failure reaches the model as a user
// message, the task goes on, the checks run again (asked once each), and
// the failed check leaves the task completed.
func TestValidationFixRoundInLoop(t *testing.T) {
	ts := tools()
	failingChecks(ts)
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "write_file", `{"path":"a.go","content":"x"}`)}},
		turn{text: "done"},
		turn{text: "still done"},
	)
	h.appr.answers["c1"] = task.DecisionAllow
	h.appr.answers["validation_1"] = task.DecisionAllow
	h.appr.answers["validation_2"] = task.DecisionAllow
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent", Validation: twoChecks})
	if sum.Status != task.StatusCompleted || !sum.ValidationRan || len(sum.Validations) != 2 || sum.Validations[0].Passed || !sum.Validations[1].Passed {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Validations[0].Output != "boom from make t" || sum.Validations[0].ExitCode != 1 || sum.Validations[0].DurationMs != 7 {
		t.Errorf("result %+v", sum.Validations[0])
	}
	if got := strings.Join(h.appr.ids(), ","); got != "c1,validation_1,validation_2" {
		t.Errorf("approvals %s", got)
	}
	if len(h.prov.reqs) != 3 {
		t.Fatalf("%d model requests", len(h.prov.reqs))
	}
	msgs := h.prov.reqs[2].Messages
	last := msgs[len(msgs)-1]
	if last.Role != provider.RoleUser || !strings.Contains(last.Content[len(last.Content)-1].Text, "`make t` (exit code 1)") {
		t.Errorf("fix message: %+v", last)
	}
	if n := len(of[protocol.ValidationStartedEvent](h.rec)); n != 4 {
		t.Errorf("%d validationStarted events", n)
	}
}

// TestValidationNotRun: no change, ask mode, readOnly and enabled false run
// no check; at the turn limit a failure gets no fix round.
func TestValidationNotRun(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name  string
		p     Params
		write bool
	}{
		{"no-change", Params{ChatMode: "agent", Policy: allowAll(), Validation: twoChecks}, false},
		{"ask", Params{ChatMode: "ask", Policy: allowAll(), Validation: twoChecks}, false},
		{"readOnly", Params{ChatMode: "agent", Policy: policy.Policy{Mode: policy.ModeReadOnly}, Validation: twoChecks}, false},
		{"disabled", Params{ChatMode: "agent", Policy: allowAll(), Validation: validate.Config{Enabled: &off, Checks: twoChecks.Checks}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := tools()
			failingChecks(ts)
			turns := []turn{{text: "done"}}
			if tc.write {
				turns = append([]turn{{calls: []provider.ToolCall{call("c1", "write_file", `{"path":"a.go","content":"x"}`)}}}, turns...)
			}
			h := newHarness(t, ts, turns...)
			sum, _ := h.run(t, context.Background(), tc.p)
			if sum.ValidationRan || len(sum.Validations) != 0 || len(sum.SkippedChecks) != 0 || ts["run_command"].count() != 0 {
				t.Errorf("summary %+v, run_command calls %d", sum, ts["run_command"].count())
			}
		})
	}
	t.Run("turn-limit", func(t *testing.T) {
		ts := tools()
		failingChecks(ts)
		h := newHarness(t, ts, turn{calls: []provider.ToolCall{call("c1", "write_file", `{"path":"a.go","content":"x"}`)}}, turn{text: "done"})
		p := Params{ChatMode: "agent", Policy: allowAll(), Validation: twoChecks}
		p.Limits.MaxIterations = 2
		sum, _ := h.run(t, context.Background(), p)
		if sum.Status != task.StatusCompleted || len(sum.Validations) != 2 || len(h.prov.reqs) != 2 {
			t.Errorf("summary %+v, %d requests", sum, len(h.prov.reqs))
		}
	})
}

// TestValidationLiveOutput: a check's output reaches the client as
// toolOutput events (callId validation:<name>) between its
// validationStarted and validationFinished.
func TestValidationLiveOutput(t *testing.T) {
	ts := tools()
	ts["run_command"] = newTool("run_command", tool.ClassCommand, func(ctx context.Context, in json.RawMessage) (tool.Result, error) {
		var a struct{ Command string }
		_ = json.Unmarshal(in, &a)
		out := tool.Output(ctx)
		if out == nil {
			return tool.Result{}, errors.New("no live output sink")
		}
		out("stdout", []byte("running "+a.Command+"\n"))
		out("stderr", []byte("warn\n"))
		return tool.Result{Content: "out", Data: map[string]any{"exitCode": 0, "output": "running " + a.Command + "\nwarn\n", "durationMs": 1}}, nil
	})
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "write_file", `{"path":"a.go","content":"x"}`)}},
		turn{text: "done"},
	)
	h.appr.answers["c1"] = task.DecisionAllow
	h.appr.answers["validation_1"] = task.DecisionAllow
	h.appr.answers["validation_2"] = task.DecisionAllow
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent", Validation: twoChecks})
	if !sum.ValidationRan {
		t.Fatalf("summary %+v", sum)
	}
	var seq []string
	for _, ev := range h.rec.events {
		switch ev := ev.(type) {
		case protocol.ValidationStartedEvent:
			seq = append(seq, ev.EventType()+":"+ev.Name)
		case protocol.ValidationFinishedEvent:
			seq = append(seq, ev.EventType()+":"+ev.Name)
		case protocol.ToolOutputEvent:
			seq = append(seq, ev.CallID+":"+ev.Stream+":"+ev.Text)
		}
	}
	want := "validationStarted:t|validation:t:stdout:running make t\n|validation:t:stderr:warn\n|validationFinished:t|" +
		"validationStarted:ok|validation:ok:stdout:running make ok\n|validation:ok:stderr:warn\n|validationFinished:ok"
	if got := strings.Join(seq, "|"); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
}

// TestValidationChecksRunTheHooks: a check is a run_command call of the
// task in the tool-call pipeline: a PreToolUse hook that blocks it skips
// the check with the hook's message (the command never runs), and a
// check it lets through runs and reports its hook event.
func TestValidationChecksRunTheHooks(t *testing.T) {
	ts := tools()
	failingChecks(ts)
	h := newHarness(t, ts,
		turn{calls: []provider.ToolCall{call("c1", "write_file", `{"path":"a.go","content":"x"}`)}},
		turn{text: "done"},
	)
	h.opts.Hooks = hookRunner(t, h.opts.Env.Root, `{"PreToolUse": [{"matcher": "run_command", "hooks": [
		{"type": "command", "command": "grep -q 'make t\"' && { echo 'no tests today' >&2; exit 2; }; exit 0"}]}]}`)
	sum, _ := h.run(t, context.Background(), Params{ChatMode: "agent", Policy: allowAll(), Validation: twoChecks})
	if sum.Status != task.StatusCompleted || len(sum.Validations) != 1 || sum.Validations[0].Name != "ok" || !sum.Validations[0].Passed {
		t.Fatalf("summary %+v", sum)
	}
	if len(sum.SkippedChecks) != 1 || sum.SkippedChecks[0].Name != "t" || !strings.Contains(sum.SkippedChecks[0].Reason, "no tests today") {
		t.Fatalf("skipped %+v", sum.SkippedChecks)
	}
	if n := ts["run_command"].count(); n != 1 {
		t.Errorf("run_command ran %d times, want once (make ok)", n)
	}
	evs := of[protocol.HookEvent](h.rec)
	if len(evs) != 2 || !evs[0].Blocked || evs[1].Blocked {
		t.Errorf("hook events %+v, want the blocked check's and the passing check's", evs)
	}
}
