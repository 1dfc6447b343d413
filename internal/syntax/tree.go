package syntax

import (
	"time"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

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

// buildTree copies the named nodes of t. It returns nil when the deadline
// passes during the copy (a file with millions of nodes).
func buildTree(g *grammar, t *sitter.Tree, src []byte, deadline time.Time) *tree {
	root := t.RootNode()
	out := &tree{src: src, hasError: root.HasError(), nodes: make([]node, 0, len(src)/8+16)}
	c := t.Walk()
	defer c.Close()
	// last[d] is the index of the last named node appended at named depth d.
	var stack []int32 // named ancestors of the cursor position
	var lastChild []int32
	visit := func() {
		n := c.Node()
		if !n.IsNamed() {
			return
		}
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		sp, ep := n.StartPosition(), n.EndPosition()
		idx := int32(len(out.nodes))
		field := ""
		if fid := c.FieldId(); fid != 0 && int(fid) < len(g.fields) {
			field = g.fields[fid]
		}
		kind := ""
		if id := n.KindId(); int(id) < len(g.kinds) {
			kind = g.kinds[id]
		}
		out.nodes = append(out.nodes, node{
			kind: kind, field: field,
			start: uint32(n.StartByte()), end: uint32(n.EndByte()),
			startRow: uint32(sp.Row), endRow: uint32(ep.Row),
			parent: parent, first: -1, next: -1,
		})
		if parent >= 0 {
			if prev := lastChild[len(lastChild)-1]; prev >= 0 {
				out.nodes[prev].next = idx
			} else {
				out.nodes[parent].first = idx
			}
			lastChild[len(lastChild)-1] = idx
		}
	}
	// Depth-first walk. Anonymous nodes (punctuation, keywords) are not
	// copied, but their named descendants are (tree-sitter nodes such as
	// aliases can hide below them), attached to the nearest named ancestor.
	type frame struct{ named bool }
	var frames []frame
	count := 0
	for {
		count++
		if count&1023 == 0 && time.Now().After(deadline) {
			return nil
		}
		before := len(out.nodes)
		visit()
		named := len(out.nodes) > before
		if c.GotoFirstChild() {
			frames = append(frames, frame{named})
			if named {
				stack = append(stack, int32(before))
				lastChild = append(lastChild, -1)
			}
			continue
		}
		for !c.GotoNextSibling() {
			if !c.GotoParent() {
				return out
			}
			f := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			if f.named {
				stack = stack[:len(stack)-1]
				lastChild = lastChild[:len(lastChild)-1]
			}
		}
	}
}

// text returns the source of node i.
func (t *tree) text(i int32) string {
	n := &t.nodes[i]
	if n.end > uint32(len(t.src)) || n.start > n.end {
		return ""
	}
	return string(t.src[n.start:n.end])
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
