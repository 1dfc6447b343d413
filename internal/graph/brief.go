package graph

import "sort"

// Ready's limits: the workspace/progress `ready` notification carries the
// graph stats of every open and refresh, so its import cycles are a
// preview; graph/project's stats keep the full list.
const (
	readyCycles     = 5  // the largest cycles listed
	readyCyclePaths = 10 // paths listed per cycle
)

// ReadyStats is the `graph` of the `ready` phase (protocol.md: graph/project's
// stats): the same fields, but ImportCycles holds at most the 5 largest
// cycles (largest first, ties by first path), each cut to its first 10
// paths (sorted, as in graph/project), so a refresh does not re-send
// every cycle (118 KB on the mixed bench tree, 98 cycles of up to 257
// files). Cycles still counts all of them. Additive: ImportCycleSizes[i]
// is the full size of ImportCycles[i]; ImportCyclesTruncated is set when
// the list is not graph/project's whole list.
type ReadyStats struct {
	Stats
	ImportCycles          [][]string `json:"importCycles"`
	ImportCycleSizes      []int      `json:"importCycleSizes"`
	ImportCyclesTruncated bool       `json:"importCyclesTruncated,omitempty"`
}

// ReadyStats returns the stats for the `ready` notification.
func (g *Graph) ReadyStats() ReadyStats {
	st := g.Stats()
	r := ReadyStats{Stats: st, ImportCycles: [][]string{}, ImportCycleSizes: []int{}}
	order := make([]int, len(st.ImportCycles))
	for i := range order {
		order[i] = i
	}
	// st.ImportCycles is sorted by first path, so a stable sort by size
	// breaks ties by first path.
	sort.SliceStable(order, func(a, b int) bool { return len(st.ImportCycles[order[a]]) > len(st.ImportCycles[order[b]]) })
	if len(order) > readyCycles {
		order, r.ImportCyclesTruncated = order[:readyCycles], true
	}
	for _, i := range order {
		c := st.ImportCycles[i]
		r.ImportCycleSizes = append(r.ImportCycleSizes, len(c))
		if len(c) > readyCyclePaths {
			c, r.ImportCyclesTruncated = c[:readyCyclePaths], true
		}
		r.ImportCycles = append(r.ImportCycles, c)
	}
	return r
}
