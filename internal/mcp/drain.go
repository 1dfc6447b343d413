package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// DrainTimeout is how long Serve waits, once its input has ended, for the
// replies to requests still open: the runtime's rule for a closed stdin
// (protocol.md Lifecycle: up to 5 s for open replies, then exit). A client
// that pipes its requests and closes stdin at once gets every answer.
const DrainTimeout = 5 * time.Second

// replyTracker follows the requests read and the replies written on one
// newline-delimited JSON-RPC stream, by id (1 and "1" are different ids).
type replyTracker struct {
	mu   sync.Mutex
	open map[string]int
	idle chan struct{} // closed while no request is open
}

func newReplyTracker() *replyTracker {
	t := &replyTracker{open: map[string]int{}, idle: make(chan struct{})}
	close(t.idle)
	return t
}

// wireMsg is what the tracker reads of a message.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// messages decodes one line: a message, or a batch of them.
func messages(line []byte) []wireMsg {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var batch []wireMsg
		if json.Unmarshal(line, &batch) != nil {
			return nil
		}
		return batch
	}
	var m wireMsg
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []wireMsg{m}
}

func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || bytes.Equal(id, []byte("null")) {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return ""
	}
	return b.String()
}

// read notes a line the server read: a request opens its id; a
// notifications/cancelled closes the request it names (MCP: no reply is
// sent to a cancelled request).
func (t *replyTracker) read(line []byte) {
	for _, m := range messages(line) {
		switch {
		case m.Method == "notifications/cancelled":
			t.close(idKey(m.Params.RequestID))
		case m.Method != "":
			if k := idKey(m.ID); k != "" {
				t.mu.Lock()
				if len(t.open) == 0 {
					t.idle = make(chan struct{})
				}
				t.open[k]++
				t.mu.Unlock()
			}
		}
	}
}

// wrote notes a line the server wrote: a reply closes its id.
func (t *replyTracker) wrote(line []byte) {
	for _, m := range messages(line) {
		if m.Method == "" {
			t.close(idKey(m.ID))
		}
	}
}

func (t *replyTracker) close(k string) {
	if k == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.open[k]
	if !ok {
		return
	}
	if n > 1 {
		t.open[k] = n - 1
		return
	}
	delete(t.open, k)
	if len(t.open) == 0 {
		close(t.idle)
	}
}

// wait returns once no request is open, after d, or when ctx ends.
func (t *replyTracker) wait(ctx context.Context, d time.Duration) {
	t.mu.Lock()
	idle := t.idle
	t.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-ctx.Done():
	}
}

// lineSplitter hands each complete line of a byte stream to fn; a line
// over MaxLineBytes is not looked at (the transport refuses it anyway).
type lineSplitter struct {
	buf  []byte
	long bool
	fn   func([]byte)
}

func (s *lineSplitter) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !s.long {
			if len(s.buf)+len(chunk) > MaxLineBytes {
				s.long, s.buf = true, s.buf[:0]
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		if i < 0 {
			return
		}
		if !s.long {
			s.fn(s.buf)
		}
		s.buf, s.long = s.buf[:0], false
		p = p[i+1:]
	}
}

// drainReader is the server's input: it notes each request, and at the
// end of the input it waits (DrainTimeout at most) for the replies still
// open before it reports the end, which closes the connection.
type drainReader struct {
	ctx   context.Context
	r     io.Reader
	t     *replyTracker
	lines lineSplitter
	eof   bool
	wait  time.Duration
}

func (d *drainReader) Read(p []byte) (int, error) {
	if d.eof {
		d.t.wait(d.ctx, d.wait)
		return 0, io.EOF
	}
	n, err := d.r.Read(p)
	d.lines.feed(p[:n])
	if err == io.EOF {
		d.eof = true
		d.lines.feed([]byte{'\n'}) // a last line without its newline
		if n > 0 {
			return n, nil // the transport reads these first
		}
		d.t.wait(d.ctx, d.wait)
	}
	return n, err
}

// drainWriter is the server's output: it notes each reply.
type drainWriter struct {
	mu    sync.Mutex
	w     io.Writer
	lines lineSplitter
}

func (d *drainWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	d.mu.Lock()
	d.lines.feed(p[:n])
	d.mu.Unlock()
	return n, err
}

// draining wraps a server's input and output so that the end of the input
// waits for the replies to the requests read (drainReader).
func draining(ctx context.Context, in io.Reader, out io.Writer, wait time.Duration) (io.Reader, io.Writer) {
	t := newReplyTracker()
	r := &drainReader{ctx: ctx, r: in, t: t, wait: wait}
	r.lines.fn = t.read
	w := &drainWriter{w: out}
	w.lines.fn = t.wrote
	return r, w
}
