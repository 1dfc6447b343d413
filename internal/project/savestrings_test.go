package project

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/syntax"
)

// TestSaveStringsMatchesStringIndex: the save's string table, which
// numbers names by id, is the table one map of strings makes, for names
// and other strings mixed: a string that is also a name, names interned
// after the table was made, the empty name, and a string over
// syntax.MaxName whose cut form is a name.
func TestSaveStringsMatchesStringIndex(t *testing.T) {
	long := strings.Repeat("x", syntax.MaxName+10)
	cut := syntax.InternName(long) // the name is long's first bytes and "…"
	var pool []string
	for i := range 40 {
		pool = append(pool, fmt.Sprintf("savestrings_name_%d", i))
	}
	for _, s := range pool[:20] {
		syntax.InternName(s)
	}
	tbl := newSaveStrings(0, 0)
	var want binx.StringIndex
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var s string
		var got uint64
		switch k := r.IntN(6); {
		case k == 0: // a name, by id
			n := syntax.InternName(pool[r.IntN(20)])
			s, got = n.String(), tbl.name(n)
		case k == 1 && i > 1000: // names new since the table was made
			n := syntax.InternName(pool[20+r.IntN(20)])
			s, got = n.String(), tbl.name(n)
		case k == 2: // a name's string, as a string
			s = pool[r.IntN(20)]
			got = tbl.add(s)
		case k == 3: // strings that are no name
			s = fmt.Sprintf("src/file_%d.go", r.IntN(50))
			got = tbl.add(s)
		case k == 4:
			s = [...]string{"", long, cut.String()}[r.IntN(3)]
			got = tbl.add(s)
		default:
			s = [...]string{"function", "method", "import"}[r.IntN(3)]
			got = tbl.add(s)
		}
		if w := want.Add(s); got != w {
			t.Fatalf("step %d: %q numbered %d, want %d", i, s, got, w)
		}
	}
	if !slices.Equal(tbl.list, want.List()) {
		t.Fatalf("tables differ:\n%q\n%q", tbl.list, want.List())
	}
	if tbl.others() == 0 || tbl.others() >= len(tbl.list) {
		t.Fatalf("others %d of %d strings: names were not numbered by id", tbl.others(), len(tbl.list))
	}
}
