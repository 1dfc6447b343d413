package editlog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutText(t *testing.T) {
	if s, cut := CutText("short", 10); s != "short" || cut {
		t.Fatalf("%q %v", s, cut)
	}
	s, cut := CutText(strings.Repeat("é", 10), 5) // 2-byte runes: cut on a boundary
	if !cut || !utf8.ValidString(s) || !strings.HasPrefix(s, "éé\n[task-x: cut here, 16 more bytes") {
		t.Fatalf("%q %v", s, cut)
	}
}

// A pending reply holds at most MaxReplyContentBytes of contents plus markers,
// each field at most MaxContentBytes.
func TestBoundPending(t *testing.T) {
	big := strings.Repeat("x", 3*MaxContentBytes)
	small := "tiny"
	var files []Pending
	for range 8 {
		files = append(files, Pending{Path: "a", Original: &big, Current: &big})
	}
	files = append(files, Pending{Path: "b", Original: nil, Current: &small})
	boundPending(files)
	total := 0
	for _, f := range files[:8] {
		if !f.Truncated || len(*f.Original) > MaxContentBytes+200 || len(*f.Current) > MaxContentBytes+200 {
			t.Fatalf("a file is not cut: %d %d %v", len(*f.Original), len(*f.Current), f.Truncated)
		}
		total += len(*f.Original) + len(*f.Current)
	}
	if total > MaxReplyContentBytes+16*200 {
		t.Fatalf("the reply holds %d bytes of contents", total)
	}
	if last := files[8]; last.Current == nil || !strings.Contains(*last.Current, "more bytes not shown") || !last.Truncated {
		t.Fatalf("a file after the budget was spent keeps its content: %+v", last)
	}
}
