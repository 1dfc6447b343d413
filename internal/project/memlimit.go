package project

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/task-x/task-x-runtime/internal/workspace"
)

// The Go heap's soft limit (debug.SetMemoryLimit) follows the bytes the
// open projects index: memLimitBase plus memLimitPerByte per indexed byte
// while a project opens (during a cold open, of the bytes parsed so far)
// and memLimitSteady per byte once its retrieval index is built (relax),
// summed over the open projects. Without a limit the GC lets the heap
// reach twice the live data (GOGC 100): 370-500 MB of peak RSS for the
// ~125 MB live after opening Go's source tree (then). With it the GC runs
// more often only while the heap is near the limit, and the runtime
// returns free pages to stay under it; the live data never waits on it
// (the limit is soft: the runtime bounds the GC's share of CPU). A limit
// the user set (GOMEMLIMIT or an earlier SetMemoryLimit) is left alone.
//
// While a project is open the GC's percent is steadyGCPercent (unless
// GOGC is set), parseGCPercent while a cold open parses, except while
// one opens from a saved index (a reopen's load, whose speed counts,
// keeps the default); with no project open it is the default again. During a cold open's parse the live heap is the
// records parsed so far and the default let the heap reach twice that:
// with a tree-sitter parse of a minified bundle beside it (hugo's
// renderkatex.bundle.js, 305 KB: ~24 MB of C for its tree) the mixed
// tree's RSS peaked there (TestMemoryProbe 90-94 -> 84-86 MB at 50, the
// cold open's CPU unchanged within the load's noise). Once every open
// project is built, the limit moves to the steady share. Until
// session 24 the limit was lifted there (at 1.5x a GOROOT/src refresh and
// retrieve paid a GC of a ~125 MB live heap full of pointers every few
// requests); the live heap is now ~0.6 byte per indexed byte and mostly
// pointer-free, and without a limit the free pages the GC left and the
// heap's growth over the refreshes and retrieves after an open (GOGC 50)
// took the RSS back to the open's peak (GOROOT/src 105 -> 148 MiB, the
// mixed tree 74 -> 104 MB). The steady limit is never below
// steadyBase + steadyLiveFactor x the live heap the last GC marked
// (measured first by the GC after the open, then after every GC:
// followLiveHeap), so neither a tree with more live data per byte than
// these two nor the rest of the process (agent tasks) makes the GC run
// back to back; the limit still makes the runtime return free pages.
//
// Since session 34 (issue 39) the steady share is steadyBase (12 MiB) +
// 0.5 per byte and its floor steadyBase + 1.2 x the live heap (16 MiB +
// 1.0 per byte and 16 MiB + 1.5 x live before). The goal is the
// peak RSS after a working session (indexbench: 7 refreshes and 20
// retrieves after the cold open); under the old limit, which the session
// never reached, the heap grew at GC percent 50 to 1.5x its live data and
// the scavenger kept the free pages: the session's peak was 18-20 MB over
// the cold open's on both trees (GOROOT/src 1.31x, the mixed tree 1.85x).
// Under the floor the heap keeps ~12 MiB + 0.2 x live over its live data
// (of which the runtime's metadata takes ~5-8 MB on these trees) and the
// runtime returns the rest (bench/sessprobe, alternated: the mixed tree's
// session peak 74-80 -> 67-68 MB with the session's CPU unchanged; with 8
// MiB 63-65 MB but +5-15% CPU: a GC every one or two requests; docs/index.md
// "Issue 39: the working session's peak"). The floor stays over the
// live heap plus the metadata, so the GC never runs back to back,
// whatever the live heap.
const (
	memLimitSteady   = 0.5
	steadyGCPercent  = 50
	steadyLiveFactor = 1.2
	steadyBase       = 12 << 20
)

