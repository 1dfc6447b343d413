package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// maxLine caps one SSE line and one event's data. A chunk is a few hundred
// bytes; a longer line means a broken or hostile server.
const maxLine = 16 << 20

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Type string // the "event:" field; "" when absent
	Data []byte // the "data:" lines joined by "\n"; valid until the next call
}

// sseReader splits a text/event-stream body into events
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): comment
// lines (": keep-alive") and unknown fields are skipped, data lines are
// joined, a blank line dispatches. Servers that omit the blank line between
// "data:" lines are read too: a data line that follows complete JSON starts
// a new event. An event still pending at EOF is dispatched.
type sseReader struct {
	r       *bufio.Reader
	line    []byte // reused buffer for lines longer than the bufio buffer
	data    []byte
	spare   []byte
	evType  string
	hasData bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// errLineTooLong reports a line or event over maxLine.
var errLineTooLong = &provider.Error{Kind: provider.KindProtocol, Message: "stream line exceeds 16 MiB"}

// next returns the next event. At the end of the body it returns io.EOF; any
// other error comes from reading the body or is errLineTooLong.
func (s *sseReader) next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.hasData {
				return s.dispatch(), nil
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if s.hasData {
				return s.dispatch(), nil
			}
			s.evType = ""
			continue
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "": // comment
		case "event":
			s.evType = string(value)
		case "data":
			if s.hasData && pendingComplete(s.data) {
				ev := s.dispatch()
				s.data = append(s.data, value...)
				s.hasData = true
				return ev, nil
			}
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > maxLine {
				return sseEvent{}, errLineTooLong
			}
			s.data = append(s.data, value...)
			s.hasData = true
		}
	}
}

// dispatch returns the pending event and resets the state. The event's Data
// is one of two buffers that alternate, so it stays valid until the next call
// of next even when that call's first data line starts the following event.
func (s *sseReader) dispatch() sseEvent {
	ev := sseEvent{Type: s.evType, Data: s.data}
	s.data, s.spare = s.spare[:0], s.data
	s.evType = ""
	s.hasData = false
	return ev
}

// pendingComplete reports whether data already holds a whole event: the
// [DONE] marker or a complete JSON value.
func pendingComplete(data []byte) bool {
	d := bytes.TrimSpace(data)
	return bytes.Equal(d, doneMarker) || (len(d) > 0 && (d[0] == '{' || d[0] == '[') && json.Valid(d))
}

var doneMarker = []byte("[DONE]")

// readLine returns the next line without its "\n" or "\r\n". The returned
// slice is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.line = append(s.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			if len(s.line)+len(line) > maxLine {
				return nil, errLineTooLong
			}
			s.line = append(s.line, line...)
		}
		line = s.line
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			return trimEOL(line), nil
		}
		return nil, err
	}
	return trimEOL(line), nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
