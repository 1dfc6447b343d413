package binx

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// Every value written by the Append functions reads back, in order, and
// the input is used up exactly.
func TestRoundTrip(t *testing.T) {
	var b []byte
	uints := []uint64{0, 1, 127, 128, 300, math.MaxUint32, math.MaxUint64}
	ints := []int64{0, -1, 1, -64, 64, math.MinInt64, math.MaxInt64}
	for _, v := range uints {
		b = AppendUint(b, v)
	}
	for _, v := range ints {
		b = AppendInt(b, v)
	}
	b = AppendBool(b, true)
	b = AppendBool(b, false)
	b = AppendBytes(b, []byte{0, 1, 2, 255})
	b = AppendBytes(b, nil)
	b = AppendString(b, "héllo")
	b = AppendUint(b, 3)                  // a count of 3 one-byte items
	b = append(b, 7, 8, 9)                // the items
	b = AppendInt(b, math.MinInt32)       // Int32 bounds
	b = AppendInt(b, math.MaxInt32)       //
	b = append(b, 1, 2, 3, 4, 5, 6, 7, 8) // Uint64LE
	b = AppendUint(b, 10)                 // Max(10)
	b = append(b, "raw!"...)

	r := NewReader(b)
	for _, want := range uints {
		if got := r.Uint(); got != want {
			t.Errorf("Uint = %d, want %d", got, want)
		}
	}
	for _, want := range ints {
		if got := r.Int(); got != want {
			t.Errorf("Int = %d, want %d", got, want)
		}
	}
	if !r.Bool() || r.Bool() {
		t.Error("Bool")
	}
	if got := r.Bytes(); !bytes.Equal(got, []byte{0, 1, 2, 255}) {
		t.Errorf("Bytes = %v", got)
	}
	if got := r.Bytes(); len(got) != 0 {
		t.Errorf("empty Bytes = %v", got)
	}
	if got := r.String(); got != "héllo" {
		t.Errorf("String = %q", got)
	}
	if n := r.Count(1); n != 3 || !bytes.Equal(r.Raw(n), []byte{7, 8, 9}) {
		t.Errorf("Count = %d", n)
	}
	if lo, hi := r.Int32(), r.Int32(); lo != math.MinInt32 || hi != math.MaxInt32 {
		t.Errorf("Int32 = %d, %d", lo, hi)
	}
	if got := r.Uint64LE(); got != 0x0807060504030201 {
		t.Errorf("Uint64LE = %#x", got)
	}
	if got := r.Max(10); got != 10 {
		t.Errorf("Max = %d", got)
	}
	if got := string(r.Raw(4)); got != "raw!" {
		t.Errorf("Raw = %q", got)
	}
	if r.Err() != nil || r.Len() != 0 {
		t.Fatalf("after reading everything: err %v, %d bytes left", r.Err(), r.Len())
	}
}

// Each kind of corrupt input fails with ErrCorrupt, and the failure
// sticks: every later read returns its zero value and Len is 0.
func TestCorruptInputFailsAndSticks(t *testing.T) {
	over := func(v uint64) []byte { return AppendUint(nil, v) }
	for name, tc := range map[string]struct {
		in   []byte
		read func(r *Reader)
	}{
		"uint empty":           {nil, func(r *Reader) { r.Uint() }},
		"uint truncated":       {[]byte{0x80, 0x80}, func(r *Reader) { r.Uint() }},
		"uint overlong":        {bytes.Repeat([]byte{0xff}, 11), func(r *Reader) { r.Uint() }},
		"int truncated":        {[]byte{0xff}, func(r *Reader) { r.Int() }},
		"bool empty":           {nil, func(r *Reader) { r.Bool() }},
		"bool two":             {[]byte{2}, func(r *Reader) { r.Bool() }},
		"max exceeded":         {over(11), func(r *Reader) { r.Max(10) }},
		"count over the input": {append(over(4), 1, 2, 3), func(r *Reader) { r.Count(1) }},
		"count of wide items":  {append(over(2), 1, 2, 3), func(r *Reader) { r.Count(2) }},
		"count huge":           {over(math.MaxUint64), func(r *Reader) { r.Count(0) }},
		"int32 over":           {AppendInt(nil, math.MaxInt32+1), func(r *Reader) { r.Int32() }},
		"int32 under":          {AppendInt(nil, math.MinInt32-1), func(r *Reader) { r.Int32() }},
		"uint64le short":       {[]byte{1, 2, 3}, func(r *Reader) { r.Uint64LE() }},
		"bytes over the input": {append(over(5), 'a', 'b'), func(r *Reader) { r.Bytes() }},
		"bytes huge length":    {over(math.MaxUint64), func(r *Reader) { r.Bytes() }},
		"raw negative":         {[]byte{1}, func(r *Reader) { r.Raw(-1) }},
		"raw over the input":   {[]byte{1}, func(r *Reader) { r.Raw(2) }},
		"strings count":        {over(3), func(r *Reader) { r.ReadStrings() }},
		"strings lengths":      {append(AppendUint(over(1), 9), "abc"...), func(r *Reader) { r.ReadStrings() }},
		"strings no text":      {AppendUint(AppendUint(over(2), 1), 1), func(r *Reader) { r.ReadStrings() }},
		"ref out of range": {append(AppendStrings(nil, []string{"a", "b"}), 2), func(r *Reader) {
			r.Ref(r.ReadStrings())
		}},
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReader(tc.in)
			tc.read(r)
			if !errors.Is(r.Err(), ErrCorrupt) {
				t.Fatalf("Err = %v, want ErrCorrupt", r.Err())
			}
			if r.Len() != 0 || r.Uint() != 0 || r.Int() != 0 || r.Bool() || r.String() != "" || r.Bytes() != nil ||
				r.Raw(0) != nil || r.Count(1) != 0 || r.ReadStrings().Len() != 0 || r.Uint64LE() != 0 {
				t.Fatal("a read after the failure returned data")
			}
			if !errors.Is(r.Err(), ErrCorrupt) {
				t.Fatalf("the first failure was replaced: %v", r.Err())
			}
		})
	}
}

