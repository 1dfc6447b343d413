// Package retrieve owns ranked retrieval over a workspace snapshot: query
// terms, an inverted index per snapshot (content identifiers, path segments,
// symbol definitions), BM25-like scoring with boosts and a reason in words
// for every result, token-budgeted snippets (whole definitions where they
// fit), and the prompt classifier used by prompt/refine and routes.
//
// Source: ../shared/spec/protocol.md context/retrieve and prompt/refine;
// ../shared/spec/addendum.md §3 (retrieval) and §10 (task kinds).
package retrieve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/syntax"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Budget limits of context/retrieve (protocol.md; addendum §3).
const (
	DefaultBudgetTokens = 8000
	MaxBudgetTokens     = 200000
	// DefaultMaxSnippets caps the snippets of one result.
	DefaultMaxSnippets = 30
	// maxContentCandidates and maxDefCandidates bound the files scored in
	// full: the best content matches, and the files defining a term when
	// the term is defined in few enough files to be telling.
	maxContentCandidates = 300
	maxDefCandidates     = 500
	// minSnippetTokens is the least budget worth a snippet.
	minSnippetTokens = 24
)

// Query structure and file class weights: a term in backticks counts
// tickedWeight, a term only in a multi-line query's body bodyWeight; test
// files (unless the query asks for tests) and prose or data files score
// testFactor and proseFactor; a path holding the subject's scope words
// gains up to scopeBoost of its score.
const (
	tickedWeight = 1.5
	bodyWeight   = 0.6
	testFactor   = 0.5
	proseFactor  = 0.5
	scopeBoost   = 1.0
)

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// tuning holds the ranking knobs in one place so the localization
// harness (localize_test.go) can compare settings on one set of indexes;
// Search reads tune, which only tests change.
type tuning struct {
	k1, b, fullShare, pathW, nameW, defScale float64
	mapMax, winK                             int
	winW, exC, bodyW, scopeB, proseF         float64
	qDef, qWin                               float64
	on                                       map[string]bool
}

var tune = tuning{k1: bm25K1, b: bm25B, fullShare: fullShare, pathW: 1.5, nameW: 2, defScale: 0.5, mapMax: maxMapEntries, winK: 30, winW: 4, exC: 4, bodyW: bodyWeight, scopeB: scopeBoost, proseF: proseFactor, qDef: 1, qWin: 0}

// Errors of Search; the server maps them to -32602.
var (
	ErrEmptyQuery = errors.New("query is empty")
	ErrBudget     = fmt.Errorf("budgetTokens must be between 1 and %d", MaxBudgetTokens)
)

// Neighbour is a file next to another in the project graph. Relation says
// in words how Path relates to the file asked about, read as "<Path> is
// <Relation> <file>": "imported by", "imports", "used by", "uses".
type Neighbour struct {
	Path     string
	Relation string
	// Weight is the edge's number of linked symbols (at least 1; 0 when
	// the caller does not know it, read as 1).
	Weight int
}

// Query is one retrieval request.
type Query struct {
	// Text is the query; it must hold a non-space character.
	Text string
	// BudgetTokens bounds the snippets' text (tokens = characters / 4);
	// 0 means DefaultBudgetTokens; otherwise 1..MaxBudgetTokens.
	BudgetTokens int
	// FocusPaths, ActiveFile and OpenFiles are root-relative paths the
	// client points at; they rank higher (focus and active files are
	// returned even without a matching term). A focus path may be a
	// folder: the files under it that match the query rank higher.
	FocusPaths []string
	ActiveFile string
	OpenFiles  []string
	// Neighbours gives the graph neighbours of a file (internal/graph);
	// the neighbours of the active file and of focus paths that match the
	// query rank higher. Nil means no graph boost.
	Neighbours func(rel string) []Neighbour
	// MaxSnippets caps the snippets; 0 means DefaultMaxSnippets.
	MaxSnippets int
}

// Snippet is one retrieved piece of a file: lines StartLine..EndLine
// (1-based, inclusive) of Path (root-relative, "/"), the text of those
// lines, the file's score and why it was chosen.
type Snippet = protocol.Snippet

// Result is context/retrieve's retrieval object. FilesConsidered counts
// files that matched at least one term (or were pointed at); UsedTokens is
// the snippets' text length / 4, never above BudgetTokens.
type Result = protocol.Retrieval

// Tokens is the protocol's token estimate of text: characters / 4,
// rounded up.
func Tokens(text string) int { return (utf8.RuneCountInString(text) + 3) / 4 }

// unit is one thing looked up in the index: a query term, a phrase word or
// an identifier joined from several parts (parseConfig → "parseconfig").
type unit struct {
	key     string // stemmed index form
	display string // as shown in reasons
	weight  float64
	idf     float64
	posts   []uint32
}

// Symbol match levels, best last.
const (
	matchNone = iota
	matchPart
	matchPrefix
	matchExact
)

type candidate struct {
	id      uint32
	score   float64
	content float64
	pathHit []string
	sym     *syntax.Symbol
	boosts  []string
	factor  float64 // the file class and scope factors applied to the score
	pass    passage // the best passage window (passageOne), its reason
	tail    bool    // past the scored candidates (content score only)
}

// MaxQueryBytes bounds the query text Search reads: a longer query (a log
// or a file pasted into a prompt) is read up to this many bytes, cut at a
// character boundary. Terms past it would not change a ranking that
// 64 KiB of text has not settled, and every term costs a posting walk (a
// 20 MB query took 19 s).
const MaxQueryBytes = 64 << 10

