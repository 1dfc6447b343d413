package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/task-x/task-x-runtime/internal/proctree"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func denyAll(t *testing.T) task.Approver {
	return func(ctx context.Context, req task.ApprovalRequest) (task.Answer, error) {
		t.Errorf("unexpected approval request for %s", req.Tool)
		return task.Answer{Decision: task.DecisionDeny}, nil
	}
}

// sed -i is blocked: at the start of a command by the deny rule or the
// hook, inside $(…) by the hook only. The file stays as it was and no
// approval is asked.
func TestRunSedBlocked(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{
			{"Bash", map[string]any{"command": "true && sed -i s/hello/bye/ a.txt", "description": "edit"}},
			{"Bash", map[string]any{"command": "echo $(sed -i s/hello/bye/ a.txt)", "description": "edit"}},
		}},
		{text: "Could not edit."},
	})
	os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("hello\n"), 0o644)
	h.start(testCtx(t), h.url, h.options(h.url), Hooks{ClassOf: classOf, Approve: denyAll(t)})
	if _, err := h.run.Wait(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "a.txt")); string(b) != "hello\n" {
		t.Errorf("a.txt = %q: sed -i ran", b)
	}
	res := toolResults(h.model.requests()[1])
	if !strings.Contains(res["toolu_0_0"], "sed -i") {
		t.Errorf("first result %q does not name sed -i", res["toolu_0_0"])
	}
	if !strings.Contains(res["toolu_0_1"], "mcp__task-x__") {
		t.Errorf("$(sed -i) result %q is not the hook's reason", res["toolu_0_1"])
	}
	fails := 0
	for _, e := range allOf[protocol.ToolFinishedEvent](h) {
		if !e.OK {
			fails++
		}
	}
	if fails != 2 {
		t.Errorf("%d failed toolFinished events, want 2", fails)
	}
}

// dangerouslyDisableSandbox is denied at once by the hook, without asking.
func TestRunDisableSandboxDenied(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{{"Bash", map[string]any{"command": "touch made.txt", "description": "touch", "dangerouslyDisableSandbox": true}}}},
		{text: "Denied."},
	})
	h.start(testCtx(t), h.url, h.options(h.url), Hooks{ClassOf: classOf, Approve: denyAll(t)})
	if _, err := h.run.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "made.txt")); err == nil {
		t.Error("the command ran")
	}
	if got := toolResults(h.model.requests()[1])["toolu_0_0"]; got != DisableSandboxReason {
		t.Errorf("result %q, want the hook's reason", got)
	}
}

// AskUserQuestion goes to agent/askUser; the answers reach the model.
func TestRunAskUserQuestion(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{{"AskUserQuestion", map[string]any{"questions": []any{
			map[string]any{"question": "Which color?", "header": "Color", "multiSelect": false, "options": []any{
				map[string]any{"label": "Red", "description": "warm"}, map[string]any{"label": "Blue", "description": "cold"}}},
			map[string]any{"question": "Which sizes?", "header": "Sizes", "multiSelect": true, "options": []any{
				map[string]any{"label": "S", "description": "small"}, map[string]any{"label": "M", "description": "medium"},
				map[string]any{"label": "L", "description": "large"}}},
		}}}}},
		{text: "Blue it is."},
	})
	var got []Question
	h.start(testCtx(t), h.url, h.options(h.url), Hooks{ClassOf: classOf, Approve: denyAll(t),
		Ask: func(ctx context.Context, callID string, qs []Question) (map[string][]string, error) {
			got = qs
			return map[string][]string{"q1": {"Blue"}, "q2": {"S", "L", "XXL"}}, nil
		}})
	if _, err := h.run.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != "Which color?" || got[0].Kind != "radio" || got[1].Kind != "checkbox" || len(got[1].Options) != 3 {
		t.Errorf("questions asked: %+v", got)
	}
	res := toolResults(h.model.requests()[1])["toolu_0_0"]
	if !strings.Contains(res, `"Which color?"="Blue"`) || !strings.Contains(res, `"Which sizes?"="S, L"`) {
		t.Errorf("the model got %q", res)
	}
}

