package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/proctree"
)

// qaTree is the QA reproduction: a setsid shell with two sleeps, a child
// that ignores SIGTERM and SIGHUP, and a foreground sleep.
const qaTree = `setsid sh -c "sleep 777 & sleep 777" & (trap "" TERM HUP; exec -a qa4hold sleep 778) & sleep 779`

// qaPids waits until every process of qaTree runs under the helper and
// returns the helper's descendants (host pids).
func qaPids(t *testing.T, helper int) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ds := proctree.Descendants(helper)
		var n777, hold, n779 int
		for _, d := range ds {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d))
			switch {
			case strings.HasPrefix(string(b), "sleep\x00777"):
				n777++
			case strings.HasPrefix(string(b), "qa4hold\x00"):
				hold++
			case strings.HasPrefix(string(b), "sleep\x00779"):
				n779++
			}
		}
		if n777 == 2 && hold == 1 && n779 == 1 {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree is not (or no longer) running: %d×777, %d qa4hold, %d×779 among %v", n777, hold, n779, ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goneWithin fails unless every pid has ended (or is a zombie) within d.
func goneWithin(t *testing.T, pids []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, p := range pids {
		for alive(p) {
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
				t.Fatalf("process %d (%q) alive %v later", p, b, d)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestDeathFakeRuntime is the runtime that TestRuntimeKilled kills with -9:
// it starts qaTree, writes the helper's pid to $TASK_X_DEATH_FILE and
// blocks. With TASK_X_DEATH_THREAD=exit it starts the command from a
// goroutine locked to its OS thread that then ends, which ends the thread.
func TestDeathFakeRuntime(t *testing.T) {
	if os.Getenv("TASK_X_DEATH_RUNTIME") != "1" {
		t.Skip("run by TestRuntimeKilled")
	}
	setMode(t, os.Getenv("TASK_X_DEATH_LLONLY") == "true")
	spec := Spec{Command: qaTree, Dir: t.TempDir(), Env: os.Environ(), Timeout: time.Minute,
		Sandboxed: os.Getenv("TASK_X_DEATH_SANDBOXED") == "true"}
	type started struct {
		p   *Process
		err error
	}
	ch := make(chan started, 1)
	var startOn func()
	startOn = func() {
		if os.Getenv("TASK_X_DEATH_THREAD") == "exit" {
			// Never unlocked: the thread ends with the goroutine. Go
			// never ends the main thread (it is parked instead): try
			// another goroutine there.
			runtime.LockOSThread()
			if syscall.Gettid() == os.Getpid() {
				go startOn()
				time.Sleep(time.Hour)
			}
			ch <- started{err: os.WriteFile(os.Getenv("TASK_X_DEATH_FILE")+".tid", []byte(strconv.Itoa(syscall.Gettid())), 0o600)}
		}
		p, err := Start(context.Background(), spec)
		ch <- started{p, err}
	}
	go startOn()
	if os.Getenv("TASK_X_DEATH_THREAD") == "exit" {
		if s := <-ch; s.err != nil {
			t.Fatal(s.err)
		}
	}
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	if err := os.WriteFile(os.Getenv("TASK_X_DEATH_FILE"), []byte(strconv.Itoa(s.p.Pid())), 0o600); err != nil {
		t.Fatal(err)
	}
	s.p.Wait() // until killed
}

// TestRuntimeKilled: kill -9 of the runtime ends the helper and the whole
// tree (setsid and TERM-ignoring children included) promptly (the kernel's
// kill takes milliseconds; the wait is bounded at 60 s for a loaded
// machine), in every mode, also when the goroutine that started the command ran on a thread
// that has ended since (the parent-death signal is per thread).
func TestRuntimeKilled(t *testing.T) {
	needSandbox(t)
	for _, m := range modes {
		for _, thread := range []string{"kept", "exit"} {
			t.Run(m.name+"/thread-"+thread, func(t *testing.T) {
				t.Parallel()
				file := filepath.Join(t.TempDir(), "helper")
				fake := exec.Command(os.Args[0], "-test.run=^TestDeathFakeRuntime$", "-test.count=1")
				fake.Env = append(os.Environ(), "TASK_X_DEATH_RUNTIME=1", "TASK_X_DEATH_FILE="+file,
					"TASK_X_DEATH_THREAD="+thread,
					"TASK_X_DEATH_SANDBOXED="+strconv.FormatBool(m.sandboxed),
					"TASK_X_DEATH_LLONLY="+strconv.FormatBool(m.llOnly))
				out := &strings.Builder{}
				fake.Stdout, fake.Stderr = out, out
				if err := fake.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() {
					fake.Process.Kill()
					fake.Wait()
				}()
				var helper int
				deadline := time.Now().Add(60 * time.Second)
				for helper == 0 {
					b, _ := os.ReadFile(file)
					helper, _ = strconv.Atoi(string(b))
					if helper == 0 && time.Now().After(deadline) {
						t.Fatalf("the fake runtime did not start the command: %s", out)
					}
					time.Sleep(20 * time.Millisecond)
				}
				pids := append(qaPids(t, helper), helper)
				t.Cleanup(func() {
					// A failed test leaves no tree behind: the helper
					// first (stopped), then the others.
					syscall.Kill(helper, syscall.SIGSTOP)
					for _, p := range pids {
						if alive(p) {
							syscall.Kill(p, syscall.SIGKILL)
						}
					}
					syscall.Kill(helper, syscall.SIGCONT)
				})
				if thread == "exit" {
					// The starting thread is gone: the command must
					// still run while the runtime lives.
					b, _ := os.ReadFile(file + ".tid")
					tid, _ := strconv.Atoi(string(b))
					for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
						if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", fake.Process.Pid, tid)); err != nil {
							break
						}
						if tid == 0 || time.Now().After(deadline) {
							t.Fatalf("the starting thread %d did not end", tid)
						}
					}
					time.Sleep(300 * time.Millisecond)
					for _, p := range pids {
						if !alive(p) {
							t.Fatalf("process %d ended while the runtime lives", p)
						}
					}
				}
				fake.Process.Signal(syscall.SIGKILL)
				fake.Wait()
				goneWithin(t, pids, 60*time.Second)
			})
		}
	}
}

// TestHelperTerm: SIGTERM to the helper itself (not through the runtime,
// which would SIGKILL it after KillGrace) ends the whole tree, the
// TERM-ignoring child included, and the helper exits.
func TestHelperTerm(t *testing.T) {
	needSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			spec := Spec{Command: qaTree, Dir: t.TempDir(), Env: os.Environ(), Sandboxed: m.sandboxed, Timeout: time.Minute}
			p, err := startMode(spec, m.llOnly)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { p.Stop(); p.Wait() }()
			pids := qaPids(t, p.Pid())
			if err := syscall.Kill(p.Pid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			goneWithin(t, pids, 60*time.Second)
			select {
			case <-p.Done():
			case <-time.After(60 * time.Second):
				t.Fatal("the helper did not exit")
			}
			if r := p.Wait(); r.ExitCode != -1 || r.Cancelled || r.TimedOut {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// TestLifeline: when the runtime's end of the config pipe closes (the
// runtime died, whichever thread started the helper), the helper ends the
// tree and exits.
func TestLifeline(t *testing.T) {
	needSandbox(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			spec := Spec{Command: qaTree, Dir: t.TempDir(), Env: os.Environ(), Sandboxed: m.sandboxed, Timeout: time.Minute}
			p, err := startMode(spec, m.llOnly)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { p.Stop(); p.Wait() }()
			pids := qaPids(t, p.Pid())
			p.lifeline.Close()
			goneWithin(t, append(pids, p.Pid()), 60*time.Second)
			select {
			case <-p.Done():
			case <-time.After(2 * time.Second):
				t.Fatal("the runtime did not see the helper exit")
			}
		})
	}
}

// startMode starts spec, with the namespaces skipped when llOnly.
func startMode(spec Spec, llOnly bool) (*Process, error) {
	if llOnly {
		return startLandlockOnly(context.Background(), spec)
	}
	return Start(context.Background(), spec)
}

// TestShellConfinement: the shell runs with no_new_privs, and with no
// capability where the helper drops them (root without a user namespace,
// any other user in one), although the helper itself is confined on the
// forking thread only.
func TestShellConfinement(t *testing.T) {
	needSandbox(t)
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			spec := Spec{Command: "grep -E '^(Cap(Prm|Eff|Amb|Inh)|NoNewPrivs):' /proc/self/status", Dir: t.TempDir(),
				Env: os.Environ(), Sandboxed: true, Timeout: time.Minute}
			p, err := startMode(spec, m.llOnly)
			if err != nil {
				t.Fatal(err)
			}
			r := p.Wait()
			fields := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(r.Output), "\n") {
				k, v, _ := strings.Cut(line, ":")
				fields[k] = strings.TrimSpace(v)
			}
			if fields["NoNewPrivs"] != "1" {
				t.Errorf("no_new_privs not set: %q", r.Output)
			}
			if m.llOnly == (os.Getuid() == 0) {
				for _, k := range []string{"CapPrm", "CapEff", "CapAmb", "CapInh"} {
					if fields[k] != "0000000000000000" {
						t.Errorf("%s = %q, want none: %q", k, fields[k], r.Output)
					}
				}
			}
		})
	}
}