func capQuery(s string) string {
	if len(s) <= MaxQueryBytes {
		return s
	}
	cut := MaxQueryBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Search ranks the index's files for q and cuts snippets within the token
// budget, reading at most MaxQueryBytes of the query. Errors:
// ErrEmptyQuery, ErrBudget, ctx's error.
func Search(ctx context.Context, ix *Index, q Query) (Result, error) {
	if strings.TrimSpace(q.Text) == "" {
		return Result{}, ErrEmptyQuery
	}
	budget := q.BudgetTokens
	if budget == 0 {
		budget = DefaultBudgetTokens
	}
	if budget < 0 || budget > MaxBudgetTokens {
		return Result{}, ErrBudget
	}
	maxSnip := q.MaxSnippets
	if maxSnip <= 0 {
		maxSnip = DefaultMaxSnippets
	}
	q.Text = capQuery(q.Text)
	// A pasted code block's fence lines (```go) are no words of the query.
	q.Text = dropFences(q.Text)
	text := q.Text
	// The change type of a conventional line ("fix:", "* feat(x):") says
	// what kind of change it is, not where (docs/index.md); a query that is
	// nothing but a type ("fix:") keeps it.
	stripped := dropTypePrefixes(text)
	terms := Terms(stripped)
	if len(terms) == 0 {
		terms = Terms(text)
	} else {
		text = stripped
	}
	res := Result{Terms: terms, Snippets: []Snippet{}, BudgetTokens: budget}
	if res.Terms == nil {
		res.Terms = []string{}
	}
	units := ix.units(text, terms)
	ss := getScratch()
	defer putScratch(ss)
	shape := shapeOf(q.Text)
	// A scope of several words ("pr checks:") counts only when each of its
	// comma-separated parts names a path of the index: "error message:" in
	// prose is no scope.
	if len(shape.scopeGroups) > 0 && !ix.pathsHold(shape.scopeGroups) {
		shape.scope = nil
	}
	for i := range units {
		u := &units[i]
		if shape.ticked[u.key] {
			u.weight *= tickedWeight
		}
		if shape.multiLine && !shape.head[u.key] && !shape.ticked[u.key] {
			u.weight *= tune.bodyW
		}
	}
	// Tests are wanted when the query (a multi-line one's first line) asks
	// for them; "add a test" in a commit body does not make it about tests.
	wantsTests := false
	for _, t := range Terms(strings.SplitN(strings.TrimSpace(q.Text), "\n", 2)[0]) {
		if t == "test" || t == "tests" || t == "spec" || t == "testing" {
			wantsTests = true
		}
	}

	n := len(ix.paths)
	content := make([]float64, n)
	touched := make([]uint32, 0, 256)
	for _, u := range units {
		for _, p := range u.posts {
			id := p >> tfBits
			tf := float64(p & maxTF)
			dl := float64(ix.docLen[id])
			s := u.weight * u.idf * tf * (tune.k1 + 1) / (tf + tune.k1*(1-tune.b+tune.b*dl/ix.avgLen))
			if content[id] == 0 {
				touched = append(touched, id)
			}
			content[id] += s
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
	}

	cands := map[uint32]*candidate{}
	get := func(id uint32) *candidate {
		c := cands[id]
		if c == nil {
			c = &candidate{id: id, content: content[id]}
			cands[id] = c
		}
		return c
	}
	// Keep the best content matches, then add every file that defines a
	// term or whose path matches one, whatever its content score.
	sort.Slice(touched, func(i, j int) bool { return content[touched[i]] > content[touched[j]] })
	res.FilesConsidered = len(touched)
	for _, id := range touched[:min(len(touched), maxContentCandidates)] {
		get(id)
	}
	for _, u := range units {
		if d := ix.defs.get(u.key); len(d) <= maxDefCandidates {
			for _, id := range d {
				get(id)
			}
		}
		for _, id := range ix.pathTrm.get(u.key) {
			c := get(id)
			c.pathHit = appendUnique(c.pathHit, u.display)
		}
	}
	focus := map[uint32]bool{}
	// ix.paths is sorted (newIndex takes the snapshot's sorted paths): a
	// path is found by binary search, not through a map of every path made
	// again for each query (~200 KB of garbage a query on a 7 000-file tree).
	lookup := func(p string) (uint32, bool) {
		i, ok := slices.BinarySearch(ix.paths, path.Clean(filepath.ToSlash(p)))
		return uint32(i), ok
	}
	// A focus path that is no indexed file is a folder: the files under it
	// that match the query are boosted (all of them are candidates, beyond
	// the best content matches).
	var focusDirs []string
	for _, p := range q.FocusPaths {
		if id, ok := lookup(p); ok {
			focus[id] = true
			get(id).boosts = append(get(id).boosts, "a focus path")
		} else if d := path.Clean(filepath.ToSlash(p)); d != "." && d != "/" && d != ".." && !strings.HasPrefix(d, "../") {
			focusDirs = appendUnique(focusDirs, strings.TrimPrefix(d, "/")+"/")
		}
	}
	if len(focusDirs) > 0 {
		for _, id := range touched[min(len(touched), maxContentCandidates):] {
			if underDir(ix.paths[id], focusDirs) != "" {
				get(id)
			}
		}
	}
	active, hasActive := uint32(0), false
	if q.ActiveFile != "" {
		if id, ok := lookup(q.ActiveFile); ok {
			active, hasActive = id, true
			get(id).boosts = append(get(id).boosts, "the active file")
		}
	}
	open := map[uint32]bool{}
	for _, p := range q.OpenFiles {
		if id, ok := lookup(p); ok {
			open[id] = true
		}
	}
	neighbour := map[uint32]string{}
	if q.Neighbours != nil {
		from := []struct {
			id   uint32
			name string
		}{}
		if hasActive {
			from = append(from, struct {
				id   uint32
				name string
			}{active, "the active file"})
		}
		for id := range focus {
			from = append(from, struct {
				id   uint32
				name string
			}{id, "`" + ix.paths[id] + "`"})
		}
		for _, f := range from {
			for _, nb := range q.Neighbours(ix.paths[f.id]) {
				if id, ok := lookup(nb.Path); ok && id != f.id {
					if _, seen := neighbour[id]; !seen {
						neighbour[id] = nb.Relation + " " + f.name
					}
				}
			}
		}
	}

	mayDefine := ix.definers(units)
	unitKeys := make(map[string]int, len(units))
	for i, u := range units {
		if _, ok := unitKeys[u.key]; !ok {
			unitKeys[u.key] = i
		}
	}
	// A user's question names behaviour in words, where a commit message
	// names the code it changes; the passage weight and the half weight of
	// definitions were tuned on commit messages (docs/index.md).
	defScale, winW := tune.defScale, tune.winW
	if shape.question {
		defScale, winW = tune.qDef, tune.qWin
	}
	defScores := ix.scoreDefinitions(cands, mayDefine, units)
	for id, c := range cands {
		base := c.content
		// Definitions.
		if d, ok := defScores[id]; ok {
			base += defScale * d.score
			if d.sym != nil {
				c.sym = d.sym
			}
		}
		// A file named by a whole identifier of the query
		// (cluster_with_columns.rs for `cluster_with_columns`): path terms
		// are the name's parts, so the joined name is checked here.
		if k, ok := unitKeys[fileKey(ix.paths[id])]; ok && !contains(c.pathHit, units[k].display) {
			c.pathHit = append(c.pathHit, units[k].display)
		}
		// Path.
		if len(c.pathHit) > 0 {
			stemName := stem(strings.ToLower(strings.TrimSuffix(path.Base(ix.paths[id]), path.Ext(ix.paths[id]))))
			for _, u := range units {
				if !contains(c.pathHit, u.display) {
					continue
				}
				base += tune.pathW * u.weight * u.idf
				if strings.ReplaceAll(stemName, "_", "") == u.key {
					base += tune.nameW * u.weight * u.idf
				}
			}
			// A file name of several parts, each a query term
			// (default_types.rs for "default ... types"), counts as a
			// name match of those terms.
			if parts := SplitIdentifier(strings.TrimSuffix(path.Base(ix.paths[id]), path.Ext(ix.paths[id]))); len(parts) > 1 {
				sum, all := 0.0, true
				for _, p := range parts {
					k := stem(p)
					found := false
					for _, u := range units {
						if u.key == k && contains(c.pathHit, u.display) {
							sum += u.weight * u.idf
							found = true
							break
						}
					}
					if !found {
						all = false
						break
					}
				}
				if all {
					base += sum
					c.boosts = append(c.boosts, "file name spelled by query terms")
				}
			}
		}
		c.factor = 1
		if !wantsTests && isTestPath(ix.paths[id]) {
			c.factor = testFactor
		} else if isProsePath(ix.paths[id]) {
			c.factor = tune.proseF
		}
		if h := scopeHits(ix.paths[id], shape.scope); h > 0 && base > 0 {
			c.factor *= 1 + tune.scopeB*float64(h)/float64(len(shape.scope))
			c.boosts = append(c.boosts, "path is in the subject's scope")
		}
		base *= c.factor
		if focus[id] {
			base = base*1.5 + 5
		} else if d := underDir(ix.paths[id], focusDirs); d != "" && base > 0 {
			base = base*1.5 + 5
			c.boosts = append(c.boosts, "under the focus folder `"+strings.TrimSuffix(d, "/")+"`")
		}
		if hasActive && id == active {
			base = base*1.5 + 4
		}
		if open[id] && base > 0 {
			base = base*1.2 + 2
			c.boosts = append(c.boosts, "open in the editor")
		}
		if rel, ok := neighbour[id]; ok && base > 0 {
			base = base*1.2 + 1.5
			c.boosts = append(c.boosts, rel)
		}
		c.score = base
	}
	if len(touched) == 0 {
		res.FilesConsidered = 0
	}
	ranked := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		if c.score > 0 {
			ranked = append(ranked, c)
		}
	}
	if len(ranked) > res.FilesConsidered {
		res.FilesConsidered = len(ranked)
	}
	byScore := func() {
		sort.Slice(ranked, func(i, j int) bool {
			if ranked[i].score != ranked[j].score {
				return ranked[i].score > ranked[j].score
			}
			return ix.paths[ranked[i].id] < ix.paths[ranked[j].id]
		})
	}
	byScore()
	if tune.winK > 0 && len(units) >= 2 && winW > 0 {
		ix.passageRerank(ranked, units, winW, ss)
		k := min(len(ranked), tune.winK)
		top := ranked[:k]
		sort.Slice(top, func(i, j int) bool {
			if top[i].score != top[j].score {
				return top[i].score > top[j].score
			}
			return ix.paths[top[i].id] < ix.paths[top[j].id]
		})
	}

	// Full snippets for the best files take up to fullShare of the budget;
	// the rest is a map of the next-ranked files (one signature line each),
	// so the reader sees many more candidate files per token.
	remaining := budget
	fullBudget := int(float64(budget) * tune.fullShare)
	if budget < 4*minSnippetTokens*mapMinFiles {
		fullBudget = budget // too small a budget for a map
	}
	scratch := &ss.snip
	next := 0
	for ; next < len(ranked); next++ {
		c := ranked[next]
		if len(res.Snippets) >= maxSnip || remaining < minSnippetTokens || res.UsedTokens >= fullBudget {
			break
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		room := min(remaining, max(fullBudget-res.UsedTokens, minSnippetTokens*4))
		sn, ok := ix.snippet(c, units, room, fullBudget, scratch)
		if !ok {
			continue
		}
		t := Tokens(sn.Text)
		remaining -= t
		res.UsedTokens += t
		res.Snippets = append(res.Snippets, sn)
	}
	// Past the scored candidates, the other files matching a term follow
	// in content order (their content score with the file class factors),
	// while the map has room: a budget larger than the candidates' map
	// lines reaches further down the list instead of staying unused.
	tail := touched[min(len(touched), maxContentCandidates):]
	tailNext := func() *candidate {
		for len(tail) > 0 {
			id := tail[0]
			tail = tail[1:]
			if cands[id] != nil {
				continue
			}
			s := content[id]
			if !wantsTests && isTestPath(ix.paths[id]) {
				s *= testFactor
			} else if isProsePath(ix.paths[id]) {
				s *= proseFactor
			}
			return &candidate{id: id, content: content[id], score: s, tail: true}
		}
		return nil
	}
	// Map entries are made a batch at a time, two goroutines each making
	// every other entry of the batch (an entry depends only on its file
	// and the units), and taken in order while the budget lasts: the same
	// entries as one at a time, with at most one batch made in vain.
	mapped := 0
	var batch []*candidate
	var entries []mapResult
	other := &ss.other
	for mapped < tune.mapMax && remaining >= minMapTokens {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if len(batch) == 0 {
			want := mapBatch
			if mapped == 0 {
				want = mapBatch / 4
			}
			for len(batch) < want {
				var c *candidate
				if next < len(ranked) {
					c = ranked[next]
					next++
				} else if c = tailNext(); c == nil {
					break
				}
				batch = append(batch, c)
			}
			if len(batch) == 0 {
				break
			}
			entries = ix.mapEntries(batch, units, entries[:0], scratch, other)
		}
		e := entries[0]
		batch, entries = batch[1:], entries[1:]
		if !e.ok {
			continue
		}
		t := Tokens(e.sn.Text)
		if t > remaining {
			continue
		}
		remaining -= t
		res.UsedTokens += t
		res.Snippets = append(res.Snippets, e.sn)
		mapped++
	}
	// Every file matching a term is placed and budget is left (a small
	// repository): the graph neighbours of the best hits that match no
	// term follow, the files the hits use or that use them.
	if q.Neighbours != nil && !tune.on["nogfill"] && next >= len(ranked) && len(tail) == 0 {
		for _, c := range ix.graphFill(ranked, q.Neighbours, lookup, cands) {
			if mapped >= tune.mapMax || remaining < minMapTokens {
				break
			}
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
			sn, ok := ix.mapEntry(c, units, remaining, scratch)
			if !ok {
				continue
			}
			t := Tokens(sn.Text)
			remaining -= t
			res.UsedTokens += t
			res.Snippets = append(res.Snippets, sn)
			mapped++
		}
	}
	return res, nil
}

// pathsHold reports whether, for each group of stemmed words, one indexed
// path holds all of them as path terms.
func (ix *Index) pathsHold(groups [][]string) bool {
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		ids := ix.pathTrm.get(g[0])
		for _, w := range g[1:] {
			ids = intersectIncreasing(ids, ix.pathTrm.get(w))
		}
		if len(ids) == 0 {
			return false
		}
	}
	return true
}

// intersectIncreasing is the ids in both increasing lists, in order.
func intersectIncreasing(a, b []uint32) []uint32 {
	var out []uint32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// mapBatch is how many map entries are made at a time (a quarter of it
// first: a small budget takes only a few).
const mapBatch = 64

// mapResult is one made map entry.
type mapResult struct {
	sn Snippet
	ok bool
}

// mapEntries appends to dst the map entries of cs (mapEntry with no
// budget limit; the caller checks the budget), two goroutines making
// every other one when there are enough, the second with scratch other.
func (ix *Index) mapEntries(cs []*candidate, units []unit, dst []mapResult, sc, other *snipScratch) []mapResult {
	n := len(dst)
	for range cs {
		dst = append(dst, mapResult{})
	}
	out := dst[n:]
	run := func(from int, sc *snipScratch) {
		for i := from; i < len(cs); i += 2 {
			out[i].sn, out[i].ok = ix.mapEntry(cs[i], units, math.MaxInt, sc)
		}
	}
	if len(cs) < 8 || runtime.GOMAXPROCS(0) < 2 {
		for i, c := range cs {
			out[i].sn, out[i].ok = ix.mapEntry(c, units, math.MaxInt, sc)
		}
		return dst
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run(1, other)
	}()
	run(0, sc)
	wg.Wait()
	return dst
}

// Map section limits: the share of the budget full snippets may take, the
// most map entries, the longest signature line (tokens), and the least
// number of map entries a budget must afford for a map to be made.
const (
	fullShare       = 0.6
	maxMapEntries   = 2000
	minMapTokens    = 4
	maxMapLineToken = 60
	mapMinFiles     = 4
)

// mapEntry is the compact map line of candidate c: the signature line of
// its best matching definition (else of its first function or type, else
// the line matching most terms), as a one-line snippet. A definition's
// line is read alone (from its start byte), not the whole file.
func (ix *Index) mapEntry(c *candidate, units []unit, remaining int, sc *snipScratch) (Snippet, bool) {
	rel := ix.paths[c.id]
	abs := filepath.Join(ix.snap.Root(), filepath.FromSlash(rel))
	sym := c.sym
	if sym == nil {
		for _, s := range symbolsOf(ix.files[c.id]) {
			if kindRank(s.Kind) >= 3 && s.StartLine >= 1 {
				s := s
				sym = &s
				break
			}
		}
	}
	var reasons []string
	var text string
	at := 0
	if sym != nil && sym.StartLine >= 1 && sym.StartByte >= 0 {
		line, ok, err := readLineAt(abs, int64(sym.StartByte), sc)
		if err != nil || !ok {
			return Snippet{}, false
		}
		at, text = int(sym.StartLine), line
		reasons = append(reasons, fmt.Sprintf("map entry: %s `%s`", kindWord(sym.Kind), sym.Name))
	} else if c.tail {
		// A file past the scored candidates with no function or type
		// (prose, data, assembly): its first line, read alone, stands for
		// it; finding its best line would read the whole file.
		line, _, err := readLineAt(abs, 0, sc)
		if err != nil {
			return Snippet{}, false
		}
		at, text = 1, line
		reasons = append(reasons, "map entry: the first line")
	} else {
		var err error
		sc.data, err = readInto(sc.data[:0], abs)
		if err != nil {
			return Snippet{}, false
		}
		sc.lines = splitLinesInto(sc.lines[:0], sc.data, -1)
		if len(sc.lines) == 0 {
			return Snippet{}, false
		}
		at = bestLineInto(sc.lines, units, sc)
		text = string(sc.lines[at-1])
		reasons = append(reasons, "map entry: the line matching most terms")
	}
	text = strings.ToValidUTF8(strings.TrimSpace(text), "\uFFFD")
	t := Tokens(text)
	if t == 0 || t > maxMapLineToken || t > remaining {
		return Snippet{}, false
	}
	if len(c.pathHit) > 0 {
		reasons = append(reasons, "path matches "+quoteList(c.pathHit))
	}
	reasons = append(reasons, ix.mentions(c.id, units)...)
	reasons = append(reasons, c.boosts...)
	if r := c.pass.reason(at, at); r != "" {
		reasons = append(reasons, r)
	}
	return Snippet{
		Path: rel, StartLine: at, EndLine: at, Text: text,
		Score: math.Round(c.score*100) / 100, Reason: strings.Join(reasons, "; "),
	}, true
}

// units turns the query into index look-ups with their rarity (idf).
func (ix *Index) units(text string, terms []string) []unit {
	var us []unit
	seen := map[string]bool{}
	add := func(key, display string, weight float64) {
		if key == "" || seen[key] {
			return
		}
		seen[key] = true
		posts := ix.postings(key)
		df := float64(len(posts))
		if df == 0 {
			df = float64(len(ix.defs.get(key)) + len(ix.pathTrm.get(key)))
		}
		n := float64(len(ix.paths))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		us = append(us, unit{key: key, display: display, weight: weight, idf: idf, posts: posts})
	}
	for _, t := range terms {
		if strings.Contains(t, " ") {
			words := strings.Fields(t)
			add(stem(joined(words)), t, 1)
			for _, w := range words {
				add(stem(w), w, 0.5)
			}
			continue
		}
		add(stem(t), t, 1)
		// Light verb stemming on the query side only, kept when the index
		// knows the form: "loaded" → load, "parsing" → parse.
		for _, v := range verbForms(t) {
			if ix.known(v) {
				add(v, v, 0.7)
				break
			}
		}
	}
	// Identifiers written whole in the query (parseConfig, retry_policy)
	// are also looked up joined, as the index holds them.
	for _, id := range identifiers(text) {
		parts := SplitIdentifier(id)
		if len(parts) > 1 && len(parts) <= 6 {
			add(stem(joined(parts)), id, 1)
		}
	}
	// Kebab-case words (set-default, runtime-dom, --dry-run) also name the
	// identifier or folder that spells them joined (setdefault).
	for _, w := range kebabWords(text) {
		parts := SplitIdentifier(w)
		if len(parts) > 1 && len(parts) <= 6 {
			add(stem(joined(parts)), w, 1)
		}
	}
	// Two or three plain words may name one identifier ("retry policy").
	if len(terms) >= 2 && len(terms) <= 3 && !strings.Contains(strings.Join(terms, ""), " ") {
		add(stem(joined(terms)), strings.Join(terms, " "), 0.8)
	}
	return us
}

// verbForms returns the base forms "loaded", "loading", "parsed",
// "verified" may come from, most likely first.
func verbForms(t string) []string {
	n := len(t)
	switch {
	case n > 5 && strings.HasSuffix(t, "ing"):
		return []string{t[:n-3], t[:n-3] + "e"}
	case n > 5 && strings.HasSuffix(t, "ied"):
		return []string{t[:n-3] + "y", t[:n-2], t[:n-1]}
	case n > 4 && strings.HasSuffix(t, "ed"):
		return []string{t[:n-2], t[:n-1]}
	}
	return nil
}

// known reports whether the index holds key anywhere.
func (ix *Index) known(key string) bool {
	return ix.hasTerm(key) || len(ix.defs.get(key)) > 0 || len(ix.pathTrm.get(key)) > 0
}

// matchSymbols returns the definition score of a file with symbols syms
// and the symbol to show: the highest weighted match over all units, then
// the kind a developer reads first.
//
// For each unit, the best of its matches counts: exact 3·idf+4, prefix
// 1.5·idf, name part 1·idf (idf times the unit's weight), each times the
// symbol's defWeight (functions and methods over types over constants over
// fields and variables; a one-line definition counts less). The units'
// best matches add up, and a definition whose name holds several units
// adds half of its own sum again: markRoots is better evidence for "mark
// roots" than a field root and a variable mark.
func matchSymbols(syms []syntax.Symbol, units []unit) (float64, *syntax.Symbol) {
	return newSymMatch(units).match(syms)
}

// symMatch is matchSymbols' state for one query's units, reused over many
// files by one goroutine.
type symMatch struct {
	units []unit
	mm    matcher
	sp    asciiSplit
	gain  []float64
	// With ids (the name id of each symbol, nameTable), a symbol whose
	// name is not set in mask is skipped: it cannot match.
	mask []uint64
	ids  []uint32
}

func newSymMatch(units []unit) *symMatch {
	m := &symMatch{units: units, gain: make([]float64, len(units))}
	m.mm.init(units)
	return m
}

// match is matchSymbols(syms, m.units).
func (m *symMatch) match(syms []syntax.Symbol) (float64, *syntax.Symbol) {
	units := m.units
	gain := m.gain
	clear(gain)
	bestScore, at := 0.0, -1
	together := 0.0
	sp := &m.sp
	mm := &m.mm
	for i := range syms {
		if m.ids != nil {
			if n := m.ids[i]; m.mask[n>>6]&(1<<(n&63)) == 0 {
				continue
			}
		}
		s := &syms[i]
		name := s.Name.String()
		if !mm.scan(name, true) {
			continue
		}
		// ASCII names (nearly all) are split into a reused buffer; others
		// take SplitIdentifier's allocating path. Both give the same levels.
		ascii := sp.split(name)
		var parts []string
		var full string
		if !ascii {
			parts = SplitIdentifier(name)
			full = stem(joined(parts))
		}
		score, sum, matched := 0.0, 0.0, 0
		dw := defWeight(s)
		for k, u := range units {
			if !mm.found[k] {
				// Its needle is not in the name: no level but matchNone
				// (mayMatch's premise, per unit).
				continue
			}
			lvl := matchNone
			if ascii {
				lvl = sp.level(u.key)
			} else {
				switch {
				case full == u.key:
					lvl = matchExact
				case len(u.key) >= 3 && strings.HasPrefix(full, u.key):
					lvl = matchPrefix
				default:
					for _, p := range parts {
						if stem(p) == u.key {
							lvl = matchPart
							break
						}
					}
				}
			}
			if lvl == matchNone {
				continue
			}
			w := u.idf * u.weight
			g := dw * levelScore(lvl, w)
			gain[k] = max(gain[k], g)
			sum += g
			matched++
			score += symbolWeight[lvl] * w
		}
		if matched >= 2 {
			together = max(together, sum/2)
		}
		if score > bestScore || (score == bestScore && score > 0 && kindRank(s.Kind) > kindRank(syms[at].Kind)) {
			bestScore, at = score, i
		}
	}
	total := together
	for _, g := range gain {
		total += g
	}
	if at < 0 {
		return total, nil
	}
	return total, &syms[at]
}

// defScore is one file's definition evidence and the symbol to show.
type defScore struct {
	score float64
	sym   *syntax.Symbol
}

// scoreDefinitions runs matchSymbols on every candidate that may define a
// unit, split over up to two goroutines (the files are independent; each
// goroutine has its own matcher), and returns the results by file id.
func (ix *Index) scoreDefinitions(cands map[uint32]*candidate, mayDefine []bool, units []unit) map[uint32]defScore {
	ids := make([]uint32, 0, len(cands))
	syms := make([][]syntax.Symbol, 0, len(cands))
	work := 0
	for id := range cands {
		if mayDefine[id] {
			ss := symbolsOf(ix.files[id])
			ids = append(ids, id)
			syms = append(syms, ss)
			work += len(ss)
		}
	}
	// With the name table, only the symbols whose name may match a unit
	// are looked at (the others would match nothing).
	var mask []uint64
	t := ix.nameTable()
	if t != nil {
		mask = ix.nameMask(t, units)
	}
	nameIDs := func(id uint32, n int) []uint32 {
		if mask == nil {
			return nil
		}
		ns := t.ids[t.symOff[id]:t.symOff[id+1]]
		if len(ns) != n {
			return nil
		}
		return ns
	}
	res := make([]defScore, len(ids))
	run := func(from, to int) {
		m := newSymMatch(units)
		for i := from; i < to; i++ {
			m.mask, m.ids = mask, nameIDs(ids[i], len(syms[i]))
			res[i].score, res[i].sym = m.match(syms[i])
		}
	}
	if work < parallelSymbols || runtime.GOMAXPROCS(0) < 2 {
		run(0, len(ids))
	} else {
		// Two halves of about equal symbol counts.
		half, acc := len(ids), 0
		for i := range ids {
			acc += len(syms[i])
			if 2*acc >= work {
				half = i + 1
				break
			}
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(half, len(ids))
		}()
		run(0, half)
		wg.Wait()
	}
	out := make(map[uint32]defScore, len(ids))
	for i, id := range ids {
		out[id] = res[i]
	}
	return out
}

// parallelSymbols is the least number of symbols to match for
// scoreDefinitions to use a second goroutine.
const parallelSymbols = 20000

// levelScore is the definition evidence of one match level for a unit of
// weighted idf w.
func levelScore(lvl int, w float64) float64 {
	switch lvl {
	case matchExact:
		return 3*w + tune.exC
	case matchPrefix:
		return 1.5 * w
	case matchPart:
		return w
	}
	return 0
}

// defWeight weighs a definition by its kind and size: functions and
// methods 1, types (struct, interface, class, enum) 0.8, modules 0.6,
// constants 0.5, fields, variables and others 0.35; a definition of one
// line counts 0.7 of that (a one-line field is weak evidence).
func defWeight(s *syntax.Symbol) float64 {
	var w float64
	switch kindRank(s.Kind) {
	case 4:
		w = 1
	case 3:
		w = 0.8
	case 2:
		w = 0.6
	default:
		w = 0.35
		if s.Kind == syntax.KindConstant {
			w = 0.5
		}
	}
	if s.EndLine <= s.StartLine {
		w *= 0.7
	}
	return w
}

// asciiSplit is an ASCII name split as SplitIdentifier splits it, without
// allocating: joined holds the lower-cased letters and digits (the parts
// concatenated, as joined(SplitIdentifier(name)) gives them) and ends the
// end offset of each part in joined.
type asciiSplit struct {
	joined []byte
	ends   []int
}

// split fills sp from name; it returns false (sp unusable) when name holds
// a byte outside ASCII.
func (sp *asciiSplit) split(name string) bool {
	sp.joined, sp.ends = sp.joined[:0], sp.ends[:0]
	inPart := false
	var prev byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 {
			return false
		}
		if !isLower(c) && !isUpper(c) && !isDigit(c) {
			if inPart {
				sp.ends = append(sp.ends, len(sp.joined))
			}
			inPart, prev = false, 0
			continue
		}
		if !inPart {
			inPart = true
		} else if isUpper(c) {
			var next byte
			if i+1 < len(name) {
				next = name[i+1]
			}
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && isLower(next)) {
				sp.ends = append(sp.ends, len(sp.joined))
			}
		}
		prev = c
		if isUpper(c) {
			c += 32
		}
		sp.joined = append(sp.joined, c)
	}
	if inPart {
		sp.ends = append(sp.ends, len(sp.joined))
	}
	return true
}

