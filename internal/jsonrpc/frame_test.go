package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func readAll(r *Reader) ([]string, error) {
	var out []string
	for {
		line, err := r.Read()
		if err != nil {
			return out, err
		}
		out = append(out, string(line))
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		wantErr error
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", 0, []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"crlf", "a\r\nb\r\n", 0, []string{"a", "b"}, io.EOF},
		{"only one cr dropped", "a\r\r\n", 0, []string{"a\r"}, io.EOF},
		{"blank lines skipped", "\n\n  \t\r\n\r\nx\n\n", 0, []string{"x"}, io.EOF},
		{"unterminated last line", "a\nb", 0, []string{"a", "b"}, io.EOF},
		{"unterminated blank tail", "a\n   ", 0, []string{"a"}, io.EOF},
		{"u2028 is not a break", "[\"a\u2028b\u2029c\"]\n", 0, []string{"[\"a\u2028b\u2029c\"]"}, io.EOF},
		{"lone cr is not a break", "a\rb\n", 0, []string{"a\rb"}, io.EOF},
		{"empty", "", 0, nil, io.EOF},
		{"at cap", "12345\n", 5, []string{"12345"}, io.EOF},
		{"at cap crlf", "12345\r\n", 5, []string{"12345"}, io.EOF},
		{"over cap", "ok\n123456\nnever\n", 5, []string{"ok"}, ErrMessageTooLarge},
		{"over cap with cr", "123456\r\n", 5, nil, ErrMessageTooLarge},
		{"over cap unterminated", "123456", 5, nil, ErrMessageTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(NewReader(strings.NewReader(tt.in), tt.max))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReaderSmallBufferLongLines(t *testing.T) {
	// Lines longer than bufio's buffer are assembled from several chunks.
	long := strings.Repeat("x", 200_000)
	got, err := readAll(NewReader(strings.NewReader(long+"\r\n"+long+"y\n"), 200_001))
	if !errors.Is(err, io.EOF) || len(got) != 2 || got[0] != long || got[1] != long+"y" {
		t.Fatalf("got %d lines, err %v", len(got), err)
	}
}

func TestReaderErrorIsSticky(t *testing.T) {
	r := NewReader(strings.NewReader("123456\nok\n"), 5)
	for range 2 {
		if _, err := r.Read(); !errors.Is(err, ErrMessageTooLarge) {
			t.Fatalf("err = %v, want ErrMessageTooLarge", err)
		}
	}
}

// endless yields 'a' bytes forever and counts them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestReaderDefaultCapStopsReading(t *testing.T) {
	src := &endless{}
	_, err := NewReader(src, 0).Read()
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("err = %v", err)
	}
	// It reads at most the cap plus one buffer, never the rest of the line.
	if limit := int64(DefaultMaxMessageBytes + 2 + 64<<10); src.n > limit {
		t.Fatalf("read %d bytes, want <= %d", src.n, limit)
	}
}

func TestEncodeEscapesLineSeparators(t *testing.T) {
	raw := json.RawMessage("{\"s\":\"a\u2028b\u2029c<>&\"}")
	line, err := Encode(map[string]any{"raw": raw, "str": "x\u2028y"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte("\u2028")) || bytes.Contains(line, []byte("\u2029")) {
		t.Fatalf("raw line separators in %q", line)
	}
	want := `{"raw":{"s":"a\u2028b\u2029c<>&"},"str":"x\u2028y"}` + "\n"
	if string(line) != want {
		t.Fatalf("got %s want %s", line, want)
	}
	var back struct{ Raw struct{ S string } }
	if err := json.Unmarshal(line, &back); err != nil || back.Raw.S != "a\u2028b\u2029c<>&" {
		t.Fatalf("round trip: %v %q", err, back)
	}
}

func TestEncodeRefusesInvalidUTF8(t *testing.T) {
	if _, err := Encode(json.RawMessage("\"\xff\"")); err == nil {
		t.Fatal("invalid UTF-8 in a RawMessage was encoded")
	}
	// Strings are coerced by encoding/json, which is fine.
	if line, err := Encode("\xff"); err != nil || string(line) != `"\ufffd"`+"\n" {
		t.Fatalf("got %q, %v", line, err)
	}
}

func TestWriterConcurrentLinesNeverInterleave(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	payload := strings.Repeat("p", 10_000)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := w.Write(context.Background(), map[string]any{"g": g, "i": i, "p": payload}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["p"] != payload {
			t.Fatalf("line %d is not one message: %v", n, err)
		}
		n++
	}
	if n != 400 {
		t.Fatalf("got %d lines, want 400", n)
	}
}

// stallWriter blocks every Write until release is closed; entered is
// closed when the first Write has started.
type stallWriter struct {
	release, entered chan struct{}
	once             sync.Once
}

func (s *stallWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return len(p), nil
}

func TestWriterDoesNotBlockForeverBehindAStalledPeer(t *testing.T) {
	sw := &stallWriter{release: make(chan struct{}), entered: make(chan struct{})}
	defer close(sw.release)
	w := NewWriter(sw)
	go func() { _ = w.Write(context.Background(), "first, stuck in the peer") }()
	// The first write must be inside the peer before the second is tried
	// (a sleep here let the second win the race on a loaded machine, and
	// then the second was the one stuck in the peer, forever).
	<-sw.entered

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := w.Write(ctx, "second"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	done := make(chan error)
	go func() { done <- w.Write(context.Background(), "third") }()
	// Whether the third write is already waiting or not yet started when
	// Close runs, it must end with ErrClosed; the pause only makes the
	// waiting case the likely one.
	time.Sleep(10 * time.Millisecond)
	w.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Write still blocked after Close")
	}
	if err := w.Write(context.Background(), "late"); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

func TestWriterDoneCtxNeverWrites(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Write(ctx, 1); !errors.Is(err, context.Canceled) || buf.Len() != 0 {
		t.Fatalf("err = %v, wrote %q", err, buf.String())
	}
}
