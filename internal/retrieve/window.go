package retrieve

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
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
	ps := &passScratch{buf: buf, counts: counts}
	ps.m.init(units)
	best, from, to, found = ps.score(data, units, keyUnit)
	return best, from, to, found, ps.buf
}

// passScratch is passageScore's state, reused over the files of one query
// by one goroutine: the matcher of the query's units and the buffers.
type passScratch struct {
	m          matcher
	buf        []byte
	counts     []float64
	low        []byte
	bounds     []int
	lowStarts  []int
	origStarts []int
	marked     []bool
}

// score is passageScore with ps's matcher (made from units).
func (ps *passScratch) score(data []byte, units []unit, keyUnit map[string]int) (best float64, from, to int, found []int) {
	half := windowLines / 2
	// Line starts of each half window.
	bounds := append(ps.bounds[:0], 0)
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
	ps.bounds = bounds
	nh := len(bounds) - 1
	// tf of each unit in each half window. Only the lines that can hold a
	// unit are tokenized: a token stems to a key only where the line,
	// lower-cased without "_", holds the key less its last byte (the
	// matcher's premise), which one scan of the text finds much faster
	// than the tokenizer reads.
	nu := len(units)
	counts := ps.counts
	if cap(counts) < nh*nu {
		counts = make([]float64, nh*nu)
	}
	counts = counts[:nh*nu]
	clear(counts)
	ps.counts = counts
	low := ps.low[:0]
	lowStarts := append(ps.lowStarts[:0], 0)
	origStarts := append(ps.origStarts[:0], 0)
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
	ps.low, ps.lowStarts, ps.origStarts = low, lowStarts, origStarts
	marked := ps.marked[:0]
	for range lowStarts {
		marked = append(marked, false)
	}
	ps.marked = marked
	ps.markLines(low, lowStarts, marked)
	buf := ps.buf
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
	ps.buf = buf
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
		return 0, 0, 0, nil
	}
	for k := range units {
		if counts[at*nu+k] > 0 || at+1 < nh && counts[(at+1)*nu+k] > 0 {
			found = append(found, k)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	return best, at*half + 1, min(at*half+windowLines, lines), found
}

// markLines sets marked[l] for every line l of low (lowStarts[l] is where
// it starts) that holds a non-empty needle of ps.m, as a bytes.Index per
// needle would find them (no needle holds "\n"), in one pass: at each
// byte, the needles of one byte and, when the byte pair is a needle's
// first pair, the needles starting with it are compared; the rest of a
// marked line is skipped.
func (ps *passScratch) markLines(low []byte, lowStarts []int, marked []bool) {
	m := &ps.m
	var single [256]bool
	for _, k := range m.short {
		if len(m.needles[k]) == 1 {
			single[m.needles[k][0]] = true
		}
	}
	line := 0
	for i := 0; i < len(low); i++ {
		c := low[i]
		if c == '\n' {
			line++
			continue
		}
		hit := single[c]
		if !hit && i+1 < len(low) {
			p := uint16(c)<<8 | uint16(low[i+1])
			if m.pairs[p>>6]&(1<<(p&63)) != 0 {
				for _, k := range m.byPair[p] {
					if bytes.HasPrefix(low[i:], m.needles[k]) {
						hit = true
						break
					}
				}
			}
		}
		if !hit {
			continue
		}
		marked[line] = true
		if line+1 >= len(lowStarts) {
			return
		}
		// On to the next line: this one is counted.
		i = lowStarts[line+1] - 1
		line++
	}
}

// passageRerank adds weight times the passage score to the first
// tune.winK ranked candidates (reading their files).
// The files are scored by two goroutines (every other file each), each
// with its own buffers; a candidate is changed only by the one scoring it.
func (ix *Index) passageRerank(ranked []*candidate, units []unit, weight float64, ss *searchScratch) {
	k := min(len(ranked), tune.winK)
	if k == 0 {
		return
	}
	keyUnit := make(map[string]int, len(units))
	for i, u := range units {
		keyUnit[u.key] = i
	}
	run := func(from, step int, sc *snipScratch, ps *passScratch) {
		ps.m = matcher{}
		ps.m.init(units)
		for i := from; i < k; i += step {
			ix.passageOne(ranked[i], units, keyUnit, weight, sc, ps)
		}
	}
	if k < 4 || runtime.GOMAXPROCS(0) < 2 {
		run(0, 1, &ss.pass[0], &ss.ps[0])
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run(1, 2, &ss.pass[1], &ss.ps[1])
	}()
	run(0, 2, &ss.pass[0], &ss.ps[0])
	wg.Wait()
}

// passageOne adds weight times candidate c's passage score (passageRerank).
func (ix *Index) passageOne(c *candidate, units []unit, keyUnit map[string]int, weight float64, sc *snipScratch, ps *passScratch) {
	var err error
	// A passage beyond the first 256 KiB is not looked for (nor read): it
	// bounds the cost of a huge file on every query.
	sc.data, err = readPrefixInto(sc.data[:0], filepath.Join(ix.snap.Root(), filepath.FromSlash(ix.paths[c.id])), passageMaxBytes)
	if err != nil {
		return
	}
	data := sc.data
	p, from, to, found := ps.score(data, units, keyUnit)
	c.score += weight * p * c.factor
	if len(found) >= 2 {
		names := make([]string, 0, 4)
		for _, k := range found {
			d := units[k].display
			if len(names) < 4 && !slices.ContainsFunc(names, func(n string) bool { return sameWord(n, d) }) {
				names = append(names, d)
			}
		}
		c.pass = passage{from, to, quoteList(names)}
	}
}

// passage is a candidate's best passage window (lines from..to, 1-based)
// and the query terms it holds, quoted.
type passage struct {
	from, to int
	names    string
}

// reason words the passage for a snippet of lines start..end: "lines
// 101-140 hold …" only when the snippet holds all of those lines, else
// "the file's lines 101-140 hold …", which says where the evidence is
// without claiming the snippet shows it; "" without a passage.
func (p passage) reason(start, end int) string {
	if p.names == "" {
		return ""
	}
	if start <= p.from && p.to <= end {
		return fmt.Sprintf("lines %d-%d hold %s", p.from, p.to, p.names)
	}
	return fmt.Sprintf("the file's lines %d-%d hold %s", p.from, p.to, p.names)
}