// level is how the split name matches key (a stemmed index term): exact
// when stem(joined) is key, prefix when it starts with a key of 3 or more
// bytes, part when a part stems to key; the levels of matchSymbols.
func (sp *asciiSplit) level(key string) int {
	k, y := stemCut(sp.joined)
	full := sp.joined[:k]
	switch {
	case stemEqual(full, y, key):
		return matchExact
	case len(key) >= 3 && (len(key) <= k && string(full[:len(key)]) == key ||
		y && len(key) == k+1 && stemEqual(full, y, key)):
		return matchPrefix
	}
	from := 0
	for _, end := range sp.ends {
		p := sp.joined[from:end]
		from = end
		pk, py := stemCut(p)
		if stemEqual(p[:pk], py, key) {
			return matchPart
		}
	}
	return matchNone
}

// stemCut describes stem(string(b)) without allocating: b[:k], followed
// by "y" when y is set.
func stemCut(b []byte) (k int, y bool) {
	n := len(b)
	has := func(suf string) bool { return n >= len(suf) && string(b[n-len(suf):]) == suf }
	switch {
	case n > 4 && has("ies"):
		return n - 3, true
	case n > 4 && (has("sses") || has("xes") || has("ches") || has("shes")):
		return n - 2, false
	case n > 3 && b[n-1] == 's' && b[n-2] != 's' && b[n-2] != 'u' && b[n-2] != 'i':
		return n - 1, false
	}
	return n, false
}

