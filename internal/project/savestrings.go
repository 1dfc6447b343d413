package project

import "github.com/task-x/task-x-runtime/internal/syntax"

// saveStrings numbers the strings of a saved index's string table, each
// once, in the order of first use (what binx.StringIndex does with one
// map). Most of them are names of the process's name table (symbols,
// containers, references, the graph's edge symbols: ~80% of the mixed
// tree's 78 700), and a name is numbered through byName, a slot per name
// id, instead of a map entry: the map's entries were ~3.3 MB of a save's
// live heap there, in the seconds after a cold open where the heap is
// at its limit (docs/index.md "Memory: eleventh pass"). Any other string
// that the name table holds is numbered as that name, so the table is
// the one binx.StringIndex would make.
type saveStrings struct {
	list   []string
	byName []uint32          // name id -> index + 1 (0: not in the table yet)
	other  map[string]uint32 // strings that are not names
}

// newSaveStrings makes a table for about n strings, others of them not
// names (a past save's counts; 0 when unknown).
func newSaveStrings(n, others int) *saveStrings {
	return &saveStrings{
		list:   make([]string, 0, n+n/16),
		byName: make([]uint32, syntax.NameCount()),
		other:  make(map[string]uint32, others+others/16),
	}
}

// name returns the index of n's string.
func (t *saveStrings) name(n syntax.Name) uint64 {
	if int(n) >= len(t.byName) {
		// Names interned since the table was made (a parse beside the save).
		t.byName = append(t.byName, make([]uint32, max(int(n)+1, syntax.NameCount())-len(t.byName))...)
	}
	if i := t.byName[n]; i != 0 {
		return uint64(i - 1)
	}
	id := uint32(len(t.list))
	t.list = append(t.list, n.String())
	t.byName[n] = id + 1
	return uint64(id)
}

// add returns the index of s.
func (t *saveStrings) add(s string) uint64 {
	if n, ok := syntax.LookupName(s); ok && n.String() == s { // not a longer string cut to a name
		return t.name(n)
	}
	id, ok := t.other[s]
	if !ok {
		id = uint32(len(t.list))
		t.other[s] = id
		t.list = append(t.list, s)
	}
	return uint64(id)
}

// others is how many strings are not names.
func (t *saveStrings) others() int { return len(t.other) }
