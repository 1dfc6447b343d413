package session

import (
	"strings"
	"sync"
)

// relay sends a stream's events to the client in order from a goroutine of
// its own, so a provider stream never waits on the client reading stdout.
// While one notification is being written, consecutive text deltas that
// arrive are merged into one (their concatenation): no text is delayed, since
// a delta goes out as soon as the previous write finished, and a fast stream
// costs a handful of notifications instead of one per token. Every other
// event is sent as it came, in order.
type relay[E any] struct {
	send func(E)
	// text returns the text of a mergeable delta event.
	text func(E) (string, bool)
	// joins reports whether b may be appended to a (same kind of delta).
	joins func(a, b E) bool
	// build makes the merged event from the first event and the joined text.
	build func(first E, text string) E

	mu      sync.Mutex
	queue   []relayItem[E]
	closed  bool
	wake    chan struct{}
	stopped chan struct{}
}

type relayItem[E any] struct {
	ev     E
	merged *strings.Builder // non-nil once another delta joined ev
}

func newRelay[E any](send func(E), text func(E) (string, bool), joins func(a, b E) bool, build func(E, string) E) *relay[E] {
	r := &relay[E]{send: send, text: text, joins: joins, build: build,
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go r.run()
	return r
}

// push queues e; it never blocks on the client.
func (r *relay[E]) push(e E) {
	r.mu.Lock()
	if n := len(r.queue); n > 0 {
		last := &r.queue[n-1]
		if t, ok := r.text(e); ok && r.joins(last.ev, e) {
			if last.merged == nil {
				first, _ := r.text(last.ev)
				last.merged = &strings.Builder{}
				last.merged.WriteString(first)
			}
			last.merged.WriteString(t)
			r.mu.Unlock()
			return
		}
	}
	r.queue = append(r.queue, relayItem[E]{ev: e})
	r.mu.Unlock()
	r.signal()
}

func (r *relay[E]) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *relay[E]) run() {
	defer close(r.stopped)
	for range r.wake {
		for {
			r.mu.Lock()
			batch, closed := r.queue, r.closed
			r.queue = nil
			r.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			for _, it := range batch {
				if it.merged != nil {
					r.send(r.build(it.ev, it.merged.String()))
				} else {
					r.send(it.ev)
				}
			}
		}
	}
}

// close writes what is queued and returns once it is written.
func (r *relay[E]) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.signal()
	<-r.stopped
}
