package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The live output buffer: a split character waits for its rest, output
// beyond a chunk between two flushes is dropped from the front with a
// count, and a call sends at most liveCap bytes, then one last note.
func TestLiveOutputBounds(t *testing.T) {
	l := newLiveOutput()
	l.write("stdout", []byte("caf\xc3"))
	evs := l.take("c1", false)
	if len(evs) != 1 || evs[0].Text != "caf" || evs[0].Stream != "stdout" || evs[0].CallID != "c1" {
		t.Fatalf("split character: %+v", evs)
	}
	l.write("stdout", []byte("\xa9!"))
	if evs := l.take("c1", false); len(evs) != 1 || evs[0].Text != "é!" {
		t.Fatalf("rest of it: %+v", evs)
	}
	l.write("stderr", []byte(strings.Repeat("x", liveChunk+500)))
	evs = l.take("c1", false)
	if len(evs) != 1 || !strings.HasPrefix(evs[0].Text, "[… 500 bytes not shown live …]\n") || !strings.HasSuffix(evs[0].Text, strings.Repeat("x", liveChunk)) {
		t.Fatalf("over a chunk: %d events, %q…", len(evs), evs[0].Text[:40])
	}
	for range 2 * liveCap / liveChunk {
		l.write("stdout", []byte(strings.Repeat("é", liveChunk/2)))
		for _, ev := range l.take("c1", false) {
			if !utf8.ValidString(ev.Text) {
				t.Fatal("invalid UTF-8 sent")
			}
		}
	}
	if l.sent > liveCap+200 || !l.capped {
		t.Fatalf("sent %d bytes (cap %d), capped %v", l.sent, liveCap, l.capped)
	}
	l.write("stdout", []byte("late"))
	if evs := l.take("c1", true); len(evs) != 0 {
		t.Fatalf("after the cap: %+v", evs)
	}
}
