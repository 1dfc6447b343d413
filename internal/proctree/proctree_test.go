package proctree

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
)

// TestDescendantsFindsGrandchildInOwnSession: a grandchild that called
// setsid is still found below the test process, after its parent, and
// gone from the list once killed.
func TestDescendantsFindsGrandchildInOwnSession(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	// sh starts setsid sleep in the background, prints its pid, then waits.
	cmd := exec.Command("sh", "-c", "setsid sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var grandchild int
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	for _, c := range buf[:n] {
		if c >= '0' && c <= '9' {
			grandchild = grandchild*10 + int(c-'0')
		}
	}
	ds := Descendants(os.Getpid())
	i, j := slices.Index(ds, cmd.Process.Pid), slices.Index(ds, grandchild)
	if i < 0 || j < 0 || i > j {
		t.Fatalf("descendants %v: want the shell %d before its setsid child %d", ds, cmd.Process.Pid, grandchild)
	}
	if ppid, zombie, ok := Parent(grandchild); !ok || zombie || ppid != cmd.Process.Pid {
		t.Fatalf("Parent(%d) = %d, %v, %v; want %d, live", grandchild, ppid, zombie, ok, cmd.Process.Pid)
	}
	p, _ := os.FindProcess(grandchild)
	p.Kill()
	cmd.Wait() // the shell reaps it and exits
	if ds := Descendants(os.Getpid()); slices.Contains(ds, grandchild) {
		t.Fatalf("killed process %d still listed: %v", grandchild, ds)
	}
	if _, _, ok := Parent(-1); ok {
		t.Fatal("Parent(-1) found a process")
	}
}

// TestFreezeStopsAForkingTree: a shell that keeps starting setsid children
// while the tree is frozen. When Freeze returns, every process it returned
// is stopped, and a new walk finds no process it did not return (the tree
// can no longer grow or lose a member to re-parenting).
func TestFreezeStopsAForkingTree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 200 ]; do setsid sh -c 'sleep 30 & wait' & i=$((i+1)); [ $i -eq 1 ] && echo go; done; wait`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var frozen []int
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, p := range frozen {
			syscall.Kill(p, syscall.SIGKILL)
		}
		cmd.Wait()
	})
	if _, err := out.Read(make([]byte, 8)); err != nil { // the loop started its first child
		t.Fatal(err)
	}
	frozen = Freeze(cmd.Process.Pid)
	if len(frozen) == 0 {
		t.Fatal("Freeze found no descendant of a forking shell")
	}
	for _, p := range append([]int{cmd.Process.Pid}, frozen...) {
		if !stoppedOrGone(p) {
			t.Fatalf("process %d not stopped after Freeze", p)
		}
	}
	for _, p := range Descendants(cmd.Process.Pid) {
		if !slices.Contains(frozen, p) {
			t.Fatalf("process %d appeared in the frozen tree (Freeze returned %d processes)", p, len(frozen))
		}
	}
}
