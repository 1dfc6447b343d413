package retrieve

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
)

// windowLines is the height of the passage windows the passage score
// looks at (SWE-bench's BM25 baseline uses chunks of 40 lines).
const windowLines = 40

// passageMaxBytes is how much of a file the passage score reads.
const passageMaxBytes = 256 << 10

// passageScore is the best BM25 score (k1 1.2, no length normalisation:
// windows have the same height) of one window of windowLines lines of
// data, windows starting every windowLines/2 lines, over the units'
// keys. A file whose matching terms sit together in one place (the
// function a change touches) scores higher than one whose matches are
// spread over thousands of lines, which whole-file BM25 cannot tell apart.
// A query of one unit gets no passage score (Search): one term alone is
// what the whole-file score already measures.
// It also returns the best window's lines (from..to, 1-based) and the
// units found in it.
func passageScore(data []byte, units []unit, keyUnit map[string]int, buf []byte, counts []float64) (best float64, from, to int, found []int, _ []byte) {
	half := windowLines / 2
	// Line starts of each half window.
	var bounds []int
	bounds = append(bounds, 0)
	lines := 0
	for i, c := range data {
		if c == '\n' {
			lines++
			if lines%half == 0 {
				bounds = append(bounds, i+1)
			}
		}
	}
	bounds = append(bounds, len(data))
	nh := len(bounds) - 1
	// tf of each unit in each half window. Only the lines that can hold a
	// unit are tokenized: a token stems to a key only where the line,
	// lower-cased without "_", holds the key less its last byte (the
	// matcher's premise), which bytes.Index finds much faster than the
	// tokenizer reads.
	nu := len(units)
	if cap(counts) < nh*nu {
		counts = make([]float64, nh*nu)
	}
	counts = counts[:nh*nu]
	clear(counts)
	low := make([]byte, 0, len(data))
	lowStarts := []int{0}
	origStarts := []int{0}
	for i, c := range data {
		switch {
		case c == '_':
			continue
		case c == '\n':
			low = append(low, c)
			lowStarts = append(lowStarts, len(low))
			origStarts = append(origStarts, i+1)
			continue
		case isUpper(c):
			c += 32
		}
		low = append(low, c)
	}
	marked := make([]bool, len(lowStarts))
	for _, u := range units {
		needle := u.key
		if len(needle) > 2 {
			needle = needle[:len(needle)-1]
		}
		if needle == "" {
			continue
		}
		for off := 0; off < len(low); {
			j := bytes.Index(low[off:], []byte(needle))
			if j < 0 {
				break
			}
			line := sort.SearchInts(lowStarts, off+j+1) - 1
			marked[line] = true
			if line+1 < len(lowStarts) {
				off = lowStarts[line+1]
			} else {
				break
			}
		}
	}
	for line, m := range marked {
		if !m {
			continue
		}
		end := len(data)
		if line+1 < len(origStarts) {
			end = origStarts[line+1]
		}
		row := counts[(line/half)*nu : (line/half+1)*nu]
		buf = tokenizeASCII(data[origStarts[line]:end], buf, func(t []byte) {
			if k, ok := keyUnit[string(t)]; ok {
				row[k]++
			}
		})
	}
	at := -1
	for h := 0; h < nh; h++ {
		s := 0.0
		for k := range units {
			tf := counts[h*nu+k]
			if h+1 < nh {
				tf += counts[(h+1)*nu+k]
			}
			if tf > 0 {
				s += units[k].weight * units[k].idf * tf * (bm25K1 + 1) / (tf + bm25K1)
			}
		}
		if s > best {
			best, at = s, h
		}
	}
	if at < 0 {
		return 0, 0, 0, nil, buf
	}
	for k := range units {
		if counts[at*nu+k] > 0 || at+1 < nh && counts[(at+1)*nu+k] > 0 {
			found = append(found, k)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	return best, at*half + 1, min(at*half+windowLines, lines), found, buf
}

// passageRerank adds weight times the passage score to the first
// tune.winK ranked candidates (reading their files).
func (ix *Index) passageRerank(ranked []*candidate, units []unit, weight float64, sc *snipScratch) {
	k := min(len(ranked), tune.winK)
	if k == 0 {
		return
	}
	keyUnit := make(map[string]int, len(units))
	for i, u := range units {
		keyUnit[u.key] = i
	}
	var buf []byte
	var counts []float64
	for _, c := range ranked[:k] {
		var err error
		sc.data, err = readInto(sc.data[:0], filepath.Join(ix.snap.Root(), filepath.FromSlash(ix.paths[c.id])))
		if err != nil {
			continue
		}
		data := sc.data
		if len(data) > passageMaxBytes {
			// A passage beyond the first 256 KiB is not looked for: it
			// bounds the cost of a huge file on every query.
			data = data[:passageMaxBytes]
		}
		p, from, to, found, b := passageScore(data, units, keyUnit, buf, counts)
		buf = b
		c.score += weight * p * c.factor
		if len(found) >= 2 {
			names := make([]string, 0, 4)
			for _, k := range found[:min(len(found), 4)] {
				names = append(names, units[k].display)
			}
			c.boosts = append(c.boosts, fmt.Sprintf("lines %d-%d hold %s", from, to, quoteList(names)))
		}
	}
}
