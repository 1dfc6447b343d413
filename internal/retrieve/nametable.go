package retrieve

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/task-x/task-x-runtime/internal/binx"
)

// nameTable lets matchSymbols skip, without reading them, the symbols whose
// name cannot match a query unit. Every distinct symbol name has an id;
// each definition key (ix.defs's keys: a name part or a whole name, stemmed)
// lists the names that produce it. A name matches a unit only through one
// of its keys (exact: its whole-name key is the unit's key; prefix: its
// whole-name key starts with the unit's key; part: a part's key is the
// unit's key), so the names listed under the unit's key and, for keys of 3
// or more bytes, under every key starting with it are all the names that
// may match. Names with a non-ASCII byte, and any name a key of which is
// not in the definition keys, are always checked. The table is derived from the
// index's symbols and definition keys by Build, and in the background after a
// LoadSaved with changed files; Search uses it once it is there and checks
// every symbol before, with the same results. It is saved with the index
// (appendSaved) and taken from there when nothing changed.
//
// Size on GOROOT/src (368 k symbols): see BenchmarkSearchGoSource's log.
type nameTable struct {
	symOff   []uint32 // file id → its symbols' name ids are ids[symOff[id]:symOff[id+1]]
	ids      []uint32 // name id per symbol, in symbolsOf order
	keyOff   []uint32 // definition key index → its names are keyNames[keyOff[k]:keyOff[k+1]]
	keyNames []uint32
	always   []uint32 // name ids always checked
	names    int      // distinct names
}

// bytes is the table's size.
func (t *nameTable) bytes() int {
	return 4 * (len(t.symOff) + len(t.ids) + len(t.keyOff) + len(t.keyNames) + len(t.always))
}

// nameHolder is where the background build leaves the name table; done
// is closed then.
type nameHolder struct {
	t    atomic.Pointer[nameTable]
	done chan struct{}
}

// builtNameTable is a holder of t, built already.
func builtNameTable(t *nameTable) *nameHolder {
	h := &nameHolder{done: closedChan}
	h.t.Store(t)
	return h
}

// startNameTable builds the name table in the background.
func (ix *Index) startNameTable() {
	h := &nameHolder{done: make(chan struct{})}
	ix.nt = h
	go func() {
		defer close(h.done)
		h.t.Store(ix.buildNameTable())
	}()
}

// nameTable returns the name table, nil while it is being built.
func (ix *Index) nameTable() *nameTable {
	if ix.nt == nil {
		return nil
	}
	return ix.nt.t.Load()
}

