package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Handler answers incoming requests and notifications. The result is marshalled
// with encoding/json; for notifications (req.IsCall false) the return values are
// ignored. An unknown method returns ErrMethodNotFound: the conn never decides which
// methods exist. A non-*Error error replies -32603 with err.Error() as the message,
// so the handler must not put secrets in it.
//
// ctx is cancelled with cause ErrCancelled (`$/cancelRequest`), ErrShutdown
// (Conn.Shutdown), ErrClosed (Run returned), or ErrMessageTooLarge (the session
// ended on an oversized line).
type Handler interface {
	Handle(ctx context.Context, req *Request) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// ConnOptions configures a Conn. A nil *ConnOptions means all defaults.
type ConnOptions struct {
	// MaxMessageBytes caps one incoming line (without its terminator). Default
	// DefaultMaxMessageBytes (32 MiB, protocol.md "Framing").
	MaxMessageBytes int
	// MaxOutgoingBytes caps one line the Conn sends: a reply over it becomes
	// a -32603 error, and a notification or call over it is not sent (the
	// client would end the session). Default DefaultMaxMessageBytes.
	MaxOutgoingBytes int
	// DrainTimeout bounds the wait for open requests to reply after Close or stdin
	// EOF (protocol.md "Lifecycle": 5 s). Default 5 s.
	DrainTimeout time.Duration
	// Preempt names methods handled at once in their own goroutine, without waiting
	// behind the ordered queue (e.g. "agent/steer", "agent/cancelTool").
	Preempt map[string]bool
	// OnAccept, when set, is told of each request and notification the
	// Handler will get (the same *Request), in arrival order, on the reading
	// goroutine before it is queued or started: a front end can note that a
	// request is on its way before a preempted message overtakes it (ACP's
	// session/cancel of a session/prompt still queued). It must not block.
	OnAccept func(*Request)
	// Logger receives diagnostics (method names, ids, codes; never params or
	// results). Default: discard.
	Logger *slog.Logger
	// OnInternalError is told about broken invariants: a handler panic (with its
	// stack) or a result that cannot be encoded. Optional.
	OnInternalError func(error)
	// CancelOnDone makes Call send `$/cancelRequest` for its id when its ctx
	// is done before the response (a client interrupting a request).
	// Call then waits up to 5 s for the peer's reply to the cancelled request.
	CancelOnDone bool
	// CancelMethod and CancelIDField name the cancel notification the conn
	// handles itself and sends with CancelOnDone, and its id member:
	// default CancelMethod and "id" (protocol.md); the Agent Client
	// Protocol's is "$/cancel_request" with "requestId".
	CancelMethod  string
	CancelIDField string
	// ParseErrorKeepsID makes a -32700 reply carry the request's id when the
	// line shows it (parseErrorID), as the Agent Client Protocol's clients
	// need: JSON-RPC 2.0 answers null only when the id cannot be determined,
	// and an ACP client leaves a request answered with null hanging. Off, the
	// reply's id is always null, as protocol.md's error table says.
	ParseErrorKeepsID bool
}

// cancelReplyWait bounds the wait for the reply to a cancelled call.
const cancelReplyWait = 5 * time.Second

// DefaultDrainTimeout is protocol.md "Lifecycle"'s wait for open replies at exit.
const DefaultDrainTimeout = 5 * time.Second

// CancelMethod is the notification the conn handles itself (protocol.md
// "`$/cancelRequest`").
const CancelMethod = "$/cancelRequest"

// Conn is one JSON-RPC 2.0 session over a newline-delimited byte stream.
//
// Incoming messages are read by one goroutine. Responses to our calls, the
// `$/cancelRequest` notification and invalid messages are handled there at once.
// Requests and notifications are dispatched to the Handler in arrival order, one at
// a time, unless the running handler calls Async or the method is in
// ConnOptions.Preempt.
type Conn struct {
	handler Handler
	opts    ConnOptions
	log     *slog.Logger
	reader  *Reader
	writer  *Writer

	closeOnce sync.Once
	closeCh   chan struct{} // closed by Close

	queueSignal chan struct{} // capacity 1: the queue became non-empty

	mu           sync.Mutex
	started      bool
	shuttingDown bool
	closing      bool                   // Close, EOF or Run end: calls fail with ErrClosed
	incoming     map[ID]*inflight       // calls not yet answered, by client id
	live         map[*inflight]bool     // queued or running handlers (calls and notifications)
	open         int                    // calls accepted whose reply is not yet written
	changed      chan struct{}          // closed and replaced when open decreases
	queue        []*inflight            // ordered dispatch queue
	outgoing     map[ID]chan callResult // our pending calls
	nextCallID   int64
}

// inflight is one incoming request or notification handed to the Handler.
type inflight struct {
	req         *Request
	ctx         context.Context
	cancel      context.CancelCauseFunc
	released    chan struct{} // closed by Async or when the handler returns
	releaseOnce sync.Once
	after       []func() // AfterReply's, run once the reply is written (handler goroutine only)

	// Guarded by Conn.mu.
	started bool // handed to the Handler
	replied bool // a reply is claimed; nothing else may answer this id
}

func (f *inflight) release() { f.releaseOnce.Do(func() { close(f.released) }) }

type callResult struct {
	result json.RawMessage
	err    error
}

type inflightKey struct{}

// NewConn returns a Conn reading messages from r and writing them to w. It panics
// if h is nil. Nothing happens until Run.
func NewConn(r io.Reader, w io.Writer, h Handler, opts *ConnOptions) *Conn {
	if h == nil {
		panic("jsonrpc: NewConn with a nil Handler")
	}
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxOutgoingBytes <= 0 {
		o.MaxOutgoingBytes = DefaultMaxMessageBytes
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.CancelMethod == "" {
		o.CancelMethod = CancelMethod
	}
	if o.CancelIDField == "" {
		o.CancelIDField = "id"
	}
	preempt := make(map[string]bool, len(o.Preempt))
	for m, on := range o.Preempt {
		if on {
			preempt[m] = true
		}
	}
	o.Preempt = preempt
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Conn{
		handler:     h,
		opts:        o,
		log:         log,
		reader:      NewReader(r, o.MaxMessageBytes),
		writer:      newWriterCap(w, o.MaxOutgoingBytes),
		closeCh:     make(chan struct{}),
		queueSignal: make(chan struct{}, 1),
		incoming:    make(map[ID]*inflight),
		live:        make(map[*inflight]bool),
		changed:     make(chan struct{}),
		outgoing:    make(map[ID]chan callResult),
	}
}

type readResult struct {
	line []byte
	err  error
}

// Run serves the session and blocks until it ends:
//   - Close or EOF on the input: stop reading, let open requests reply for up to
//     DrainTimeout, then return nil;
//   - a line over MaxMessageBytes: answer it -32600 (its id when the line's head
//     shows one, else null), cancel every handler, let them reply for up to
//     DrainTimeout, return ErrMessageTooLarge (protocol.md Framing: a larger line
//     ends the session);
//   - another read error: drain as for EOF and return it wrapped;
//   - ctx done: cancel every handler and return ctx.Err() without draining.
//
// When Run returns, handlers still running are cancelled (cause ErrClosed), pending
// Calls fail with ErrClosed, and every later write returns ErrClosed. The reading
// goroutine may stay blocked in r.Read until r returns; it then exits. Run may be
// called once.
func (c *Conn) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("jsonrpc: Run called twice")
	}
	c.started = true
	c.mu.Unlock()

	lines := make(chan readResult)
	stopRead := make(chan struct{})
	go c.readLoop(lines, stopRead)

	stopDispatch := make(chan struct{})
	dispatchDone := make(chan struct{})
	go func() {
		defer close(dispatchDone)
		c.dispatchLoop(stopDispatch)
	}()

	defer func() {
		close(stopRead)
		close(stopDispatch)
		<-dispatchDone
		c.beginClose()
		c.cancelLive(ErrClosed, nil)
		c.writer.Close()
	}()

	for {
		select {
		case <-ctx.Done():
			c.cancelLive(context.Cause(ctx), nil)
			return ctx.Err()
		case <-c.closeCh:
			c.beginClose()
			c.drain(ctx)
			return nil
		case rr := <-lines:
			if rr.err == nil {
				c.handleLine(ctx, rr.line)
				continue
			}
			c.beginClose()
			switch {
			case errors.Is(rr.err, io.EOF):
				c.drain(ctx)
				return nil
			case errors.Is(rr.err, ErrMessageTooLarge):
				c.log.Error("jsonrpc: incoming line exceeds the cap; ending the session", "maxBytes", c.opts.MaxMessageBytes)
				c.writeError(oversizedID(rr.err), ErrInvalidRequest.WithMessage(fmt.Sprintf(
					"message exceeds the %s line cap; the session ends (protocol.md Framing)", capText(c.opts.MaxMessageBytes))).
					WithData(map[string]int{"maxBytes": c.opts.MaxMessageBytes}))
				c.cancelLive(ErrMessageTooLarge, nil)
				c.drain(ctx)
				return ErrMessageTooLarge
			default:
				c.drain(ctx)
				return fmt.Errorf("jsonrpc: read: %w", rr.err)
			}
		}
	}
}

