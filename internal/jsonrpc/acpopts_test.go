package jsonrpc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
)

// TestCancelMethodOption: a conn configured with the Agent Client
// Protocol's cancel notification cancels a running handler on
// `$/cancel_request {requestId}`, ignores the default `$/cancelRequest`
// (handed to the handler like any notification), and CancelOnDone sends
// the configured one.
func TestCancelMethodOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := &ConnOptions{CancelMethod: "$/cancel_request", CancelIDField: "requestId", CancelOnDone: true}
		p := newPipeConn(t, &testHandler{}, opts)
		p.send(`{"jsonrpc":"2.0","id":7,"method":"block"}`)
		p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`)
		if got := p.settle(); len(got) != 0 {
			t.Fatalf("the default cancel notification answered: %q", got)
		}
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}`)
		got := p.settle()
		if len(got) != 1 || !strings.Contains(got[0], `"id":7`) || !strings.Contains(got[0], `-32800`) {
			t.Fatalf("after $/cancel_request: %q", got)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := p.conn.Call(ctx, "session/request_permission", nil)
			errc <- err
		}()
		p.settle()
		cancel()
		got = p.settle()
		if len(got) != 1 || got[0] != `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}` {
			t.Fatalf("CancelOnDone wrote %q", got)
		}
		p.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"cancelled"}}`)
		synctest.Wait()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		p.finish()
	})
}

// afterHandler answers "create" and sends a notification after the reply.
type afterHandler struct{ conn *Conn }

func (h *afterHandler) Handle(ctx context.Context, req *Request) (any, error) {
	switch req.Method {
	case "create":
		AfterReply(ctx, func() { h.conn.Notify(context.Background(), "created", map[string]int{"n": 1}) })
		return map[string]string{"id": "s1"}, nil
	case "next":
		return "next", nil
	}
	return nil, ErrMethodNotFound
}

// TestAfterReply: the hook's notification follows the reply and comes
// before the reply of the request queued behind it; a notification's hook
// never runs.
func TestAfterReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &afterHandler{}
		p := newPipeConn(t, h, nil)
		h.conn = p.conn
		p.send(`{"jsonrpc":"2.0","id":1,"method":"create"}`)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"next"}`)
		p.send(`{"jsonrpc":"2.0","method":"create"}`)
		got := p.settle()
		want := []string{
			`{"jsonrpc":"2.0","id":1,"result":{"id":"s1"}}`,
			`{"jsonrpc":"2.0","method":"created","params":{"n":1}}`,
			`{"jsonrpc":"2.0","id":2,"result":"next"}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("wrote\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		p.finish()
	})
}
