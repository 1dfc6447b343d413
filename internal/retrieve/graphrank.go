package retrieve

import "sort"

// graphFillSeeds is how many of the best hits graphFill starts from.
const graphFillSeeds = 5

// graphFill returns the graph neighbours of the first graphFillSeeds
// ranked files that are no candidate (they match no term), each once:
// seed by seed, a seed's neighbours by edge weight (linked symbols), then
// path. Their reason names the hit they are next to ("imported by
// `src/main.rs`").
func (ix *Index) graphFill(ranked []*candidate, nb func(string) []Neighbour, lookup func(string) (uint32, bool), cands map[uint32]*candidate) []*candidate {
	var out []*candidate
	for _, seed := range ranked[:min(len(ranked), graphFillSeeds)] {
		ns := nb(ix.paths[seed.id])
		sort.SliceStable(ns, func(i, j int) bool { return ns[i].Weight > ns[j].Weight })
		for _, n := range ns {
			id, ok := lookup(n.Path)
			if !ok || cands[id] != nil {
				continue
			}
			c := &candidate{id: id, factor: 1, tail: true, boosts: []string{n.Relation + " `" + ix.paths[seed.id] + "`, a hit"}}
			cands[id] = c
			out = append(out, c)
		}
	}
	return out
}