// oversizedID is the id of the error reply to a line over the cap: the
// request's id when the line's head shows it, null otherwise.
func oversizedID(err error) ID {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return headID(tl.Head)
	}
	return ID{}
}

// capText is a line cap for people: "32 MiB", or a byte count.
func capText(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d-byte", n)
}

func (c *Conn) readLoop(lines chan<- readResult, stop <-chan struct{}) {
	for {
		line, err := c.reader.Read()
		select {
		case lines <- readResult{line, err}:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// handleLine runs in Run's goroutine for each incoming line.
func (c *Conn) handleLine(ctx context.Context, line []byte) {
	m, fail := decodeMessage(line)
	if fail != nil {
		if fail.err.Code == CodeParseError && !c.opts.ParseErrorKeepsID {
			fail.id = ID{}
		}
		c.log.Debug("jsonrpc: invalid message", "id", fail.id.String(), "code", fail.err.Code, "reason", fail.err.Message)
		if fail.reply {
			c.writeError(fail.id, fail.err)
		}
		if fail.answers.IsValid() {
			// The peer answered one of our calls, unreadably: fail the call
			// rather than leave it waiting for an answer that has come.
			e := fail.err
			if !strings.HasPrefix(e.Message, "invalid response") {
				e = e.WithMessage("invalid response: " + e.Message)
			}
			c.routeResponse(&message{kind: kindResponse, id: fail.answers, err: e})
		}
		return
	}
	switch m.kind {
	case kindResponse:
		c.routeResponse(m)
	case kindNotification, kindRequest:
		req := &Request{ID: m.id, IsCall: m.kind == kindRequest, Method: m.method, Params: m.params}
		if req.Method == c.opts.CancelMethod {
			c.cancelRequest(req.Params)
			if req.IsCall {
				c.write(wireResult{JSONRPC: "2.0", ID: req.ID, Result: nil})
			}
			return
		}
		c.accept(ctx, req)
	}
}

// accept registers a request or notification and queues it (or starts it at once
// when preempted).
func (c *Conn) accept(ctx context.Context, req *Request) {
	c.mu.Lock()
	if req.IsCall {
		if c.shuttingDown {
			c.mu.Unlock()
			c.writeError(req.ID, errShuttingDown)
			return
		}
		if _, dup := c.incoming[req.ID]; dup {
			c.mu.Unlock()
			c.log.Debug("jsonrpc: duplicate in-flight id", "id", req.ID.String(), "method", req.Method)
			c.writeError(req.ID, errDuplicateID)
			return
		}
	}
	if c.opts.OnAccept != nil {
		c.opts.OnAccept(req)
	}
	f := &inflight{req: req, released: make(chan struct{})}
	var hctx context.Context
	hctx, f.cancel = context.WithCancelCause(ctx)
	f.ctx = context.WithValue(hctx, inflightKey{}, f)
	c.live[f] = true
	if req.IsCall {
		c.incoming[req.ID] = f
		c.open++
	}
	if c.opts.Preempt[req.Method] {
		f.started = true
		c.mu.Unlock()
		go c.runHandler(f)
		return
	}
	c.queue = append(c.queue, f)
	c.mu.Unlock()
	select {
	case c.queueSignal <- struct{}{}:
	default:
	}
}

// dispatchLoop starts queued handlers one at a time, each after the previous one
// returned or called Async.
func (c *Conn) dispatchLoop(stop <-chan struct{}) {
	for {
		c.mu.Lock()
		var f *inflight
		if len(c.queue) > 0 {
			f = c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			if f.replied { // cancelled while queued; already answered
				delete(c.live, f)
				f = nil
			} else {
				f.started = true
			}
		} else {
			c.queue = nil
		}
		empty := len(c.queue) == 0
		c.mu.Unlock()

		if f == nil {
			if !empty {
				continue
			}
			select {
			case <-c.queueSignal:
				continue
			case <-stop:
				return
			}
		}
		go c.runHandler(f)
		select {
		case <-f.released:
		case <-stop:
			return
		}
	}
}

func (c *Conn) runHandler(f *inflight) {
	defer func() {
		f.release()
		f.cancel(context.Canceled)
		c.mu.Lock()
		delete(c.live, f)
		c.mu.Unlock()
	}()
	result, err := c.callHandler(f)
	if !f.req.IsCall {
		if err != nil {
			c.log.Debug("jsonrpc: notification handler failed", "method", f.req.Method, "code", toWireError(err).Code)
		}
		return
	}
	c.reply(f, result, err)
	for _, fn := range f.after {
		fn()
	}
}

// AfterReply makes fn run once the reply of the request whose handler ctx
// is ctx is written (or claimed by a cancel), in the handler's goroutine,
// before a handler queued behind it starts unless the handler called
// Async: notifications about what the reply created (an Agent Client
// Protocol session/new's session id) then follow the reply. Call it from
// the handler's goroutine; outside a call's handler fn never runs.
func AfterReply(ctx context.Context, fn func()) {
	if f, ok := ctx.Value(inflightKey{}).(*inflight); ok && f.req.IsCall {
		f.after = append(f.after, fn)
	}
}

func (c *Conn) callHandler(f *inflight) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("jsonrpc: handler panicked", "method", f.req.Method, "id", f.req.ID.String())
			c.internalError(fmt.Errorf("jsonrpc: handler for %q panicked: %v\n%s", f.req.Method, r, debug.Stack()))
			result, err = nil, ErrInternal
		}
	}()
	return c.handler.Handle(f.ctx, f.req)
}