// parseGCPercent is the GC percent while a cold open parses (unless GOGC
// is set or a project loads from a saved index). The parse's live heap
// is the records parsed so far, and at steadyGCPercent the heap reached
// 1.5x them, with free pages the scavenger had not returned and the C
// trees of the files being parsed beside it: the parse's RSS peak was as
// high as the builds' (mixed tree, runtime VmHWM per phase in four
// alternated runs under load: parse 60.4-62.4 MB at 50, 55.5-56.6 at 30).
// On a quiet machine 30 cost GOROOT/src's cold open 7-9% more CPU (6.37-
// 6.50 against 5.88-6.04 CPU-s in six alternated runs: more cycles, each
// marking a larger heap) and 40 about 1% (5.94-6.16 against 5.87-6.01),
// with the same gain on the mixed tree's cold peak (VmHWM 60.7-61.1 at
// 40, 60.5-61.3 at 30, 61.1-62.2 at 50): at 40 the parse (58.0-58.3 MB)
// is already under the builds' peak, so a lower percent buys nothing
// (docs/index.md "Memory: eleventh pass"). The builds that follow run at
// their limit, where the percent does not matter, and the rest of the
// session at steadyGCPercent.
const parseGCPercent = 40

// The open's share; variables so TestMemoryProbe can try others
// (TASK_X_MEM_PROBE_LIMIT). 16 MiB + 0.9 per byte since session 25 (1.05
// in session 24, 1.2 before, and 48 MiB + 1.25 before session 23): the
// heap sits at the limit at the end of a cold open (graph and retrieval
// builds), where the highest live heap a GC marked was ~76 MB on
// GOROOT/src (98.3 MB indexed) and ~34 MB on the mixed tree (47.8 MB).
// Two changes of session 25 made room: the parse's records are carved
// from blocks (internal/syntax blocks.go: GOROOT/src's free slots in used
// spans ~18 -> ~12 MB) and the retrieval build's term merge fills exact
// arrays without a copy (its live peak -4.5 MB on both trees).
// TestMemoryProbe on GOROOT/src, alternated: peak RSS 133.5 MB at 1.05,
// 124.7-125.3 at 0.95, 116.9-119.9 at 0.88 with CPU within the runs'
// spread; at 0.82 one run's Go heap went 13 MB over the limit (the GC
// held back by its CPU cap). 0.9 keeps ~2 MB over 0.88's highest Go heap.
// docs/index.md "Memory: eighth pass".
//
// Once a cold open's parse is done and workspace/open's graph and
// retrieval builds follow, the share is memLimitBuildPerByte (parsed):
// 0.7 since session 26, where the mixed tree's cold peak fell 2.5-4 MB
// and GOROOT/src's 9 MB (indexbench, alternated) for ~2% of the open's
// time; at 0.5-0.6 the GC, capped at half the CPU, overshot the limit
// and cost more CPU for no lower peak (docs/index.md "Memory: ninth
// pass").
//
// A reopen keeps 1.2 per byte (memLimitReopenPerByte): its peak is the
// load of the saved records, well under either share (GOROOT/src ~100 MB
// of RSS), but at 1.05 the GC ran more often during the load and the
// reopen was slower in the alternated runs (indexbench, GOROOT/src, load
// 7-8: 1240 / 1348 -> 1537 / 2302 ms).
//
// While every opening project is in its builds (no parse or saved-index
// load under way), the base under both the share and the open's floor is
// memLimitBuildBase, and the builds' share memLimitBuildPerByte, 10 MiB +
// 0.5 per byte since session 27 (16 MiB + 0.7 before): once the retrieval
// build kept no (term, posting) pairs beside its postings and the scan's
// listings filled their spans, the Go heap at the end of the mixed tree's
// open held 2.3 MB of free slots where it held 6.6, and the limit, not
// the live heap, set its height (TestMemoryProbe, alternated: peak RSS
// 63.9-64.1 MB at 16 MiB + 0.7, 59.2-60.5 at 16 MiB + 0.45 where the
// floor held it, 56.0-56.2 at 12 MiB + 0.5, the open's CPU within the
// runs' spread). The parse keeps 16 MiB: a tree of small files dense with
// symbols ran its GC back to back under a floor of 8 MiB over its live
// heap (openFloor).
var (
	memLimitBase          int64 = 16 << 20
	memLimitBuildBase     int64 = 10 << 20
	memLimitPerByte             = 0.9
	memLimitReopenPerByte       = 1.2
	memLimitBuildPerByte        = 0.5
	memLimitSavePerByte         = 0.5
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
	gcPercent  int     // the percent we set (steadyGCPercent or parseGCPercent), 0: the default
	parsing    int     // cold budgets in their parse (not parsed, relaxed or closed)
	reopening  int     // opening budgets of projects loaded from a saved index
	steady     bool    // projects are open and none is opening
	floor      int64   // the steady limit's floor (steadyFloor), 0 before the first afterOpen
	openLive   uint64  // the live heap the last GC marked while a project opens (openFloor), 0 before one
	building   int     // opening budgets in their builds (parsed)
}

