package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// DefaultMaxMessageBytes is the line cap of protocol.md "Framing": 32 MiB.
const DefaultMaxMessageBytes = 32 << 20

// ErrTooLarge is returned by Writer for a message over the cap: it is not
// written. Conn answers a request whose result is too large with -32603.
var ErrTooLarge = errors.New("jsonrpc: outgoing message exceeds the message cap")

// Reader splits a byte stream into newline-delimited messages (protocol.md
// "Framing"). Lines end at the byte '\n' only, so U+2028 and U+2029 never split a
// message; one trailing '\r' is dropped; lines holding only spaces, tabs and '\r'
// are skipped. A final line without '\n' before EOF is still returned.
//
// Reader is not safe for concurrent use.
type Reader struct {
	br  *bufio.Reader
	max int
	err error // sticky
}

// NewReader returns a Reader whose messages are at most maxBytes long, not counting
// the "\n" or "\r\n" terminator. maxBytes <= 0 means DefaultMaxMessageBytes.
func NewReader(r io.Reader, maxBytes int) *Reader {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: maxBytes}
}

// Read returns the next non-blank line without its terminator, in a new slice the
// caller owns. Errors: io.EOF at the end of input; ErrMessageTooLarge as soon as a
// line passes the cap (at most the cap plus one buffer is held; the rest of the line
// is never read); otherwise the underlying reader's error. Errors are sticky.
func (r *Reader) Read() ([]byte, error) {
	for r.err == nil {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			if len(line) == 0 {
				break
			}
			// A final unterminated line: return it, report err on the next call.
		}
		if !isBlank(line) {
			return line, nil
		}
	}
	return nil, r.err
}

// readLine reads up to and excluding '\n', drops one trailing '\r', and enforces
// the cap while reading.
func (r *Reader) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		// A line within the cap holds at most max+2 bytes with its "\r\n".
		if len(buf)+len(chunk) > r.max+2 {
			return nil, tooLarge(append(buf, chunk...))
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			buf = buf[:len(buf)-1]
			if n := len(buf); n > 0 && buf[n-1] == '\r' {
				buf = buf[:n-1]
			}
			if len(buf) > r.max {
				return nil, tooLarge(buf)
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if n := len(buf); n > 0 && buf[n-1] == '\r' {
				buf = buf[:n-1]
			}
			if len(buf) > r.max {
				return nil, tooLarge(buf)
			}
			return buf, err
		}
	}
}

// maxHeadBytes is how much of an oversized line is kept to find its id.
const maxHeadBytes = 64 << 10

// TooLargeError is Reader.Read's error for a line over the cap (errors.Is
// ErrMessageTooLarge). Head is the line's first bytes (at most 64 KiB), for
// the id of the error reply.
type TooLargeError struct{ Head []byte }

func (e *TooLargeError) Error() string { return ErrMessageTooLarge.Error() }
func (e *TooLargeError) Unwrap() error { return ErrMessageTooLarge }

// tooLarge keeps a copy of the head of line, so the line's buffer is freed.
func tooLarge(line []byte) error {
	return &TooLargeError{Head: bytes.Clone(line[:min(len(line), maxHeadBytes)])}
}

// headID is the id of a request from the head of its line (an object whose
// "id" member comes before the cut), or the zero ID (null) when the head does
// not show one: the id comes after the cut, the head is not a JSON object,
// or it is a response (a "result" or "error" member), which nobody answers.
func headID(head []byte) ID {
	id, _, response := scanHead(head)
	if response {
		return ID{}
	}
	return id
}

// parseErrorID is the id of the -32700 reply to a line that is not valid UTF-8
// or not valid JSON. JSON-RPC 2.0 answers id null only when the id cannot be
// determined, so it is the request's id when the line shows one: an object
// whose valid "id" member and whose "method" key come before the point where the
// JSON breaks (invalid UTF-8 inside a string does not break it: the scanner
// reads it as U+FFFD, the id itself must be valid UTF-8). Null otherwise: no
// "method" key was seen (it may be a response, which nobody answers, and its
// id is in the other direction's id space), a "result" or "error" member was
// seen, or the id is not a valid one.
func parseErrorID(line []byte) ID {
	id, method, response := scanHead(line)
	if !method || response {
		return ID{}
	}
	return id
}

