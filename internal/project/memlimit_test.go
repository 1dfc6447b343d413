package project

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
)

// resetMemLimits forgets what memlimit.go knew (as at process start) and
// puts the process's limit back at the end of the test.
func resetMemLimits(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	memLimits.mu.Lock()
	owned, checked, open, opening, weighted := memLimits.owned, memLimits.checked, memLimits.open, memLimits.opening, memLimits.weighted
	memLimits.owned, memLimits.checked, memLimits.open, memLimits.opening, memLimits.weighted = false, false, 0, 0, 0
	memLimits.afterOpens = 0
	gcOwned, gcDefault, gcPercent, parsing := memLimits.gcOwned, memLimits.gcDefault, memLimits.gcPercent, memLimits.parsing
	steady, floor, reopening := memLimits.steady, memLimits.floor, memLimits.reopening
	openLive, building := memLimits.openLive, memLimits.building
	memLimits.gcPercent, memLimits.parsing, memLimits.steady, memLimits.floor, memLimits.reopening = 0, 0, false, 0, 0
	memLimits.openLive, memLimits.building = 0, 0
	memLimits.mu.Unlock()
	hook, gcHook := afterOpen, setGCPercent
	afterOpen = func() {}
	setGCPercent = func(int) {}
	followOff.Store(true) // no floor from a GC during the test
	t.Cleanup(func() {
		followOff.Store(false)
		afterOpen, setGCPercent = hook, gcHook
		memLimits.mu.Lock()
		memLimits.gcOwned, memLimits.gcDefault, memLimits.gcPercent, memLimits.parsing = gcOwned, gcDefault, gcPercent, parsing
		memLimits.steady, memLimits.floor, memLimits.reopening = steady, floor, reopening
		memLimits.openLive, memLimits.building = openLive, building
		memLimits.mu.Unlock()
		debug.SetMemoryLimit(prev)
		memLimits.mu.Lock()
		memLimits.owned, memLimits.checked, memLimits.open, memLimits.opening, memLimits.weighted = owned, checked, open, opening, weighted
		memLimits.mu.Unlock()
	})
}

// TestSteadyGCPercent: the GC percent is parseGCPercent while a cold
// open parses, steadyGCPercent while projects are open, the default while
// one loads from a saved index and when none is open; GOGC set by the
// user is left alone.
func TestSteadyGCPercent(t *testing.T) {
	for _, owned := range []bool{true, false} {
		resetMemLimits(t)
		var got []int
		setGCPercent = func(p int) { got = append(got, p) }
		memLimits.mu.Lock()
		memLimits.checked, memLimits.owned, memLimits.gcOwned, memLimits.gcDefault = true, true, owned, 100
		memLimits.mu.Unlock()
		a := newMemBudget(1<<20, false) // a cold open parses: parse percent
		a.relax()                       // built: steady
		b := newMemBudget(1<<20, true)  // a reopen loads: default
		b.relax()                       // loaded: steady
		c := newMemBudget(1<<20, true)  // another reopen: default
		c.close()                       // closed before it loaded: steady
		d := newMemBudget(1<<20, false) // a cold open beside built ones: parse percent
		d.close()                       // closed in its parse: steady
		e := newMemBudget(1<<20, false) // parse percent
		e.parsed()                      // in its builds: steady
		e.parsed()                      // again: unchanged
		e.close()
		a.close()
		b.close() // none open: default
		want := []int{parseGCPercent, steadyGCPercent, 100, steadyGCPercent, 100, steadyGCPercent,
			parseGCPercent, steadyGCPercent, parseGCPercent, steadyGCPercent, 100}
		if !owned {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("GOGC ours %v: percents set %v, want %v", owned, got, want)
		}
		memLimits.mu.Lock()
		reopening, parsing := memLimits.reopening, memLimits.parsing
		memLimits.mu.Unlock()
		if reopening != 0 || parsing != 0 {
			t.Errorf("GOGC ours %v: %d reopens and %d parses counted after all closed, want 0", owned, reopening, parsing)
		}
	}
}