// stemEqual reports whether stem (b, then "y" when y) equals key.
func stemEqual(b []byte, y bool, key string) bool {
	if y {
		return len(key) == len(b)+1 && key[len(b)] == 'y' && string(b) == key[:len(b)]
	}
	return string(b) == key
}

// mayMatch is a cheap pre-check for matchSymbols (which uses a matcher):
// can name match any unit? Names with non-ASCII bytes always may.
// Otherwise a key, less its last byte (stemming may have changed it), must
// occur in name ignoring ASCII case; for a name with "_" in its letters
// and digits only, since joined keys drop "_" (parse_config →
// parseconfig). A match needs the key less its last byte inside
// joined(SplitIdentifier(name)), so that check drops only names that
// cannot match.
func mayMatch(name string, units []unit) bool {
	var m matcher
	m.init(units)
	return m.mayMatch(name)
}

// matcher runs mayMatch for many names: the needles (each unit's key less
// its last byte) are made once, and each name is lower-cased once into a
// reused buffer (letters and digits only for a name with "_"). The name is
// then scanned once: a needle of two or more bytes can only start where the
// name holds its first two bytes, so each position's byte pair is tested in
// a bitmap of the needles' first pairs and only the needles starting with a
// set pair are compared there (the same answer as a bytes.Contains per
// needle). found marks, per unit, whether its needle occurs in the name.
type matcher struct {
	needles [][]byte
	buf     []byte
	pairs   [1 << 16 / 64]uint64 // first byte pairs of the needles of 2+ bytes
	byPair  map[uint16][]int     // first pair → units whose needle starts with it
	short   []int                // units whose needle is shorter than two bytes
	found   []bool               // per unit: its needle is in the last name scanned
	hits    []int                // the units found, in no particular order
}

