package editlog

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// numbered is "line 1\n" … "line n\n".
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d\n", i+1)
	}
	return out
}

func TestDiffHunksAsDiffU(t *testing.T) {
	old := numbered(30)
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), old...)), "")
	}
	oldText := strings.Join(old, "")
	cases := []struct {
		name, new string
		want      string
	}{
		{"one line changed, one removed", edit(func(l []string) []string {
			l[9] = "line ten\n"
			return append(l[:19], l[20:]...)
		}), "--- a/f.txt\n+++ b/f.txt\n" +
			"@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n" +
			"@@ -17,7 +17,6 @@\n line 17\n line 18\n line 19\n-line 20\n line 21\n line 22\n line 23\n"},
		{"a line added after a line", edit(func(l []string) []string {
			return append(l[:15], append([]string{"line 15b\n"}, l[15:]...)...)
		}), "--- a/f.txt\n+++ b/f.txt\n" +
			"@@ -13,6 +13,7 @@\n line 13\n line 14\n line 15\n+line 15b\n line 16\n line 17\n line 18\n"},
		{"first line replaced by two", edit(func(l []string) []string {
			return append([]string{"x\n", "y\n"}, l[1:]...)
		}), "--- a/f.txt\n+++ b/f.txt\n" +
			"@@ -1,4 +1,5 @@\n-line 1\n+x\n+y\n line 2\n line 3\n line 4\n"},
		{"last newline removed", edit(func(l []string) []string {
			l[29] = "line 30"
			return l
		}), "--- a/f.txt\n+++ b/f.txt\n" +
			"@@ -27,4 +27,4 @@\n line 27\n line 28\n line 29\n-line 30\n+line 30\n\\ No newline at end of file\n"},
	}
	for _, c := range cases {
		got, _, _ := Diff("f.txt", oldText, c.new, true, true)
		if got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	if got, a, r := Diff("n.txt", "", "a\nb\n", false, true); got != "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n" || a != 2 || r != 0 {
		t.Errorf("created file: %q +%d -%d", got, a, r)
	}
}

// lcsLen is the length of the longest common subsequence of a and b
// (quadratic table), the measure of a minimal diff.
func lcsLen(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// TestDiffMinimal: on random edits of files with repeated lines, the diff
// applies back to the new text and removes and adds as few lines as the
// longest common subsequence allows.
func TestDiffMinimal(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 200; iter++ {
		n := 5 + r.Intn(120)
		a := make([]string, n)
		for i := range a {
			a[i] = fmt.Sprintf("l%d\n", r.Intn(n/3+1))
		}
		b := append([]string(nil), a...)
		for e := r.Intn(20); e >= 0; e-- {
			i := r.Intn(len(b) + 1)
			switch r.Intn(3) {
			case 0:
				b = append(b[:i], append([]string{fmt.Sprintf("new%d\n", r.Intn(5))}, b[i:]...)...)
			case 1:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				if i < len(b) {
					b[i] = "changed " + b[i]
				}
			}
		}
		old, new := strings.Join(a, ""), strings.Join(b, "")
		edits := lineEdits(old, new)
		if got, err := udiff.Apply(old, edits); err != nil || got != new {
			t.Fatalf("iter %d: edits do not apply back (%v)", iter, err)
		}
		_, added, removed := Diff("f", old, new, true, true)
		l := lcsLen(a, b)
		if removed != len(a)-l || added != len(b)-l {
			t.Errorf("iter %d: +%d -%d; a minimal diff is +%d -%d", iter, added, removed, len(b)-l, len(a)-l)
		}
	}
}

// TestDiffLargeScattered: a long file with a line changed every 97 lines
// shows just those lines (go-udiff's own diff search stops early and
// would show the whole file replaced).
func TestDiffLargeScattered(t *testing.T) {
	old := numbered(20000)
	b := append([]string(nil), old...)
	changed := 0
	for i := 0; i < len(b); i += 97 {
		b[i] = "changed\n"
		changed++
	}
	text, added, removed := Diff("f", strings.Join(old, ""), strings.Join(b, ""), true, true)
	if added != changed || removed != changed {
		t.Errorf("+%d -%d; want +%d -%d", added, removed, changed, changed)
	}
	if !strings.Contains(text, "@@ -95,7 +95,7 @@\n line 95\n line 96\n line 97\n-line 98\n+changed\n line 99\n") {
		t.Errorf("hunk of line 98 missing:\n%.600s", text)
	}
}

// BenchmarkDiff: a one-line change in a 2000-line file (the common edit)
// and a line changed every 97 lines of a 200 000-line file.
func BenchmarkDiff(b *testing.B) {
	for _, c := range []struct {
		name  string
		n     int
		every int
	}{{"2000lines-1change", 2000, 5000}, {"200000lines-every97", 200000, 97}} {
		old := numbered(c.n)
		nw := append([]string(nil), old...)
		nw[c.n/2] = "changed\n"
		for i := 0; i < c.n; i += c.every {
			nw[i] = "changed\n"
		}
		o, n := strings.Join(old, ""), strings.Join(nw, "")
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Diff("f", o, n, true, true)
			}
		})
	}
}
