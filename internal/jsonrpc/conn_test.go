package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestCallPendingFailsAtOnceOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeConn(t, &testHandler{}, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := p.conn.Call(context.Background(), "agent/requestApproval", map[string]string{"tool": "edit"})
			errc <- err
		}()
		if got := p.settle(); len(got) != 1 || got[0] != `{"jsonrpc":"2.0","id":1,"method":"agent/requestApproval","params":{"tool":"edit"}}` {
			t.Fatalf("wrote %q", got)
		}
		p.conn.Close()
		synctest.Wait()
		select {
		case err := <-errc:
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("Call err = %v, want ErrClosed", err)
			}
		default:
			t.Fatal("Call still waiting after Close")
		}
		if _, err := p.conn.Call(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("Call after Close: %v", err)
		}
		if done, err := p.returned(); !done || err != nil {
			t.Fatalf("Run: done=%v err=%v", done, err)
		}
		if err := p.conn.Notify(context.Background(), "late", nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("Notify after Run returned: %v", err)
		}
		p.finish()
	})
}

func TestCallCancelledRetiresID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeConn(t, &testHandler{}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := p.conn.Call(ctx, "agent/askUser", nil)
			errc <- err
		}()
		if got := p.settle(); len(got) != 1 || got[0] != `{"jsonrpc":"2.0","id":1,"method":"agent/askUser"}` {
			t.Fatalf("wrote %q", got)
		}
		cancel()
		synctest.Wait()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		p.conn.mu.Lock()
		pending := len(p.conn.outgoing)
		p.conn.mu.Unlock()
		if pending != 0 {
			t.Fatalf("%d outgoing calls still pending", pending)
		}
		// The late response is ignored; the next call gets a new id and its result.
		p.send(`{"jsonrpc":"2.0","id":1,"result":"late"}`)
		res := make(chan json.RawMessage, 1)
		go func() {
			r, err := p.conn.Call(context.Background(), "agent/askUser", nil)
			if err != nil {
				t.Error(err)
			}
			res <- r
		}()
		if got := p.settle(); len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
			t.Fatalf("wrote %q", got)
		}
		p.send(`{"jsonrpc":"2.0","id":2,"result":{"answer":"yes"}}`)
		synctest.Wait()
		if r := <-res; string(r) != `{"answer":"yes"}` {
			t.Fatalf("result %s", r)
		}
		p.finish()
	})
}

func TestCallErrorResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeConn(t, &testHandler{}, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := p.conn.Call(context.Background(), "m", []int{1})
			errc <- err
		}()
		p.settle()
		p.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"f":1}}}`)
		synctest.Wait()
		err := <-errc
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrInvalidParams) || e.Message != "bad" || string(e.Data.(json.RawMessage)) != `{"f":1}` {
			t.Fatalf("err = %#v", err)
		}
		p.finish()
	})
}

func TestHandlerContextCauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		causes := make(chan error, 4)
		var conn *Conn
		h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "wait":
				Async(ctx)
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil, ctx.Err()
			case "shutdown":
				conn.Shutdown(ctx)
				causes <- context.Cause(ctx) // the caller's own ctx is spared
				return "ok", nil
			}
			return nil, ErrMethodNotFound
		})
		p := newPipeConn(t, h, nil)
		conn = p.conn
		p.send(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
		synctest.Wait() // running, not queued (a queued request would never run)
		p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
		synctest.Wait()
		if c := <-causes; !errors.Is(c, ErrCancelled) {
			t.Fatalf("cancel cause = %v", c)
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"wait"}`)
		synctest.Wait()
		p.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
		synctest.Wait()
		got := []error{<-causes, <-causes}
		if !(errors.Is(got[0], ErrShutdown) && got[1] == nil) && !(errors.Is(got[1], ErrShutdown) && got[0] == nil) {
			t.Fatalf("shutdown causes = %v, want ErrShutdown for the waiter and nil for shutdown", got)
		}
		p.settle()
		p.send(`{"jsonrpc":"2.0","id":4,"method":"wait"}`)
		p.send(`{"jsonrpc":"2.0","method":"wait"}`) // notification after shutdown: delivered
		if got := p.settle(); len(got) != 1 || !strings.Contains(got[0], "runtime is shutting down") {
			t.Fatalf("got %q", got)
		}
		p.finish()
		if c := <-causes; !errors.Is(c, ErrClosed) {
			t.Fatalf("cause at Run end = %v, want ErrClosed", c)
		}
	})
}

func TestRunCtxCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		defer inW.Close()
		cause := make(chan error, 1)
		c := NewConn(inR, io.Discard, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return nil, nil
		}), nil)
		ctx, cancel := context.WithCancelCause(context.Background())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(ctx) }()
		go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"x"}`+"\n")
		synctest.Wait()
		stop := errors.New("parent stopped")
		cancel(stop)
		synctest.Wait()
		if err := <-runErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
		if c := <-cause; !errors.Is(c, stop) {
			t.Fatalf("handler cause = %v", c)
		}
		if err := c.Run(context.Background()); err == nil {
			t.Fatal("second Run succeeded")
		}
	})
}

func TestCloseUnblocksRunWhenStdinStaysOpen(t *testing.T) {
	// No synctest: a real blocked read, as with a stdin that never closes.
	inR, inW := io.Pipe()
	defer inW.Close()
	// Close once Run is blocked reading (an event, not a sleep: a Close
	// before Run starts is another case).
	reading := make(chan struct{})
	in := &signalReader{r: inR, first: reading}
	c := NewConn(in, io.Discard, &testHandler{}, &ConnOptions{DrainTimeout: time.Second})
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(context.Background()) }()
	<-reading
	c.Close()
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run still blocked after Close")
	}
}

// signalReader closes first when its first Read starts.
type signalReader struct {
	r     io.Reader
	first chan struct{}
	once  sync.Once
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.first) })
	return s.r.Read(p)
}

func TestMessageTooLargeAtDefaultCap(t *testing.T) {
	c := NewConn(io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","method":"x","params":["`), &endless{}), io.Discard, &testHandler{}, nil)
	if err := c.Run(context.Background()); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("Run = %v, want ErrMessageTooLarge", err)
	}
}

func TestPanicIsReportedAndServingGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reported []error
		p := newPipeConn(t, &testHandler{}, &ConnOptions{OnInternalError: func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		}})
		p.send(`{"jsonrpc":"2.0","id":1,"method":"panic"}`)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}`)
		got := p.settle()
		if len(got) != 2 || !strings.Contains(got[0], "-32603") || !strings.Contains(got[1], `"result":[2]`) {
			t.Fatalf("got %q", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(reported) != 1 || !strings.Contains(reported[0].Error(), "kaboom") || !strings.Contains(reported[0].Error(), "goroutine") {
			t.Fatalf("reported %v", reported)
		}
		p.finish()
	})
}

func TestLogsNeverCarryParamsOrResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		var mu sync.Mutex
		logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
		p := newPipeConn(t, &testHandler{}, &ConnOptions{Logger: logger})
		const secret = "sk-SECRET-prompt-text"
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"k":"` + secret + `"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"panic","params":{"k":"` + secret + `"}}`,
			`{"jsonrpc":"2.0","method":"nope","params":{"k":"` + secret + `"}}`,
			`{"jsonrpc":"1.0","id":3,"method":"echo","params":{"k":"` + secret + `"}}`,
			`{"jsonrpc":"2.0","id":4,"result":{"k":"` + secret + `"}}`,
			`{"k":"` + secret + `"`,
		} {
			p.send(line)
		}
		p.settle()
		p.finish()
		mu.Lock()
		defer mu.Unlock()
		if buf.Len() == 0 {
			t.Fatal("nothing logged at debug")
		}
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("log carries message content:\n%s", buf.String())
		}
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestNotifyConcurrentWithReplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeConn(t, &testHandler{}, nil)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 25 {
					if err := p.conn.Notify(context.Background(), "chat/event", map[string]int{"g": g, "i": i}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		for i := range 20 {
			p.send(`{"jsonrpc":"2.0","id":` + string(rune('0'+i%10)) + `,"method":"echo","params":[` + string(rune('0'+i%10)) + `]}`)
		}
		wg.Wait()
		got := p.settle()
		if len(got) != 120 {
			t.Fatalf("got %d lines, want 120", len(got))
		}
		for _, l := range got {
			if !json.Valid([]byte(l)) {
				t.Fatalf("interleaved line %q", l)
			}
		}
		if err := p.conn.Notify(context.Background(), "", nil); err == nil {
			t.Fatal("empty method accepted")
		}
		p.finish()
	})
}

func TestNewConnNilHandlerPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	NewConn(strings.NewReader(""), io.Discard, nil, nil)
}

func TestAsyncAndRequestIDOutsideHandler(t *testing.T) {
	Async(context.Background()) // no-op, no panic
	if _, ok := RequestID(context.Background()); ok {
		t.Fatal("RequestID outside a handler")
	}
}

func BenchmarkNotify(b *testing.B) {
	c := NewConn(strings.NewReader(""), io.Discard, &testHandler{}, nil)
	params := map[string]any{
		"requestId": "r-1",
		"event":     map[string]any{"type": "textDelta", "text": strings.Repeat("token ", 8)},
	}
	line, _ := Encode(wireRequest{JSONRPC: "2.0", Method: "chat/event", Params: params})
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		if err := c.Notify(ctx, "chat/event", params); err != nil {
			b.Fatal(err)
		}
	}
}

// No message over the outgoing cap is written: a reply becomes -32603 naming
// the method and size, a notification is sent with its longest strings cut
// (marked), one that cutting strings cannot fit fails with ErrTooLarge, and
// the session goes on.
func TestOutgoingCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &testHandler{}
		p := newPipeConn(t, h, &ConnOptions{MaxOutgoingBytes: 200})
		h.conn = p.conn
		p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("x", 300) + `"]}`)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":["small"]}`)
		got := p.settle()
		if len(got) != 2 || !strings.Contains(got[0], `"id":1,"error":{"code":-32603`) || !strings.Contains(got[0], "over the 200-byte message cap") ||
			got[1] != `{"jsonrpc":"2.0","id":2,"result":["small"]}` {
			t.Fatalf("replies %q", got)
		}
		for _, l := range got {
			if len(l) > 200 {
				t.Fatalf("a %d-byte line was written", len(l))
			}
		}
		if err := p.conn.Notify(context.Background(), "big", map[string]any{"id": "keep-me", "text": strings.Repeat("y", 300)}); err != nil {
			t.Fatalf("Notify over the cap = %v", err)
		}
		nums := make([]int, 100)
		if err := p.conn.Notify(context.Background(), "numbers", nums); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Notify of numbers over the cap = %v", err)
		}
		got = p.settle()
		if len(got) != 1 || len(got[0]) > 200 || !strings.HasPrefix(got[0], `{"jsonrpc":"2.0","method":"big","params":{"id":"keep-me","text":"yyy`) ||
			!strings.Contains(got[0], "more bytes not sent; the message was over the 200-byte message cap") {
			t.Fatalf("notifications over the cap: %q", got)
		}
		p.finish()
	})
}

// A response to one of our calls that cannot be read (not UTF-8, broken
// JSON, no "jsonrpc", a bad error object) fails that call when its id can
// be read, rather than leaving it waiting for an answer that has come
// (an ACP permission request would hold the turn until a cancel).
func TestCallFailsOnUnreadableResponse(t *testing.T) {
	for name, tc := range map[string]struct {
		line string
		code int64
	}{
		"invalid UTF-8":   {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\xff\"}}", ErrParse.Code},
		"truncated":       {`{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"sel`, ErrParse.Code},
		"id after result": {"{\"jsonrpc\":\"2.0\",\"result\":\"\xff\",\"id\":1}", ErrParse.Code},
		"no jsonrpc":      {`{"id":1,"result":{"ok":true}}`, ErrInvalidRequest.Code},
		"bad error":       {`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, ErrInvalidRequest.Code},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPipeConn(t, &testHandler{}, nil)
				errc := make(chan error, 1)
				go func() {
					_, err := p.conn.Call(context.Background(), "session/request_permission", nil)
					errc <- err
				}()
				p.settle()
				p.send(tc.line)
				p.settle()
				select {
				case err := <-errc:
					var e *Error
					if !errors.As(err, &e) || e.Code != tc.code || !strings.HasPrefix(e.Message, "invalid response") {
						t.Fatalf("Call err = %v, want code %d and an invalid response", err, tc.code)
					}
				default:
					p.conn.Close() // end the call, so the bubble can exit
					<-errc
					p.finish()
					t.Fatal("Call still waiting after its unreadable response")
				}
				p.conn.mu.Lock()
				pending := len(p.conn.outgoing)
				p.conn.mu.Unlock()
				if pending != 0 {
					t.Fatalf("%d outgoing calls still pending", pending)
				}
				p.finish()
			})
		})
	}
}