func (m *matcher) init(units []unit) {
	m.needles = make([][]byte, len(units))
	m.byPair = make(map[uint16][]int, len(units))
	m.found = make([]bool, len(units))
	for i, u := range units {
		k := u.key
		if len(k) > 2 {
			k = k[:len(k)-1]
		}
		m.needles[i] = []byte(k)
		if len(k) < 2 {
			m.short = append(m.short, i)
			continue
		}
		p := uint16(k[0])<<8 | uint16(k[1])
		m.pairs[p>>6] |= 1 << (p & 63)
		m.byPair[p] = append(m.byPair[p], i)
	}
}

// mayMatch is mayMatch(name, units) for the units of init.
func (m *matcher) mayMatch(name string) bool {
	return m.scan(name, false)
}

// scan lower-cases name and reports whether any needle occurs in it; with
// all it also fills found and hits for every needle that occurs (else it
// stops at the first). A name with a non-ASCII byte may match anything:
// every unit is marked found.
func (m *matcher) scan(name string, all bool) bool {
	for _, k := range m.hits {
		m.found[k] = false
	}
	m.hits = m.hits[:0]
	under := false
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			if all {
				for k := range m.found {
					m.found[k] = true
					m.hits = append(m.hits, k)
				}
			}
			return true
		}
		if name[i] == '_' {
			under = true
		}
	}
	b := m.buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if under && !isLower(c) && !isUpper(c) && !isDigit(c) {
			continue
		}
		if isUpper(c) {
			c += 32
		}
		b = append(b, c)
	}
	m.buf = b
	any := false
	for _, k := range m.short {
		if bytes.Contains(b, m.needles[k]) {
			if !all {
				return true
			}
			any = true
			m.found[k] = true
			m.hits = append(m.hits, k)
		}
	}
	for i := 0; i+1 < len(b); i++ {
		p := uint16(b[i])<<8 | uint16(b[i+1])
		if m.pairs[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, k := range m.byPair[p] {
			if m.found[k] || !bytes.HasPrefix(b[i:], m.needles[k]) {
				continue
			}
			if !all {
				return true
			}
			any = true
			m.found[k] = true
			m.hits = append(m.hits, k)
		}
	}
	return any
}

