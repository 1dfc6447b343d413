package task

import (
	"sync"
	"time"

	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// The diff event (docs/events.md): after a task changed files, its whole
// unified diff from the edit log (editlog.TaskDiff: what edits/pending
// shows for the files it touched), debounced: diffQuiet after the last
// fileChanged, at most diffMaxWait after the first one not yet in a diff,
// and always once more before `done` when files changed since the last.
// Reading large files makes a diff slow (and the edit log waits for it),
// so while the task runs a diff comes at least diffCostFactor times its
// last one's duration after it ended: diffs take at most about a tenth of
// the task's time.
const (
	diffQuiet      = 300 * time.Millisecond
	diffMaxWait    = 2 * time.Second
	diffCostFactor = 10
)

type diffDebounce struct {
	taskID string
	proj   *project.Project
	send   func(protocol.AgentEvent)

	// compute serialises the diffs (reading the files can take a while);
	// mu guards the rest and is never held while a diff is computed, so a
	// fileChanged never waits for one.
	compute sync.Mutex
	mu      sync.Mutex
	timer   *time.Timer
	first   time.Time // first change not in a diff yet (zero: none)
	closed  bool
	next    time.Time // no diff before this while running (diffCostFactor)
}

// changed notes a fileChanged event.
func (d *diffDebounce) changed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	now := time.Now()
	if d.first.IsZero() {
		d.first = now
	}
	wait := max(min(diffQuiet, diffMaxWait-now.Sub(d.first)), d.next.Sub(now))
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(max(wait, 0), func() { d.emit(false) })
}

// done sends the diff of changes not in one yet (before `done`; a diff
// being computed goes out first) and stops.
func (d *diffDebounce) done() { d.emit(true) }

func (d *diffDebounce) emit(final bool) {
	d.compute.Lock()
	defer d.compute.Unlock()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	if final {
		d.closed = true
		if d.timer != nil {
			d.timer.Stop()
			d.timer = nil
		}
	}
	pending := !d.first.IsZero()
	d.first = time.Time{}
	d.mu.Unlock()
	if !pending {
		return
	}
	start := time.Now()
	text, files, cut, err := d.proj.Edits().TaskDiff(d.taskID)
	end := time.Now()
	d.mu.Lock()
	d.next = end.Add(diffCostFactor * end.Sub(start))
	d.mu.Unlock()
	if err != nil {
		return
	}
	d.send(protocol.DiffEvent{Diff: text, Files: files, Truncated: cut})
}
