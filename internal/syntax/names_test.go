package syntax

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestNameTable(t *testing.T) {
	if InternName("") != 0 || Name(0).String() != "" {
		t.Fatal("the empty name is not id 0")
	}
	if _, ok := LookupName("names_test never interned this"); ok {
		t.Fatal("LookupName found a name never added")
	}
	// Past a page of ids, a slot table's growth and a chunk of bytes,
	// with a name of MaxName bytes.
	long := strings.Repeat("x", MaxName)
	want := map[string]Name{}
	for i := range 3 * namePageSize * 5 {
		s := "names_test_" + strconv.Itoa(i)
		if i == 100 {
			s = long
		}
		want[s] = InternName(s)
	}
	for s, id := range want {
		if got := id.String(); got != s {
			t.Fatalf("id %d: %q, want %q", id, got, s)
		}
		if again := InternName(string([]byte(s))); again != id {
			t.Fatalf("%q: id %d then %d", s, id, again)
		}
		if l, ok := LookupName(s); !ok || l != id {
			t.Fatalf("LookupName(%q) = %d, %v; want %d", s, l, ok, id)
		}
	}
}

// TestNameTableConcurrent interns the same names from several goroutines
// (with -race: String reads without the table's lock) and checks each name
// has one id.
func TestNameTableConcurrent(t *testing.T) {
	const workers, n = 4, 20000
	ids := make([][]Name, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[w] = make([]Name, n)
			for i := range n {
				k := (i*7 + w*13) % n
				id := InternName("concurrent_" + strconv.Itoa(k))
				if id.String() != "concurrent_"+strconv.Itoa(k) {
					t.Errorf("id %d reads %q", id, id.String())
					return
				}
				ids[w][k] = id
			}
		}()
	}
	wg.Wait()
	for w := 1; w < workers; w++ {
		for k := range n {
			if ids[w][k] != ids[0][k] {
				t.Fatalf("name %d: id %d and %d", k, ids[0][k], ids[w][k])
			}
		}
	}
}

// TestRefsJSON: FileInfo.Refs' JSON is the names, as when it was a
// []string, and reads back to the same ids.
func TestRefsJSON(t *testing.T) {
	info := FileInfo{Language: "go", Refs: InternNames([]string{"Open", "a\"b<c", "Items"})}
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(struct {
		Language string   `json:"language"`
		Symbols  []Symbol `json:"symbols"`
		Imports  []Import `json:"imports"`
		Refs     []string `json:"refs"`
	}{"go", nil, nil, []string{"Open", "a\"b<c", "Items"}})
	if string(b) != string(old) {
		t.Fatalf("JSON %s, want %s", b, old)
	}
	var back FileInfo
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Refs) != 3 || back.Refs[1] != info.Refs[1] {
		t.Fatalf("read back %v, want %v", back.Refs, info.Refs)
	}
	for _, v := range []FileInfo{{}, {Refs: []Name{}}} {
		b, _ := json.Marshal(v)
		o, _ := json.Marshal(struct {
			Language string   `json:"language"`
			Symbols  []Symbol `json:"symbols"`
			Imports  []Import `json:"imports"`
			Refs     []string `json:"refs"`
		}{Refs: Names(v.Refs)})
		if string(b) != string(o) {
			t.Fatalf("JSON %s, want %s", b, o)
		}
	}
}

// TestNameTableClips: a name over MaxName bytes is kept as its first
// bytes, cut at a character boundary, and "…"; names that differ only
// past the cut share one id, so rewriting a file with a new 400 KB
// identifier does not grow the table by 400 KB each time.
func TestNameTableClips(t *testing.T) {
	prefix := strings.Repeat("é", MaxName/2-3) + "z" // a two-byte rune spans the cut
	var first Name
	for i := range 20 {
		s := prefix + strings.Repeat("q", 400<<10) + strconv.Itoa(i)
		id := InternName(s)
		got := id.String()
		if len(got) > MaxName || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
			t.Fatalf("%d-byte name reads %d bytes %q...", len(s), len(got), got[:20])
		}
		if i == 0 {
			first = id
		} else if id != first {
			t.Fatalf("names differing past MaxName: ids %d and %d", first, id)
		}
		if l, ok := LookupName(s); !ok || l != first {
			t.Fatalf("LookupName of a long name = %d, %v; want %d", l, ok, first)
		}
	}
	if n := len(first.String()); n < MaxName-4 {
		t.Fatalf("clipped to %d bytes, want about %d", n, MaxName)
	}
	exact := strings.Repeat("w", MaxName)
	if got := InternName(exact).String(); got != exact {
		t.Fatalf("a name of exactly MaxName bytes was cut to %d", len(got))
	}
}

// TestNameTableFull: a full table hands out 0 for new names (logged once)
// and still answers for the names it holds.
func TestNameTableFull(t *testing.T) {
	for _, c := range []struct {
		name       string
		maxNames   uint32
		maxChunks  int
		nameLength int
	}{
		{"ids", 50, 1 << 16, 10},
		{"chunks", ^uint32(0), 3, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab := newNameTable()
			tab.maxNames, tab.maxChunks = c.maxNames, c.maxChunks
			var held []string
			var ids []Name
			for i := 0; ; i++ {
				s := strconv.Itoa(i) + strings.Repeat("n", c.nameLength)
				id := tab.intern(s)
				if id == 0 {
					break
				}
				if i > 1000 {
					t.Fatal("the table never filled")
				}
				held, ids = append(held, s), append(ids, id)
			}
			if len(held) < 10 {
				t.Fatalf("full after %d names", len(held))
			}
			if !tab.full {
				t.Fatal("a refused name was not recorded")
			}
			if id := tab.intern("new" + strings.Repeat("m", c.nameLength)); id != 0 {
				t.Fatalf("a full table interned a new name as %d", id)
			}
			d := tab.state.Load()
			for i, s := range held {
				if got := tab.intern(s); got != ids[i] {
					t.Fatalf("%q: id %d, was %d", s, got, ids[i])
				}
				if l, ok := tab.lookup(s); !ok || l != ids[i] || d.str(uint32(ids[i])) != s {
					t.Fatalf("lookup %q = %d, %v", s, l, ok)
				}
			}
		})
	}
}

// TestParseClipsLongNames: a symbol named by a generated 300 KB identifier
// is listed with its name cut to MaxName bytes, in every parser (the Go
// one is go/ast, the rest tree-sitter), and its range is the whole
// definition.
func TestParseClipsLongNames(t *testing.T) {
	long := "gen" + strings.Repeat("X", 300<<10)
	for _, c := range []struct{ lang, src string }{
		{"go", "package p\n\nfunc " + long + "() {}\n"},
		{"python", "def " + long + "():\n    pass\n"},
		{"typescript", "export function " + long + "() {}\n"},
		{"rust", "pub fn " + long + "() {}\n"},
	} {
		info, err := Parse(context.Background(), c.lang, []byte(c.src), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.lang, err)
		}
		if len(info.Symbols) != 1 {
			t.Fatalf("%s: %d symbols", c.lang, len(info.Symbols))
		}
		s := info.Symbols[0]
		name := s.Name.String()
		if len(name) > MaxName || !strings.HasPrefix(name, "genXXX") || !strings.HasSuffix(name, "…") {
			t.Fatalf("%s: symbol name of %d bytes: %.20q", c.lang, len(name), name)
		}
		if int(s.EndByte) < len(long) {
			t.Fatalf("%s: symbol ends at byte %d", c.lang, s.EndByte)
		}
	}
}
