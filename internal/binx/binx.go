// Package binx owns the small binary encoding of the saved index files
// (internal/project's workspace index, internal/retrieve's retrieval
// index): unsigned varints, length-prefixed bytes and strings, and a
// Reader that treats its input as untrusted. Every read is bounds
// checked; the first failure sticks (Reader.Err) and every later read
// returns zero values, so decoders read on and check once. Lengths are
// checked against the bytes left before anything is allocated, so a
// corrupt length cannot make a decoder allocate more than its input.
package binx

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// ErrCorrupt is the Reader's error for input that does not decode.
var ErrCorrupt = errors.New("binx: corrupt input")

// AppendUint appends v as an unsigned varint.
func AppendUint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendInt appends v zig-zag encoded.
func AppendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendBool appends one byte, 0 or 1.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendBytes appends len(p) then p.
func AppendBytes(b, p []byte) []byte { return append(AppendUint(b, uint64(len(p))), p...) }

// AppendString appends len(s) then s.
func AppendString(b []byte, s string) []byte { return append(AppendUint(b, uint64(len(s))), s...) }

// Reader decodes from a byte slice it never modifies.
type Reader struct {
	b   []byte
	err error
	// With a release function (SetRelease): the input, and how much of
	// it is released.
	in       []byte
	released int
	release  func([]byte) int
}

// ReleaseStep is how many bytes Release lets a Reader read between two
// calls of its release function.
const ReleaseStep = 256 << 10

// SetRelease makes Release hand the bytes read since the last release
// to release (a mapped file's pages dropped: project's index file).
// release returns how many leading bytes of its argument it released
// (whole pages only; the rest is handed again with the next bytes).
func (r *Reader) SetRelease(release func([]byte) int) {
	r.in, r.released, r.release = r.b, 0, release
}

// Release hands the bytes read and not yet released to the release
// function (SetRelease) when they are at least ReleaseStep, or when
// final (the caller reads nothing more of them); no-op without one.
// The caller must not read released bytes again: a decoder calls it
// between records, once what it keeps of them is copied.
func (r *Reader) Release(final bool) {
	if r.release == nil {
		return
	}
	n := len(r.in) - len(r.b) // all of it after a failure (b is nil)
	if n-r.released >= ReleaseStep || final && n > r.released {
		r.released += r.release(r.in[r.released:n])
	}
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first failure, nil while everything decoded.
func (r *Reader) Err() error { return r.err }

// Fail records err (ErrCorrupt when nil) unless a failure is recorded.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		if err == nil {
			err = ErrCorrupt
		}
		r.err = err
		r.b = nil
	}
}

// Len is the number of bytes not read yet.
func (r *Reader) Len() int { return len(r.b) }

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail(nil)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Int reads a zig-zag varint.
func (r *Reader) Int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.Fail(nil)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Bool reads one byte that must be 0 or 1.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 || r.b[0] > 1 {
		r.Fail(nil)
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

// Max reads an unsigned varint that must be at most max.
func (r *Reader) Max(max uint64) uint64 {
	v := r.Uint()
	if v > max {
		r.Fail(nil)
		return 0
	}
	return v
}

// Count reads a count of items each taking at least minBytes (≥ 1) of
// the input, failing when the input left cannot hold them; the result is
// safe to allocate.
func (r *Reader) Count(minBytes int) int {
	v := r.Uint()
	if minBytes < 1 {
		minBytes = 1
	}
	if r.err != nil || v > uint64(len(r.b)/minBytes) || v > math.MaxInt32 {
		r.Fail(nil)
		return 0
	}
	return int(v)
}

// Int32 reads a zig-zag varint that must fit an int32 (returned as int).
func (r *Reader) Int32() int {
	v := r.Int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.Fail(nil)
		return 0
	}
	return int(v)
}

