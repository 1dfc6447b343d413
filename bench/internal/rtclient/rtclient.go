// Package rtclient drives a task-x-runtime over stdio for the bench
// tools: one JSON-RPC request at a time, notifications and requests from
// the runtime skipped (or shown to Notify).
package rtclient

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// Runtime is a runtime process driven over stdio.
type Runtime struct {
	Cmd *exec.Cmd
	// Notify, when set, sees every message from the runtime that has a
	// method (notifications and requests), as its whole line.
	Notify func(method string, line []byte)
	// StopWait is how long Stop waits for the runtime to exit before it
	// kills it (0: 10 s). A runtime with a data folder saves its index as
	// it exits.
	StopWait time.Duration
	in       io.WriteCloser
	out      *bufio.Reader
	next     int
}

// ErrClosed is wrapped by Call's error when the runtime closed its output
// (it exited or crashed).
var ErrClosed = errors.New("the runtime closed its output")

// Start runs bin with args, its stderr to stderr.
func Start(bin string, args []string, stderr io.Writer) (*Runtime, error) {
	cmd := exec.Command(bin, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Runtime{Cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// Call sends one request and waits for its answer: the result, or the
// error as "method: code message".
func (r *Runtime) Call(method string, params any) (json.RawMessage, error) {
	r.next++
	id := r.next
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	for {
		l, err := r.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrClosed, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		err = json.Unmarshal(l, &m)
		if err == nil && m.Method != "" && r.Notify != nil {
			r.Notify(m.Method, l)
		}
		if err != nil || m.ID == nil || m.Method != "" || *m.ID != id {
			continue // notifications and requests from the runtime
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %d %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	}
}

// Stop ends the runtime: shutdown and exit when graceful, then its stdin
// closed; killed after StopWait. A second Stop does nothing.
func (r *Runtime) Stop(graceful bool) {
	if r.Cmd.ProcessState != nil {
		return
	}
	if graceful {
		r.Call("shutdown", nil)
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "exit"})
		r.in.Write(append(line, '\n'))
	}
	r.in.Close()
	done := make(chan struct{})
	go func() { r.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(cmp.Or(r.StopWait, 10*time.Second)):
		r.Cmd.Process.Kill()
		<-done
	}
}