func (c *Conn) internalError(err error) {
	if c.opts.OnInternalError != nil {
		c.opts.OnInternalError(err)
	}
}

// reply answers a call once. A ctx cancelled by `$/cancelRequest` always answers
// -32800; one cancelled by Shutdown answers -32800 unless the handler succeeded.
func (c *Conn) reply(f *inflight, result any, err error) {
	if !c.claimReply(f) {
		return
	}
	defer c.retireOpen()
	cause := context.Cause(f.ctx)
	var line []byte
	switch {
	case errors.Is(cause, ErrCancelled):
		line = c.encodeError(f.req.ID, cancelledError)
	case err != nil && cause != nil: // Shutdown, or the session is ending
		line = c.encodeError(f.req.ID, cancelledError)
	case err != nil:
		line = c.encodeError(f.req.ID, toWireError(err))
	default:
		var encErr error
		line, encErr = Encode(wireResult{JSONRPC: "2.0", ID: f.req.ID, Result: result})
		if encErr != nil {
			c.log.Error("jsonrpc: cannot encode result", "method", f.req.Method, "id", f.req.ID.String())
			c.internalError(fmt.Errorf("jsonrpc: encode result of %q: %w", f.req.Method, encErr))
			line = c.encodeError(f.req.ID, ErrInternal.WithMessage("internal error: result cannot be encoded"))
		}
	}
	if n := len(line) - 1; n > c.writer.max {
		// A reply over the cap would end the client's session (protocol.md
		// Framing); the request fails instead. Handlers that return file
		// contents bound them well below the cap; this is the last guard.
		c.log.Error("jsonrpc: result exceeds the message cap", "method", f.req.Method, "id", f.req.ID.String(), "bytes", n)
		line = c.encodeError(f.req.ID, ErrInternal.WithMessage(fmt.Sprintf(
			"internal error: the result of %s is %d bytes, over the %d-byte message cap", f.req.Method, n, c.writer.max)))
	}
	c.writeLine(line)
}

