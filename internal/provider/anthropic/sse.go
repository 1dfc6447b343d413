package anthropic

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// SSE bounds: a provider is untrusted, so neither one line nor one event may
// make us allocate without limit.
const (
	maxLineBytes  = 4 << 20
	maxEventBytes = 8 << 20
)

// errSSETooLarge reports a line or event over the bounds above.
var errSSETooLarge = errors.New("server-sent event exceeds the size limit")

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Name string // the "event:" field; "message" when absent
	Data []byte // the "data:" lines joined by "\n"
}

// sseReader decodes text/event-stream per the WHATWG HTML "Server-sent
// events" parsing rules: lines end in "\n" or "\r\n"; a line starting with
// ":" is a comment; "field: value" with one optional space after the colon;
// a blank line dispatches the event; an event without data is not
// dispatched; a partial event at end of stream is dropped.
type sseReader struct {
	r    *bufio.Reader
	name string
	data bytes.Buffer
	line []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event, io.EOF at the clean end of the stream,
// errSSETooLarge, or the body's read error.
func (s *sseReader) Next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if s.data.Len() == 0 {
				s.name = ""
				continue
			}
			ev := sseEvent{Name: s.name, Data: bytes.TrimSuffix(s.data.Bytes(), []byte("\n"))}
			if ev.Name == "" {
				ev.Name = "message"
			}
			// The caller must be done with ev.Data before the next call.
			s.name = ""
			s.data.Reset()
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			s.name = string(value)
		case "data":
			if s.data.Len()+len(value)+1 > maxEventBytes {
				return sseEvent{}, errSSETooLarge
			}
			s.data.Write(value)
			s.data.WriteByte('\n')
		}
		// "id", "retry" and unknown fields are ignored.
	}
}

// readLine returns one line without its terminator. The returned slice is
// valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(s.line)+len(chunk) > maxLineBytes {
			return nil, errSSETooLarge
		}
		switch {
		case err == nil:
			if len(s.line) == 0 {
				return trimEOL(chunk), nil // fast path: no copy
			}
			s.line = append(s.line, chunk...)
			return trimEOL(s.line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			s.line = append(s.line, chunk...)
		case err == io.EOF:
			// A final line without a terminator cannot complete an event.
			return nil, io.EOF
		default:
			return nil, fmt.Errorf("reading the event stream: %w", err)
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
