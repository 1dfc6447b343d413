//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Two runtimes on one data folder (two Managers: each has its own mutex)
// update the registry at the same time: every entry of both survives.
func TestRegistryTwoManagersLoseNothing(t *testing.T) {
	root := repoB(t, map[string]string{"a.txt": "a\n"})
	data := t.TempDir()
	ms := []*Manager{open(t, root, data), open(t, root, data)}
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				name := fmt.Sprintf("m%d-%d", i, j)
				errs <- m.update(func(reg map[string]*Worktree) error {
					reg[name] = &Worktree{Name: name, Dir: filepath.Join(m.Dir(), name), Branch: BranchPrefix + name}
					return nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	reg, err := ms[0].load()
	if err != nil {
		t.Fatal(err)
	}
	if len(reg) != 2*each {
		t.Fatalf("the registry holds %d entries, want %d: concurrent updates lost some", len(reg), 2*each)
	}
}

// While an update runs, registry.lock is held with flock: another process
// (here another open file, which flock treats the same) cannot take it.
func TestRegistryUpdateHoldsFileLock(t *testing.T) {
	root := repoB(t, map[string]string{"a.txt": "a\n"})
	m := open(t, root, t.TempDir())
	err := m.update(func(map[string]*Worktree) error {
		f, err := os.OpenFile(m.regLockPath(), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("flock of registry.lock during an update = %v, want EWOULDBLOCK", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.regLockPath(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("registry.lock still held after the update: %v", err)
	}
}