// answeredID is the id of our call that a line that is not valid UTF-8 or
// JSON answers: an object with a "result" or "error" member and a valid "id"
// before the point where the JSON breaks, and no "method" key. The zero ID
// otherwise. That call fails (the peer answered, unreadably) instead of
// waiting for an answer that has come.
func answeredID(line []byte) ID {
	id, method, response := scanHead(line)
	if method || !response {
		return ID{}
	}
	return id
}

// scanHead reads the members of the object at the start of head up to its end
// or the first point where it stops being JSON. It returns the last valid "id"
// seen (the zero ID for an invalid one, where it stops), whether a "method" key was seen and
// whether a "result" or "error" key was seen.
func scanHead(head []byte) (id ID, method, response bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ID{}, false, false
	}
	for {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return id, method, response // the cut (or a broken line): what was seen so far
		}
		switch key {
		case "result", "error":
			response = true
		case "method":
			method = true
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return id, method, response
		}
		if key == "id" {
			if id, err = DecodeID(v); err != nil {
				return ID{}, method, response
			}
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Writer writes one JSON value per line. Writes are serialized: each message is a
// single w.Write of the whole line, so lines never interleave. A writer waiting for
// its turn gives up when its ctx is done or the Writer is closed; only the one write
// already inside w.Write can stay blocked on a stalled peer.
//
// Output is compact JSON without HTML escaping; U+2028 and U+2029 are always
// escaped (also inside json.RawMessage values) so that a client splitting on them
// never breaks a message, and a line with invalid UTF-8 is refused.
type Writer struct {
	w         io.Writer
	turn      chan struct{} // one token: the right to write
	closed    chan struct{}
	closeOnce sync.Once
	max       int // the line cap without '\n' (DefaultMaxMessageBytes); 0: none
}

// NewWriter returns a Writer on w that refuses lines over
// DefaultMaxMessageBytes with ErrTooLarge.
func NewWriter(w io.Writer) *Writer {
	wr := &Writer{w: w, turn: make(chan struct{}, 1), closed: make(chan struct{}), max: DefaultMaxMessageBytes}
	wr.turn <- struct{}{}
	return wr
}

func newWriterCap(w io.Writer, max int) *Writer {
	wr := NewWriter(w)
	wr.max = max
	return wr
}

// Encode marshals v as one line, '\n' included, with the escaping rules above.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	line := escapeLineSeparators(buf.Bytes())
	if !utf8.Valid(line) {
		return nil, errors.New("jsonrpc: outgoing message is not valid UTF-8")
	}
	return line, nil
}

// escapeLineSeparators replaces raw U+2028/U+2029 (E2 80 A8/A9) with \u2028/\u2029.
// JSON's structure is ASCII, so those bytes can only occur inside strings, where the
// escape is equivalent.
func escapeLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte{0xE2, 0x80}) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); i++ {
		if b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
			out = append(out, `\u202`...)
			out = append(out, "89"[b[i+2]-0xA8])
			i += 2
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// Write encodes v (see Encode) and writes it as one line. It returns ctx's error if
// ctx is done before the write gets its turn (a done ctx never writes), ErrClosed once Close was called, or the
// encoding or I/O error.
func (w *Writer) Write(ctx context.Context, v any) error {
	line, err := Encode(v)
	if err != nil {
		return fmt.Errorf("jsonrpc: encode: %w", err)
	}
	return w.WriteLine(ctx, line)
}

// WriteLine writes an already encoded line, which must end with '\n' and hold no
// other '\n'.
func (w *Writer) WriteLine(ctx context.Context, line []byte) error {
	if n := len(line) - 1; w.max > 0 && n > w.max {
		// The client ends the session on a line over the cap (protocol.md
		// Framing): such a message is never sent.
		return fmt.Errorf("%w: %d bytes, the cap is %d", ErrTooLarge, n, w.max)
	}
	select {
	case <-w.closed:
		return ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-w.turn:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.closed:
		return ErrClosed
	}
	defer func() { w.turn <- struct{}{} }()
	select {
	case <-w.closed:
		return ErrClosed
	default:
	}
	_, err := w.w.Write(line)
	return err
}

// Close makes every pending and later Write return ErrClosed. It does not close
// the underlying io.Writer. It is safe to call more than once and concurrently.
func (w *Writer) Close() {
	w.closeOnce.Do(func() { close(w.closed) })
}
