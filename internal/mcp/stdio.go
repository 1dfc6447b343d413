package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/task-x/task-x-runtime/internal/proctree"
	"github.com/task-x/task-x-runtime/internal/sandbox"
)

// MaxLineBytes caps one line a stdio server writes: the protocol's 32 MiB
// message limit (protocol.md Framing). A longer line ends the connection.
const MaxLineBytes = 32 << 20

// jsonLineReader passes through the lines of r that are JSON objects or
// arrays and drops every other line (banners, debug prints), logging its
// length and a short prefix. A line over MaxLineBytes is an error.
type jsonLineReader struct {
	br     *bufio.Reader
	closer io.Closer
	log    *slog.Logger
	server string
	buf    []byte // pending output
	line   []byte
}

func newJSONLineReader(rc io.ReadCloser, server string, log *slog.Logger) *jsonLineReader {
	return &jsonLineReader{br: bufio.NewReaderSize(rc, 64<<10), closer: rc, log: log, server: server}
}

func (r *jsonLineReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		line, err := r.readLine()
		if len(line) > 0 {
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
				r.buf = append(append(r.buf[:0], trimmed...), '\n')
			} else if len(trimmed) > 0 {
				// Only the size: the line may echo tool inputs (model
				// output) or file contents, which are never logged.
				r.log.Warn("mcp server wrote a non-JSON line on stdout; skipped", "server", r.server, "bytes", len(trimmed))
			}
		}
		if err != nil {
			if len(r.buf) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// readLine returns the next line without its newline; at EOF the last
// partial line comes with io.EOF.
func (r *jsonLineReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.line)+len(chunk) > MaxLineBytes+1 {
			return nil, fmt.Errorf("mcp server %q wrote a line over %d bytes", r.server, MaxLineBytes)
		}
		r.line = append(r.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return r.line, err
	}
}

func (r *jsonLineReader) Close() error { return r.closer.Close() }

// process is a started stdio server: its own process group, the pipes the
// runtime holds, and its exit.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's result, set before exited closes
	once   sync.Once
	ending atomic.Bool // stop began
}

// ownExit is Wait's result after the server exited, nil when that was the
// SIGTERM or SIGKILL of stop.
func (p *process) ownExit() error {
	var ee *exec.ExitError
	if p.err == nil || !p.ending.Load() || !errors.As(p.err, &ee) {
		return p.err
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && (ws.Signal() == syscall.SIGTERM || ws.Signal() == syscall.SIGKILL) {
		return nil
	}
	return p.err
}

// serverEnv is a stdio server's environment: the runtime's without the
// provider keys (sandbox.IsProviderKeyName) and without any variable whose
// value is a key the runtime holds (secrets), as run_command's; then the
// server's own env as configured (what the user gave it explicitly).
func serverEnv(inherited []string, own map[string]string, secrets []string) []string {
	held := map[string]bool{}
	for _, s := range secrets {
		if s != "" {
			held[s] = true
		}
	}
	env := make([]string, 0, len(inherited)+len(own))
	for _, kv := range inherited {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || sandbox.IsProviderKeyName(k) || held[v] {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range sortedNames(own) {
		env = append(env, k+"="+own[k])
	}
	return env
}

// startProcess starts c as a stdio server in a new process group, tied to
// the runtime's life (proctree.StartTied), with stdout and stdin on pipes
// the runtime owns (so the exit of the process never closes them under a
// reader) and stderr logged at debug level.
func startProcess(c ServerConfig, defaultCwd string, server string, log *slog.Logger, secrets []string) (*process, error) {
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Dir = c.Cwd
	if cmd.Dir == "" {
		cmd.Dir = defaultCwd
	}
	cmd.Env = serverEnv(os.Environ(), c.Env, secrets)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// The server dies with the runtime, also a runtime killed with -9 that
	// could not stop it: SIGKILL as its parent-death signal, forked from the
	// spawner thread (proctree.StartTied; docs/mcp.md "Lifetime").
	err = proctree.StartTied(cmd, syscall.SIGKILL)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", c.Command, err)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	go func() {
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			// Only the size: servers often echo their requests (model
			// output) on stderr, which is never logged.
			log.Debug("mcp server wrote to stderr", "server", server, "bytes", len(sc.Bytes()))
		}
		// Drain whatever is left (a line over the buffer) so the server
		// never blocks on a full stderr pipe.
		_, _ = io.Copy(io.Discard, errR)
	}()
	return p, nil
}

// stop ends the server and its whole tree: the server, its process group
// and every descendant found in /proc (also those that left the group with
// setsid) are frozen first (proctree.Freeze: SIGSTOP until the walk finds
// no new process), then get SIGTERM and SIGCONT, then SIGKILL after grace
// if the server has not exited. The tree is taken while the server is
// alive and stopped: once it exits, its children are re-parented to init
// and no walk from it finds them, so nothing may close its pipes (the
// session) before stop. It waits for the server's exit and is safe to call
// more than once.
func (p *process) stop(grace time.Duration) {
	p.once.Do(func() {
		p.ending.Store(true)
		pid := p.cmd.Process.Pid
		// The server itself is a root of the walk only while it runs: once
		// reaped, its pid may be another process's.
		roots := func(tree []int) []int {
			select {
			case <-p.exited:
				return tree
			default:
				return append([]int{pid}, tree...)
			}
		}
		_ = syscall.Kill(-pid, syscall.SIGSTOP)
		tree := proctree.Freeze(roots(nil)...)
		_ = p.stdin.Close()
		p.signalTree(tree, syscall.SIGTERM)
		p.signalTree(tree, syscall.SIGCONT)
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
		// Descendants may outlive the server, and start others during the
		// grace: freeze what is left of the tree again and kill it all.
		_ = syscall.Kill(-pid, syscall.SIGSTOP)
		tree = append(tree, proctree.Freeze(roots(tree)...)...)
		p.signalTree(tree, syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
		_ = p.stdout.Close()
	})
}

// signalTree sends sig to the server's process group, the server (through
// os.Process, which knows when it was reaped) and every process in tree.
func (p *process) signalTree(tree []int, sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	_ = p.cmd.Process.Signal(sig)
	for _, d := range tree {
		_ = syscall.Kill(d, sig)
	}
}
