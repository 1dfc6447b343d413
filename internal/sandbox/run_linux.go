package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/task-x/task-x-runtime/internal/proctree"
)

// Confinement names (Result.Confinement).
const (
	ConfinementNone       = "none"
	ConfinementNamespaces = "namespaces+landlock"
	ConfinementLandlock   = "landlock"
)

const (
	startWait = 15 * time.Second // the helper's first report
	drainWait = 2 * time.Second  // output pipe after the helper exited
)

// registry holds the live processes for KillAll: the children of this
// process are a per-process fact, so the table is one per process.
var registry = struct {
	mu     sync.Mutex
	closed bool
	live   map[*Process]bool
}{live: map[*Process]bool{}}

// Namespaces are tried first; once the kernel refused them the refusal is
// kept and later commands use Landlock alone.
var nsRefused atomic.Pointer[string]

// forceLandlockOnly makes sandboxed commands skip the namespaces (tests of
// the fallback).
var forceLandlockOnly bool

// Process is a started command. Its methods are safe for concurrent use.
type Process struct {
	spec        Spec
	cmd         *exec.Cmd
	out         *headTail
	outR        *os.File
	errR        *os.File // stderr's own pipe when Spec.OnOutput is set
	lifeline    *os.File // write end of the config pipe; closed once the helper exited
	copied      chan struct{}
	reports     chan helperReport
	tmp         string
	confinement string
	start       time.Time

	stopOnce sync.Once
	stopped  chan struct{} // Stop was called
	killed   atomic.Bool   // KillAll
	done     chan struct{}
	res      Result
}

// Run starts the command and waits for it (Start then Wait).
func Run(ctx context.Context, spec Spec) (Result, error) {
	p, err := Start(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	return p.Wait(), nil
}

// Start starts the command under the helper and returns once it runs. The
// command is stopped (SIGTERM, then SIGKILL after KillGrace, whole tree)
// when ctx is done, at Spec.Timeout, on Stop, or by KillAll. Errors: an
// invalid Spec, a missing working folder, *UnavailableError when the spec
// is sandboxed and the kernel cannot sandbox, ErrClosed after KillAll, and
// any failure to start the helper.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(spec.Dir); err != nil {
		return nil, fmt.Errorf("sandbox: working folder: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: working folder %s is not a folder", spec.Dir)
	}
	registry.mu.Lock()
	closed := registry.closed
	registry.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	abi := 0
	if spec.Sandboxed {
		var err error
		if abi, err = landlockABI(); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "task-x-cmd-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private temp folder: %w", err)
	}
	confinement := ConfinementNone
	if spec.Sandboxed {
		confinement = ConfinementNamespaces
		if nsRefused.Load() != nil || forceLandlockOnly {
			confinement = ConfinementLandlock
		}
	}
	for {
		if confinement == ConfinementLandlock && abi < 4 {
			os.RemoveAll(tmp)
			return nil, &UnavailableError{Reason: fmt.Sprintf(
				"the kernel refused a network namespace (%s) and its Landlock ABI %d cannot restrict TCP (needs 4)",
				nsReason(), abi)}
		}
		p, err := launch(ctx, spec, confinement, abi, tmp)
		var nf *nsFailure
		if errors.As(err, &nf) {
			reason := nf.Error()
			nsRefused.Store(&reason)
			confinement = ConfinementLandlock
			continue
		}
		if err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		return p, nil
	}
}

func nsReason() string {
	if r := nsRefused.Load(); r != nil {
		return *r
	}
	return "not used"
}

// nsFailure is a refusal of the namespaces; Start retries with Landlock
// alone.
type nsFailure struct{ err error }

func (e *nsFailure) Error() string { return e.err.Error() }

var (
	abiOnce sync.Once
	abiVer  int
	abiErr  error
)

// landlockABI returns the kernel's Landlock ABI version, or an
// *UnavailableError when Landlock is missing or disabled.
func landlockABI() (int, error) {
	abiOnce.Do(func() {
		v, err := llsys.LandlockGetABIVersion()
		switch {
		case err != nil:
			abiErr = &UnavailableError{Reason: fmt.Sprintf("Landlock is not available in this kernel (%v)", err)}
		case v < 1:
			abiErr = &UnavailableError{Reason: "Landlock is not enabled in this kernel"}
		}
		abiVer = v
	})
	return abiVer, abiErr
}