// memMinFileBytes is the least an indexed file counts for in the limit: a
// file's entry, path, records and map slots take memory whatever its
// size, and in a tree of many tiny files that is most of the live heap.
// QA of session 26: 20 000 files of ~100 bytes (1.2 MB) opened in 1.6 s
// with the limit at 16 MiB + 0.9 x their bytes and in 1.0 s without one,
// the GC running back to back under a limit below the live heap.
const memMinFileBytes = 1 << 10

// memBytes is what a file of size bytes counts for in the limit.
func memBytes(size int64) int64 { return max(size, memMinFileBytes) }

// snapMemBytes is what the indexed files of s count for in the limit.
func snapMemBytes(s *workspace.Snapshot) int64 { return s.BytesAtLeast(memMinFileBytes) }

// memBudget is one project's share of the limit.
type memBudget struct {
	bytes  int64        // registered share (guarded by memLimits.mu)
	reopen bool         // loaded from a saved index, not yet relaxed or closed (guarded by memLimits.mu)
	built  bool         // relaxed: the steady share (guarded by memLimits.mu)
	build  bool         // parsed, not relaxed or closed: in the builds (guarded by memLimits.mu)
	saves  bool         // past its builds, its first save ahead (saving; guarded by memLimits.mu)
	parse  bool         // a cold open's parse: counted in memLimits.parsing (guarded by memLimits.mu)
	factor float64      // limit bytes per indexed byte (guarded by memLimits.mu)
	closed bool         // guarded by memLimits.mu
	step   atomic.Int64 // parsed bytes not yet registered (grow)
}

