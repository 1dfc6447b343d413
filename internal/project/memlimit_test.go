package project

import (
	"math"
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
	gcOwned, gcDefault, gcSteady := memLimits.gcOwned, memLimits.gcDefault, memLimits.gcSteady
	memLimits.gcSteady = false
	memLimits.mu.Unlock()
	hook, gcHook := afterOpen, setGCPercent
	afterOpen = func() {}
	setGCPercent = func(int) {}
	t.Cleanup(func() {
		afterOpen, setGCPercent = hook, gcHook
		memLimits.mu.Lock()
		memLimits.gcOwned, memLimits.gcDefault, memLimits.gcSteady = gcOwned, gcDefault, gcSteady
		memLimits.mu.Unlock()
		debug.SetMemoryLimit(prev)
		memLimits.mu.Lock()
		memLimits.owned, memLimits.checked, memLimits.open, memLimits.opening, memLimits.weighted = owned, checked, open, opening, weighted
		memLimits.mu.Unlock()
	})
}

// TestSteadyGCPercent: the GC percent is steadyGCPercent while projects
// are open and none is opening, the default otherwise; GOGC set by the
// user is left alone.
func TestSteadyGCPercent(t *testing.T) {
	for _, owned := range []bool{true, false} {
		resetMemLimits(t)
		var got []int
		setGCPercent = func(p int) { got = append(got, p) }
		memLimits.mu.Lock()
		memLimits.checked, memLimits.owned, memLimits.gcOwned, memLimits.gcDefault = true, true, owned, 100
		memLimits.mu.Unlock()
		a := newMemBudget(1 << 20)
		a.relax()                  // built: steady
		b := newMemBudget(1 << 20) // another opens: default
		b.relax()                  // both built: steady
		a.close()
		b.close() // none open: default
		want := []int{steadyGCPercent, 100, steadyGCPercent, 100}
		if !owned {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("GOGC ours %v: percents set %v, want %v", owned, got, want)
		}
	}
}

func TestMemBudgetFollowsIndexedBytes(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(math.MaxInt64)
	want := func(total int64) int64 { return memLimitBase + int64(float64(total)*memLimitPerByte) }
	a := newMemBudget(100 << 20)
	if got := debug.SetMemoryLimit(-1); got != want(100<<20) {
		t.Fatalf("one project of 100 MiB: limit %d, want %d", got, want(100<<20))
	}
	b := newMemBudget(0)
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
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("no project opening (a closed, b built): limit %d, want none", got)
	}
	if n := afterOpens(); n != 1 {
		t.Fatalf("limit lifted with b open: %d releases after open, want 1", n)
	}
	c := newMemBudget(20 << 20) // another opens: the built one's bytes count again
	if want := memLimitBase + int64(float64(10<<20)*memLimitSteady+float64(20<<20)*memLimitPerByte); debug.SetMemoryLimit(-1) != want {
		t.Fatalf("while a third opens: limit %d, want %d", debug.SetMemoryLimit(-1), want)
	}
	c.relax()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("every open project built: limit %d, want none", got)
	}
	c.close()
	b.close()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("all closed: limit %d, want none", got)
	}
	if n := afterOpens(); n != 2 {
		t.Fatalf("after c was built and all closed: %d releases after open, want 2 (not on close)", n)
	}
}

func TestMemBudgetLeavesUserLimit(t *testing.T) {
	resetMemLimits(t)
	debug.SetMemoryLimit(1 << 40) // as GOMEMLIMIT would
	b := newMemBudget(100 << 20)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("limit %d, want the user's %d", got, int64(1<<40))
	}
	b.close()
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("after close: limit %d, want the user's %d", got, int64(1<<40))
	}
}