// symbolWeight weighs match levels when choosing the definition to show:
// a name holding several query terms beats one equal to a single term.
var symbolWeight = [...]float64{matchNone: 0, matchPart: 1, matchPrefix: 1.5, matchExact: 2}

// kindRank prefers definitions a developer reads first.
func kindRank(kind syntax.SymbolKind) int {
	switch kind {
	case syntax.KindFunction, syntax.KindMethod:
		return 4
	case syntax.KindType, syntax.KindStruct, syntax.KindInterface, syntax.KindClass, syntax.KindEnum:
		return 3
	case syntax.KindModule:
		return 2
	case syntax.KindConstant, syntax.KindVariable:
		return 1
	}
	return 0
}

// snippet cuts the text of candidate c: its best matching definition when
// it fits, else a window of lines around the lines that match most terms.
func (ix *Index) snippet(c *candidate, units []unit, remaining, budget int, sc *snipScratch) (Snippet, bool) {
	rel := ix.paths[c.id]
	var err error
	sc.data, err = readInto(sc.data[:0], filepath.Join(ix.snap.Root(), filepath.FromSlash(rel)))
	if err != nil {
		return Snippet{}, false
	}
	// With a definition to show, only the lines up to its end (or the 40
	// lines of its window) are split: every use below stays within them,
	// and len(lines) clamps the same way (see splitLinesInto).
	hasSym := c.sym != nil && c.sym.StartLine >= 1 && c.sym.EndLine >= c.sym.StartLine
	limit := -1
	if hasSym {
		limit = int(max(c.sym.EndLine, c.sym.StartLine+40))
	}
	sc.lines = splitLinesInto(sc.lines[:0], sc.data, limit)
	lines := sc.lines
	if len(lines) == 0 {
		return Snippet{}, false
	}
	var reasons []string
	start, end := 0, 0
	// A definition may take up to half the budget, never more than is left.
	defCap := min(remaining, max(budget/2, 200))
	if hasSym && int(c.sym.StartLine) <= len(lines) {
		s, e := int(c.sym.StartLine), min(int(c.sym.EndLine), len(lines))
		if Tokens(joinLines(lines, s, e)) <= defCap {
			start, end = s, e
		} else {
			start, end = fitWindow(lines, s, s, s+40, remaining)
		}
		if start > 0 {
			reasons = append(reasons, fmt.Sprintf("defines %s `%s`", kindWord(c.sym.Kind), c.sym.Name))
		}
	}
	if start == 0 {
		if limit >= 0 {
			sc.lines = splitLinesInto(sc.lines[:0], sc.data, -1)
			lines = sc.lines
		}
		best := bestLineInto(lines, units, sc)
		start, end = fitWindow(lines, best, best-6, best+14, remaining)
		if start == 0 {
			return Snippet{}, false
		}
	}
	if len(c.pathHit) > 0 {
		reasons = append(reasons, "path matches "+quoteList(c.pathHit))
	}
	reasons = append(reasons, ix.mentions(c.id, units)...)
	reasons = append(reasons, c.boosts...)
	if r := c.pass.reason(start, end); r != "" {
		reasons = append(reasons, r)
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "matches the query")
	}
	return Snippet{
		Path: rel, StartLine: start, EndLine: end, Text: joinLines(lines, start, end),
		Score: math.Round(c.score*100) / 100, Reason: strings.Join(reasons, "; "),
	}, true
}

