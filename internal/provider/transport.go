package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// ErrIdleTimeout is the cause of a call stopped because the endpoint sent
// nothing for longer than Config.Timeout: either while waiting for response
// headers or in an idle gap of the body. It maps to kind timeout.
var ErrIdleTimeout = errors.New("provider: no data from the endpoint within the timeout")

// NewTransport returns an http.RoundTripper that applies timeout to the wait
// for response headers and to every idle gap while the body is read (protocol.md
// ProviderConfig.timeoutMs). base nil means http.DefaultTransport. The
// returned transport never retries.
func NewTransport(base http.RoundTripper, timeout time.Duration) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &idleTransport{base: base, timeout: timeout}
}

// NewHTTPClient is an http.Client over NewTransport(nil, timeout). It has no
// overall deadline: streams may run as long as data keeps arriving.
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Transport: NewTransport(nil, timeout)}
}

type idleTransport struct {
	base    http.RoundTripper
	timeout time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.timeout, func() { cancel(ErrIdleTimeout) })
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cause := context.Cause(ctx)
		cancel(nil)
		if errors.Is(cause, ErrIdleTimeout) {
			return nil, fmt.Errorf("waiting for response headers: %w", ErrIdleTimeout)
		}
		return nil, err
	}
	timer.Reset(t.timeout)
	resp.Body = &idleBody{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, timeout: t.timeout}
	return resp, nil
}

type idleBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	timeout time.Duration
	once    sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.timeout)
	}
	if err != nil && err != io.EOF {
		if errors.Is(context.Cause(b.ctx), ErrIdleTimeout) {
			return n, fmt.Errorf("reading the response: %w", ErrIdleTimeout)
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return err
}

// ClassifyTransportError turns an error from sending a request or reading a
// response body into an *Error: kind timeout for ErrIdleTimeout, cancelled
// when ctx (the caller's context) is done, network for everything else
// (refused connections, resets, an unexpected EOF mid-stream).
func ClassifyTransportError(ctx context.Context, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	switch {
	case errors.Is(err, ErrIdleTimeout):
		return &Error{Kind: KindTimeout, Message: err.Error()}
	case ctx.Err() != nil:
		return &Error{Kind: KindCancelled, Message: "request cancelled"}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Message: err.Error()}
	}
	return &Error{Kind: KindNetwork, Message: err.Error()}
}