func TestMemBudgetFollowsIndexedBytes(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	want := func(total int64) int64 { return memLimitBase + int64(float64(total)*memLimitPerByte) }
	a := newMemBudget(100<<20, false)
	if got := debug.SetMemoryLimit(-1); got != want(100<<20) {
		t.Fatalf("one project of 100 MiB: limit %d, want %d", got, want(100<<20))
	}
	b := newMemBudget(0, false)
	b.grow(3 << 20) // under the 4 MiB step: not yet counted
	if got := debug.SetMemoryLimit(-1); got != want(100<<20) {
		t.Fatalf("after 3 MiB parsed: limit %d, want %d", got, want(100<<20))
	}
	b.grow(2 << 20)
	if got := debug.SetMemoryLimit(-1); got != want(105<<20) {
		t.Fatalf("after 5 MiB parsed: limit %d, want %d", got, want(105<<20))
	}
	b.set(10 << 20) // the scan's total replaces what was counted
	if got := debug.SetMemoryLimit(-1); got != want(110<<20) {
		t.Fatalf("after set: limit %d, want %d", got, want(110<<20))
	}
	b.relax() // b is built: its 10 MiB count at the steady share while a opens
	steady := memLimitBase + int64(float64(100<<20)*memLimitPerByte+float64(10<<20)*memLimitSteady)
	if got := debug.SetMemoryLimit(-1); got != steady {
		t.Fatalf("after relax: limit %d, want %d", got, steady)
	}
	b.relax()
	if got := debug.SetMemoryLimit(-1); got != steady {
		t.Fatalf("after a second relax: limit %d, want %d", got, steady)
	}
	afterOpens := func() int {
		memLimits.mu.Lock()
		defer memLimits.mu.Unlock()
		return memLimits.afterOpens
	}
	if n := afterOpens(); n != 0 {
		t.Fatalf("limit still held: %d releases after open, want 0", n)
	}
	a.close()
	a.close()
	a.set(1 << 30) // closed: ignored
	// No project opening (a closed, b built): b's steady share.
	if got, want := debug.SetMemoryLimit(-1), steadyBase+int64(float64(10<<20)*memLimitSteady); got != want {
		t.Fatalf("no project opening (a closed, b built): limit %d, want %d", got, want)
	}
	if n := afterOpens(); n != 1 {
		t.Fatalf("b open and built: %d GCs after open, want 1", n)
	}
	c := newMemBudget(20<<20, false) // another opens: its share at the open's rate
	if want := memLimitBase + int64(float64(10<<20)*memLimitSteady+float64(20<<20)*memLimitPerByte); debug.SetMemoryLimit(-1) != want {
		t.Fatalf("while a third opens: limit %d, want %d", debug.SetMemoryLimit(-1), want)
	}
	c.relax()
	if got, want := debug.SetMemoryLimit(-1), steadyBase+int64(float64(30<<20)*memLimitSteady); got != want {
		t.Fatalf("every open project built: limit %d, want %d", got, want)
	}
	c.close()
	b.close()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("all closed: limit %d, want none", got)
	}
	if n := afterOpens(); n != 2 {
		t.Fatalf("after c was built and all closed: %d GCs after open, want 2 (not on close)", n)
	}
}

// TestSteadyFloor: once every project is built, the steady limit is at
// least steadyFloor of the live heap afterOpen measured (a tree with more
// live data per byte than the share allows), only while projects are
// open; while one opens, the open's floor (openFloor) of the same live
// heap; closing the last forgets both.
func TestSteadyFloor(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	share := func(bytes int64, factor float64) int64 { return steadyBase + int64(float64(bytes)*factor) }
	a := newMemBudget(10<<20, false)
	a.relax()
	if got := debug.SetMemoryLimit(-1); got != share(10<<20, memLimitSteady) {
		t.Fatalf("built, no floor: limit %d, want %d", got, share(10<<20, memLimitSteady))
	}
	setSteadyFloor(1 << 20) // below the share: no change
	if got := debug.SetMemoryLimit(-1); got != share(10<<20, memLimitSteady) {
		t.Fatalf("low floor: limit %d, want the share %d", got, share(10<<20, memLimitSteady))
	}
	setSteadyFloor(40 << 20)
	if got, want := debug.SetMemoryLimit(-1), steadyFloor(40<<20); got != want || want <= share(10<<20, memLimitSteady) {
		t.Fatalf("live heap 40 MiB: limit %d, want the floor %d (over the share %d)", got, want, share(10<<20, memLimitSteady))
	}
	b := newMemBudget(1<<20, false) // opening: the open's share, or the open's floor over it
	if got, want := debug.SetMemoryLimit(-1), max(memLimitBase+int64(float64(10<<20)*memLimitSteady+float64(1<<20)*memLimitPerByte), openFloor(memLimitBase, 40<<20)); got != want {
		t.Fatalf("while b opens: limit %d, want %d", got, want)
	}
	b.relax()
	if got, want := debug.SetMemoryLimit(-1), steadyFloor(40<<20); got != want {
		t.Fatalf("both built: limit %d, want the floor %d", got, want)
	}
	a.close()
	b.close()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("all closed: limit %d, want none", got)
	}
	setSteadyFloor(40 << 20) // nothing open: ignored
	c := newMemBudget(1<<20, false)
	c.relax()
	if got := debug.SetMemoryLimit(-1); got != share(1<<20, memLimitSteady) {
		t.Fatalf("a new project after all closed: limit %d, want %d (the old floor forgotten)", got, share(1<<20, memLimitSteady))
	}
	c.close()
}

