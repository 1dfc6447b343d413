package syntax

import "unsafe"

// node is a named tree-sitter node as walk_cgo.go's tsx_flat writes it (the
// same layout, TestNodeLayout): the tree's nodes are read in the C array
// the walk filled, not copied into Go memory. Extraction reads these
// instead of calling into cgo for every question it asks.
type node struct {
	start, end uint32 // byte offsets
	startRow   uint32 // 0-based
	endRow     uint32
	parent     int32  // -1 for the root
	first      int32  // first named child, -1 if none
	next       int32  // next named sibling, -1 if none
	sym        uint16 // kind id (tree.kindTab); ts_builtin_sym_error is 65535
	fld        uint16 // field id in the parent (tree.fieldTab), 0 if none
}

// goNodeLayout is node's size and field offsets, in tsx_flat's order.
var goNodeLayout = [...]uintptr{
	unsafe.Sizeof(node{}),
	unsafe.Offsetof(node{}.start), unsafe.Offsetof(node{}.end),
	unsafe.Offsetof(node{}.startRow), unsafe.Offsetof(node{}.endRow),
	unsafe.Offsetof(node{}.parent), unsafe.Offsetof(node{}.first),
	unsafe.Offsetof(node{}.next), unsafe.Offsetof(node{}.sym),
	unsafe.Offsetof(node{}.fld),
}

// tree is one parse: named nodes in document order (a node's descendants
// follow it), with the source they index. nodes lives in C memory
// (cmem) until release.
type tree struct {
	nodes    []node
	src      []byte
	hasError bool
	kindTab  []string // kind id -> name (the grammar's)
	fieldTab []string // field id -> name
	cmem     unsafe.Pointer
}

// kindOf is the kind name of n ("ERROR" for tree-sitter's error symbol,
// which is outside the grammar's table).
func (t *tree) kindOf(n *node) string {
	if int(n.sym) < len(t.kindTab) {
		return t.kindTab[n.sym]
	}
	return "ERROR"
}

// fieldOf is the field name of n in its parent, "" if none.
func (t *tree) fieldOf(n *node) string {
	if int(n.fld) < len(t.fieldTab) {
		return t.fieldTab[n.fld]
	}
	return ""
}

// text returns the source of node i.
func (t *tree) text(i int32) string {
	n := &t.nodes[i]
	if n.end > uint32(len(t.src)) || n.start > n.end {
		return ""
	}
	return string(t.src[n.start:n.end])
}

// bytes returns the source of node i without copying it (nil when the
// node's range is out of bounds).
func (t *tree) bytes(i int32) []byte {
	n := &t.nodes[i]
	if n.end > uint32(len(t.src)) || n.start > n.end {
		return nil
	}
	return t.src[n.start:n.end]
}

func (t *tree) kind(i int32) string {
	if i < 0 {
		return ""
	}
	return t.kindOf(&t.nodes[i])
}

// children returns the named children of i.
func (t *tree) children(i int32) []int32 {
	var out []int32
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		out = append(out, c)
	}
	return out
}

// field returns the first named child of i in field name, -1 if none.
func (t *tree) field(i int32, name string) int32 {
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		if t.fieldOf(&t.nodes[c]) == name {
			return c
		}
	}
	return -1
}

// fields returns every named child of i in field name.
func (t *tree) fields(i int32, name string) []int32 {
	var out []int32
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		if t.fieldOf(&t.nodes[c]) == name {
			out = append(out, c)
		}
	}
	return out
}

// childKind returns the first named child of i of one of kinds, -1 if none.
func (t *tree) childKind(i int32, kinds ...string) int32 {
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		for _, k := range kinds {
			if t.kindOf(&t.nodes[c]) == k {
				return c
			}
		}
	}
	return -1
}

// parent returns the parent of i, -1 for the root.
func (t *tree) parent(i int32) int32 { return t.nodes[i].parent }