// newMemBudget registers a project's budget of bytes indexed bytes;
// reopen says it opens from a saved index.
func newMemBudget(bytes int64, reopen bool) *memBudget {
	b := &memBudget{factor: memLimitPerByte, reopen: reopen, parse: !reopen}
	if reopen {
		b.factor = memLimitReopenPerByte
	}
	memLimits.mu.Lock()
	memLimits.open++
	memLimits.opening++
	if reopen {
		memLimits.reopening++
	} else {
		memLimits.parsing++
	}
	memLimits.mu.Unlock()
	b.set(bytes)
	followLiveHeap()
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

// parsed moves a cold open's share to memLimitBuildPerByte once its
// parse is done and its graph and retrieval builds follow (Open with
// Options.BuildRetrieval, whose BuildRetrieval relaxes it). The open's
// share leaves room for the parse's transients (the trees' C memory, the
// parse's Go garbage beside the records); the builds' are smaller, and
// with the open's share the heap filled the limit there with free pages
// the RSS kept. A reopen keeps its share.
func (b *memBudget) parsed() {
	if b == nil {
		return
	}
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if b.closed || b.built || b.reopen || b.build || b.saves {
		return
	}
	b.endParse()
	b.setFactor(memLimitBuildPerByte)
	b.build = true
	memLimits.building++
	applyMemLimit()
}

// saving ends a cold open's builds when its first save follows (a data
// folder): until the save starts (relax) the share is
// memLimitSavePerByte (0.5, the builds' share) over memLimitBase, and the
// open's floor leaves 16 MiB or a third of the live heap over it. Under
// the builds' 10 MiB the requests of the seconds after the open ran the
// GC back to back (refreshes 48-77 ms against 21-29); at 16 MiB + 0.7,
// the first save's share until session 27's end, the heap grew into the
// higher limit during the first retrieve and the mixed tree's peak was
// 64.8-67.1 MB against 62.3-64.4 now (six alternated runs each).
func (b *memBudget) saving() {
	if b == nil {
		return
	}
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if b.closed || !b.build {
		return
	}
	b.setFactor(memLimitSavePerByte)
	b.saves = true
	b.endBuild()
	applyMemLimit()
}

// relax moves the project to the steady share (its index is built).
func (b *memBudget) relax() {
	if b == nil {
		return
	}
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if b.closed || b.built {
		return
	}
	b.setFactor(memLimitSteady)
	b.built = true
	memLimits.opening--
	b.endParse()
	b.reopened()
	b.endBuild()
	applyMemLimit()
}

// setFactor makes f the budget's limit bytes per indexed byte (mu held).
func (b *memBudget) setFactor(f float64) {
	memLimits.weighted += float64(b.bytes) * (f - b.factor)
	b.factor = f
}

// endBuild ends the budget's builds phase (mu held).
func (b *memBudget) endBuild() {
	if b.build {
		b.build = false
		memLimits.building--
	}
}

// endParse ends a cold open's parse (mu held).
func (b *memBudget) endParse() {
	if b.parse {
		b.parse = false
		memLimits.parsing--
	}
}

// reopened ends the reopen's load (mu held).
func (b *memBudget) reopened() {
	if b.reopen {
		b.reopen = false
		memLimits.reopening--
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
	memLimits.open--
	if !b.built {
		memLimits.opening--
	}
	b.endParse()
	b.reopened()
	b.endBuild()
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
	steady := memLimits.open > 0 && memLimits.opening == 0
	if p := gcPercentWanted(); memLimits.gcOwned && p != memLimits.gcPercent {
		memLimits.gcPercent = p
		if p == 0 {
			p = memLimits.gcDefault
		}
		setGCPercent(p)
	}
	opened := steady && !memLimits.steady
	memLimits.steady = steady
	if !memLimits.owned {
		return
	}
	limit := int64(math.MaxInt64)
	if memLimits.open == 0 {
		memLimits.weighted, memLimits.floor, memLimits.openLive = 0, 0, 0
	} else {
		base := memLimitBase
		if steady {
			base = steadyBase
		} else if memLimits.building == memLimits.opening {
			base = memLimitBuildBase // every opening project is in its builds
		}
		limit = base + int64(max(memLimits.weighted, 0))
		if steady {
			limit = max(limit, memLimits.floor)
		} else if memLimits.openLive > 0 {
			limit = max(limit, openFloor(base, memLimits.openLive))
		}
	}
	debug.SetMemoryLimit(limit)
	if opened {
		// The open is done: its transients (parse, graph and retrieval
		// builds, the first save) are garbage now. Without a GC now the
		// next one would run when the heap reached the GC's goal from a
		// mark near the open's peak; a GC now marks only the live data,
		// the pages it frees go back to the system, and its mark sets
		// the steady limit's floor.
		memLimits.afterOpens++
		afterOpen()
	}
}

// gcPercentWanted is the GC percent the open projects want (mu held): 0
// (the default) with none open or while one loads from a saved index,
// parseGCPercent while a cold open parses, else steadyGCPercent.
func gcPercentWanted() int {
	switch {
	case memLimits.open == 0 || memLimits.reopening > 0:
		return 0
	case memLimits.parsing > 0:
		return parseGCPercent
	}
	return steadyGCPercent
}

// afterOpen is called (memLimits.mu held) when every open project is
// built (the open's share becomes the steady one); a variable for tests
// (set in init: it calls applyMemLimit, which calls it).
var afterOpen func()

func init() { afterOpen = collectAfterOpen }

// collectAfterOpen runs collectNow in the background.
func collectAfterOpen() { go collectNow() }

// collectNow runs a GC that returns the free pages, then sets the steady
// limit's floor from its mark, and from then on from every GC's mark
// while the projects stay open and built (followLiveHeap).
func collectNow() {
	debug.FreeOSMemory()
	if live, ok := liveHeap(); ok {
		setSteadyFloor(live)
	}
	followLiveHeap()
}

// liveHeap is the heap the last GC marked live.
func liveHeap() (uint64, bool) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}

// The steady floor follows the live heap from GC to GC. The process does
// more than hold an index: an agent task's conversation, images (up to
// 8 x 7 MB of base64 a prompt), tool output and subagents live in the
// same heap, and a floor measured once after the open would leave a
// small workspace's process (16 MiB + 1.0 per byte: ~20 MB for a few MB
// of code) with its live heap above the limit, the GC running back to
// back at its 50% cap of the CPU. A GC cycle's end is seen by a
// finalizer that re-arms itself (gcCycle), started by the first project
// that opens; while a project opens the same updates set the open's floor
// (openFloor), and they stop when no project is open.
type gcCycle struct{ _ *byte } // a pointer: not a tiny allocation, whose finalizer may never run

var followingGC atomic.Bool

// followOff, when set (tests that check exact limits), stops the floors'
// updates at the next GC and keeps them from starting.
var followOff atomic.Bool

// followLiveHeap starts the floor's updates unless they run.
func followLiveHeap() {
	if followingGC.CompareAndSwap(false, true) {
		runtime.SetFinalizer(new(gcCycle), afterGC)
	}
}

// afterGC runs on the finalizer goroutine after a GC cycle found c
// unreachable: it sets the floor from the live heap that cycle marked and
// re-arms c for the next cycle, or stops.
func afterGC(c *gcCycle) {
	memLimits.mu.Lock()
	open := memLimits.open > 0 && !followOff.Load()
	if !open {
		// Under mu: a project that opens after this sees the flag
		// clear and starts the updates again (newMemBudget, after open
		// is counted under mu); cleared after unlocking, its start
		// could be lost between the two.
		followingGC.Store(false)
	}
	memLimits.mu.Unlock()
	if !open {
		if f := gcFollowed.Load(); f != nil {
			(*f)(-1)
		}
		return
	}
	if live, ok := liveHeap(); ok {
		floor := setSteadyFloor(live)
		if f := gcFollowed.Load(); f != nil {
			(*f)(floor)
		}
	}
	runtime.SetFinalizer(c, afterGC)
}

// gcFollowed, when set, is called with the floor afterGC set (-1: it
// stopped); for tests.
var gcFollowed atomic.Pointer[func(int64)]

// setSteadyFloor makes the steady limit at least steadyFloor(live) and
// returns the floor (0 with no project open).
func setSteadyFloor(live uint64) int64 {
	memLimits.mu.Lock()
	defer memLimits.mu.Unlock()
	if memLimits.open == 0 {
		return 0
	}
	memLimits.floor = steadyFloor(live)
	memLimits.openLive = live
	applyMemLimit()
	if !memLimits.steady {
		base := memLimitBase
		if memLimits.building == memLimits.opening {
			base = memLimitBuildBase
		}
		return openFloor(base, live)
	}
	return memLimits.floor
}

// openFloor is the lowest limit while a project opens, for a live heap of
// live bytes: the share per indexed byte (memLimitPerByte, or the builds'
// memLimitBuildPerByte) fits trees whose live data is under ~0.6 byte per
// byte, but a tree of many small files dense with symbols holds more (QA
// 2 of session 26: 10 000 files of 2 KB opened 1.75x slower than with no
// limit, the GC running back to back under a limit below its live heap).
// memLimitBase over the live heap lets the GC run at its percent there;
// on the two benchmark trees the floor stays under the share until the
// retrieval build, where the live heap alone already goes over the
// builds' share.
// (With 8 MiB instead of memLimitBase the dense tree still took 6.9 s.)
// base is memLimitBase, or memLimitBuildBase while every opening project
// is in its builds, whose garbage comes slower than the parse's; the room
// over the live heap is at least a third of it (buildLiveRoom), so that a
// big live heap is not marked every 10 or 16 MiB of allocations
// (GOROOT/src, ~65 MB live at its builds: the open's CPU 7.4-7.5 -> 6.9-7.0
// s, TestMemoryProbe alternated; the mixed tree, ~30 MB live, unchanged;
// the dense tree of small files 3.9-5.0 -> 3.7-3.8 s).
func openFloor(base int64, live uint64) int64 {
	return max(base, int64(float64(live)*buildLiveRoom)) + int64(live)
}

// buildLiveRoom is the least room over the live heap, as a share of it,
// that the open's floor leaves (openFloor).
const buildLiveRoom = 1.0 / 3

// steadyFloor is the lowest steady limit for a live heap of live bytes:
// the limit counts the heap's free slots and pages and the runtime's
// metadata too (~4-8 MB on the benchmark trees), and a query or refresh
// allocates 1-3 MB.
func steadyFloor(live uint64) int64 {
	return steadyBase + int64(float64(live)*steadyLiveFactor)
}

// setGCPercent sets the GC percent (memLimits.mu held); a variable for
// tests.
var setGCPercent = func(p int) { debug.SetGCPercent(p) }
