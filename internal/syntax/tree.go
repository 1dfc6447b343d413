package syntax

// node is a named tree-sitter node copied into Go memory. Extraction reads
// this mirror instead of calling into cgo for every question it asks.
type node struct {
	kind       string
	field      string // field name in the parent, "" if none
	start, end uint32 // byte offsets
	startRow   uint32 // 0-based
	endRow     uint32
	parent     int32 // -1 for the root
	first      int32 // first named child, -1 if none
	next       int32 // next named sibling, -1 if none
}

// tree is the mirror of one parse: named nodes in document order (a node's
// descendants follow it), with the source they index.
type tree struct {
	nodes    []node
	src      []byte
	hasError bool
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
	return t.nodes[i].kind
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
		if t.nodes[c].field == name {
			return c
		}
	}
	return -1
}

// fields returns every named child of i in field name.
func (t *tree) fields(i int32, name string) []int32 {
	var out []int32
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		if t.nodes[c].field == name {
			out = append(out, c)
		}
	}
	return out
}

// childKind returns the first named child of i of one of kinds, -1 if none.
func (t *tree) childKind(i int32, kinds ...string) int32 {
	for c := t.nodes[i].first; c >= 0; c = t.nodes[c].next {
		for _, k := range kinds {
			if t.nodes[c].kind == k {
				return c
			}
		}
	}
	return -1
}

// parent returns the parent of i, -1 for the root.
func (t *tree) parent(i int32) int32 { return t.nodes[i].parent }