// claimReply marks f answered and removes its id from the in-flight table. It
// reports false if f was already answered.
func (c *Conn) claimReply(f *inflight) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.replied {
		return false
	}
	f.replied = true
	if c.incoming[f.req.ID] == f {
		delete(c.incoming, f.req.ID)
	}
	return true
}

// retireOpen records that one accepted call's reply has been written.
func (c *Conn) retireOpen() {
	c.mu.Lock()
	c.open--
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// cancelRequest handles `$/cancelRequest` {id}: a running handler's ctx is cancelled
// (it replies -32800 when it returns); a queued one is answered -32800 at once and
// never runs. Unknown ids and malformed params are ignored.
func (c *Conn) cancelRequest(params json.RawMessage) {
	var p map[string]json.RawMessage
	if params == nil || json.Unmarshal(params, &p) != nil || p[c.opts.CancelIDField] == nil {
		c.log.Debug("jsonrpc: ignoring a cancel notification without an id")
		return
	}
	id, err := DecodeID(p[c.opts.CancelIDField])
	if err != nil {
		c.log.Debug("jsonrpc: ignoring $/cancelRequest with an invalid id")
		return
	}
	c.mu.Lock()
	f := c.incoming[id]
	c.mu.Unlock()
	if f == nil {
		c.log.Debug("jsonrpc: ignoring $/cancelRequest for an unknown id", "id", id.String())
		return
	}
	c.cancelInflight(f, ErrCancelled)
}

// cancelInflight cancels f's ctx with cause. A call still in the queue is answered
// -32800 at once and will never run; a running one answers when its handler returns.
func (c *Conn) cancelInflight(f *inflight, cause error) {
	c.mu.Lock()
	queued := f.req.IsCall && !f.started && !f.replied
	if queued {
		f.replied = true
		if c.incoming[f.req.ID] == f {
			delete(c.incoming, f.req.ID)
		}
	}
	c.mu.Unlock()
	f.cancel(cause)
	if queued {
		c.writeLine(c.encodeError(f.req.ID, cancelledError))
		c.retireOpen()
	}
}

// Shutdown implements the `shutdown` request (protocol.md "Lifecycle"): every
// queued or running handler's ctx is cancelled with cause ErrShutdown, and from now
// on every new request is answered -32600 "runtime is shutting down".
// Notifications are still delivered (so `exit` works).
//
// Call it from the `shutdown` handler with that handler's ctx: the request that
// ctx belongs to is spared, so its own reply goes out normally. With any other ctx
// nothing is spared. Queued requests are answered -32800 at once; running ones
// answer when their handler returns (-32800 unless the handler succeeded).
func (c *Conn) Shutdown(ctx context.Context) {
	spare, _ := ctx.Value(inflightKey{}).(*inflight)
	c.mu.Lock()
	c.shuttingDown = true
	var victims []*inflight
	for f := range c.live {
		if f != spare {
			victims = append(victims, f)
		}
	}
	c.mu.Unlock()
	for _, f := range victims {
		c.cancelInflight(f, ErrShutdown)
	}
}

// Close implements the `exit` notification (protocol.md "Lifecycle"): Run stops
// reading, waits up to DrainTimeout for open requests to reply, and returns nil.
// Pending Calls fail with ErrClosed at once. Close does not wait and is idempotent.
func (c *Conn) Close() {
	c.closeOnce.Do(func() { close(c.closeCh) })
	c.beginClose()
}

// beginClose fails every pending outgoing call with ErrClosed and refuses new ones.
func (c *Conn) beginClose() {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	pending := c.outgoing
	c.outgoing = make(map[ID]chan callResult)
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- callResult{err: ErrClosed}
	}
}

