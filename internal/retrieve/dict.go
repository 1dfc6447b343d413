package retrieve

import (
	"bytes"
	"hash/maphash"
	"slices"

	"github.com/task-x/task-x-runtime/internal/binx"
)

// termDict numbers the distinct terms a build shard sees, in the order
// first seen (local ids 0, 1, ...). It replaces a map[string]int32: the
// terms are one byte arena with end offsets and the table is open
// addressing over one []uint64 (a 32-bit hash tag and the id), so a
// shard's dictionary is three pointer-free arrays the GC does not scan,
// about half the bytes of the map (no string header, map slot and
// allocation per term), and a new term costs no allocation.
type termDict struct {
	seed  uint64   // termHash's
	slots []uint64 // 0: empty; else hash>>32<<32 | (id+1)
	arena []byte   // the terms' bytes, in id order
	ends  []uint32 // term id's bytes end at arena[ends[id]]
}

// appendDoubling is append with the capacity doubled when it runs out.
// append grows a large slice by about 1.25x, so a slice built up to n
// elements by it allocates ~5n in all (mostly garbage at once); doubling
// allocates ~2n. The build's dictionaries, term counts and pairs grow this
// way (mixed tree: the build's allocations 56 -> 41 MB, its garbage the
// GC must keep pace with at the open's peak).
func appendDoubling[T any](s []T, v ...T) []T {
	if n := len(s) + len(v); n > cap(s) {
		ns := make([]T, len(s), max(2*cap(s), n, 16))
		copy(ns, s)
		s = ns
	}
	return append(s, v...)
}

// dictMinSlots is the table's first size (a power of two).
const dictMinSlots = 1 << 12

func newTermDict() *termDict {
	return &termDict{seed: newHashSeed(), slots: make([]uint64, dictMinSlots)}
}

// len is the number of terms.
func (d *termDict) len() int { return len(d.ends) }

// term returns term id's bytes (a view of the arena).
func (d *termDict) term(id int32) []byte {
	start := uint32(0)
	if id > 0 {
		start = d.ends[id-1]
	}
	return d.arena[start:d.ends[id]:d.ends[id]]
}

// id returns t's id, adding t (copied) when it is new.
func (d *termDict) id(t []byte) int32 {
	h := termHash(d.seed, t)
	tag := h >> 32 << 32
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := d.slots[i]
		if s == 0 {
			id := int32(len(d.ends))
			d.arena = appendDoubling(d.arena, t...)
			d.ends = appendDoubling(d.ends, uint32(len(d.arena)))
			d.slots[i] = tag | uint64(id+1)
			if len(d.ends)*4 >= len(d.slots)*3 {
				d.grow()
			}
			return id
		}
		if s&^0xffffffff == tag {
			id := int32(uint32(s) - 1)
			if sameTerm(d.term(id), t) {
				return id
			}
		}
	}
}

// find returns t's id, if t is a term.
func (d *termDict) find(t []byte) (int32, bool) {
	if d.slots == nil {
		return 0, false
	}
	h := termHash(d.seed, t)
	tag := h >> 32 << 32
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := d.slots[i]
		if s == 0 {
			return 0, false
		}
		if s&^0xffffffff == tag {
			id := int32(uint32(s) - 1)
			if sameTerm(d.term(id), t) {
				return id, true
			}
		}
	}
}

// grow doubles the table. The slots keep only the hash's high half, so
// each term's hash is computed again from its bytes.
func (d *termDict) grow() {
	slots := make([]uint64, 2*len(d.slots))
	mask := uint64(len(slots) - 1)
	for id := range int32(len(d.ends)) {
		h := termHash(d.seed, d.term(id))
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h>>32<<32 | uint64(id+1)
	}
	d.slots = slots
}

// dropTable frees the hash table: the terms stay (term), find and id no
// longer work.
func (d *termDict) dropTable() { d.slots = nil }

// sorted returns the term ids in the terms' byte order.
func (d *termDict) sorted() []int32 {
	order := make([]int32, len(d.ends))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(d.term(a), d.term(b)) })
	return order
}