// Available reports nil when sandboxed commands can run here, or an
// *UnavailableError naming the reason.
func Available() error {
	_, err := landlockABI()
	return err
}

// shellPath returns /bin/bash, or /bin/sh where bash is missing.
func shellPath() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// writableDirs are the folders a sandboxed command may write under: the
// spec's, its temp folder, and the per-user build caches of addendum §11
// that exist.
func writableDirs(spec Spec, tmp string) []string {
	dirs := []string{tmp}
	for _, d := range spec.WritableDirs {
		if d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	home, _ := os.UserHomeDir()
	var caches []string
	if d := userCacheDir(home); d != "" {
		caches = append(caches, d)
	}
	if home != "" {
		caches = append(caches, filepath.Join(home, ".npm"),
			filepath.Join(home, ".cargo", "registry"), filepath.Join(home, ".m2"), filepath.Join(home, ".gradle"))
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			gopath = filepath.Join(home, "go")
		}
		caches = append(caches, filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod"))
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		if v := os.Getenv(k); filepath.IsAbs(v) {
			if k == "GOCACHE" {
				_ = os.MkdirAll(v, 0o700) // as go itself would, first
			}
			caches = append(caches, v)
		}
	}
	for _, c := range caches {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			dirs = append(dirs, c)
		}
	}
	return dirs
}

// userCacheDir is the user's cache folder (os.UserCacheDir's:
// $XDG_CACHE_HOME, else ~/.cache), made when it is missing: a sandboxed
// command cannot make it itself (the home folder is not writable), and
// without it the Go build cache and every tool that caches under it fail
// on a fresh home. "" without a home.
func userCacheDir(home string) string {
	d := os.Getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(d) {
		if home == "" {
			return ""
		}
		d = filepath.Join(home, ".cache")
	}
	if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
		return ""
	}
	return d
}

// devices are the device files a sandboxed command may write. /dev/tty
// needs a controlling terminal, which the helper's new session lacks.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