// A failure with input left drops it: the read after it does not decode
// the bytes that follow the corrupt value.
func TestFailureDropsTheRest(t *testing.T) {
	r := NewReader(append([]byte{2}, AppendString(nil, "next")...))
	if r.Bool() || r.Err() == nil {
		t.Fatal("Bool of 2 decoded")
	}
	if r.Len() != 0 || r.String() != "" {
		t.Fatal("the bytes after the failure were read")
	}
}

// Fail keeps the first error, and nil means ErrCorrupt.
func TestFailKeepsFirst(t *testing.T) {
	mine := errors.New("version mismatch")
	r := NewReader([]byte{1, 2, 3})
	r.Fail(mine)
	r.Fail(nil)
	if r.Err() != mine || r.Len() != 0 {
		t.Fatalf("Err = %v, Len %d", r.Err(), r.Len())
	}
	r = NewReader([]byte{1})
	r.Fail(nil)
	if !errors.Is(r.Err(), ErrCorrupt) {
		t.Fatalf("Fail(nil) = %v", r.Err())
	}
}

// Bytes and Raw return sub-slices of the input whose capacity ends with
// them: appending to one never writes over the input that follows.
func TestSubSlicesDoNotAlias(t *testing.T) {
	in := append(AppendBytes(nil, []byte("ab")), "cd"...)
	r := NewReader(in)
	p := r.Bytes()
	if cap(p) != 2 {
		t.Fatalf("cap(Bytes) = %d, want 2", cap(p))
	}
	_ = append(p, 'X')
	q := r.Raw(1)
	_ = append(q, 'Y')
	if string(in[len(in)-2:]) != "cd" {
		t.Fatalf("the input was overwritten: %q", in)
	}
}