func TestMemBudgetLeavesUserLimit(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(1 << 40) // as GOMEMLIMIT would
	b := newMemBudget(100<<20, false)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("limit %d, want the user's %d", got, int64(1<<40))
	}
	b.close()
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("after close: limit %d, want the user's %d", got, int64(1<<40))
	}
}

// TestCollectNowSetsFloor: the GC after an open sets the steady floor
// from the live heap it marked.
func TestCollectNowSetsFloor(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	a := newMemBudget(1<<10, false)
	a.relax()
	keep := make([]byte, 8<<20) // live during the GC
	collectNow()
	memLimits.mu.Lock()
	floor := memLimits.floor
	memLimits.mu.Unlock()
	if floor < steadyFloor(8<<20) {
		t.Fatalf("floor %d with 8 MiB live, want at least %d", floor, steadyFloor(8<<20))
	}
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Fatalf("limit %d, want the floor %d (over the share of 1 KiB)", got, floor)
	}
	keep[0] = 1
	runtime.KeepAlive(keep)
	a.close()
}

// TestReopenShare: a project opening from a saved index has the reopen's
// share of the limit, a cold one the open's.
func TestReopenShare(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	a := newMemBudget(10<<20, true)
	if got, want := debug.SetMemoryLimit(-1), memLimitBase+int64(float64(10<<20)*memLimitReopenPerByte); got != want {
		t.Fatalf("reopen: limit %d, want %d", got, want)
	}
	a.grow(4 << 20) // a touched file parsed during the reopen
	if got, want := debug.SetMemoryLimit(-1), memLimitBase+int64(float64(14<<20)*memLimitReopenPerByte); got != want {
		t.Fatalf("reopen after 4 MiB parsed: limit %d, want %d", got, want)
	}
	a.close()
	b := newMemBudget(10<<20, false)
	if got, want := debug.SetMemoryLimit(-1), memLimitBase+int64(float64(10<<20)*memLimitPerByte); got != want {
		t.Fatalf("cold open: limit %d, want %d", got, want)
	}
	b.close()
}

// TestFloorFollowsLiveHeap: once the projects are built, the steady floor
// follows the live heap from GC to GC (an agent task's data lives in the
// same heap), down again when it shrinks, and the updates stop when a
// project opens.
func TestFloorFollowsLiveHeap(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	floors := make(chan int64, 64)
	hook := func(f int64) {
		select {
		case floors <- f:
		default: // a cycle after the test's end
		}
	}
	gcFollowed.Store(&hook)
	t.Cleanup(func() { gcFollowed.Store(nil) })
	followOff.Store(false)
	a := newMemBudget(1<<10, false)
	a.relax()
	collectNow() // as afterOpen does: the floor, and the updates start
	// waitFloor runs GCs until an update satisfies ok (a few cycles: an
	// update may come from the cycle before).
	waitFloor := func(what string, ok func(int64) bool) int64 {
		t.Helper()
		for range 6 {
			runtime.GC()
			if f := <-floors; ok(f) {
				return f
			}
		}
		t.Fatalf("%s: no update after 6 GCs", what)
		return 0
	}
	keep := make([]byte, 48<<20)
	keep[len(keep)-1] = 1
	waitFloor("48 MiB live", func(f int64) bool { return f >= steadyFloor(48<<20) })
	if got := debug.SetMemoryLimit(-1); got < steadyFloor(48<<20) {
		t.Fatalf("limit %d with 48 MiB live, want at least the floor %d", got, steadyFloor(48<<20))
	}
	runtime.KeepAlive(keep)
	keep = nil
	waitFloor("the 48 MiB dropped", func(f int64) bool { return f >= 0 && f < steadyFloor(48<<20) })
	b := newMemBudget(1<<10, false) // another project opens: the open's floor
	keep = make([]byte, 32<<20)
	keep[len(keep)-1] = 1
	waitFloor("32 MiB live while a project opens", func(f int64) bool {
		return f >= openFloor(memLimitBase, 32<<20) && f < openFloor(memLimitBase, 40<<20)
	})
	if got := debug.SetMemoryLimit(-1); got < openFloor(memLimitBase, 32<<20) {
		t.Fatalf("limit %d with 32 MiB live while a project opens, want at least %d", got, openFloor(memLimitBase, 32<<20))
	}
	runtime.KeepAlive(keep)
	keep = nil
	b.close()
	a.close()
	waitFloor("none open", func(f int64) bool { return f == -1 }) // the updates stop
}