// NameTableBuilt is closed once the name table is built (at once after
// Build; after a load that builds it again, once its background build is
// done).
func (ix *Index) NameTableBuilt() <-chan struct{} {
	if ix.nt == nil {
		return closedChan
	}
	return ix.nt.done
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// waitNameTable waits for the background build (tests and benchmarks).
func (ix *Index) waitNameTable() {
	if ix.nt != nil {
		<-ix.nt.done
	}
}

func (ix *Index) buildNameTable() *nameTable {
	t := &nameTable{symOff: make([]uint32, len(ix.files)+1)}
	var distinct []string
	total := 0
	for _, f := range ix.files {
		total += len(symbolsOf(f))
	}
	t.ids = make([]uint32, 0, total)
	nameID := newStringIDs(0, func(n uint32) string { return distinct[n] })
	for id, f := range ix.files {
		for _, s := range symbolsOf(f) {
			name := s.Name.String()
			n, ok := nameID.find(name)
			if !ok {
				n = uint32(len(distinct))
				distinct = append(distinct, name)
				nameID.add(name, n)
			}
			t.ids = append(t.ids, n)
		}
		t.symOff[id+1] = uint32(len(t.ids))
	}
	nameID = nil
	distinct = slices.Clip(distinct)
	t.names = len(distinct)
	keyIdx := newStringIDs(ix.defs.len(), func(i uint32) string { return ix.defs.key(int(i)) })
	for i := range ix.defs.len() {
		keyIdx.add(ix.defs.key(i), uint32(i))
	}
	// Two passes over the names' keys: count per key, then fill.
	counts := make([]uint32, ix.defs.len()+1)
	var keys []uint32
	var sp asciiSplit
	var buf []byte
	nameKeys := func(name string) (ks []uint32, ok bool) {
		keys = keys[:0]
		for i := 0; i < len(name); i++ {
			if name[i] >= 0x80 {
				return nil, false
			}
		}
		ok = true
		eachNameKey(name, true, &sp, &buf, func(k []byte) {
			if !ok {
				return
			}
			i, found := keyIdx.findBytes(k)
			if !found {
				ok = false
				return
			}
			if !slices.Contains(keys, i) {
				keys = append(keys, i)
			}
		})
		if !ok {
			return nil, false
		}
		return keys, true
	}
	for n, name := range distinct {
		ks, ok := nameKeys(name)
		if !ok {
			t.always = append(t.always, uint32(n))
			continue
		}
		for _, k := range ks {
			counts[k+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	t.keyOff = counts
	t.keyNames = make([]uint32, counts[len(counts)-1])
	fill := append([]uint32(nil), counts[:len(counts)-1]...)
	for n, name := range distinct {
		ks, ok := nameKeys(name)
		if !ok {
			continue
		}
		for _, k := range ks {
			t.keyNames[fill[k]] = uint32(n)
			fill[k]++
		}
	}
	return t
}

// nameMask marks the names that may match a unit (nameTable); nil when a
// unit's key is shorter than 2 bytes (keys the index holds no parts of:
// every name is checked).
func (ix *Index) nameMask(t *nameTable, units []unit) []uint64 {
	mask := make([]uint64, (t.names+63)/64)
	set := func(ns []uint32) {
		for _, n := range ns {
			mask[n>>6] |= 1 << (n & 63)
		}
	}
	set(t.always)
	for _, u := range units {
		if len(u.key) < 2 {
			return nil
		}
		i := ix.defs.search(u.key)
		for ; i < ix.defs.len(); i++ {
			k := ix.defs.key(i)
			if k != u.key && (len(u.key) < 3 || !strings.HasPrefix(k, u.key)) {
				break
			}
			set(t.keyNames[t.keyOff[i]:t.keyOff[i+1]])
		}
	}
	return mask
}

// appendSaved appends the table: the name count, each file's symbol count
// and its symbols' name ids, each key's name count and its names (as
// increasing gaps), and the always-checked names (gaps).
func (t *nameTable) appendSaved(b []byte, flush func([]byte) []byte) []byte {
	b = binx.AppendUint(b, uint64(t.names))
	b = binx.AppendUint(b, uint64(len(t.symOff)-1))
	for id := range len(t.symOff) - 1 {
		b = binx.AppendUint(b, uint64(t.symOff[id+1]-t.symOff[id]))
		if id%4096 == 0 {
			b = flush(b)
		}
	}
	for i, n := range t.ids {
		b = binx.AppendUint(b, uint64(n))
		if i%4096 == 0 {
			b = flush(b)
		}
	}
	b = binx.AppendUint(b, uint64(len(t.keyOff)-1))
	b = binx.AppendUint(b, uint64(len(t.keyNames)))
	for k := range len(t.keyOff) - 1 {
		b = appendIncreasing(b, t.keyNames[t.keyOff[k]:t.keyOff[k+1]])
		b = flush(b)
	}
	return appendIncreasing(b, t.always)
}

// appendIncreasing appends the count and the gaps of an increasing list.
func appendIncreasing(b []byte, l []uint32) []byte {
	b = binx.AppendUint(b, uint64(len(l)))
	prev := uint32(0)
	for i, v := range l {
		if i == 0 {
			b = binx.AppendUint(b, uint64(v))
		} else {
			b = binx.AppendUint(b, uint64(v-prev))
		}
		prev = v
	}
	return b
}

// readNameTable reads what appendSaved wrote for files files and keys
// keys, failing r on anything out of form: a file or key count that is
// not files or keys, a name id not below the name count, names of a key
// not strictly increasing. (That each file's count is its symbols' is
// checked by Load, which has the files.)
func readNameTable(r *binx.Reader, files, keys int) *nameTable {
	t := &nameTable{names: int(r.Max(1 << 31))}
	if r.Count(1) != files || r.Err() != nil {
		r.Fail(nil)
		return nil
	}
	t.symOff = make([]uint32, files+1)
	total := 0
	for id := range files {
		total += r.Count(1)
		if total > r.Len() { // each id takes at least one byte
			r.Fail(nil)
			return nil
		}
		t.symOff[id+1] = uint32(total)
	}
	if t.names == 0 && total > 0 {
		r.Fail(nil)
		return nil
	}
	t.ids = make([]uint32, total)
	for i := range t.ids {
		t.ids[i] = uint32(r.Max(uint64(t.names) - 1))
		if i&4095 == 4095 {
			r.Release(false)
		}
	}
	r.Release(false)
	if r.Count(1) != keys || r.Err() != nil {
		r.Fail(nil)
		return nil
	}
	t.keyOff = make([]uint32, keys+1)
	t.keyNames = make([]uint32, 0, r.Count(1))
	for k := range keys {
		t.keyNames = readIncreasing(r, t.keyNames, t.names)
		if r.Err() != nil {
			return nil
		}
		t.keyOff[k+1] = uint32(len(t.keyNames))
		r.Release(false)
	}
	if len(t.keyNames) != cap(t.keyNames) {
		r.Fail(nil)
		return nil
	}
	t.always = readIncreasing(r, nil, t.names)
	if r.Err() != nil {
		return nil
	}
	return t
}

// readIncreasing appends to l a list appendIncreasing wrote: strictly
// increasing values below n. The list must fit l's capacity when l is
// not nil.
func readIncreasing(r *binx.Reader, l []uint32, n int) []uint32 {
	cnt := r.Count(1)
	if l != nil && cnt > cap(l)-len(l) {
		r.Fail(nil)
		return l
	}
	var prev uint64
	for k := range cnt {
		d := r.Uint()
		v := prev + d
		if (k > 0 && d == 0) || v >= uint64(n) || r.Err() != nil {
			r.Fail(nil)
			return l
		}
		l = append(l, uint32(v))
		prev = v
	}
	return l
}
