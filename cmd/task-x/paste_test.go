package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// chunks reads its parts one per Read, as a terminal delivers them.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// TestPasteFilter: a paste's text is replaced by a marker that the store
// trades back, whatever the reads' boundaries; keys around it pass as they
// are, a lone Esc at once.
func TestPasteFilter(t *testing.T) {
	big := strings.Repeat("a line of the paste\n", 5000)
	cases := []struct {
		name  string
		parts []string
		want  string // with P for the paste's marker
		paste string
	}{
		{"one read", []string{"ab\x1b[200~hello\nworld\x1b[201~\r"}, "abP\r", "hello\nworld"},
		{"split opening", []string{"ab\x1b[2", "00~hi\x1b[201~"}, "abP", "hi"},
		{"split closing", []string{"\x1b[200~hi\x1b[20", "1~x"}, "Px", "hi"},
		{"big in pieces", []string{"\x1b[200~" + big[:70000], big[70000:] + "\x1b[201~", "\r"}, "P\r", big},
		{"keys only", []string{"\x1b", "[A", "\x1b[2~"}, "\x1b[A\x1b[2~", ""},
	}
	for _, c := range cases {
		store := &pasteStore{}
		var out bytes.Buffer
		if err := pasteFilter(&chunks{parts: append([]string(nil), c.parts...)}, &out, store); err != io.EOF {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := out.String()
		if c.paste != "" {
			i, j := strings.Index(got, pasteStart), strings.Index(got, pasteEnd)
			if i < 0 || j < i {
				t.Fatalf("%s: no paste in %q", c.name, got)
			}
			if text := store.take(got[i+len(pasteStart) : j]); text != c.paste {
				t.Errorf("%s: the store gave %.80q, want %.80q", c.name, text, c.paste)
			}
			got = got[:i] + "P" + got[j+len(pasteEnd):]
		}
		if got != c.want {
			t.Errorf("%s: bubbletea reads %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPasteFilterLoneEsc: an Esc read alone is written before the next read.
func TestPasteFilterLoneEsc(t *testing.T) {
	pr, pw := io.Pipe()
	out := make(chan []byte, 4)
	go pasteFilter(pr, writerFunc(func(p []byte) (int, error) { out <- append([]byte(nil), p...); return len(p), nil }), &pasteStore{})
	pw.Write([]byte("\x1b"))
	if got := <-out; string(got) != "\x1b" {
		t.Fatalf("got %q", got)
	}
	pw.Close()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
