package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Bracketed pastes are taken out of the keyboard's byte stream before
// bubbletea reads it. bubbletea v1 reads its input 256 bytes at a time and,
// inside a paste, copies and scans everything read so far on each read: a
// 1 MB paste took 9 s to arrive (a SIGQUIT showed the rest of issue 38's
// freeze in the prompt's editor). pasteFilter copies the terminal's bytes
// to bubbletea's input as they come, except that each paste's text is kept
// in a pasteStore and replaced by a short marker inside the same brackets;
// the session trades the marker for the text.

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
	// The marker is U+E000, the paste's number, U+E001 (private use
	// characters, which a terminal does not send for a key).
	markOpen, markClose = "\ue000", "\ue001"
)

// pasteStore holds the texts of the pastes by number.
type pasteStore struct {
	mu    sync.Mutex
	texts map[int]string
	next  int
}

func (s *pasteStore) put(text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = map[int]string{}
	}
	s.next++
	s.texts[s.next] = text
	return s.next
}

// take returns the text of the paste whose marker is marker and forgets it;
// anything else is returned as it is (a paste that did not pass the filter).
func (s *pasteStore) take(marker string) string {
	if s == nil || !strings.HasPrefix(marker, markOpen) || !strings.HasSuffix(marker, markClose) {
		return marker
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(marker, markOpen), markClose))
	if err != nil {
		return marker
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text, ok := s.texts[n]
	if !ok {
		return marker
	}
	delete(s.texts, n)
	return text
}

// pasteFilter copies in to out until in fails, each paste's text put in
// store and replaced by its marker. Bytes are written as soon as they are
// read (a lone Esc is a key), except the start of what may be a paste's
// opening sequence, which waits for the rest of it.
func pasteFilter(in io.Reader, out io.Writer, store *pasteStore) error {
	buf := make([]byte, 64<<10)
	var pending []byte // not yet written: a partial opening, or a paste
	inPaste := false
	searched := 0 // the paste's bytes already searched for its end
	for {
		n, err := in.Read(buf)
		pending = append(pending, buf[:n]...)
		var w bytes.Buffer
		for len(pending) > 0 {
			if inPaste {
				i := bytes.Index(pending[searched:], []byte(pasteEnd))
				if i < 0 {
					searched = max(0, len(pending)-len(pasteEnd)+1)
					break
				}
				i += searched
				fmt.Fprintf(&w, "%s%s%d%s%s", pasteStart, markOpen, store.put(string(pending[:i])), markClose, pasteEnd)
				pending = pending[i+len(pasteEnd):]
				inPaste, searched = false, 0
				continue
			}
			if i := bytes.Index(pending, []byte(pasteStart)); i >= 0 {
				w.Write(pending[:i])
				pending = pending[i+len(pasteStart):]
				inPaste = true
				continue
			}
			// Keep back a tail of two bytes or more that may begin an
			// opening; a key's own sequence differs from it by its end.
			keep := 0
			for k := min(len(pasteStart)-1, len(pending)); k >= 2; k-- {
				if bytes.HasSuffix(pending, []byte(pasteStart[:k])) {
					keep = k
					break
				}
			}
			w.Write(pending[:len(pending)-keep])
			pending = pending[len(pending)-keep:]
			break
		}
		if pending != nil && len(pending) == 0 {
			pending = nil
		} else if !inPaste && len(pending) > 0 {
			pending = append([]byte(nil), pending...)
		}
		if w.Len() > 0 {
			if _, werr := out.Write(w.Bytes()); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
}
