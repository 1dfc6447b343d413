package jsonrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// pipeConn is a Conn wired to an in-memory fake client through io.Pipe, in the
// style of go-sdk's in-memory transport. Use it inside synctest.Test.
type pipeConn struct {
	t      *testing.T
	conn   *Conn
	toConn *io.PipeWriter // client → runtime
	out    chan string    // runtime → client lines
	runErr chan error
	outW   *io.PipeWriter
}

func newPipeConn(t *testing.T, h Handler, opts *ConnOptions) *pipeConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeConn{t: t, toConn: inW, out: make(chan string, 1024), runErr: make(chan error, 1), outW: outW}
	p.conn = NewConn(inR, outW, h, opts)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			p.out <- sc.Text()
		}
		close(p.out)
	}()
	go func() { p.runErr <- p.conn.Run(context.Background()) }()
	return p
}

// send writes one line (a '\n' is added).
func (p *pipeConn) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.toConn, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// sendAsync writes without waiting for the conn to read (for lines the conn may
// never read).
func (p *pipeConn) sendAsync(line string) {
	go func() { _, _ = io.WriteString(p.toConn, line+"\n") }()
}

// settle waits until every goroutine in the bubble is blocked, then returns the
// lines written so far.
func (p *pipeConn) settle() []string {
	synctest.Wait()
	var got []string
	for {
		select {
		case l, ok := <-p.out:
			if !ok {
				return got
			}
			got = append(got, l)
		default:
			return got
		}
	}
}

// returned reports whether Run has returned, and its error.
func (p *pipeConn) returned() (bool, error) {
	synctest.Wait()
	select {
	case err := <-p.runErr:
		p.runErr <- err
		return true, err
	default:
		return false, nil
	}
}

// finish ends the session (EOF), waits for Run, releases the reading goroutine and
// returns the lines written after the last settle.
func (p *pipeConn) finish() []string {
	p.t.Helper()
	p.toConn.Close()
	select {
	case <-p.runErr:
	case <-time.After(time.Minute):
		p.t.Errorf("Run did not return after EOF")
	}
	time.Sleep(time.Minute) // let handlers that ignore cancellation end
	p.outW.Close()
	var rest []string
	for l := range p.out {
		rest = append(rest, l)
	}
	return rest
}

// testHandler implements the methods the transcripts use.
type testHandler struct {
	conn *Conn
}

func (h *testHandler) Handle(ctx context.Context, req *Request) (any, error) {
	switch req.Method {
	case "echo":
		if req.Params == nil {
			return nil, nil
		}
		return req.Params, nil
	case "id":
		id, ok := RequestID(ctx)
		return map[string]any{"id": id, "isCall": ok}, nil
	case "fail":
		return nil, fmt.Errorf("field x: %w", ErrInvalidParams.WithData(map[string]string{"field": "x"}))
	case "plainErr":
		return nil, errors.New("boom")
	case "panic":
		panic("kaboom")
	case "badResult":
		return func() {}, nil
	case "block": // holds the queue until cancelled
		<-ctx.Done()
		return nil, context.Cause(ctx)
	case "blockAsync":
		Async(ctx)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	case "sleep":
		time.Sleep(time.Second)
		return "slept", nil
	case "sleepAsync":
		Async(ctx)
		time.Sleep(time.Second)
		return "slept", nil
	case "hang": // ignores cancellation for 10 s
		Async(ctx)
		time.Sleep(10 * time.Second)
		return "late", nil
	case "agent/steer":
		return "steered", nil
	case "notify":
		return nil, h.conn.Notify(ctx, "noted", req.Params)
	case "callClient":
		Async(ctx)
		res, err := h.conn.Call(ctx, "client/ask", req.Params)
		if err != nil {
			return nil, err
		}
		return res, nil
	case "shutdown":
		h.conn.Shutdown(ctx)
		return nil, nil
	case "exit":
		h.conn.Close()
		return nil, nil
	}
	return nil, ErrMethodNotFound
}
