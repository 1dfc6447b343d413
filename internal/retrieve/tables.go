package retrieve

import (
	"slices"

	"github.com/task-x/task-x-runtime/internal/binx"
)

// idLists maps sorted keys to increasing lists of file ids, flat: the
// keys in one string table, the lists in one array. A map of slices cost
// ~40 bytes of map slot and a separate allocation per key, all of it
// scanned by the GC; this is three pointer-free arrays (on GOROOT/src's
// 145 k definition keys ~13 MB -> ~5 MB).
type idLists struct {
	keys *binx.Strings
	off  []uint32 // key i's ids are ids[off[i]:off[i+1]]
	ids  []uint32
}

var noStrings = &binx.Strings{}

// len is the number of keys.
func (l *idLists) len() int {
	if l.keys == nil {
		return 0
	}
	return l.keys.Len()
}

// key is key i.
func (l *idLists) key(i int) string { return l.keys.At(i) }

// at is the id list of key i.
func (l *idLists) at(i int) []uint32 { return l.ids[l.off[i]:l.off[i+1]:l.off[i+1]] }

// get is the id list of key k (nil when k is not a key).
func (l *idLists) get(k string) []uint32 {
	if l.keys == nil {
		return nil
	}
	i, ok := l.keys.Find(k)
	if !ok {
		return nil
	}
	return l.at(i)
}

// search is the index of the first key >= k.
func (l *idLists) search(k string) int {
	if l.keys == nil {
		return 0
	}
	return l.keys.Search(k)
}

// flatIDLists returns m as idLists; every list of m must be increasing.
func flatIDLists(m map[string][]uint32) idLists {
	keys := make([]string, 0, len(m))
	total := 0
	for k, ids := range m {
		keys = append(keys, k)
		total += len(ids)
	}
	slices.Sort(keys)
	l := idLists{keys: binx.NewStrings(keys), off: make([]uint32, len(keys)+1), ids: make([]uint32, 0, total)}
	for i, k := range keys {
		l.ids = append(l.ids, m[k]...)
		l.off[i+1] = uint32(len(l.ids))
	}
	return l
}

// mapIDLists returns l as a map whose lists are copies (to be changed).
func mapIDLists(l idLists, extra int) map[string][]uint32 {
	m := make(map[string][]uint32, l.len()+extra)
	for i := range l.len() {
		m[l.key(i)] = slices.Clone(l.at(i))
	}
	return m
}