// Uint64LE reads 8 bytes, little-endian.
func (r *Reader) Uint64LE() uint64 {
	b := r.Raw(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// Bytes reads a length-prefixed byte slice (a sub-slice of the input).
func (r *Reader) Bytes() []byte {
	n := r.Uint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.Fail(nil)
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// String reads a length-prefixed string (a copy).
func (r *Reader) String() string { return string(r.Bytes()) }

// Raw reads the next n bytes (a sub-slice of the input).
func (r *Reader) Raw(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.Fail(nil)
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// Strings is a table of strings kept as one string (its entries share
// its memory): the decoder of a saved index turns all its names into
// entries of one table instead of one allocation each.
type Strings struct {
	all  string
	ends []uint32
}

// AppendStrings appends a table of ss.
func AppendStrings(b []byte, ss []string) []byte {
	b = AppendUint(b, uint64(len(ss)))
	for _, s := range ss {
		b = AppendUint(b, uint64(len(s)))
	}
	for _, s := range ss {
		b = append(b, s...)
	}
	return b
}

// StringsLen is the length of AppendStrings' table of ss.
func StringsLen(ss []string) int {
	n := uvarintLen(uint64(len(ss)))
	for _, s := range ss {
		n += uvarintLen(uint64(len(s))) + len(s)
	}
	return n
}

// WriteStrings writes AppendStrings' table of ss to w through buf (a
// scratch buffer whose capacity bounds each write; it may be empty),
// never holding the whole table.
func WriteStrings(w io.Writer, ss []string, buf []byte) error {
	if cap(buf) < 64 {
		buf = make([]byte, 0, 64<<10)
	}
	b := AppendUint(buf[:0], uint64(len(ss)))
	flush := func(room int) error {
		if len(b)+room <= cap(b) {
			return nil
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		b = b[:0]
		return nil
	}
	for _, s := range ss {
		if err := flush(binary.MaxVarintLen64); err != nil {
			return err
		}
		b = AppendUint(b, uint64(len(s)))
	}
	for _, s := range ss {
		if len(s) > cap(b) {
			if err := flush(cap(b)); err != nil {
				return err
			}
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
			continue
		}
		if err := flush(len(s)); err != nil {
			return err
		}
		b = append(b, s...)
	}
	_, err := w.Write(b)
	return err
}

// uvarintLen is the length of AppendUint's encoding of v.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// ReadStrings reads a table written by AppendStrings.
func (r *Reader) ReadStrings() *Strings {
	n := r.Count(1)
	t := &Strings{ends: make([]uint32, n)}
	var total uint64
	for i := range n {
		total += r.Uint()
		if total > uint64(len(r.b)) {
			r.Fail(nil)
			return &Strings{}
		}
		t.ends[i] = uint32(total)
	}
	t.all = string(r.Raw(int(total)))
	if r.err != nil {
		return &Strings{}
	}
	return t
}

// Len is the number of entries.
func (t *Strings) Len() int { return len(t.ends) }

// At returns entry i; i must be in range.
func (t *Strings) At(i int) string {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.all[start:t.ends[i]]
}

// NewStrings returns a table of ss (one string holding them all).
func NewStrings(ss []string) *Strings {
	return NewStringsFunc(len(ss), func(i int) string { return ss[i] })
}

// NewStringsFunc returns a table of n entries, entry i being at(i).
func NewStringsFunc(n int, at func(i int) string) *Strings {
	size := 0
	for i := range n {
		size += len(at(i))
	}
	var b strings.Builder
	b.Grow(size)
	t := &Strings{ends: make([]uint32, n)}
	for i := range n {
		b.WriteString(at(i))
		t.ends[i] = uint32(b.Len())
	}
	t.all = b.String()
	return t
}

// NewStringsBytes returns a table whose entry i is all[ends[i-1]:ends[i]]
// (from 0 for the first); ends must be increasing and end at len(all).
// The table holds a copy of all and ends itself.
func NewStringsBytes(all []byte, ends []uint32) *Strings {
	if n := len(ends); n > 0 && int(ends[n-1]) != len(all) || n == 0 && len(all) != 0 {
		panic("binx: NewStringsBytes: ends do not end at the bytes' end")
	}
	if ends == nil {
		ends = []uint32{}
	}
	return &Strings{all: string(all), ends: ends}
}

// StringsOwning is NewStringsBytes without the copy: the table takes all
// and ends, which the caller must not change afterwards.
func StringsOwning(all []byte, ends []uint32) *Strings {
	if n := len(ends); n > 0 && int(ends[n-1]) != len(all) || n == 0 && len(all) != 0 {
		panic("binx: StringsOwning: ends do not end at the bytes' end")
	}
	if ends == nil {
		ends = []uint32{}
	}
	return &Strings{all: unsafe.String(unsafe.SliceData(all), len(all)), ends: ends}
}

// AppendTable appends t as AppendStrings appends its entries.
func AppendTable(b []byte, t *Strings) []byte {
	b = AppendUint(b, uint64(len(t.ends)))
	prev := uint32(0)
	for _, e := range t.ends {
		b = AppendUint(b, uint64(e-prev))
		prev = e
	}
	return append(b, t.all...)
}

// AppendTableFlushed appends what AppendTable does, calling flush (which
// returns the buffer to go on with) whenever b holds chunk bytes or more:
// a writer that streams b (a save) then never grows it to the table's
// size (the content terms' table: ~1.5 MB of the mixed benchmark tree's
// retrieval index, which the save's buffer grew to by doubling).
func AppendTableFlushed(b []byte, t *Strings, chunk int, flush func([]byte) []byte) []byte {
	b = AppendUint(b, uint64(len(t.ends)))
	prev := uint32(0)
	for _, e := range t.ends {
		b = AppendUint(b, uint64(e-prev))
		prev = e
		if len(b) >= chunk {
			b = flush(b)
		}
	}
	for all := t.all; len(all) > 0; {
		n := len(all)
		if room := chunk - len(b); room > 0 && room < n {
			n = room // else flush kept b whole: the rest at once
		}
		b = append(b, all[:n]...)
		all = all[n:]
		if len(b) >= chunk {
			b = flush(b)
		}
	}
	return b
}

// Size is the memory the table holds (its string and ends).
func (t *Strings) Size() int { return len(t.all) + 4*len(t.ends) }

// Sorted reports whether the entries are strictly increasing.
func (t *Strings) Sorted() bool {
	for i := 1; i < len(t.ends); i++ {
		if t.At(i) <= t.At(i-1) {
			return false
		}
	}
	return true
}

// Search returns the index of the first entry >= s in a table whose
// entries are sorted (Len when there is none).
func (t *Strings) Search(s string) int {
	lo, hi := 0, len(t.ends)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.At(m) < s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Find returns the index of s in a sorted table.
func (t *Strings) Find(s string) (int, bool) {
	i := t.Search(s)
	return i, i < len(t.ends) && t.At(i) == s
}

// Ref reads an index into t and returns its entry.
func (r *Reader) Ref(t *Strings) string {
	i := r.Uint()
	if r.err != nil {
		return ""
	}
	if i >= uint64(len(t.ends)) {
		r.Fail(nil)
		return ""
	}
	return t.At(int(i))
}

// StringIndex numbers strings for AppendStrings: Add returns the index
// of s, adding it when new.
type StringIndex struct {
	ids  map[string]uint32
	list []string
}

// Add returns the index of s.
func (x *StringIndex) Add(s string) uint64 {
	if x.ids == nil {
		x.ids = map[string]uint32{}
	}
	id, ok := x.ids[s]
	if !ok {
		id = uint32(len(x.list))
		x.ids[s] = id
		x.list = append(x.list, s)
	}
	return uint64(id)
}

// Grow makes room for n more strings (a caller that knows about how many
// it will add spares the map's and the list's doublings).
func (x *StringIndex) Grow(n int) {
	if x.ids == nil {
		x.ids = make(map[string]uint32, n)
	}
	x.list = slices.Grow(x.list, n)
}

// List is the strings in index order.
func (x *StringIndex) List() []string { return x.list }