// drain waits until every accepted call has replied, DrainTimeout passes, or ctx
// is done.
func (c *Conn) drain(ctx context.Context) {
	timer := time.NewTimer(c.opts.DrainTimeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		open, changed := c.open, c.changed
		c.mu.Unlock()
		if open == 0 {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			c.log.Warn("jsonrpc: drain timeout with requests still open", "open", open)
			return
		case <-ctx.Done():
			return
		}
	}
}

// cancelLive cancels every queued or running handler except spare.
func (c *Conn) cancelLive(cause error, spare *inflight) {
	c.mu.Lock()
	victims := make([]*inflight, 0, len(c.live))
	for f := range c.live {
		if f != spare {
			victims = append(victims, f)
		}
	}
	c.mu.Unlock()
	for _, f := range victims {
		f.cancel(cause)
	}
}

// Async releases the ordered queue from inside a handler: the next message is
// dispatched while this handler goes on. Outside a handler it does nothing.
func Async(ctx context.Context) {
	if f, ok := ctx.Value(inflightKey{}).(*inflight); ok {
		f.release()
	}
}

// RequestID returns the id of the request whose handler ctx is ctx; false for a
// notification or a ctx that is not a handler's.
func RequestID(ctx context.Context) (ID, bool) {
	if f, ok := ctx.Value(inflightKey{}).(*inflight); ok && f.req.IsCall {
		return f.req.ID, true
	}
	return ID{}, false
}

