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

// nameKeysRef is what eachNameKey must give: SplitIdentifier's parts of
// two or more bytes stemmed, then (whole, several parts) the parts joined
// and stemmed.
func nameKeysRef(name string, whole bool) []string {
	var out []string
	parts := SplitIdentifier(name)
	for _, t := range parts {
		if len(t) >= 2 {
			out = append(out, stem(t))
		}
	}
	if whole && len(parts) > 1 {
		out = append(out, stem(joined(parts)))
	}
	return out
}

var nameKeySeeds = []string{"", "a", "ab", "parseHTTPRequest", "snake_case_names", "src/config/loadFile.ts", "XMLHttpRequest",
	"v2Client", "ÉtéParser", "caf\xc3\xa9_policies", "Entries", "__init__", "a-b.c/d", "HTTP2Server", "x\xffy", "ABCs", "ClassesBoxes"}

func checkNameKeys(t *testing.T, name string) {
	t.Helper()
	var sp asciiSplit
	var buf []byte
	for _, whole := range []bool{false, true} {
		var got []string
		eachNameKey(name, whole, &sp, &buf, func(k []byte) { got = append(got, string(k)) })
		if want := nameKeysRef(name, whole); !slices.Equal(got, want) {
			t.Fatalf("eachNameKey(%q, %v) = %q, want %q", name, whole, got, want)
		}
	}
}

func TestEachNameKey(t *testing.T) {
	for _, s := range nameKeySeeds {
		checkNameKeys(t, s)
	}
}

func FuzzEachNameKey(f *testing.F) {
	for _, s := range nameKeySeeds {
		f.Add(s)
	}
	f.Fuzz(checkNameKeys)
}

// An idListBuilder gives what flatIDLists gives for the same lists.
func TestIDListBuilder(t *testing.T) {
	b := newIDListBuilder()
	m := map[string][]uint32{}
	for id := range uint32(3000) {
		for _, k := range []string{fmt.Sprint(id % 7), fmt.Sprint(id % 13), fmt.Sprint(id % 7), fmt.Sprintf("k%d", id*31%1000)} {
			b.add([]byte(k), id)
			addID(m, k, id)
		}
	}
	got, want := b.lists(), flatIDLists(m)
	if got.len() != want.len() || !slices.Equal(got.off, want.off) || !slices.Equal(got.ids, want.ids) {
		t.Fatalf("lists differ: %d keys vs %d", got.len(), want.len())
	}
	for i := range got.len() {
		if got.key(i) != want.key(i) {
			t.Fatalf("key %d: %q vs %q", i, got.key(i), want.key(i))
		}
	}
	if e := newIDListBuilder().lists(); e.len() != 0 || len(e.off) != 1 || len(e.ids) != 0 {
		t.Fatalf("empty builder: %+v", e)
	}
}

// stringIDs finds what was added, by string and by bytes, through growth.
func TestStringIDs(t *testing.T) {
	var list []string
	x := newStringIDs(0, func(id uint32) string { return list[id] })
	for i := range 20000 {
		s := fmt.Sprintf("name%d", i*13)
		list = append(list, s)
		x.add(s, uint32(i))
	}
	for i, s := range list {
		if id, ok := x.find(s); !ok || id != uint32(i) {
			t.Fatalf("find(%q) = %d, %v", s, id, ok)
		}
		if id, ok := x.findBytes([]byte(s)); !ok || id != uint32(i) {
			t.Fatalf("findBytes(%q) = %d, %v", s, id, ok)
		}
	}
	if _, ok := x.find("name1"); ok {
		t.Fatal("found an absent string")
	}
}

// TestSameTerm holds sameTerm to bytes.Equal on every length a term can
// have, differing at each byte.
func TestSameTerm(t *testing.T) {
	for n := 0; n <= maxTermLen+3; n++ {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + i%26)
		}
		if !sameTerm(a, bytes.Clone(a)) {
			t.Fatalf("len %d: equal terms differ", n)
		}
		if n > 0 && sameTerm(a, a[:n-1]) {
			t.Fatalf("len %d: a prefix is equal", n)
		}
		for i := range n {
			b := bytes.Clone(a)
			b[i] ^= 1
			if sameTerm(a, b) != bytes.Equal(a, b) {
				t.Fatalf("len %d, byte %d differs: sameTerm says equal", n, i)
			}
		}
	}
}

// TestTermHashSpreads checks termHash over the lengths terms have: equal
// bytes hash equal under one seed, and a one-byte change changes the low
// bits the table's slots use as well as the high bits of its tag. The
// seed is fixed, so the test is deterministic (a random one would see a
// 16-bit collision now and then).
func TestTermHashSpreads(t *testing.T) {
	const seed = 0x9e3779b97f4a7c15
	for n := 1; n <= maxTermLen+20; n++ {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + (i*7)%26)
		}
		h := termHash(seed, a)
		if termHash(seed, bytes.Clone(a)) != h {
			t.Fatalf("len %d: equal bytes hash differently", n)
		}
		for i := range n {
			b := bytes.Clone(a)
			b[i]++
			g := termHash(seed, b)
			if g&0xffff == h&0xffff || g>>48 == h>>48 {
				t.Errorf("len %d, byte %d changed: hash %x against %x", n, i, g, h)
			}
		}
	}
}