// TestMemBudgetParsed: a cold open's share moves to the builds' share
// once its parse is done (parsed), then to the steady one (relax); a
// reopen's share and a built budget's are left alone. While every opening
// budget is in its builds the base under the share and the open's floor
// is memLimitBuildBase; a project parsing or loading beside it brings
// memLimitBase back.
func TestMemBudgetParsed(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	a := newMemBudget(100<<20, false)
	if got, want := limit(), memLimitBase+int64(float64(100<<20)*memLimitPerByte); got != want {
		t.Fatalf("parsing: limit %d, want %d", got, want)
	}
	a.parsed()
	a.parsed()
	build := memLimitBuildBase + int64(float64(100<<20)*memLimitBuildPerByte)
	if got := limit(); got != build {
		t.Fatalf("building: limit %d, want %d", got, build)
	}
	live := uint64(100 << 20) // over the builds' share: the open's floor, a third of the live heap over it
	if f := setSteadyFloor(live); f != int64(live)+int64(live)/3 || limit() != f || f <= build {
		t.Fatalf("building with %d live: floor %d, limit %d, want %d", live, f, limit(), int64(live)+int64(live)/3)
	}
	if f := openFloor(memLimitBuildBase, 12<<20); f != 12<<20+memLimitBuildBase {
		t.Fatalf("building with 12 MiB live: floor %d, want 10 MiB over it", f)
	}
	r := newMemBudget(10<<20, true)
	r.parsed() // a reopen keeps its share
	share := memLimitBase + int64(float64(100<<20)*memLimitBuildPerByte+float64(10<<20)*memLimitReopenPerByte)
	if got, want := limit(), max(share, openFloor(memLimitBase, live)); got != want {
		t.Fatalf("with a reopen: limit %d, want %d", got, want)
	}
	r.close()
	if got, want := limit(), openFloor(memLimitBuildBase, live); got != want {
		t.Fatalf("the reopen closed: limit %d, want %d", got, want)
	}
	setSteadyFloor(1 << 20)
	if got := limit(); got != build {
		t.Fatalf("building, little live: limit %d, want %d", got, build)
	}
	a.saving() // built, its first save ahead: the save's share over the usual base
	a.saving()
	if got, want := limit(), memLimitBase+int64(float64(100<<20)*memLimitSavePerByte); got != want {
		t.Fatalf("saving: limit %d, want %d", got, want)
	}
	a.parsed() // no way back to the builds
	if got, want := limit(), memLimitBase+int64(float64(100<<20)*memLimitSavePerByte); got != want {
		t.Fatalf("saving, parsed again: limit %d, want %d", got, want)
	}
	a.relax()
	a.parsed() // built: stays steady
	if got, want := limit(), max(steadyBase+int64(float64(100<<20)*memLimitSteady), steadyFloor(1<<20)); got != want {
		t.Fatalf("built: limit %d, want %d", got, want)
	}
	a.close()
}

// TestMemBudgetCountsTinyFiles: each indexed file counts for at least
// memMinFileBytes in the limit (QA of session 26: a tree of 20 000 files
// of ~100 bytes ran its GC back to back under 16 MiB + 0.9 x its bytes).
func TestMemBudgetCountsTinyFiles(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	root := t.TempDir()
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.py", i)), []byte("x = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "big.py"), bytes.Repeat([]byte("y = 2\n"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Open(context.Background(), root, &Options{Home: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want := memLimitBase + int64(float64(100*memMinFileBytes+6000)*memLimitPerByte)
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("limit %d, want %d (100 files of 6 bytes counted as %d each, and one of 6000)", got, want, memMinFileBytes)
	}
	if _, err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("after a refresh: limit %d, want %d", got, want)
	}
}
