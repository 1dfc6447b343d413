package project

import (
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// The Go heap's soft limit (debug.SetMemoryLimit) follows the bytes the
// open projects index: memLimitBase plus memLimitPerByte per indexed byte,
// summed over the open projects, and during a cold open over the bytes
// parsed so far. Without it the GC lets the heap reach twice the live data
// (GOGC 100): 370-500 MB of peak RSS for the ~125 MB live after opening
// Go's source tree. With it the GC runs more often only while the heap is
// near the limit; the live data never waits on it (the limit is soft: the
// runtime bounds the GC's share of CPU). A limit the user set (GOMEMLIMIT
// or an earlier SetMemoryLimit) is left alone.
const (
	memLimitBase    = 48 << 20
	memLimitPerByte = 1.25
)

var memLimits struct {
	mu      sync.Mutex
	owned   bool // the limit is ours (none was set when the first project opened)
	checked bool
	total   int64 // indexed bytes of every registered budget
}

// memBudget is one project's share of the limit.
type memBudget struct {
	bytes  int64        // registered share (guarded by memLimits.mu)
	closed bool         // guarded by memLimits.mu
	step   atomic.Int64 // parsed bytes not yet registered (grow)
}

// newMemBudget registers a project's budget of bytes indexed bytes.
func newMemBudget(bytes int64) *memBudget {
	b := &memBudget{}
	b.set(bytes)
	return b
}

// set makes the project's share bytes.
func (b *memBudget) set(bytes int64) {
	if b == nil {
		return
	}
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if b.closed {
		return
	}
	memLimits.total += bytes - b.bytes
	b.bytes = bytes
	applyMemLimit()
}

// grow adds n parsed bytes, registering them in steps of 4 MiB (a
// SetMemoryLimit per file would cost more than it saves).
func (b *memBudget) grow(n int64) {
	if b == nil {
		return
	}
	if s := b.step.Add(n); s >= 4<<20 {
		b.step.Add(-s)
		memLimits.mu.Lock()
		add := !b.closed
		if add {
			b.bytes += s
			memLimits.total += s
			applyMemLimit()
		}
		memLimits.mu.Unlock()
	}
}

// close removes the project's share (the limit is lifted with the last).
func (b *memBudget) close() {
	if b == nil {
		return
	}
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	memLimits.total -= b.bytes
	b.bytes = 0
	applyMemLimit()
}

// applyMemLimit sets the limit from memLimits.total (mu held).
func applyMemLimit() {
	if !memLimits.checked {
		memLimits.checked = true
		memLimits.owned = debug.SetMemoryLimit(-1) == math.MaxInt64
	}
	if !memLimits.owned {
		return
	}
	limit := int64(math.MaxInt64)
	if memLimits.total > 0 {
		limit = memLimitBase + int64(float64(memLimits.total)*memLimitPerByte)
	}
	debug.SetMemoryLimit(limit)
}
