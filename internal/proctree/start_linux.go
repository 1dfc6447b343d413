package proctree

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// StartTied starts cmd so that the kernel sends it sig when the runtime
// dies, however it dies (kill -9 included): Linux's parent-death signal
// (prctl PR_SET_PDEATHSIG, set through cmd.SysProcAttr.Pdeathsig; the
// SysProcAttr is created when nil, its other fields are kept).
//
// The caveat: the kernel sends the signal when the *thread* that forked
// the child ends, not the process (go.dev/issue/27505), and Go ends a
// thread whose goroutine returns while locked to it (runtime.LockOSThread).
// A child forked from an ordinary goroutine's thread would be killed long
// before the runtime exits when that thread ends. So every tied child is
// forked from one spawner goroutine locked to its OS thread for the life of
// the process; cmd.Start runs there, one start at a time (a fork and exec:
// milliseconds). The goroutines cmd.Start itself starts (copying a
// non-file Stdin, Stdout or Stderr, watching a CommandContext's ctx) are
// ordinary goroutines.
//
// The signal reaches only the child: its own children do not inherit it
// (they see their stdin pipe close, or are swept by whoever owns the tree),
// and an exec of a set-user-ID or file-capability program clears it.
// Elsewhere than Linux StartTied is cmd.Start.
func StartTied(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// spawner is the goroutine, locked to its thread, that forks every tied
// child (see StartTied).
var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}