// mentions says how often the file uses its two most telling terms.
func (ix *Index) mentions(id uint32, units []unit) []string {
	type hit struct {
		display string
		tf      int
		w       float64
	}
	var hits []hit
	for _, u := range units {
		if n := tf(u.posts, id); n > 0 {
			hits = append(hits, hit{u.display, n, u.idf * u.weight * float64(min(n, 8))})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].w > hits[j].w })
	var out []string
	var told []string
	for _, h := range hits {
		if len(told) == 2 {
			break
		}
		// One word is counted once: `mi` is a part of `MiB`, and "retry"
		// of "retry policy", whose mentions are the same text.
		if slices.ContainsFunc(told, func(d string) bool { return sameWord(d, h.display) }) {
			continue
		}
		told = append(told, h.display)
		switch {
		case h.tf == 1:
			out = append(out, fmt.Sprintf("mentions `%s` once", h.display))
		case h.tf >= maxTF:
			out = append(out, fmt.Sprintf("mentions `%s` %d+ times", h.display, maxTF))
		default:
			out = append(out, fmt.Sprintf("mentions `%s` %d times", h.display, h.tf))
		}
	}
	return out
}

// sameWord reports whether query units displayed a and b name one word:
// equal, or one is a part of the other (SplitIdentifier's parts, a
// phrase's words), compared stemmed and lower-cased.
func sameWord(a, b string) bool {
	pa, pb := wordParts(a), wordParts(b)
	if len(pa) > len(pb) {
		pa, pb = pb, pa
	}
	for _, p := range pa {
		if !slices.Contains(pb, p) {
			return false
		}
	}
	return len(pa) > 0
}

// wordParts is the stemmed parts of a unit's display, and the display
// joined as the index keys it (MiB → mi, b, mib).
func wordParts(d string) []string {
	var ps []string
	for _, w := range strings.Fields(d) {
		for _, p := range SplitIdentifier(w) {
			ps = append(ps, stem(p))
		}
	}
	if len(ps) > 1 {
		ps = append(ps, stem(joined(ps)))
	}
	return ps
}

// bestLine returns the 1-based line that holds the most distinct units
// (weighted by rarity), the first on ties; 1 when none matches.
func bestLine(lines [][]byte, units []unit) int {
	return bestLineInto(lines, units, &snipScratch{})
}

// bestLineInto is bestLine with its buffers taken from (and kept in) sc.
func bestLineInto(lines [][]byte, units []unit, sc *snipScratch) int {
	// The lines are lower-cased once into one buffer joined by "\n" and
	// the needles are searched in it: no needle holds "\n", so an
	// occurrence lies within one line, as with a bytes.Contains per line.
	low := sc.low[:0]
	for _, l := range lines {
		low = append(low, l...)
		low = append(low, '\n')
	}
	sc.low = low
	lowerASCII(low)
	score := sc.score[:0]
	for range lines {
		score = append(score, 0)
	}
	sc.score = score
	// Each unit has two needles, its display lower-cased and its key. They
	// are all found in one scan of low: at each byte, the needles of one
	// byte and the needles starting with the byte pair there (a bitmap
	// says which pairs start one) are compared. Each (line, unit) found is
	// kept once; a line's score is then summed in unit order, as a search
	// per unit adds it.
	type needle struct {
		b []byte
		k int
	}
	var pairs [1 << 16 / 64]uint64
	found := sc.found[:0] // line<<32 | unit
	defer func() { sc.found = found[:0] }()
	byPair := map[uint16][]needle{}
	var single [256][]int
	for k, u := range units {
		for _, nb := range [2][]byte{[]byte(strings.ToLower(u.display)), []byte(u.key)} {
			switch len(nb) {
			case 0:
				// bytes.Contains(line, "") holds for every line.
				for i := range lines {
					found = append(found, uint64(i)<<32|uint64(k))
				}
			case 1:
				single[nb[0]] = append(single[nb[0]], k)
			default:
				p := uint16(nb[0])<<8 | uint16(nb[1])
				pairs[p>>6] |= 1 << (p & 63)
				byPair[p] = append(byPair[p], needle{nb, k})
			}
		}
	}
	line := 0
	for i := 0; i < len(low); i++ {
		c := low[i]
		if c == '\n' {
			line++
			continue
		}
		for _, k := range single[c] {
			found = append(found, uint64(line)<<32|uint64(k))
		}
		if i+1 < len(low) {
			p := uint16(c)<<8 | uint16(low[i+1])
			if pairs[p>>6]&(1<<(p&63)) != 0 {
				for _, nd := range byPair[p] {
					if bytes.HasPrefix(low[i:], nd.b) {
						found = append(found, uint64(line)<<32|uint64(nd.k))
					}
				}
			}
		}
	}
	slices.Sort(found)
	for j, f := range found {
		if j > 0 && found[j-1] == f {
			continue
		}
		i, k := int(f>>32), int(f&(1<<32-1))
		score[i] += units[k].idf * units[k].weight
	}
	return bestOf(score)
}

// bestOf is the 1-based index of the highest score, the first on ties; 1
// when none is above 0.
func bestOf(score []float64) int {
	best, bestScore := 1, 0.0
	for i, s := range score {
		if s > bestScore {
			best, bestScore = i+1, s
		}
	}
	return best
}

