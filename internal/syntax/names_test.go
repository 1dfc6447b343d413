package syntax

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"
)

func TestNameTable(t *testing.T) {
	if InternName("") != 0 || Name(0).String() != "" {
		t.Fatal("the empty name is not id 0")
	}
	if _, ok := LookupName("names_test never interned this"); ok {
		t.Fatal("LookupName found a name never added")
	}
	// Past a page of ids, a slot table's growth and a chunk of bytes,
	// with a name longer than a chunk.
	long := string(make([]byte, nameChunk+5))
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
