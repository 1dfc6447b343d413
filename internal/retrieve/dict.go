package retrieve

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// termDict numbers the distinct terms a build shard sees, in the order
// first seen (local ids 0, 1, ...). It replaces a map[string]int32: the
// terms are one byte arena with end offsets and the table is open
// addressing over one []uint64 (a 32-bit hash tag and the id), so a
// shard's dictionary is three pointer-free arrays the GC does not scan,
// about half the bytes of the map (no string header, map slot and
// allocation per term), and a new term costs no allocation.
type termDict struct {
	seed  maphash.Seed
	slots []uint64 // 0: empty; else hash>>32<<32 | (id+1)
	arena []byte   // the terms' bytes, in id order
	ends  []uint32 // term id's bytes end at arena[ends[id]]
}

// dictMinSlots is the table's first size (a power of two).
const dictMinSlots = 1 << 12

func newTermDict() *termDict {
	return &termDict{seed: maphash.MakeSeed(), slots: make([]uint64, dictMinSlots)}
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
	h := maphash.Bytes(d.seed, t)
	tag := h >> 32 << 32
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := d.slots[i]
		if s == 0 {
			id := int32(len(d.ends))
			d.arena = append(d.arena, t...)
			d.ends = append(d.ends, uint32(len(d.arena)))
			d.slots[i] = tag | uint64(id+1)
			if len(d.ends)*4 >= len(d.slots)*3 {
				d.grow()
			}
			return id
		}
		if s&^0xffffffff == tag {
			id := int32(uint32(s) - 1)
			if bytes.Equal(d.term(id), t) {
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
	h := maphash.Bytes(d.seed, t)
	tag := h >> 32 << 32
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := d.slots[i]
		if s == 0 {
			return 0, false
		}
		if s&^0xffffffff == tag {
			id := int32(uint32(s) - 1)
			if bytes.Equal(d.term(id), t) {
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
		h := maphash.Bytes(d.seed, d.term(id))
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
