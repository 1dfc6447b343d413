package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// helperArg is the private first argument that turns the runtime binary
// into the command helper.
const helperArg = "__task-x-sandbox-helper"

// File descriptors of the helper: the runtime writes one helperConfig on
// configFD and keeps the pipe open until the helper exited (end of file
// there means the runtime died: the helper then ends the tree as on
// SIGTERM); the helper writes helperReport lines on reportFD.
const (
	configFD = 3
	reportFD = 4
)

// helperTermGrace is how long the helper waits after forwarding SIGTERM
// before it kills the whole tree.
const helperTermGrace = time.Second

// helperConfig is what the runtime tells the helper.
type helperConfig struct {
	Shell   string `json:"shell"`
	Command string `json:"command"`
	Dir     string `json:"dir"`
	// Namespaces: the helper is PID 1 of new user, mount, PID and network
	// namespaces; it makes / private and mounts a fresh /proc.
	Namespaces bool `json:"namespaces"`
	// Landlock applies the file system, TCP and scope rules at ABI.
	Landlock bool     `json:"landlock"`
	ABI      int      `json:"abi"`
	Writable []string `json:"writable"`
	Devices  []string `json:"devices"`
	// DropCaps empties the capability bounding, inheritable and ambient sets
	// before bash starts (a root runtime without a user namespace).
	DropCaps bool `json:"dropCaps"`
	// UnixFilter installs the seccomp filter that denies UNIX socket
	// creation and io_uring (Landlock below ABI 9 does not restrict
	// connect to pathname UNIX sockets; see seccomp_linux.go).
	UnixFilter bool `json:"unixFilter"`
}

