package sandbox

import (
	"fmt"
	"strings"
	"sync"
)

// headTail is an io.Writer that keeps the first and the last cap/2 bytes of
// what it is given and counts the rest, so output never grows memory without
// bound.
type headTail struct {
	mu      sync.Mutex
	half    int
	head    []byte
	tail    []byte // ring buffer of the last half bytes
	tailPos int
	total   int64
}

func newHeadTail(cap int) *headTail {
	return &headTail{half: cap / 2}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.total += int64(n)
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 && h.half > 0 {
		if len(h.tail) < h.half {
			k := min(h.half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= h.half {
			copy(h.tail, p[len(p)-h.half:])
			h.tailPos = 0
			break
		}
		k := copy(h.tail[h.tailPos:], p)
		p = p[k:]
		h.tailPos = (h.tailPos + k) % h.half
	}
	return n, nil
}

// String returns the kept output, with "[... N bytes omitted ...]" between
// head and tail when bytes were dropped, and whether any were.
func (h *headTail) String() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := append(append([]byte(nil), h.tail[h.tailPos:]...), h.tail[:h.tailPos]...)
	omitted := h.total - int64(len(h.head)) - int64(len(tail))
	if omitted <= 0 {
		return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD"), false
	}
	return strings.ToValidUTF8(string(h.head), "") +
		fmt.Sprintf("\n[... %d bytes omitted ...]\n", omitted) +
		strings.ToValidUTF8(string(tail), ""), true
}