// idListBuilder gathers id lists per key, ids added in increasing order,
// for idLists: the keys in a termDict, the (key, id) pairs in one array,
// rather than a map of slices (an allocation per key and per growth of
// each list, all scanned by the GC).
type idListBuilder struct {
	dict  *termDict
	last  []uint32 // per key: 1 + the last id added
	pairs []uint64 // key<<32 | id, in the order added
}

func newIDListBuilder() *idListBuilder { return &idListBuilder{dict: newTermDict()} }

// add adds id to key's list unless it is its last id already.
func (b *idListBuilder) add(key []byte, id uint32) {
	k := b.dict.id(key)
	if int(k) == len(b.last) {
		b.last = appendDoubling(b.last, 0)
	}
	if b.last[k] == id+1 {
		return
	}
	b.last[k] = id + 1
	b.pairs = appendDoubling(b.pairs, uint64(k)<<32|uint64(id))
}

// lists returns the keys sorted and their lists, as flatIDLists would
// from a map of the same lists.
func (b *idListBuilder) lists() idLists {
	b.dict.dropTable()
	order := b.dict.sorted()
	rank := b.last // reused: key → rank
	all := make([]byte, 0, len(b.dict.arena))
	ends := make([]uint32, len(order))
	for r, k := range order {
		rank[k] = uint32(r)
		all = append(all, b.dict.term(k)...)
		ends[r] = uint32(len(all))
	}
	l := idLists{keys: binx.NewStringsBytes(all, ends), off: make([]uint32, len(order)+1), ids: make([]uint32, len(b.pairs))}
	for _, p := range b.pairs {
		l.off[rank[p>>32]+1]++
	}
	for r := range order {
		l.off[r+1] += l.off[r]
	}
	at := slices.Clone(l.off[:len(order)])
	for _, p := range b.pairs {
		r := rank[p>>32]
		l.ids[at[r]] = uint32(p)
		at[r]++
	}
	return l
}

// stringIDs numbers strings the caller keeps (at returns string id): an
// open-addressing table of (hash tag, id) over them, in place of a
// map[string]uint32 (a string header and map slot per entry, scanned by
// the GC): 8 bytes a slot, pointer-free.
type stringIDs struct {
	seed  maphash.Seed
	slots []uint64 // 0: empty; else hash>>32<<32 | (id+1)
	n     int
	at    func(id uint32) string
}

// newStringIDs returns an empty table for about size strings.
func newStringIDs(size int, at func(id uint32) string) *stringIDs {
	n := dictMinSlots
	for n*3 < size*4 {
		n *= 2
	}
	return &stringIDs{seed: maphash.MakeSeed(), slots: make([]uint64, n), at: at}
}

// lookup returns s's id, or, when s is absent, the slot for it and the
// hash tag.
func (x *stringIDs) lookup(h uint64, eq func(string) bool) (id uint32, found bool, slot uint64) {
	tag := h >> 32 << 32
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false, i
		}
		if s&^0xffffffff == tag {
			if id := uint32(s) - 1; eq(x.at(id)) {
				return id, true, i
			}
		}
	}
}

// add records that s is string id (s must be absent and at(id) must be s).
func (x *stringIDs) add(s string, id uint32) {
	h := maphash.String(x.seed, s)
	_, found, slot := x.lookup(h, func(t string) bool { return t == s })
	if found {
		panic("retrieve: stringIDs.add of a string present")
	}
	x.slots[slot] = h>>32<<32 | uint64(id+1)
	x.n++
	if x.n*4 >= len(x.slots)*3 {
		slots := make([]uint64, 2*len(x.slots))
		mask := uint64(len(slots) - 1)
		for _, s := range x.slots {
			if s == 0 {
				continue
			}
			h := maphash.String(x.seed, x.at(uint32(s)-1))
			i := h & mask
			for slots[i] != 0 {
				i = (i + 1) & mask
			}
			slots[i] = s
		}
		x.slots = slots
	}
}

// find returns s's id, if it has one.
func (x *stringIDs) find(s string) (uint32, bool) {
	id, found, _ := x.lookup(maphash.String(x.seed, s), func(t string) bool { return t == s })
	return id, found
}

// findBytes is find of string(b).
func (x *stringIDs) findBytes(b []byte) (uint32, bool) {
	id, found, _ := x.lookup(maphash.Bytes(x.seed, b), func(t string) bool { return t == string(b) })
	return id, found
}
