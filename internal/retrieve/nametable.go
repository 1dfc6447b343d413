package retrieve

import (
	"sort"
	"strings"
	"sync/atomic"
)

// nameTable lets matchSymbols skip, without reading them, the symbols whose
// name cannot match a query unit. Every distinct symbol name has an id;
// each definition key (ix.defKeys: a name part or a whole name, stemmed)
// lists the names that produce it. A name matches a unit only through one
// of its keys (exact: its whole-name key is the unit's key; prefix: its
// whole-name key starts with the unit's key; part: a part's key is the
// unit's key), so the names listed under the unit's key and, for keys of 3
// or more bytes, under every key starting with it are all the names that
// may match. Names with a non-ASCII byte, and any name a key of which is
// not in defKeys, are always checked. The table is derived from the
// index's symbols and defKeys (nothing of it is saved) in the background
// after Build or LoadSaved; Search uses it once it is there and checks
// every symbol before, with the same results.
//
// Size on GOROOT/src (368 k symbols): see BenchmarkSearchGoSource's log.
type nameTable struct {
	symOff   []uint32 // file id → its symbols' name ids are ids[symOff[id]:symOff[id+1]]
	ids      []uint32 // name id per symbol, in symbolsOf order
	keyOff   []uint32 // defKeys index → its names are keyNames[keyOff[k]:keyOff[k+1]]
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

// waitNameTable waits for the background build (tests and benchmarks).
func (ix *Index) waitNameTable() {
	if ix.nt != nil {
		<-ix.nt.done
	}
}

func (ix *Index) buildNameTable() *nameTable {
	t := &nameTable{symOff: make([]uint32, len(ix.files)+1)}
	nameID := map[string]uint32{}
	var distinct []string
	total := 0
	for _, f := range ix.files {
		total += len(symbolsOf(f))
	}
	t.ids = make([]uint32, 0, total)
	for id, f := range ix.files {
		for _, s := range symbolsOf(f) {
			n, ok := nameID[s.Name]
			if !ok {
				n = uint32(len(distinct))
				nameID[s.Name] = n
				distinct = append(distinct, s.Name)
			}
			t.ids = append(t.ids, n)
		}
		t.symOff[id+1] = uint32(len(t.ids))
	}
	nameID = nil
	t.names = len(distinct)
	keyIdx := make(map[string]uint32, len(ix.defKeys))
	for i, k := range ix.defKeys {
		keyIdx[k] = uint32(i)
	}
	// Two passes over the names' keys: count per key, then fill.
	counts := make([]uint32, len(ix.defKeys)+1)
	var keys []uint32
	nameKeys := func(name string) (ks []uint32, ok bool) {
		keys = keys[:0]
		for i := 0; i < len(name); i++ {
			if name[i] >= 0x80 {
				return nil, false
			}
		}
		parts := SplitIdentifier(name)
		add := func(k string) bool {
			i, found := keyIdx[k]
			if !found {
				return false
			}
			for _, x := range keys {
				if x == i {
					return true
				}
			}
			keys = append(keys, i)
			return true
		}
		for _, p := range parts {
			if len(p) >= 2 && !add(stem(p)) {
				return nil, false
			}
		}
		if len(parts) > 1 && !add(stem(joined(parts))) {
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
		i := sort.SearchStrings(ix.defKeys, u.key)
		for ; i < len(ix.defKeys); i++ {
			k := ix.defKeys[i]
			if k != u.key && (len(u.key) < 3 || !strings.HasPrefix(k, u.key)) {
				break
			}
			set(t.keyNames[t.keyOff[i]:t.keyOff[i+1]])
		}
	}
	return mask
}
