package project

import (
	"errors"
	"sync/atomic"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/syntax"
)

var errNameTableFull = errors.New("the process's name table is full")

// savedNames turns entries of a saved index's string table into
// syntax.Names (refs, symbol names and containers, edge symbols),
// interning each entry once however many records use it; the decoders of
// the parse results and the graph share it.
type savedNames struct {
	strs *binx.Strings
	ids  []atomic.Uint32 // the entry's Name + 1; 0 not interned yet
}

func newSavedNames(strs *binx.Strings) *savedNames {
	return &savedNames{strs: strs, ids: make([]atomic.Uint32, strs.Len())}
}

// read reads an index into the table from r and returns its entry's
// Name (0 after a failure of r).
func (s *savedNames) read(r *binx.Reader) syntax.Name {
	i := r.Uint()
	if r.Err() == nil && i >= uint64(len(s.ids)) {
		r.Fail(nil)
	}
	if r.Err() != nil {
		return 0
	}
	if v := s.ids[i].Load(); v != 0 {
		return syntax.Name(v - 1)
	}
	str := s.strs.At(int(i))
	n := syntax.InternName(str)
	if n == 0 && str != "" { // the name table is full: a cold open would drop this name
		r.Fail(errNameTableFull)
		return 0
	}
	s.ids[i].Store(uint32(n) + 1)
	return n
}