// fitWindow returns lines from..to (clamped to the file, always holding
// line at) shrunk until its text fits in tokens; (0, 0) when not even three
// lines fit. Blank lines at the edges are dropped.
func fitWindow(lines [][]byte, at, from, to, tokens int) (int, int) {
	from, to = max(from, 1), min(to, len(lines))
	at = min(max(at, from), to)
	for Tokens(joinLines(lines, from, to)) > tokens {
		switch {
		case to-at > at-from && to > at:
			to--
		case from < at:
			from++
		case to > at:
			to--
		default:
			return 0, 0
		}
		if to-from < 2 && len(lines) >= 3 {
			if Tokens(joinLines(lines, from, to)) > tokens {
				return 0, 0
			}
			break
		}
	}
	for from < at && len(bytes.TrimSpace(lines[from-1])) == 0 {
		from++
	}
	for to > at && len(bytes.TrimSpace(lines[to-1])) == 0 {
		to--
	}
	return from, to
}

// snipScratch is reused by the snippets of one Search: the file read and
// its lines. A snippet's text is copied out of them (joinLines).
type snipScratch struct {
	data  []byte
	lines [][]byte
	// bestLineInto's lower-cased lines, line scores and (line, unit) hits
	low   []byte
	score []float64
	found []uint64
}

// searchScratch is the buffers of one Search, kept in scratchPool between
// Searches so that a query does not grow them again from nothing (with
// file reads that double up to the largest file read, that was most of
// the bytes a query allocated): the snippets' and the map's two
// goroutines' file reads and lines, and the passage score's two.
type searchScratch struct {
	snip, other snipScratch
	pass        [2]snipScratch
	ps          [2]passScratch
}

var scratchPool = sync.Pool{New: func() any { return new(searchScratch) }}

// keptScratch holds one searchScratch across GCs, which empty scratchPool:
// under the steady heap limit (internal/project memlimit.go) a GC runs
// every few queries, and a query that found the pool empty grew its
// buffers again from nothing, its garbage bringing the next GC sooner.
// Concurrent Searches take the pool's.
var keptScratch atomic.Pointer[searchScratch]

func getScratch() *searchScratch {
	if ss := keptScratch.Swap(nil); ss != nil {
		return ss
	}
	return scratchPool.Get().(*searchScratch)
}

// maxKeptScratch is the largest buffer putScratch keeps: a huge file read
// once is not held on to for every later query.
const maxKeptScratch = 1 << 20

// putScratch returns ss to the pool, dropping buffers over maxKeptScratch.
// Nothing a Search returns points into ss (snippet texts are copies).
func putScratch(ss *searchScratch) {
	for _, sc := range []*snipScratch{&ss.snip, &ss.other, &ss.pass[0], &ss.pass[1]} {
		if cap(sc.data) > maxKeptScratch {
			sc.data = nil
		}
		if cap(sc.lines) > maxKeptScratch/16 {
			sc.lines = nil
		}
		if cap(sc.low) > maxKeptScratch {
			sc.low, sc.score, sc.found = nil, nil, nil
		}
	}
	for i := range ss.ps {
		ps := &ss.ps[i]
		if cap(ps.low) > maxKeptScratch {
			ps.low, ps.marked = nil, nil
		}
		if cap(ps.lowStarts) > maxKeptScratch/8 {
			ps.lowStarts, ps.origStarts, ps.marked = nil, nil, nil
		}
		ps.m = matcher{}
	}
	if !keptScratch.CompareAndSwap(nil, ss) {
		scratchPool.Put(ss)
	}
}

// splitLinesInto is splitLines appending to dst (reused across files),
// stopping after limit lines when limit >= 0: the first min(limit, all)
// lines of splitLines.
func splitLinesInto(dst [][]byte, data []byte, limit int) [][]byte {
	if len(data) == 0 {
		return dst
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	for n := 0; limit < 0 || n < limit; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(dst, bytes.TrimSuffix(data, []byte("\r")))
		}
		dst = append(dst, bytes.TrimSuffix(data[:i], []byte("\r")))
		data = data[i+1:]
	}
	return dst
}

// splitLines splits data into lines without their "\n" (and "\r").
func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	ls := bytes.Split(data, []byte("\n"))
	for i, l := range ls {
		ls[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return ls
}

// joinLines returns lines from..to (1-based, inclusive) joined by "\n",
// with invalid UTF-8 replaced.
func joinLines(lines [][]byte, from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte('\n')
		}
		b.Write(lines[i-1])
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

func kindWord(kind syntax.SymbolKind) string {
	if kind == 0 {
		return "symbol"
	}
	return kind.String()
}

func quoteList(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = "`" + t + "`"
	}
	return strings.Join(q, ", ")
}

func appendUnique(s []string, v string) []string {
	if contains(s, v) {
		return s
	}
	return append(s, v)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// underDir returns the first of dirs (each ending in "/") that rel lies
// under, or "".
func underDir(rel string, dirs []string) string {
	for _, d := range dirs {
		if strings.HasPrefix(rel, d) {
			return d
		}
	}
	return ""
}

// isTestPath reports test files by common conventions.
func isTestPath(rel string) bool {
	base := path.Base(rel)
	return strings.Contains(base, "_test.") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(base, "test_") || hasDir(rel, "tests/") || hasDir(rel, "test/") ||
		hasDir(rel, "testdata/") || hasDir(rel, "__tests__/")
}

// hasDir reports whether "/"+rel holds "/"+dir (dir ends in "/"), without
// building "/"+rel.
func hasDir(rel, dir string) bool {
	i := strings.Index(rel, dir)
	for i >= 0 {
		if i == 0 || rel[i-1] == '/' {
			return true
		}
		j := strings.Index(rel[i+1:], dir)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// readLineAt returns the line of the file at abs that holds byte off,
// from the start of that line (a symbol's start byte may lie inside its
// line: TS `export function f`, whose function starts after `export `)
// to its end, reading at most 512 bytes on either side of off. A line
// whose start lies more than 512 bytes before off is longer than any map
// line and is returned as "" with ok false.
func readLineAt(abs string, off int64, sc *snipScratch) (string, bool, error) {
	f, err := os.Open(abs)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	const side = 512
	from := max(off-side, 0)
	if cap(sc.data) < 2*side {
		sc.data = make([]byte, 2*side)
	}
	buf := sc.data[:int(off-from)+side]
	n, err := f.ReadAt(buf, from)
	if n == 0 && err != nil {
		return "", false, err
	}
	buf = buf[:n]
	at := min(int(off-from), len(buf))
	if i := bytes.LastIndexByte(buf[:at], '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if from > 0 {
		return "", false, nil
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return string(bytes.TrimSuffix(buf, []byte("\r"))), true, nil
}

// fileKey is a file name without its extension as a joined index key
// (cluster_with_columns.rs → clusterwithcolumn).
func fileKey(rel string) string {
	base := path.Base(rel)
	parts := SplitIdentifier(strings.TrimSuffix(base, path.Ext(base)))
	if len(parts) < 2 {
		return ""
	}
	return stem(joined(parts))
}
