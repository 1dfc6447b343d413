package syntax

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestSettleCarves checks carve's contract: small slices are copied side
// by side into one block with their capacity ending with them, a big one
// gets its own array, an empty one stays empty and non-nil.
func TestSettleCarves(t *testing.T) {
	var free []Name
	a := carve(&free, []Name{1, 2, 3})
	b := carve(&free, []Name{4, 5})
	if !reflect.DeepEqual(a, []Name{1, 2, 3}) || !reflect.DeepEqual(b, []Name{4, 5}) {
		t.Fatalf("carved %v %v", a, b)
	}
	if cap(a) != len(a) || cap(b) != len(b) {
		t.Fatalf("capacities %d/%d %d/%d: an append would write into the block", len(a), cap(a), len(b), cap(b))
	}
	if unsafe.Pointer(&b[0]) != unsafe.Add(unsafe.Pointer(&a[0]), 3*unsafe.Sizeof(Name(0))) {
		t.Fatal("two small slices are not side by side in one block")
	}
	a = append(a, 9) // must not overwrite b
	if b[0] != 4 {
		t.Fatalf("append to a carved slice overwrote its neighbour: %v", b)
	}
	big := make([]Name, perBlock[Name]()/4+1)
	if got := carve(&free, big); cap(got) != len(big) || unsafe.Pointer(&got[0]) == unsafe.Pointer(&big[0]) {
		t.Fatal("a big slice is not an exact copy of its own")
	}
	if len(free) != perBlock[Name]()-5 {
		t.Fatalf("a big slice took %d names of the block", perBlock[Name]()-5-len(free))
	}
	if e := carve(&free, []Name{}); e == nil || len(e) != 0 {
		t.Fatalf("empty slice carved as %#v", e)
	}
	// A full block starts a new one.
	free = free[:1]
	c := carve(&free, []Name{7, 8})
	if len(free) != perBlock[Name]()-2 || c[1] != 8 {
		t.Fatalf("no new block: %d left", len(free))
	}
}

// TestSettleCopies checks settle returns an equal FileInfo that shares
// nothing the parse may reuse.
func TestSettleCopies(t *testing.T) {
	in := &FileInfo{
		Language: "python",
		Symbols:  []Symbol{{Name: 1, StartLine: 1, EndLine: 2}, {Name: 2, Container: 1}},
		Imports:  []Import{{Path: "os.path", Kind: "from", Names: []string{"join", "split"}, Line: 1}, {Path: "sys", Kind: "import", Line: 2}},
		Refs:     []Name{3, 4},
		Package:  "",
	}
	want := &FileInfo{
		Language: "python",
		Symbols:  []Symbol{{Name: 1, StartLine: 1, EndLine: 2}, {Name: 2, Container: 1}},
		Imports:  []Import{{Path: "os.path", Kind: "from", Names: []string{"join", "split"}, Line: 1}, {Path: "sys", Kind: "import", Line: 2}},
		Refs:     []Name{3, 4},
	}
	out := settle(in)
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("settle changed the record:\n%#v\n%#v", out, want)
	}
	in.Symbols[0].Name, in.Refs[0], in.Imports[0].Names[0], in.Imports[1].Path = 9, 9, "x", "y"
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("settle's result shares the parse's slices:\n%#v", out)
	}
	if out == in || cap(out.Imports[0].Names) != 2 || cap(out.Symbols) != 2 {
		t.Fatal("not a carved copy")
	}
	empty := settle(&FileInfo{Language: "go", Symbols: []Symbol{}, Imports: []Import{}, Refs: []Name{}})
	if empty.Symbols == nil || empty.Imports == nil || empty.Refs == nil {
		t.Fatal("empty slices became nil (their JSON would be null)")
	}
}
