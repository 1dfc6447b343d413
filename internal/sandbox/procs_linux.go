package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// parentOf reads the parent pid of pid from /proc/<pid>/stat, and whether
// the process is a zombie. ok is false when the process is gone.
func parentOf(pid int) (ppid int, zombie, ok bool) {
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

// descendants walks /proc and returns every live (non-zombie) process whose
// chain of parents leads to root, root excluded, parents before children.
func descendants(root int) []int {
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
		ppid, z, ok := parentOf(pid)
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

// signalTree sends sig to every descendant of root.
func signalTree(root int, sig syscall.Signal) int {
	ds := descendants(root)
	for _, p := range ds {
		syscall.Kill(p, sig)
	}
	return len(ds)
}