// Notify sends a notification to the client. params is marshalled with
// encoding/json (nil omits "params"). It returns ctx's error if ctx is done before
// the write gets its turn, ErrClosed once Run has returned, or the encoding or I/O
// error.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if method == "" {
		return errors.New("jsonrpc: Notify with an empty method")
	}
	return c.writeRequest(ctx, wireRequest{JSONRPC: "2.0", Method: method, Params: omitNil(params)})
}

// writeRequest writes a notification or a call. One over the outgoing cap
// is sent with its params' longest strings cut (fit.go); ErrTooLarge only
// when that cannot make it fit.
func (c *Conn) writeRequest(ctx context.Context, req wireRequest) error {
	line, err := Encode(req)
	if err != nil {
		return fmt.Errorf("jsonrpc: encode: %w", err)
	}
	if over := len(line) - 1 - c.writer.max; c.writer.max > 0 && over > 0 && req.Params != nil {
		raw, err := json.Marshal(req.Params)
		if err != nil {
			return fmt.Errorf("jsonrpc: encode: %w", err)
		}
		// Encode's escaping of U+2028/9 can leave the line longer than
		// planned: ask for more until it fits.
		for need, try := over, 0; over > 0 && try < 3; need, try = need+over, try+1 {
			fitted, ok := fitParams(raw, need, c.writer.max)
			if !ok {
				break
			}
			req.Params = json.RawMessage(fitted)
			if line, err = Encode(req); err != nil {
				return fmt.Errorf("jsonrpc: encode: %w", err)
			}
			over = len(line) - 1 - c.writer.max
		}
		if over <= 0 {
			c.log.Warn("jsonrpc: message over the cap sent with its longest strings cut", "method", req.Method, "bytes", len(raw))
		}
	}
	return c.writer.WriteLine(ctx, line)
}

