package syntax

import (
	"encoding/binary"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// Name is a name's id in the process's name table: FileInfo.Refs (and the
// graph's edge symbols) are 4-byte ids instead of 16-byte string headers.
// The table also holds the one copy of every symbol name and container the
// parser keeps (intern), so a name is stored once for the process however
// many files and structures use it. Name 0 is the empty name. String
// returns the name; the text and JSON forms are the name itself.
//
// The table only grows: a name, once seen, is kept for the life of the
// process (names are identifiers, at most a few hundred thousand for a
// large tree; unique.Make, which this replaces, freed the names no file
// used any more, but cost ~80 bytes a name more; docs/index.md, "Memory:
// sixth pass"). So that a file cannot grow it by megabytes per edit, a
// name is cut to MaxName bytes (clipName); and a table that is full (2^32
// names, or 4 GiB of them) hands out Name 0, "no name", for every new name
// instead of failing: the parser then keeps no symbol or reference by it,
// and a saved index that needs one is not used.
type Name uint32

// MaxName is the longest name the table keeps, in bytes. References are
// 128 bytes at most already; a symbol name or container over MaxName is
// generated or hostile text (a 400 KB identifier rewritten on every edit
// grew the table by its length each time). Such a name keeps its first
// bytes, cut at a character boundary, followed by "…", so the symbol is
// still listed and found by its start.
const MaxName = 1024

// clipName is s, or its first bytes and "…" when it is over MaxName bytes.
func clipName(s string) string {
	if len(s) <= MaxName {
		return s
	}
	n := MaxName - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// String returns the name n stands for. n must come from this process's
// table (InternName, LookupName, a FileInfo).
func (n Name) String() string { return names.state.Load().str(uint32(n)) }

// MarshalText is the name.
func (n Name) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText interns the name b.
func (n *Name) UnmarshalText(b []byte) error {
	*n = InternName(string(b))
	return nil
}

// InternName returns the id of s (cut to MaxName bytes: clipName), adding
// it to the table when new; 0 for "" and, once the table is full, for a
// name it does not hold.
func InternName(s string) Name {
	if s == "" {
		return 0
	}
	return names.intern(clipName(s))
}

// LookupName returns the id of s (cut to MaxName bytes) when the table
// holds it.
func LookupName(s string) (Name, bool) {
	if s == "" {
		return 0, true
	}
	return names.lookup(clipName(s))
}

// NameCount is how many ids the table has handed out, the empty name's
// included: every Name is below it.
func NameCount() int {
	names.mu.Lock()
	defer names.mu.Unlock()
	return int(names.n)
}

// Names returns the names of ids, in order (nil for nil).
func Names(ids []Name) []string {
	if ids == nil {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

const (
	namePageBits = 12
	namePageSize = 1 << namePageBits
	// nameChunkBits sizes the chunks names are copied into (a longer name
	// gets a chunk of its own); a name's place is its chunk and its
	// offset in it, in 32 bits.
	nameChunkBits = 16
	nameChunk     = 1 << nameChunkBits
)

// nameTable is the process's names. A name's bytes are copied, after
// their length (uvarint), into chunks that never move; its id indexes
// pages of places (chunk << nameChunkBits | offset, 4 bytes a name), and
// an open-addressing hash of ids (slots) finds the id of a name. Nothing
// in it holds a pointer but the directories (the GC never scans the
// names). Adding and looking up a name take mu; String reads the current
// nameState without a lock: it is replaced, never modified, when a page
// or chunk is added, and a place is written before its id is handed out.
type nameTable struct {
	mu        sync.Mutex
	seed      maphash.Seed
	slots     []uint32 // ids; 0 (the empty name, never in the hash) is a free slot
	n         uint32   // names held, the empty name included
	used      int      // bytes used of the last chunk
	maxNames  uint32   // ids handed out at most, the empty name included
	maxChunks int      // chunks at most (a place holds the chunk in 32-nameChunkBits bits)
	full      bool     // a name was refused (logged once)
	state     atomic.Pointer[nameState]
}

// nameState is the directories String reads: the pages of places and
// the chunks.
type nameState struct {
	pages  []*[namePageSize]uint32
	chunks [][]byte
}

// str is name id's string.
func (d *nameState) str(id uint32) string {
	place := d.pages[id>>namePageBits][id&(namePageSize-1)]
	c := d.chunks[place>>nameChunkBits]
	b := c[place&(nameChunk-1):]
	n, k := binary.Uvarint(b)
	return unsafe.String(unsafe.SliceData(b[k:]), int(n))
}

var names = newNameTable()

func newNameTable() *nameTable {
	t := &nameTable{seed: maphash.MakeSeed(), slots: make([]uint32, 1<<14), n: 1, used: 1,
		maxNames: ^uint32(0), maxChunks: 1 << (32 - nameChunkBits)}
	// Name 0 is "" at offset 0 of the first chunk (its length, 0).
	t.state.Store(&nameState{pages: []*[namePageSize]uint32{new([namePageSize]uint32)}, chunks: [][]byte{make([]byte, nameChunk)}})
	return t
}

func (t *nameTable) lookup(s string) (Name, bool) {
	h := maphash.String(t.seed, s)
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.state.Load()
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		id := t.slots[i]
		if id == 0 {
			return 0, false
		}
		if d.str(id) == s {
			return Name(id), true
		}
	}
}

func (t *nameTable) intern(s string) Name {
	h := maphash.String(t.seed, s)
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.state.Load()
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for ; t.slots[i] != 0; i = (i + 1) & mask {
		if id := t.slots[i]; d.str(id) == s {
			return Name(id)
		}
	}
	id := t.n
	// Copy the length and s into the last chunk, or a new one.
	var lb [binary.MaxVarintLen64]byte
	need := binary.PutUvarint(lb[:], uint64(len(s))) + len(s)
	if id >= t.maxNames || need > nameChunk-t.used && len(d.chunks) >= t.maxChunks {
		if !t.full {
			t.full = true
			slog.Warn("the name table is full: symbols and references by new names are dropped until the runtime restarts",
				"names", t.n, "chunks", len(d.chunks))
		}
		return 0
	}
	newPage := int(id>>namePageBits) == len(d.pages)
	if need > nameChunk-t.used || newPage {
		nd := &nameState{pages: d.pages, chunks: d.chunks}
		if need > nameChunk-t.used {
			nd.chunks = append(d.chunks[:len(d.chunks):len(d.chunks)], make([]byte, max(nameChunk, need)))
			t.used = 0
		}
		if newPage {
			nd.pages = append(d.pages[:len(d.pages):len(d.pages)], new([namePageSize]uint32))
		}
		d = nd
	}
	c := len(d.chunks) - 1
	k := binary.PutUvarint(d.chunks[c][t.used:], uint64(len(s)))
	copy(d.chunks[c][t.used+k:], s)
	d.pages[id>>namePageBits][id&(namePageSize-1)] = uint32(c)<<nameChunkBits | uint32(t.used)
	t.used += need
	t.state.Store(d) // after the writes (a new state or the same)
	t.n++
	t.slots[i] = id
	if uint64(t.n)*4 > uint64(len(t.slots))*3 {
		t.grow(d)
	}
	return Name(id)
}

// grow doubles the slots and places every name again.
func (t *nameTable) grow(d *nameState) {
	slots := make([]uint32, 2*len(t.slots))
	mask := uint64(len(slots) - 1)
	for id := uint32(1); id < t.n; id++ {
		i := maphash.String(t.seed, d.str(id)) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = id
	}
	t.slots = slots
}

// InternNames returns the ids of ss, in order (nil for nil).
func InternNames(ss []string) []Name {
	if ss == nil {
		return nil
	}
	out := make([]Name, len(ss))
	for i, s := range ss {
		out[i] = InternName(s)
	}
	return out
}
