// Package proctree owns the one reading of the process tree from /proc:
// the parent and state of a process and the descendants of one, those that
// left its process group or session (setsid) included. The sandbox, the
// Claude Code engine and the MCP client use it to end a whole tree. It also
// owns the stop of a whole tree before it is signalled (Freeze), and the
// start of a child that must not outlive the runtime (StartTied:
// the parent-death signal, forked from one spawner thread).
// Elsewhere than Linux /proc is absent and every answer is empty.
package proctree

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Parent reads the parent pid of pid from /proc/<pid>/stat, and whether
// the process is a zombie. ok is false when the process is gone.
func Parent(pid int) (ppid int, zombie, ok bool) {
	ppid, state, ok := stat("/proc/" + strconv.Itoa(pid) + "/stat")
	return ppid, state == 'Z', ok
}

// stat reads the state letter and the parent pid from a stat file of /proc
// (a process's or one of its threads').
func stat(path string) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	// The command name in parentheses may hold spaces and ')'; the fields
	// that follow start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, false
	}
	return ppid, f[0][0], true
}

// Descendants walks /proc and returns every live (non-zombie) process
// whose chain of parents leads to root, root excluded, parents before
// children. A zombie's own children are still followed.
func Descendants(root int) []int {
	return descendants([]int{root})
}

// descendants is Descendants of every root at once (roots excluded, each
// process once).
func descendants(roots []int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := map[int][]int{}
	zombies := map[int]bool{}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		ppid, z, ok := Parent(pid)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		zombies[pid] = z
	}
	var out []int
	queue := append([]int(nil), roots...)
	seen := map[int]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if !zombies[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// freezeWait bounds how long Freeze waits for the processes it signalled to
// stop.
const freezeWait = 2 * time.Second

// Freeze stops every process in roots and every live descendant of one
// with SIGSTOP and returns those descendants (roots excluded, each once).
// After each round of signals it waits until the processes it signalled
// are stopped (or gone), then walks /proc again; it returns when a walk
// finds no process it had not stopped. A stopped process can neither fork
// nor exit, so the tree is then whole and stays so: no process in it can
// start a child the caller misses, nor leave it because its parent exited
// (re-parented to init, out of reach of a walk) before the caller signals
// it. The caller sends what it means to (SIGTERM, SIGKILL) and then, unless
// that was SIGKILL, SIGCONT to roots and the returned processes.
//
// A process that does not stop within a couple of seconds (in
// uninterruptible sleep, traced) is waited for no longer; the walk goes on.
// The runtime's own pid is never signalled. Elsewhere than Linux the walk
// finds nothing and only roots are signalled.
func Freeze(roots ...int) []int {
	self := os.Getpid()
	deadline := time.Now().Add(freezeWait)
	seen := map[int]bool{}
	var fresh []int
	for _, r := range roots {
		if !seen[r] && r != self && r > 0 {
			seen[r] = true
			fresh = append(fresh, r)
		}
	}
	var out []int
	for len(fresh) > 0 {
		for _, p := range fresh {
			_ = syscall.Kill(p, syscall.SIGSTOP)
		}
		for _, p := range fresh {
			for !stoppedOrGone(p) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		fresh = fresh[:0]
		for _, d := range descendants(roots) {
			if !seen[d] && d != self {
				seen[d] = true
				fresh = append(fresh, d)
				out = append(out, d)
			}
		}
	}
	return out
}

// stoppedOrGone reports whether every thread of pid is stopped (or
// traced-stopped, or exiting), or the process is gone.
func stoppedOrGone(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return true
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	for _, tid := range tids {
		_, state, ok := stat(dir + "/" + tid + "/stat")
		if ok && state != 'T' && state != 't' && state != 'Z' && state != 'X' {
			return false
		}
	}
	return true
}
