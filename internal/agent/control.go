package agent

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Steering bounds (protocol.md agent/steer).
const (
	MaxSteerQueue = 10
	MaxSteerChars = 100000
)

// resultStoppedByUser is the tool result of a call stopped by
// agent/cancelTool (protocol.md agent/cancelTool).
const resultStoppedByUser = "Task has been stopped by user. Continue with the next step…"

// Control is the handle the server keeps for a running task: agent/steer
// and agent/cancelTool reach the loop through it. It is safe for concurrent
// use. Run opens it when the task starts and closes it when the task ends;
// after that Steer and CancelTool report false.
type Control struct {
	mu      sync.Mutex
	open    bool
	closed  bool
	queue   []string
	calls   map[string]func() // running foreground calls and background jobs by callId
	stopped map[string]bool   // callIds stopped by CancelTool
	wake    chan struct{}     // signalled (non-blocking) when a message is queued
}

// NewControl returns a Control for one task.
func NewControl() *Control {
	return &Control{calls: map[string]func(){}, stopped: map[string]bool{}, wake: make(chan struct{}, 1)}
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
func (c *Control) CancelTool(callID string) bool {
	c.mu.Lock()
	stop, ok := c.calls[callID]
	if ok {
		c.stopped[callID] = true
		delete(c.calls, callID)
	}
	c.mu.Unlock()
	if ok {
		stop()
	}
	return ok
}

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

func (c *Control) register(callID string, stop func()) {
	c.mu.Lock()
	c.calls[callID] = stop
	c.mu.Unlock()
}

// unregister forgets callID and reports whether CancelTool stopped it.
func (c *Control) unregister(callID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.calls, callID)
	s := c.stopped[callID]
	delete(c.stopped, callID)
	return s
}
