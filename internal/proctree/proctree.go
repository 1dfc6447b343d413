// Package proctree owns the one reading of the process tree from /proc:
// the parent and state of a process and the descendants of one, those that
// left its process group or session (setsid) included. The sandbox, the
// Claude Code engine and the MCP client use it to end a whole tree. It also
// owns the start of a child that must not outlive the runtime (StartTied:
// the parent-death signal, forked from one spawner thread).
// Elsewhere than Linux /proc is absent and every answer is empty.
package proctree

import (
	"os"
	"strconv"
	"strings"
)

// Parent reads the parent pid of pid from /proc/<pid>/stat, and whether
// the process is a zombie. ok is false when the process is gone.
func Parent(pid int) (ppid int, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	// The command name in parentheses may hold spaces and ')'; the fields
	// that follow start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false, false
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, false, false
	}
	return ppid, f[0] == "Z", true
}

// Descendants walks /proc and returns every live (non-zombie) process
// whose chain of parents leads to root, root excluded, parents before
// children. A zombie's own children are still followed.
func Descendants(root int) []int {
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
	queue := []int{root}
	seen := map[int]bool{root: true}
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