// helperReport is one line of the report pipe. The first line has Started
// or an Error with its Stage ("config", "mount", "landlock", "start"); the
// last one has Exited with ExitCode or Signal.
type helperReport struct {
	Started  bool   `json:"started,omitempty"`
	Stage    string `json:"stage,omitempty"`
	Error    string `json:"error,omitempty"`
	Exited   bool   `json:"exited,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
	Signal   int    `json:"signal,omitempty"`
}

func init() {
	// Every binary that links this package (the runtime and the test
	// binaries of the packages that run commands) can serve as the helper.
	HelperMain()
}

// HelperMain runs the command helper and exits when os.Args[1] is the
// helper's private argument; otherwise it returns at once. The package
// calls it from init, so a binary that links the package needs no code for
// it; main may call it first thing too.
func HelperMain() {
	if len(os.Args) < 2 || os.Args[1] != helperArg {
		return
	}
	// syscall.Exit, not os.Exit: nothing is left to flush, and a race
	// build would otherwise sleep a second at exit.
	syscall.Exit(runHelper())
}

func runHelper() int {
	rep := os.NewFile(reportFD, "report")
	report := func(r helperReport) {
		b, _ := json.Marshal(r)
		rep.Write(append(b, '\n'))
	}
	fail := func(stage string, err error) int {
		report(helperReport{Stage: stage, Error: err.Error()})
		return 125
	}
	// Handle the stop signals before anything else: a signal that arrives
	// during setup is acted on once bash runs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	var cfg helperConfig
	cf := os.NewFile(configFD, "config")
	cr := bufio.NewReader(cf)
	if err := json.NewDecoder(cr).Decode(&cfg); err != nil {
		cf.Close()
		return fail("config", err)
	}
	// The config pipe is the lifeline: the runtime keeps its write end
	// open until the helper exited, so end of file means the runtime died
	// (whatever its threads did). Treat it like SIGTERM.
	lost := make(chan struct{})
	go func() {
		io.Copy(io.Discard, cr)
		cf.Close()
		close(lost)
	}()
	if !cfg.Namespaces {
		// Orphans of the command are reparented to the helper, which
		// kills them; as PID 1 of a namespace it gets them anyway.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fail("start", fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err))
		}
	}
	if cfg.Namespaces {
		// A fresh /proc for this PID namespace: it hides the runtime's
		// processes from the command and lets the helper walk its tree.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fail("mount", fmt.Errorf("make / private: %w", err))
		}
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fail("mount", fmt.Errorf("mount a new /proc: %w", err))
		}
	}
	rulesetFD, rulesetFlags := -1, uint32(0)
	if cfg.Landlock {
		var err error
		if rulesetFD, rulesetFlags, err = ruleset(cfg); err != nil {
			return fail("landlock", err)
		}
		// Keep the helper's memory and /proc files from the command.
		unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}

	proc, stage, err := startShell(cfg, rulesetFD, rulesetFlags)
	if rulesetFD >= 0 {
		unix.Close(rulesetFD)
	}
	if err != nil {
		return fail(stage, err)
	}
	report(helperReport{Started: true})

	killAll := func(sig syscall.Signal) {
		if cfg.Namespaces {
			// Every process of the namespace but PID 1. ESRCH: none
			// left. Any other error: walk the tree instead.
			if err := syscall.Kill(-1, sig); err == nil || err == syscall.ESRCH {
				return
			}
		} else {
			syscall.Kill(-proc.Pid, sig)
		}
		signalTree(os.Getpid(), sig)
	}
	go func() {
		select {
		case <-sigs:
		case <-lost:
		}
		killAll(syscall.SIGTERM)
		time.Sleep(helperTermGrace)
		for {
			killAll(syscall.SIGKILL)
			time.Sleep(50 * time.Millisecond)
		}
	}()

	final := helperReport{Exited: true, Signal: int(syscall.SIGKILL)}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			break
		}
		if pid == proc.Pid {
			final = helperReport{Exited: true}
			if ws.Signaled() {
				final.Signal = int(ws.Signal())
			} else {
				final.ExitCode = ws.ExitStatus()
			}
			break
		}
	}
	// bash is gone: nothing it started may outlive it. Kill and reap until
	// the helper has no child left (new orphans keep arriving while
	// processes fork, so repeat).
	for {
		killAll(syscall.SIGKILL)
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: none left
		}
		if pid == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	report(final)
	return 0
}

// startShell starts cfg.Shell -c cfg.Command (stdin /dev/null, its own
// process group). The confinement is applied to one locked OS thread only,
// which forks the shell and then ends: capabilities (cfg.DropCaps),
// no_new_privs and the Landlock domain of rulesetFD (when >= 0) are
// per-thread in Linux. The helper's other threads stay outside the domain
// on purpose: with Landlock's signal scoping (ABI 6 and later) a process may
// signal only its own domain and the domains nested in it, and a domain
// enforced on every thread (one landlock_restrict_self per thread, as
// go-landlock does below ABI 8) is a sibling, not an ancestor, of the
// domain of the shell forked by another thread, so the helper could not
// stop its own command. stage names the failed step for the report.
func startShell(cfg helperConfig, rulesetFD int, rulesetFlags uint32) (*os.Process, string, error) {
	type result struct {
		proc  *os.Process
		stage string
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		// Never unlocked: the confined thread ends with this goroutine.
		runtime.LockOSThread()
		if cfg.DropCaps {
			if err := dropCapabilities(); err != nil {
				ch <- result{stage: "caps", err: err}
				return
			}
		}
		if rulesetFD >= 0 {
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				ch <- result{stage: "landlock", err: fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)}
				return
			}
			if cfg.UnixFilter {
				if err := installUnixSocketFilter(); err != nil {
					ch <- result{stage: "seccomp", err: err}
					return
				}
			}
			if err := llsys.LandlockRestrictSelf(rulesetFD, rulesetFlags); err != nil {
				ch <- result{stage: "landlock", err: fmt.Errorf("Landlock: landlock_restrict_self: %w", err)}
				return
			}
		}
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			ch <- result{stage: "start", err: err}
			return
		}
		defer devnull.Close()
		proc, err := os.StartProcess(cfg.Shell, []string{cfg.Shell, "-c", cfg.Command}, &os.ProcAttr{
			Dir:   cfg.Dir,
			Env:   os.Environ(),
			Files: []*os.File{devnull, os.Stdout, os.Stderr},
			Sys:   &syscall.SysProcAttr{Setpgid: true},
		})
		ch <- result{proc: proc, stage: "start", err: err}
	}()
	r := <-ch
	return r.proc, r.stage, r.err
}

// ruleset builds the Landlock ruleset of cfg at its ABI and returns its file
// descriptor and landlock_restrict_self flags: read and execute everywhere;
// write under cfg.Writable; read and write the device files of
// cfg.Devices; at ABI 4 and later no TCP bind or connect; at ABI 6 and
// later no signal or abstract UNIX socket outside the sandbox. Strict: a
// rule the kernel cannot enforce is an error, never a silent downgrade.
func ruleset(cfg helperConfig) (int, uint32, error) {
	configs := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
		landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	abi := min(cfg.ABI, len(configs))
	if abi < 1 {
		return -1, 0, fmt.Errorf("the kernel reports Landlock ABI %d; the sandbox needs Landlock (ABI 1 or later)", cfg.ABI)
	}
	c := configs[abi-1]
	write := landlock.RWDirs(cfg.Writable...).IgnoreIfMissing()
	devices := landlock.RWFiles(cfg.Devices...).IgnoreIfMissing()
	if abi >= 2 {
		write = write.WithRefer() // rename and link between folders of the root
	}
	if abi >= 5 {
		devices = devices.WithIoctlDev()
	}
	if abi >= 9 {
		// Pathname UNIX sockets: connect only to those under the
		// writable folders (below ABI 9 the seccomp filter denies them
		// all).
		write = write.WithResolveUnix()
	}
	fd, flags, err := c.NewRulesetFD(landlock.RODirs("/"), write, devices)
	if err != nil {
		return -1, 0, fmt.Errorf("Landlock: %w", err)
	}
	if fd < 0 {
		return -1, 0, fmt.Errorf("Landlock: nothing to restrict at ABI %d", abi)
	}
	return fd, flags, nil
}

// dropCapabilities empties the ambient and inheritable capability sets,
// and for root the bounding set, of the calling OS thread (capabilities are
// per-thread in Linux: the caller has locked its thread and forks bash from
// it), so bash and its descendants run without capabilities (root: no
// module loading, no raw devices, no ptrace of others).
func dropCapabilities() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	// A non-root helper holds no CAP_SETPCAP to shrink the bounding set;
	// it needs not: bash runs with a non-zero uid and no ambient
	// capability, and no_new_privs (set with Landlock) stops file
	// capabilities.
	for c := 0; c <= last && os.Geteuid() == 0; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
