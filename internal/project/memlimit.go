package project

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// The Go heap's soft limit (debug.SetMemoryLimit) follows the bytes the
// open projects index: memLimitBase plus memLimitPerByte per indexed byte
// while a project opens (during a cold open, of the bytes parsed so far)
// and memLimitSteady per byte once its retrieval index is built (relax),
// summed over the open projects, and only while some project is opening:
// once every open project is built the limit is lifted. Without it the GC lets the heap reach
// twice the live data (GOGC 100): 370-500 MB of peak RSS for the ~125 MB
// live after opening Go's source tree. With it the GC runs more often only
// while the heap is near the limit; the live data never waits on it (the
// limit is soft: the runtime bounds the GC's share of CPU). The steady
// share is looser: at 1.25x a GOROOT/src refresh cost 136 ms, 78 without
// a limit (the GC ran every few refreshes with ~125 MB live), and even at
// 1.5x context/retrieve on GOROOT/src took p50 41 / 70 / 118 ms for terms,
// questions and commit messages against 14 / 29 / 49 ms without a limit
// (Search allocates 4-17 MB a query, so a GC of the whole heap ran every
// few queries): so the limit holds only while a project opens, where the
// peak is (parse, graph, retrieval index and, with a dataDir, the first
// background save after it), and is lifted when the last opening project
// is done. After that the GC's own pacing (GOGC) bounds the heap: up to
// about twice the live data over a long session. A limit
// the user set (GOMEMLIMIT or an earlier SetMemoryLimit) is left alone.
//
// Once the limit is lifted with projects open, the GC's percent is set to
// steadyGCPercent (unless GOGC is set) until no project is open or
// another one opens: with the default 100 the refreshes and retrieves
// after an open let the heap reach twice the live data (~95 MB on
// GOROOT/src: 235-258 MB of RSS at load 10-13, above the open's own
// peak); at 50 it stays within 1.5x. The GC runs about twice as often
// then (Search allocates 4-17 MB a query), concurrently and paced, not
// against a limit.
const (
	memLimitSteady  = 1.5
	steadyGCPercent = 50
)

// The open's share; variables so TestMemoryProbe can try others
// (TASK_X_MEM_PROBE_LIMIT). 16 MiB + 1.2 per byte since session 23: the
// records, graph and retrieval build shrank (the highest live heap a GC
// marked during a cold open: 96 MB on GOROOT/src, 40 MB on the mixed
// tree), and with 48 MiB + 1.25 the heap sat at the limit with that much
// less live data in it (cold peak RSS in process 186-187 -> 148-152 MB
// on GOROOT/src, 109-121 -> 93-97 MB on the mixed tree, alternated, load
// 8-13; docs/index.md "Memory: the open's limit (session 23)").
var (
	memLimitBase    int64 = 16 << 20
	memLimitPerByte       = 1.2
)

var memLimits struct {
	mu         sync.Mutex
	owned      bool // the limit is ours (none was set when the first project opened)
	checked    bool
	open       int     // budgets not closed
	opening    int     // budgets neither closed nor relaxed
	weighted   float64 // sum of bytes × factor over the open budgets
	afterOpens int     // afterOpen calls (tests)
	gcOwned    bool    // GOGC is not set: the GC percent is ours
	gcDefault  int     // the GC percent when the first project opened
	gcSteady   bool    // steadyGCPercent is set
}

// memBudget is one project's share of the limit.
type memBudget struct {
	bytes  int64        // registered share (guarded by memLimits.mu)
	factor float64      // limit bytes per indexed byte (guarded by memLimits.mu)
	closed bool         // guarded by memLimits.mu
	step   atomic.Int64 // parsed bytes not yet registered (grow)
}

// newMemBudget registers a project's budget of bytes indexed bytes.
func newMemBudget(bytes int64) *memBudget {
	b := &memBudget{factor: memLimitPerByte}
	memLimits.mu.Lock()
	memLimits.open++
	memLimits.opening++
	memLimits.mu.Unlock()
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
	memLimits.weighted += float64(bytes-b.bytes) * b.factor
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
		if !b.closed {
			b.bytes += s
			memLimits.weighted += float64(s) * b.factor
			applyMemLimit()
		}
		memLimits.mu.Unlock()
	}
}

// relax moves the project to the steady share (its index is built).
func (b *memBudget) relax() {
	if b == nil {
		return
	}
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if b.closed || b.factor == memLimitSteady {
		return
	}
	memLimits.weighted += float64(b.bytes) * (memLimitSteady - b.factor)
	b.factor = memLimitSteady
	memLimits.opening--
	applyMemLimit()
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
	memLimits.open--
	if b.factor != memLimitSteady {
		memLimits.opening--
	}
	memLimits.weighted -= float64(b.bytes) * b.factor
	b.bytes = 0
	applyMemLimit()
}

// applyMemLimit sets the limit from the open budgets (mu held).
func applyMemLimit() {
	if !memLimits.checked {
		memLimits.checked = true
		memLimits.owned = debug.SetMemoryLimit(-1) == math.MaxInt64
		if _, set := os.LookupEnv("GOGC"); !set {
			memLimits.gcOwned = true
			memLimits.gcDefault = debug.SetGCPercent(100)
			debug.SetGCPercent(memLimits.gcDefault)
		}
	}
	if steady := memLimits.open > 0 && memLimits.opening == 0; memLimits.gcOwned && steady != memLimits.gcSteady {
		memLimits.gcSteady = steady
		if steady {
			setGCPercent(steadyGCPercent)
		} else {
			setGCPercent(memLimits.gcDefault)
		}
	}
	if !memLimits.owned {
		return
	}
	limit := int64(math.MaxInt64)
	if memLimits.open == 0 {
		memLimits.weighted = 0
	} else if memLimits.opening > 0 {
		limit = memLimitBase + int64(max(memLimits.weighted, 0))
	}
	if prev := debug.SetMemoryLimit(limit); prev != math.MaxInt64 && limit == math.MaxInt64 && memLimits.open > 0 {
		// The open is done: its transients (parse, graph and retrieval
		// builds, the first save) are garbage now. Without a limit the GC
		// would next run when the heap is twice what it marked last, and
		// that mark was near the limit's peak; a GC now marks only the
		// live data, and the pages it frees go back to the system.
		memLimits.afterOpens++
		afterOpen()
	}
}

// afterOpen is called (memLimits.mu held) when the limit is lifted with
// projects open; a variable for tests.
var afterOpen = func() { go debug.FreeOSMemory() }

// setGCPercent sets the GC percent (memLimits.mu held); a variable for
// tests.
var setGCPercent = func(p int) { debug.SetGCPercent(p) }