// Call sends a request to the client and waits for its response. params is
// marshalled with encoding/json (nil omits "params"). Ids are integers
// counting from 1, a namespace separate from the client's ids. It returns the raw
// result; an error response as *Error (with Data as json.RawMessage); ctx.Err()
// when ctx is done, after which the id is retired at once and a late response is
// ignored; ErrClosed when the conn closes (Close, EOF or Run returned) before the
// response.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if method == "" {
		return nil, errors.New("jsonrpc: Call with an empty method")
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.nextCallID++
	id := IntID(c.nextCallID)
	ch := make(chan callResult, 1)
	c.outgoing[id] = ch
	c.mu.Unlock()

	if err := c.writeRequest(ctx, wireRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: omitNil(params)}); err != nil {
		c.retireCall(id)
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		if c.opts.CancelOnDone {
			// Tell the peer, then wait (bounded) for its reply, so that when
			// Call returns the peer has finished the request.
			wctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := c.writer.Write(wctx, wireRequest{JSONRPC: "2.0", Method: c.opts.CancelMethod, Params: map[string]any{c.opts.CancelIDField: id.num}})
			cancel()
			if err == nil {
				t := time.NewTimer(cancelReplyWait)
				select {
				case <-ch:
				case <-t.C:
				}
				t.Stop()
			}
		}
		c.retireCall(id)
		return nil, ctx.Err()
	}
}

// omitNil turns a nil pointer, map, slice or json.RawMessage into an untyped nil,
// so that "params" is omitted rather than sent as null.
func omitNil(v any) any {
	if v == nil {
		return nil
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
	}
	return v
}

func (c *Conn) retireCall(id ID) {
	c.mu.Lock()
	delete(c.outgoing, id)
	c.mu.Unlock()
}

// routeResponse hands a response to the pending Call with its id.
func (c *Conn) routeResponse(m *message) {
	c.mu.Lock()
	ch, ok := c.outgoing[m.id]
	delete(c.outgoing, m.id)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("jsonrpc: ignoring a response for an unknown id", "id", m.id.String())
		return
	}
	if m.err != nil {
		ch <- callResult{err: m.err}
		return
	}
	ch <- callResult{result: m.result}
}

func (c *Conn) encodeError(id ID, e *Error) []byte {
	line, err := Encode(wireErrorResponse{JSONRPC: "2.0", ID: id, Error: e})
	if err != nil {
		// error.data could not be encoded: keep the code and message.
		c.internalError(fmt.Errorf("jsonrpc: encode error data for code %d: %w", e.Code, err))
		line, _ = Encode(wireErrorResponse{JSONRPC: "2.0", ID: id, Error: &Error{Code: e.Code, Message: e.Message}})
	}
	return line
}

func (c *Conn) writeError(id ID, e *Error) { c.writeLine(c.encodeError(id, e)) }

func (c *Conn) write(v any) {
	line, err := Encode(v)
	if err != nil {
		c.internalError(fmt.Errorf("jsonrpc: encode: %w", err))
		return
	}
	c.writeLine(line)
}

// writeLine writes a reply. Replies are detached from any handler ctx; the write
// gives up only when the writer is closed.
func (c *Conn) writeLine(line []byte) {
	if line == nil {
		return
	}
	if err := c.writer.WriteLine(context.Background(), line); err != nil && !errors.Is(err, ErrClosed) {
		c.log.Warn("jsonrpc: write failed", "error", err)
	}
}
