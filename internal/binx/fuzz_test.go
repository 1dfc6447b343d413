package binx

import (
	"bytes"
	"testing"
)

// FuzzReader runs reads chosen by ops over untrusted data (the corpus in
// testdata/fuzz/FuzzReader is kept): nothing panics, Len never grows, a
// count is never more than the bytes left can hold, a length-prefixed read
// stays inside the input, and once Err is set every read is zero and Len
// is 0.
func FuzzReader(f *testing.F) {
	var valid []byte
	valid = AppendUint(valid, 300)
	valid = AppendInt(valid, -5)
	valid = AppendBool(valid, true)
	valid = AppendString(valid, "name")
	valid = AppendStrings(valid, []string{"a", "bc", ""})
	valid = AppendUint(valid, 1)
	f.Add([]byte{0, 1, 2, 3, 8, 10}, valid)
	f.Add([]byte{4, 5, 6, 7, 9}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{8, 9, 10}, AppendStrings(nil, []string{"x", "y"}))
	f.Fuzz(func(t *testing.T, ops, data []byte) {
		orig := bytes.Clone(data)
		r := NewReader(data)
		var tab *Strings
		for i, op := range ops {
			before := r.Len()
			failed := r.Err() != nil
			var zero bool // the read returned its zero value
			switch op % 11 {
			case 0:
				zero = r.Uint() == 0
			case 1:
				zero = r.Int() == 0
			case 2:
				zero = !r.Bool()
			case 3:
				p := r.Bytes()
				zero = p == nil
				if len(p) > before {
					t.Fatalf("op %d: Bytes of %d with %d left", i, len(p), before)
				}
			case 4:
				min := int(op>>4) + 1
				n := r.Count(min)
				zero = n == 0
				if n*min > r.Len() {
					t.Fatalf("op %d: Count(%d) = %d with %d bytes left", i, min, n, r.Len())
				}
			case 5:
				zero = r.Max(uint64(op)) == 0
			case 6:
				zero = r.Int32() == 0
			case 7:
				zero = r.Uint64LE() == 0
			case 8:
				tab = r.ReadStrings()
				zero = tab.Len() == 0
				for j := range tab.Len() {
					_ = tab.At(j)
				}
			case 9:
				zero = r.Raw(int(op>>4)) == nil
			case 10:
				if tab != nil {
					zero = r.Ref(tab) == ""
				} else {
					zero = r.String() == ""
				}
			}
			if r.Len() > before {
				t.Fatalf("op %d: Len grew from %d to %d", i, before, r.Len())
			}
			if failed && (!zero || r.Len() != 0) {
				t.Fatalf("op %d: a read after the failure returned data (Len %d)", i, r.Len())
			}
		}
		if !bytes.Equal(data, orig) {
			t.Fatal("the Reader modified its input")
		}
	})
}

// FuzzRoundTrip: whatever is appended reads back the same and uses the
// input up exactly.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(0), int64(0), "", []byte(nil), false)
	f.Add(uint64(1<<63), int64(-1<<63), "héllo", []byte{0, 255}, true)
	f.Fuzz(func(t *testing.T, u uint64, i int64, s string, p []byte, flag bool) {
		var b []byte
		b = AppendUint(b, u)
		b = AppendInt(b, i)
		b = AppendString(b, s)
		b = AppendBytes(b, p)
		b = AppendBool(b, flag)
		b = AppendStrings(b, []string{s, string(p)})
		r := NewReader(b)
		gu, gi, gs, gp, gf := r.Uint(), r.Int(), r.String(), r.Bytes(), r.Bool()
		tab := r.ReadStrings()
		if r.Err() != nil || r.Len() != 0 {
			t.Fatalf("err %v, %d left", r.Err(), r.Len())
		}
		if gu != u || gi != i || gs != s || !bytes.Equal(gp, p) || gf != flag || tab.Len() != 2 || tab.At(0) != s || tab.At(1) != string(p) {
			t.Fatalf("read back %d %d %q %v %v %v", gu, gi, gs, gp, gf, tab)
		}
	})
}