// A steer message sent while the answer streams gets its own turn, a
// steered event when it joins, and the run ends after answering it.
func TestRunSteer(t *testing.T) {
	h := newHarness(t, []turn{{text: "First answer."}, {text: "Second answer."}})
	release := make(chan struct{})
	h.model.hold[0] = release
	h.start(testCtx(t), h.url, h.options(h.url), Hooks{ClassOf: classOf, Approve: denyAll(t)})
	<-h.model.seen
	if !h.run.Steer("Also say hi.") {
		t.Fatal("Steer refused")
	}
	close(release)
	if e := waitEvent[protocol.SteeredEvent](h); e.Text != "Also say hi." {
		t.Errorf("steered %q", e.Text)
	}
	sum, err := h.run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.model.requests()
	if len(reqs) != 2 || !strings.Contains(mustString(reqs[1]["messages"]), "Also say hi.") {
		t.Fatalf("%d requests; the second must carry the steer message", len(reqs))
	}
	if sum.Text != "Second answer." || sum.Usage.InputTokens != 200 {
		t.Errorf("summary %+v", sum)
	}
	if h.run.Steer("late") {
		t.Error("Steer accepted after the run ended")
	}
}

// agent/cancelTool stops one running Bash call; the turn goes on.
func TestRunCancelTool(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{{"Bash", map[string]any{"command": "sleep 60", "description": "wait"}}}},
		{text: "Stopped."},
	})
	started := make(chan string, 1)
	o := h.options(h.url)
	o.AllowCommands = true
	h.start(testCtx(t), h.url, o, Hooks{ClassOf: classOf, Approve: denyAll(t), onTask: func(id string) { started <- id }})
	id := <-started
	t0 := time.Now()
	if !h.run.CancelTool(context.Background(), id) {
		t.Fatal("CancelTool returned false")
	}
	e := waitEvent[protocol.ToolFinishedEvent](h)
	if e.OK || e.CallID != id {
		t.Errorf("toolFinished %+v, want the failed call", e)
	}
	sum, err := h.run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t0) > 50*time.Second || sum.Status != "completed" {
		t.Errorf("the run went on for %v, status %s", time.Since(t0), sum.Status)
	}
	// The note joins the next model request of the turn, or the one after
	// when that request was already sent (the CLI decides).
	reqs := h.model.requests()
	if msgs := mustString(reqs[len(reqs)-1]["messages"]); !strings.Contains(msgs, StoppedNote) || !strings.Contains(msgs, "Exit code 137") {
		t.Error("the model was not told the task was stopped")
	}
}

// Cancelling the run ends the CLI and the command it started.
func TestRunCancelKillsTree(t *testing.T) {
	h := newHarness(t, []turn{
		{calls: []call{{"Bash", map[string]any{"command": "sleep 61", "description": "wait"}}}},
	})
	started := make(chan string, 1)
	ctx, cancel := context.WithCancel(testCtx(t))
	h.start(ctx, h.url, h.options(h.url), Hooks{ClassOf: classOf, Approve: denyAll(t), onTask: func(id string) { started <- id }})
	<-started
	pid := h.run.cmd.Process.Pid
	before := proctree.Descendants(pid)
	if len(before) == 0 {
		t.Fatal("no processes under the CLI")
	}
	// A pidfd per process, taken before the cancel (no pid reuse), reads
	// as ready when the process has exited: SIGKILL is sent by the time
	// Wait returns, but a killed process on a loaded machine may not have
	// run its exit yet (it was seen in state R right after Wait).
	fds := map[int]int{}
	for _, p := range before {
		if fd, err := unix.PidfdOpen(p, 0); err == nil {
			fds[p] = fd
			defer unix.Close(fd)
		}
	}
	cancel()
	sum, err := h.run.Wait()
	if err == nil || sum.Status != "cancelled" {
		t.Errorf("status %s err %v, want cancelled", sum.Status, err)
	}
	for p, fd := range fds {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 20_000) // a guard: the exit is the event
		for err == unix.EINTR {
			n, err = unix.Poll(pfd, 20_000)
		}
		if n != 1 {
			b, _ := os.ReadFile("/proc/" + itoa(p) + "/stat")
			t.Errorf("process %d still runs 20 s after cancel (poll %d, %v): %s", p, n, err, b)
		}
	}
}