// A string table round-trips with StringIndex numbering, shares one
// string, and Ref reads indexes into it.
func TestStringsTable(t *testing.T) {
	var x StringIndex
	words := []string{"alpha", "", "beta", "alpha", "γ", "beta"}
	var refs []uint64
	for _, w := range words {
		refs = append(refs, x.Add(w))
	}
	if got := x.List(); len(got) != 4 || got[0] != "alpha" || got[1] != "" || got[2] != "beta" || got[3] != "γ" {
		t.Fatalf("List = %q", got)
	}
	if refs[0] != refs[3] || refs[2] != refs[5] {
		t.Fatalf("Add numbered a repeated string twice: %v", refs)
	}
	b := AppendStrings(nil, x.List())
	for _, id := range refs {
		b = AppendUint(b, id)
	}
	r := NewReader(b)
	tab := r.ReadStrings()
	if tab.Len() != 4 {
		t.Fatalf("Len = %d", tab.Len())
	}
	for i, w := range words {
		if got := r.Ref(tab); got != w {
			t.Errorf("Ref %d = %q, want %q", i, got, w)
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		t.Fatalf("err %v, %d left", r.Err(), r.Len())
	}
	empty := NewReader(AppendStrings(nil, nil)).ReadStrings()
	if empty.Len() != 0 {
		t.Fatalf("empty table Len = %d", empty.Len())
	}
}

// TestStringsTable: a table made in memory equals the one read back, is
// written as AppendStrings writes its entries, and finds its entries.
func TestSortedStringsTable(t *testing.T) {
	ss := []string{"", "a", "ab", "abc", "b", "ba", "zz"}
	tab := NewStrings(ss)
	if !tab.Sorted() || tab.Len() != len(ss) {
		t.Fatalf("table of %q: len %d, sorted %v", ss, tab.Len(), tab.Sorted())
	}
	if got, want := AppendTable(nil, tab), AppendStrings(nil, ss); string(got) != string(want) {
		t.Fatalf("AppendTable %x, AppendStrings %x", got, want)
	}
	back := NewReader(AppendTable(nil, tab)).ReadStrings()
	for i, s := range ss {
		if back.At(i) != s || tab.At(i) != s {
			t.Errorf("entry %d: %q / %q, want %q", i, tab.At(i), back.At(i), s)
		}
		if j, ok := tab.Find(s); !ok || j != i {
			t.Errorf("Find(%q) = %d, %v", s, j, ok)
		}
	}
	for _, c := range []struct {
		s    string
		want int
	}{{"aa", 2}, {"abd", 4}, {"c", 6}, {"zzz", 7}} {
		if i := tab.Search(c.s); i != c.want {
			t.Errorf("Search(%q) = %d, want %d", c.s, i, c.want)
		}
		if _, ok := tab.Find(c.s); ok {
			t.Errorf("Find(%q) found an absent entry", c.s)
		}
	}
	if NewStrings([]string{"b", "a"}).Sorted() || NewStrings([]string{"a", "a"}).Sorted() {
		t.Error("unsorted or duplicate entries reported sorted")
	}
	if !NewStrings(nil).Sorted() || NewStrings(nil).Search("x") != 0 {
		t.Error("empty table")
	}
}

// WriteStrings writes AppendStrings' bytes, StringsLen is their length,
// whatever the scratch buffer's size (strings longer than it, lengths
// whose varints straddle a flush, an empty table).
func TestWriteStrings(t *testing.T) {
	long := strings.Repeat("x", 300)
	tables := [][]string{nil, {""}, {"a", "", long, "bc", long + "y"}}
	var many []string
	for i := range 1000 {
		many = append(many, strings.Repeat("z", i%200))
	}
	tables = append(tables, many)
	for _, ss := range tables {
		want := AppendStrings(nil, ss)
		if n := StringsLen(ss); n != len(want) {
			t.Errorf("StringsLen = %d, want %d", n, len(want))
		}
		for _, size := range []int{0, 64, 65, 100, 1 << 16} {
			var got bytes.Buffer
			if err := WriteStrings(&got, ss, make([]byte, 0, size)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%d strings, buffer %d: WriteStrings wrote %d bytes, not AppendStrings' %d", len(ss), size, got.Len(), len(want))
			}
		}
	}
}

// TestStringsOwning checks the table that takes its arrays reads as the
// copying one, shares the caller's bytes, and refuses ends that do not
// end at the bytes' end.
func TestStringsOwning(t *testing.T) {
	all := []byte("alphabetagamma")
	ends := []uint32{5, 9, 14}
	own, cp := StringsOwning(all, ends), NewStringsBytes(all, ends)
	if own.Len() != 3 || own.Size() != cp.Size() {
		t.Fatalf("len %d size %d, want 3 and %d", own.Len(), own.Size(), cp.Size())
	}
	for i := range 3 {
		if own.At(i) != cp.At(i) {
			t.Fatalf("entry %d: %q, want %q", i, own.At(i), cp.At(i))
		}
	}
	if i, ok := own.Find("beta"); !ok || i != 1 {
		t.Fatalf("Find(beta) = %d, %v", i, ok)
	}
	all[0] = 'A' // the table took the bytes: no copy
	if own.At(0) != "Alpha" || cp.At(0) != "alpha" {
		t.Fatalf("owning %q, copying %q", own.At(0), cp.At(0))
	}
	if e := StringsOwning(nil, nil); e.Len() != 0 || e.Size() != 0 {
		t.Fatal("empty table not empty")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("ends short of the bytes' end accepted")
		}
	}()
	StringsOwning([]byte("abc"), []uint32{2})
}

// TestAppendTableFlushed: the flushed bytes, in order, are AppendTable's,
// whatever the chunk, and a flush that keeps the buffer gets them whole.
func TestAppendTableFlushed(t *testing.T) {
	var ss []string
	for i := range 300 {
		ss = append(ss, strings.Repeat(string(rune('a'+i%26)), i%37))
	}
	for _, tab := range []*Strings{NewStrings(nil), NewStrings([]string{""}), NewStrings(ss)} {
		want := AppendTable([]byte("head"), tab)
		for _, chunk := range []int{1, 2, 7, 64, 1000, 1 << 20} {
			var out []byte
			most := 0
			flush := func(b []byte) []byte {
				most = max(most, len(b))
				out = append(out, b...)
				return b[:0]
			}
			b := AppendTableFlushed([]byte("head"), tab, chunk, flush)
			out = append(out, b...)
			if !bytes.Equal(out, want) {
				t.Fatalf("chunk %d: %d bytes, not AppendTable's %d", chunk, len(out), len(want))
			}
			if limit := max(chunk, len("head")) + 10; most > limit {
				t.Errorf("chunk %d: flushed %d bytes at once", chunk, most)
			}
			kept := AppendTableFlushed([]byte("head"), tab, chunk, func(b []byte) []byte { return b })
			if !bytes.Equal(kept, want) {
				t.Fatalf("chunk %d, flush keeping the buffer: %d bytes, not AppendTable's %d", chunk, len(kept), len(want))
			}
		}
	}
}
