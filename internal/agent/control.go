package agent

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/toolcall"
)

// Steering bounds (protocol.md agent/steer).
const (
	MaxSteerQueue = 10
	MaxSteerChars = 100000
)

// resultStoppedByUser is the tool result of a call stopped by
// agent/cancelTool (protocol.md agent/cancelTool).
const resultStoppedByUser = toolcall.ResultStopped

// Control is the handle the server keeps for a running task: agent/steer
// and agent/cancelTool reach the loop through it. It is safe for concurrent
// use. Run opens it when the task starts and closes it when the task ends;
// after that Steer and CancelTool report false.
type Control struct {
	mu     sync.Mutex
	open   bool
	closed bool
	queue  []string
	calls  toolcall.Registry // running foreground calls and background jobs by callId
	wake   chan struct{}     // signalled (non-blocking) when a message is queued
}

// NewControl returns a Control for one task.
func NewControl() *Control {
	return &Control{wake: make(chan struct{}, 1)}
}

// ValidSteerText trims text and checks protocol.md's 1..=100 000 characters.
func ValidSteerText(text string) (string, bool) {
	t := strings.TrimSpace(text)
	n := utf8.RuneCountInString(t)
	return t, n >= 1 && n <= MaxSteerChars
}

// Steer queues text (already validated with ValidSteerText) for the task's
// next model turn. It reports false when the task is not running or its
// queue holds MaxSteerQueue messages.
func (c *Control) Steer(text string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.open || c.closed || len(c.queue) >= MaxSteerQueue {
		return false
	}
	c.queue = append(c.queue, text)
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// CancelTool stops the running built-in call or background command callID
// and reports whether one was running. The loop gives the model
// "Task has been stopped by user…" as its result and goes on.
func (c *Control) CancelTool(callID string) bool { return c.calls.Cancel(callID) }

func (c *Control) start() {
	c.mu.Lock()
	c.open = true
	c.mu.Unlock()
}

// close ends the task's steering and returns the messages still queued.
func (c *Control) close() {
	c.mu.Lock()
	c.closed = true
	c.queue = nil
	c.mu.Unlock()
}

func (c *Control) drain() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue = nil
	return q
}

func (c *Control) pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue) > 0
}

func (c *Control) register(callID string, stop func()) { c.calls.Register(callID, stop) }

// unregister forgets callID and reports whether CancelTool stopped it.
func (c *Control) unregister(callID string) bool { return c.calls.Unregister(callID) }
