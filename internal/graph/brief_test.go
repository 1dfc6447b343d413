package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// cyclesOf makes sorted cycles of the given sizes, the list sorted by
// first path as computeCycles leaves it.
func cyclesOf(sizes ...int) [][]string {
	var cs [][]string
	for i, n := range sizes {
		var c []string
		for k := range n {
			c = append(c, fmt.Sprintf("c%02d/f%02d.py", i, k))
		}
		cs = append(cs, c)
	}
	return cs
}

func TestReadyStats(t *testing.T) {
	// Seven cycles: the five largest are listed, largest first and ties
	// by first path, each cut to ten paths.
	cs := cyclesOf(2, 12, 3, 3, 5, 1, 20)
	g := &Graph{stats: Stats{Files: 46, Cycles: len(cs), ImportCycles: cs, Version: Version,
		Hubs: []Hub{{Path: "c06/f00.py", Dependents: 3}}}}
	r := g.ReadyStats()
	if !slices.Equal(r.ImportCycleSizes, []int{20, 12, 5, 3, 3}) || !r.ImportCyclesTruncated {
		t.Fatalf("sizes %v truncated %v", r.ImportCycleSizes, r.ImportCyclesTruncated)
	}
	wantFirst := []string{"c06", "c01", "c04", "c02", "c03"}
	for i, c := range r.ImportCycles {
		if len(c) != min(r.ImportCycleSizes[i], readyCyclePaths) || !strings.HasPrefix(c[0], wantFirst[i]+"/") {
			t.Errorf("cycle %d = %v", i, c)
		}
	}
	if !slices.Equal(r.ImportCycles[0], cs[6][:10]) {
		t.Errorf("largest cycle = %v, want its first ten paths", r.ImportCycles[0])
	}
	if len(g.Stats().ImportCycles[6]) != 20 || len(g.Stats().ImportCycles) != 7 {
		t.Error("ReadyStats changed the graph's own stats")
	}

	// On the wire: graph/project's fields, one importCycles (the preview),
	// cycles counting all.
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	for _, k := range []string{"files", "edges", "importEdges", "referenceEdges", "modules", "cycles", "orphans", "hubs", "buildMs", "version", "unresolvedImports", "importCycleSizes", "importCyclesTruncated"} {
		if _, ok := m[k]; !ok {
			t.Errorf("ready graph has no %q: %s", k, raw)
		}
	}
	var back struct {
		Cycles       int        `json:"cycles"`
		ImportCycles [][]string `json:"importCycles"`
	}
	json.Unmarshal(raw, &back)
	if back.Cycles != 7 || len(back.ImportCycles) != 5 || len(back.ImportCycles[0]) != 10 {
		t.Errorf("decoded cycles %d, importCycles %v", back.Cycles, back.ImportCycles)
	}

	// Few small cycles: the whole list, by size, not marked truncated.
	small := cyclesOf(2, 3)
	g = &Graph{stats: Stats{Cycles: 2, ImportCycles: small}}
	r = g.ReadyStats()
	if r.ImportCyclesTruncated || !slices.Equal(r.ImportCycleSizes, []int{3, 2}) || !slices.Equal(r.ImportCycles[0], small[1]) {
		t.Errorf("small: %+v", r)
	}
	raw, _ = json.Marshal(r)
	if strings.Contains(string(raw), "importCyclesTruncated") {
		t.Errorf("small: %s", raw)
	}
	// No cycles: empty lists, not null.
	raw, _ = json.Marshal((&Graph{}).ReadyStats())
	if !strings.Contains(string(raw), `"importCycles":[]`) || !strings.Contains(string(raw), `"importCycleSizes":[]`) {
		t.Errorf("no cycles: %s", raw)
	}
}
