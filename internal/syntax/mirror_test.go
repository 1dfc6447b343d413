package syntax

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// TestMirrorMatchesAPI checks the C flattening (walk_cgo.go, which mirrors
// tree-sitter's api.h by hand) against a copy made through go-tree-sitter's
// own API, on every fixture.
func TestMirrorMatchesAPI(t *testing.T) {
	for _, lang := range Languages() {
		files, _ := filepath.Glob(filepath.Join("testdata", lang, "*"))
		for _, f := range files {
			if strings.HasSuffix(f, ".golden") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			g := grammars[lang]
			g.init()
			p := sitter.NewParser()
			if err := p.SetLanguage(g.lang); err != nil {
				t.Fatal(err)
			}
			tr := p.Parse(src, nil)
			far := time.Now().Add(time.Minute)
			want := buildTree(g, tr, src, far)
			got, err := flattenNode(g, unsafe.Pointer(tr.RootNode()), src)
			tr.Close()
			p.Close()
			if err != nil || got == nil {
				t.Fatalf("%s: flatten: %v", f, err)
			}
			if !reflect.DeepEqual(got.nodes, want.nodes) || got.hasError != want.hasError {
				t.Errorf("%s: C mirror differs from the API mirror (%d vs %d nodes)", f, len(got.nodes), len(want.nodes))
			}
		}
	}
}

// buildTree is the reference copy through go-tree-sitter's API: the named
// nodes of t. It returns nil when the deadline
// passes during the copy (a file with millions of nodes).
func buildTree(g *grammar, t *sitter.Tree, src []byte, deadline time.Time) *tree {
	root := t.RootNode()
	out := &tree{src: src, hasError: root.HasError(), nodes: make([]node, 0, len(src)/8+16), kindTab: g.kinds, fieldTab: g.fields}
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
		out.nodes = append(out.nodes, node{
			sym: n.KindId(), fld: c.FieldId(),
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

// TestNodeLayout: node is read in place over C's tsx_flat, so their sizes
// and field offsets must be the same.
func TestNodeLayout(t *testing.T) {
	if cFlatLayout != goNodeLayout {
		t.Fatalf("tsx_flat %v, node %v", cFlatLayout, goNodeLayout)
	}
}

// TestArenaParseMatchesLibc parses every fixture, and sources big enough
// to need the arena's medium and large blocks and several chunks, both
// through Parse's path (a TSParser in a parse arena, arena.c) and with
// go-tree-sitter's parser (libc malloc, outside any arena): the flattened
// trees must be equal. Each arena is reused for the next file, so a block
// left behind by a reset would show here.
func TestArenaParseMatchesLibc(t *testing.T) {
	type input struct {
		lang string
		src  []byte
	}
	var inputs []input
	for _, lang := range Languages() {
		files, _ := filepath.Glob(filepath.Join("testdata", lang, "*"))
		for _, f := range files {
			if strings.HasSuffix(f, ".golden") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, input{lang, src})
		}
	}
	var rs, py, flat strings.Builder
	for i := 0; rs.Len() < 600<<10; i++ {
		fmt.Fprintf(&rs, "pub fn f%d(a: u32) -> u32 { let v = vec![%d, a]; v.iter().sum() }\n", i, i)
	}
	for i := 0; py.Len() < 300<<10; i++ {
		fmt.Fprintf(&py, "class C%d:\n    def m(self, x):\n        if x:\n            return [%d, x]\n", i, i)
	}
	// One statement list of 40 000 children: a children array far over
	// the medium classes.
	for i := 0; i < 40000; i++ {
		fmt.Fprintf(&flat, "x%d=%d;", i, i)
	}
	inputs = append(inputs, input{"rust", []byte(rs.String())}, input{"python", []byte(py.String())},
		input{"javascript", []byte(flat.String())}, input{"rust", []byte("fn broken( {")})
	cp, err := newCParser()
	if err != nil {
		t.Fatal(err)
	}
	defer cp.close()
	for i, in := range inputs {
		g := grammars[in.lang]
		g.init()
		got, stopped, err := cp.parse(g, in.src, nil, time.Minute, nil)
		if err != nil || stopped {
			t.Fatalf("input %d (%s): arena parse: stopped %v, %v", i, in.lang, stopped, err)
		}
		p := sitter.NewParser()
		if err := p.SetLanguage(g.lang); err != nil {
			t.Fatal(err)
		}
		tr := p.Parse(in.src, nil)
		want, err := flattenNode(g, unsafe.Pointer(tr.RootNode()), in.src)
		tr.Close()
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.nodes, want.nodes) || got.hasError != want.hasError {
			t.Errorf("input %d (%s, %d bytes): arena tree differs from libc tree (%d vs %d nodes)", i, in.lang, len(in.src), len(got.nodes), len(want.nodes))
		}
		got.release()
	}
}
