package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// bgState tracks the task's background commands (run_command with
// background: true, protocol.md agent/event). A goroutine per job waits for
// its final Result; the loop joins finished jobs before each model turn.
type bgState struct {
	mu       sync.Mutex
	jobs     map[string]*bgJob
	finished []bgDone
	wake     chan struct{}
}

type bgJob struct {
	call    pendingCall
	command string
	start   time.Time
	cancel  func()
}

type bgDone struct {
	job *bgJob
	res tool.Result
}

func (b *bgState) init() {
	b.jobs = map[string]*bgJob{}
	b.wake = make(chan struct{}, 1)
}

func (b *bgState) running() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.jobs)
}

func (b *bgState) hasFinished() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.finished) > 0
}

func (b *bgState) take() []bgDone {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.finished
	b.finished = nil
	return f
}

// stopAll cancels every job still running (the task ended).
func (b *bgState) stopAll() {
	b.mu.Lock()
	jobs := b.jobs
	b.jobs = map[string]*bgJob{}
	b.mu.Unlock()
	for _, j := range jobs {
		j.cancel()
	}
}

// backgroundStart is the result of the first toolFinished of a background
// command: { background: true, command, message }.
func backgroundStart(input json.RawMessage, res tool.Result) map[string]any {
	return map[string]any{"background": true, "command": commandOf(input), "message": res.Content}
}

// startBackground registers the job for agent/cancelTool and waits for its
// end in a goroutine. stopCall releases the call's ctx when the job ends.
func (r *run) startBackground(c pendingCall, res tool.Result, stopCall context.CancelFunc) {
	job := res.Background
	j := &bgJob{call: c, command: commandOf(c.Input), start: time.Now()}
	j.cancel = func() {
		job.Cancel()
		stopCall()
	}
	r.bg.mu.Lock()
	r.bg.jobs[c.ID] = j
	r.bg.mu.Unlock()
	r.ctl.register(c.ID, j.cancel)
	go func() {
		final, ok := <-job.Done
		if !ok {
			final = tool.Result{Content: "The background command ended without output."}
		}
		stopCall()
		r.bg.mu.Lock()
		if _, live := r.bg.jobs[c.ID]; live {
			delete(r.bg.jobs, c.ID)
			r.bg.finished = append(r.bg.finished, bgDone{job: j, res: final})
		}
		r.bg.mu.Unlock()
		select {
		case r.bg.wake <- struct{}{}:
		default:
		}
	}()
}

// joinBackground reports each finished background command with its second
// toolFinished event and gives its output to the model as a user message.
func (r *run) joinBackground() {
	for _, d := range r.bg.take() {
		byUser := r.ctl.unregister(d.job.call.ID)
		content := d.res.Content
		if byUser {
			content = resultStoppedByUser
		}
		result := map[string]any{"background": true, "command": d.job.command, "output": content}
		if m, ok := dataMap(d.res.Data); ok && !byUser {
			for k, v := range m {
				result[k] = v
			}
			result["background"] = true
		}
		ev := protocol.ToolFinishedEvent{CallID: d.job.call.ID, Tool: d.job.call.Name, OK: !byUser, Background: true,
			Result: result, DurationMs: time.Since(d.job.start).Milliseconds()}
		if byUser {
			ev.Error = &content
		}
		r.emit(ev)
		for _, ch := range d.res.Changes {
			r.emit(task.FileChanged(d.job.call.ID, ch))
			r.sum.ChangedFiles = task.MergeChange(r.sum.ChangedFiles, ch)
		}
		r.appendUserText(fmt.Sprintf("The background command `%s` (call %s) has ended. Its output:\n%s", d.job.command, d.job.call.ID, content))
		r.log.Info("background command joined", "tool", d.job.call.Name, "stoppedByUser", byUser)
	}
}

// dataMap returns a tool's structured result as a JSON object map (a struct
// is converted through its JSON form), so its fields (run_command's
// exitCode, timedOut, durationMs, ...) reach the event.
func dataMap(data any) (map[string]any, bool) {
	if m, ok := data.(map[string]any); ok {
		return m, true
	}
	if data == nil {
		return nil, false
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil, false
	}
	return m, true
}
