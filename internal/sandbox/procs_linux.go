package sandbox

import (
	"syscall"

	"github.com/task-x/task-x-runtime/internal/proctree"
)

// signalTree sends sig to every descendant of root.
func signalTree(root int, sig syscall.Signal) int {
	ds := proctree.Descendants(root)
	for _, p := range ds {
		syscall.Kill(p, sig)
	}
	return len(ds)
}