func launch(ctx context.Context, spec Spec, confinement string, abi int, tmp string) (*Process, error) {
	env := CleanEnv(spec.Env, spec.Secrets, []string{"TMPDIR", "TMP", "TEMP"})
	if spec.Sandboxed {
		env = withoutAgentEnv(env)
	}
	env = append(env, "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp)
	cfg := helperConfig{
		Shell:      shellPath(),
		Command:    spec.Command,
		Dir:        spec.Dir,
		Namespaces: confinement == ConfinementNamespaces,
		Landlock:   confinement != ConfinementNone,
		ABI:        abi,
		// Root without a user namespace, and a user whose helper holds
		// CAP_SYS_ADMIN in its namespace for the mounts: bash gets no
		// capability.
		DropCaps: (confinement == ConfinementLandlock && os.Geteuid() == 0) ||
			(confinement == ConfinementNamespaces && os.Getuid() != 0),
	}
	if cfg.Landlock {
		cfg.Writable = writableDirs(spec, tmp)
		cfg.Devices = devices
		cfg.UnixFilter = abi < 9
	}

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	cfgR, cfgW, err1 := pipe()
	repR, repW, err2 := pipe()
	outR, outW, err3 := pipe()
	var errR, errW *os.File
	var err4 error
	if spec.OnOutput != nil {
		errR, errW, err4 = pipe()
	}
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		closeAll()
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}

	cmd := exec.Command("/proc/self/exe", helperArg)
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = outW, outW
	if errW != nil {
		cmd.Stderr = errW
	}
	cmd.ExtraFiles = []*os.File{cfgR, repW} // fds 3 and 4
	// A new session: no controlling terminal. The helper outlives no
	// runtime: the parent-death signal (SIGKILL as PID 1 of a namespace,
	// whose death ends every process in it; SIGTERM otherwise, so the
	// helper sweeps its tree), and the lifeline (see helperConfig).
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGTERM}
	if cfg.Namespaces {
		attr.Pdeathsig = syscall.SIGKILL
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET
		uid, gid := os.Getuid(), os.Getgid()
		if uid == 0 {
			// Root keeps its view of every owner; its capabilities hold
			// only inside the new user namespace (no module loading, no
			// device nodes).
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			attr.GidMappingsEnableSetgroups = true
		} else {
			// The user keeps its uid inside; the capabilities a new user
			// namespace gives would be lost at exec for a non-zero uid,
			// so CAP_SYS_ADMIN is kept as an ambient one for the helper's
			// mounts (the helper clears it before bash starts).
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		}
	}
	cmd.SysProcAttr = attr
	// Forked from the one spawner thread (proctree.StartTied): the
	// parent-death signal fires when the thread that forked the child
	// ends, not the process, and Go ends a thread whose locked goroutine
	// returns.
	if err := proctree.StartTied(cmd, attr.Pdeathsig); err != nil {
		closeAll()
		if cfg.Namespaces {
			return nil, &nsFailure{fmt.Errorf("namespaces: %w", err)}
		}
		return nil, fmt.Errorf("sandbox: start the helper: %w", err)
	}
	cfgR.Close()
	repW.Close()
	outW.Close()
	if errW != nil {
		errW.Close()
	}
	// cfgW stays open while the helper runs: it is the helper's lifeline.
	b, _ := json.Marshal(cfg)
	cfgW.Write(append(b, '\n'))

	p := &Process{
		spec: spec, cmd: cmd, outR: outR, errR: errR, lifeline: cfgW, tmp: tmp, confinement: confinement, start: time.Now(),
		out:     newHeadTail(orDefault(spec.OutputCap, DefaultOutputCap)),
		copied:  make(chan struct{}),
		reports: make(chan helperReport, 2),
		stopped: make(chan struct{}),
		done:    make(chan struct{}),
	}
	if spec.OnOutput == nil {
		go func() {
			io.Copy(p.out, outR)
			close(p.copied)
		}()
	} else {
		// Live output: stdout and stderr each in its own pipe, both into
		// the kept output by whole lines (each stream in order; the two
		// interleaved line by line as read, so a line, and a key in it,
		// is never split by the other stream), each piece to OnOutput as
		// read, one call at a time.
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, src := range []struct {
			r      *os.File
			stream string
		}{{outR, "stdout"}, {errR, "stderr"}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := &liveWriter{out: p.out, stream: src.stream, fn: spec.OnOutput, mu: &mu}
				io.Copy(w, src.r)
				w.flush()
			}()
		}
		go func() {
			wg.Wait()
			close(p.copied)
		}()
	}
	go func() {
		sc := bufio.NewScanner(repR)
		for sc.Scan() {
			var r helperReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				select {
				case p.reports <- r:
				default:
				}
			}
		}
		repR.Close()
		close(p.reports)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// The first report says whether the setup worked.
	var first helperReport
	var ok bool
	select {
	case first, ok = <-p.reports:
	case <-time.After(startWait):
		first = helperReport{Stage: "start", Error: "the helper did not start in time"}
		ok = true
	}
	if !ok || !first.Started {
		p.hardKill()
		<-exited
		cfgW.Close()
		<-p.copied
		outR.Close()
		if errR != nil {
			errR.Close()
		}
		if !ok {
			first = helperReport{Stage: "start", Error: "the helper exited during setup"}
		}
		err := fmt.Errorf("%s: %s", first.Stage, first.Error)
		switch {
		case cfg.Namespaces && first.Stage != "config":
			return nil, &nsFailure{err}
		case cfg.Landlock:
			return nil, &UnavailableError{Reason: err.Error()}
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}

	registry.mu.Lock()
	if registry.closed {
		registry.mu.Unlock()
		p.killed.Store(true)
		p.hardKill()
	} else {
		registry.live[p] = true
		registry.mu.Unlock()
	}
	go p.supervise(ctx, exited)
	return p, nil
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// supervise waits for the helper, stops it on timeout, cancel or Stop, and
// fills p.res.
func (p *Process) supervise(ctx context.Context, exited <-chan error) {
	var timeout <-chan time.Time
	if p.spec.Timeout > 0 {
		t := time.NewTimer(p.spec.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var timedOut, cancelled bool
	select {
	case <-exited:
	case <-timeout:
		timedOut = true
		p.terminate(exited)
	case <-ctx.Done():
		cancelled = true
		p.terminate(exited)
	case <-p.stopped:
		cancelled = true
		p.terminate(exited)
	}
	p.lifeline.Close()
	select {
	case <-p.copied:
	case <-time.After(drainWait):
		// Something outside the tree still holds the pipe: stop reading.
		p.closeOutput()
		<-p.copied
	}
	p.closeOutput()

	res := Result{ExitCode: -1, TimedOut: timedOut, Cancelled: cancelled || p.killed.Load(),
		Duration: time.Since(p.start), Confinement: p.confinement}
	for r := range p.reports {
		if r.Exited && r.Signal == 0 {
			res.ExitCode = r.ExitCode
		}
	}
	res.Output, res.Truncated = p.out.String()
	os.RemoveAll(p.tmp)

	registry.mu.Lock()
	delete(registry.live, p)
	registry.mu.Unlock()
	p.res = res
	close(p.done)
}

// terminate asks the helper to end the tree (SIGTERM, which it forwards and
// follows with SIGKILL), and kills it and the tree after KillGrace.
func (p *Process) terminate(exited <-chan error) {
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(KillGrace):
	}
	p.hardKill()
	<-exited
}

// hardKill SIGKILLs every descendant of the helper, then the helper; with a
// PID namespace the helper's death alone ends them all.
func (p *Process) hardKill() {
	pid := p.cmd.Process.Pid
	syscall.Kill(pid, syscall.SIGSTOP) // its orphans stay its own meanwhile
	for i := 0; i < 5 && signalTree(pid, syscall.SIGKILL) > 0; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// Pid is the helper's process id (bash's parent, or the PID 1 of the
// command's namespace).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop stops the command and its whole tree; Wait then reports Cancelled.
// It is safe to call more than once and after the command ended.
func (p *Process) Stop() {
	p.stopOnce.Do(func() { close(p.stopped) })
}

// Done is closed once the command ended and its Result is ready.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the command and returns how it ended.
func (p *Process) Wait() Result {
	<-p.done
	return p.res
}

// KillAll kills every running command with its whole tree and waits (up to
// a few seconds) for them to be reaped; Start fails with ErrClosed
// afterwards. The runtime calls it on exit (addendum §9).
func KillAll() {
	registry.mu.Lock()
	registry.closed = true
	ps := make([]*Process, 0, len(registry.live))
	for p := range registry.live {
		ps = append(ps, p)
	}
	registry.mu.Unlock()
	for _, p := range ps {
		p.killed.Store(true)
		p.hardKill()
	}
	deadline := time.After(3 * time.Second)
	for _, p := range ps {
		select {
		case <-p.done:
		case <-deadline:
			return
		}
	}
}

func (p *Process) closeOutput() {
	p.outR.Close()
	if p.errR != nil {
		p.errR.Close()
	}
}

// liveLineMax is how much of a line without its newline a stream holds
// back from the kept output before it writes it anyway.
const liveLineMax = 64 << 10

// liveWriter hands each piece of a stream to OnOutput and keeps the
// stream's output by whole lines.
type liveWriter struct {
	out     *headTail
	stream  string
	fn      func(stream string, p []byte)
	mu      *sync.Mutex
	partial []byte
}

func (w *liveWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fn(w.stream, b)
	w.partial = append(w.partial, b...)
	if i := bytes.LastIndexByte(w.partial, '\n'); i >= 0 {
		w.out.Write(w.partial[:i+1])
		w.partial = append(w.partial[:0], w.partial[i+1:]...)
	}
	if len(w.partial) > liveLineMax {
		w.out.Write(w.partial)
		w.partial = w.partial[:0]
	}
	return len(b), nil
}

// flush keeps the stream's last line (it ended without a newline).
func (w *liveWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.out.Write(w.partial)
		w.partial = nil
	}
}
