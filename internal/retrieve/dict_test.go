package retrieve

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A termDict numbers terms in the order first seen through its growths,
// finds each again, and sorts them in byte order.
func TestTermDict(t *testing.T) {
	d := newTermDict()
	var terms [][]byte
	for i := range 50000 {
		terms = append(terms, fmt.Appendf(nil, "t%x", i*7919))
	}
	terms = append(terms, []byte{}, []byte{0}, []byte("t"))
	for i, term := range terms {
		if id := d.id(term); id != int32(i) {
			t.Fatalf("id(%q) = %d, want %d", term, id, i)
		}
	}
	if d.len() != len(terms) {
		t.Fatalf("len %d, want %d", d.len(), len(terms))
	}
	for i, term := range terms {
		if id := d.id(slices.Clone(term)); id != int32(i) {
			t.Fatalf("again id(%q) = %d, want %d", term, id, i)
		}
		if id, ok := d.find(term); !ok || id != int32(i) {
			t.Fatalf("find(%q) = %d, %v", term, id, ok)
		}
		if !bytes.Equal(d.term(int32(i)), term) {
			t.Fatalf("term(%d) = %q, want %q", i, d.term(int32(i)), term)
		}
	}
	if _, ok := d.find([]byte("absent")); ok {
		t.Fatal("found an absent term")
	}
	order := d.sorted()
	for k := 1; k < len(order); k++ {
		if bytes.Compare(d.term(order[k-1]), d.term(order[k])) >= 0 {
			t.Fatalf("sorted: %q before %q", d.term(order[k-1]), d.term(order[k]))
		}
	}
	d.dropTable()
	if _, ok := d.find(terms[0]); ok {
		t.Fatal("find after dropTable")
	}
}

// readWhole reads a file to its end whatever the size it is told (the
// scan's size may be stale), into the buffer it is given.
func TestReadWhole(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 4096, 4097, 1 << 20} {
		want := bytes.Repeat([]byte("abcdefg\n"), n/8+1)[:n]
		abs := filepath.Join(dir, fmt.Sprint(n))
		if err := os.WriteFile(abs, want, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int64{0, int64(n) / 2, int64(n), int64(n) + 100} {
			for _, buf := range [][]byte{nil, make([]byte, 0, 10), []byte("keep")} {
				prefix := slices.Clone(buf)
				got, err := readWhole(buf, abs, size)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, append(prefix, want...)) {
					t.Fatalf("n %d size %d: read %d bytes, want %d", n, size, len(got), len(prefix)+n)
				}
			}
		}
	}
	if _, err := readWhole(nil, filepath.Join(dir, "missing"), 0); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := readWhole(nil, dir, 0); err == nil {
		t.Fatal("read a directory")
	}
}
