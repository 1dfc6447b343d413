package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// startOnEndingThread runs start(cmd) on a goroutine locked to an OS thread
// that ends when the goroutine returns, and waits until that thread is gone
// (its /proc/self/task entry removed, which the kernel does after it sent
// the parent-death signals of the children it forked).
func startOnEndingThread(t *testing.T, cmd *exec.Cmd, start func(*exec.Cmd) error) {
	t.Helper()
	type started struct {
		tid int
		err error
	}
	ch := make(chan started, 1)
	var run func()
	run = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if syscall.Gettid() == os.Getpid() {
			// Go parks the main thread instead of ending it: try another.
			go run()
			select {}
		}
		ch <- started{syscall.Gettid(), start(cmd)}
	}
	go run()
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d did not end", s.tid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// endSignal sends SIGTERM to the child and returns the signal that ended
// it: SIGKILL when a parent-death signal was queued before.
func endSignal(t *testing.T, cmd *exec.Cmd) syscall.Signal {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		t.Fatalf("the child ended with %v", cmd.ProcessState)
	}
	return ws.Signal()
}

// The parent-death signal fires when the thread that forked the child
// ends (the control: a plain cmd.Start with Pdeathsig from a thread that
// ends kills the child); StartTied forks from the spawner thread, so a
// child started from such a thread lives on.
func TestStartTiedOutlivesTheStartingThread(t *testing.T) {
	plain := exec.Command("sleep", "60")
	plain.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	startOnEndingThread(t, plain, (*exec.Cmd).Start)
	if sig := endSignal(t, plain); sig != syscall.SIGKILL {
		t.Fatalf("control: a child forked from an ended thread got %v, not its parent-death signal", sig)
	}
	tied := exec.Command("sleep", "60")
	startOnEndingThread(t, tied, func(c *exec.Cmd) error { return StartTied(c, syscall.SIGKILL) })
	if tied.SysProcAttr == nil || tied.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("SysProcAttr %+v", tied.SysProcAttr)
	}
	if sig := endSignal(t, tied); sig != syscall.SIGTERM {
		t.Fatalf("a tied child got %v when the thread that called StartTied ended", sig)
	}
}
