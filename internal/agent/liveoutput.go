package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Live output of a running command (toolOutput events, docs/events.md):
// run_command calls and validation checks hand their output to the loop as
// it comes; the loop sends it as toolOutput { callId, stream, text },
// rate-bounded and size-capped, from Run's goroutine, and always before the
// call's toolFinished. The final result is the tool's own, unchanged.
const (
	// liveInterval is the least time between two toolOutput flushes of a
	// call (one event per stream with new text at each).
	liveInterval = 100 * time.Millisecond
	// liveChunk is the most text of one event; output that comes faster is
	// dropped from the front, and the next event says how much.
	liveChunk = 16 << 10
	// liveCap is the most output of one call sent live; the result holds
	// the rest (head and tail).
	liveCap = 1 << 20
)

// liveOutput buffers one call's output per stream.
type liveOutput struct {
	mu     sync.Mutex
	bufs   map[string]*liveBuf
	order  []string // streams in the order they first wrote
	sent   int
	capped bool
	notify chan struct{}
}

type liveBuf struct {
	data    []byte
	skipped int
}

func newLiveOutput() *liveOutput {
	return &liveOutput{bufs: map[string]*liveBuf{}, notify: make(chan struct{}, 1)}
}

// write is the tool.OutputFunc.
func (l *liveOutput) write(stream string, p []byte) {
	l.mu.Lock()
	b := l.bufs[stream]
	if b == nil {
		b = &liveBuf{}
		l.bufs[stream] = b
		l.order = append(l.order, stream)
	}
	b.data = append(b.data, p...)
	if over := len(b.data) - liveChunk; over > 0 {
		// Keep the newest; cut at a rune start.
		for over < len(b.data) && !utf8.RuneStart(b.data[over]) {
			over++
		}
		b.skipped += over
		b.data = append(b.data[:0], b.data[over:]...)
	}
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// take returns the events to send now (final: everything, even a
// trailing incomplete character) and empties the buffers.
func (l *liveOutput) take(callID string, final bool) []protocol.ToolOutputEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []protocol.ToolOutputEvent
	for _, stream := range l.order {
		b := l.bufs[stream]
		n := len(b.data)
		if !final {
			n = completeUTF8(b.data)
		}
		if n == 0 && b.skipped == 0 {
			continue
		}
		text := strings.ToValidUTF8(string(b.data[:n]), "\uFFFD")
		if b.skipped > 0 {
			text = fmt.Sprintf("[… %d bytes not shown live …]\n", b.skipped) + text
			b.skipped = 0
		}
		b.data = append(b.data[:0], b.data[n:]...)
		if l.capped {
			continue
		}
		if l.sent+len(text) > liveCap {
			l.capped = true
			text = fmt.Sprintf("[live output stops after %d bytes; the result has the output]", l.sent)
		}
		l.sent += len(text)
		out = append(out, protocol.ToolOutputEvent{CallID: callID, Stream: stream, Text: text})
	}
	return out
}

// completeUTF8 is the length of b without a trailing incomplete character.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// runLive runs a command with live output: run runs in its own
// goroutine while Run's goroutine sends its output as toolOutput events at
// most every liveInterval; what is left goes out before runLive returns.
func (r *run) runLive(ctx context.Context, callID string, run func(ctx context.Context) (tool.Result, error)) (tool.Result, error) {
	live := newLiveOutput()
	ctx = tool.WithOutput(ctx, live.write)
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := run(ctx)
		done <- outcome{res, err}
	}()
	send := func(final bool) {
		for _, ev := range live.take(callID, final) {
			if r.opts.Redact != nil {
				ev.Text = r.opts.Redact(ev.Text)
			}
			r.emit(ev)
		}
	}
	var last time.Time
	var timer *time.Timer
	var tick <-chan time.Time
	for {
		select {
		case o := <-done:
			if timer != nil {
				timer.Stop()
			}
			send(true)
			return o.res, o.err
		case <-live.notify:
			if tick != nil {
				continue // a flush is already due
			}
			if wait := liveInterval - time.Since(last); wait > 0 {
				timer = time.NewTimer(wait)
				tick = timer.C
				continue
			}
			send(false)
			last = time.Now()
		case <-tick:
			tick, timer = nil, nil
			send(false)
			last = time.Now()
		}
	}
}
