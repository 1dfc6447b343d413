package retrieve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// TestLocalizeSet scores Search in process on a localization set of
// ../shared/bench/localize (build_set.py rows whose trees checkout.py has
// made), the way run.py scores the binary: budget 8000, recall, hit@1,
// hit@3 by distinct path in order. It runs only with
// RETRIEVE_LOCALIZE_SET=SET.jsonl and RETRIEVE_LOCALIZE_TREES=CACHE (the
// tree cache folder); RETRIEVE_LOCALIZE_BM25 names run.py --bm25-only
// --out results for the ratio, RETRIEVE_LOCALIZE_OUT a JSONL of per-row
// rankings. Parses are cached by content hash (in memory and, with
// RETRIEVE_LOCALIZE_PARSES=DIR, on disk), since the rows of one
// repository share most files: a tuning loop, not a figure to publish
// (run.py through the binary gives those).
func TestLocalizeSet(t *testing.T) {
	set := os.Getenv("RETRIEVE_LOCALIZE_SET")
	trees := os.Getenv("RETRIEVE_LOCALIZE_TREES")
	if set == "" || trees == "" {
		t.Skip("RETRIEVE_LOCALIZE_SET and RETRIEVE_LOCALIZE_TREES not set")
	}
	type row = lrow
	var rows []row
	readJSONL(t, set, func(b []byte) {
		var r row
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	})
	if only := os.Getenv("RETRIEVE_LOCALIZE_REPO"); only != "" {
		rows = slices.DeleteFunc(rows, func(r row) bool { return !strings.Contains(r.Repo, only) })
	}
	bm := map[string]map[string]float64{} // commit → score
	if f := os.Getenv("RETRIEVE_LOCALIZE_BM25"); f != "" {
		readJSONL(t, f, func(b []byte) {
			var r struct {
				Commit string             `json:"commit"`
				BM25   map[string]any     `json:"bm25"`
				Budget int                `json:"budget"`
				X      map[string]float64 `json:"-"`
			}
			if json.Unmarshal(b, &r) == nil && r.Budget == localizeBudget() {
				m := map[string]float64{}
				for _, k := range []string{"recall", "all", "hit1", "hit3", "tokens"} {
					if v, ok := r.BM25[k].(float64); ok {
						m[k] = v
					}
				}
				bm[r.Commit] = m
			}
		})
	}
	pc := newParseCache(os.Getenv("RETRIEVE_LOCALIZE_PARSES"))
	var out *json.Encoder
	if f := os.Getenv("RETRIEVE_LOCALIZE_OUT"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		out = json.NewEncoder(w)
	}
	type built struct {
		r  row
		ix *Index
		nb func(string) []Neighbour
	}
	var rowsIx []built
	ctx := context.Background()
	for _, r := range rows {
		slug := strings.Replace(r.Repo, "/", "+", 1)
		root := filepath.Join(trees, slug+"-"+r.Parent)
		if _, err := os.Stat(root); err != nil {
			t.Logf("%s %s: no tree", r.Repo, r.Commit[:10])
			continue
		}
		w, err := workspace.Open(ctx, root, &workspace.Options{Home: "-", Parse: pc.parse})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Build(ctx, w.Snapshot(), nil)
		if err != nil {
			t.Fatal(err)
		}
		// The graph as project builds it (graph.Build on the same
		// parses), so graph use in Search is measured here too.
		rowsIx = append(rowsIx, built{r, ix, graphNeighbours(graph.Build(w.Snapshot()))})
	}
	pc.save()
	variants := strings.Split(os.Getenv("RETRIEVE_LOCALIZE_VARIANTS"), ",")
	base := tune
	defer func() { tune = base }()
	for vi, v := range variants {
		tune = base
		tune.on = map[string]bool{}
		for _, part := range strings.Split(v, "+") {
			if part == "" || part == "base" {
				continue
			}
			if f, ok := localizeVariants[part]; ok {
				f(&tune)
			} else {
				tune.on[part] = true
			}
		}
		enc := out
		if enc != nil && vi > 0 {
			enc = nil
		}
		fmt.Printf("\nvariant %q\n", v)
		scoreLocalize(rowsIx2(rowsIx, func(b built) (row, *Index, func(string) []Neighbour) { return b.r, b.ix, b.nb }), bm, enc)
	}
}

// localizeVariants are named tunings the harness can compare
// (RETRIEVE_LOCALIZE_VARIANTS=base,k1b,...; "a+b" combines; a name not
// here sets tune.on[name]).
var localizeVariants = map[string]func(*tuning){
	"map200":  func(t *tuning) { t.mapMax = 200 },
	"full50":  func(t *tuning) { t.fullShare = 0.5 },
	"full40":  func(t *tuning) { t.fullShare = 0.4 },
	"full30":  func(t *tuning) { t.fullShare = 0.3 },
	"b5":      func(t *tuning) { t.b = 0.5 },
	"b9":      func(t *tuning) { t.b = 0.9 },
	"k09":     func(t *tuning) { t.k1 = 0.9 },
	"k2":      func(t *tuning) { t.k1 = 2 },
	"path1":   func(t *tuning) { t.pathW = 1 },
	"path3":   func(t *tuning) { t.pathW = 3 },
	"name4":   func(t *tuning) { t.nameW = 4 },
	"def05":   func(t *tuning) { t.defScale = 0.5 },
	"def15":   func(t *tuning) { t.defScale = 1.5 },
	"nowin":   func(t *tuning) { t.winK = 0 },
	"prose03": func(t *tuning) { t.proseF = 0.3 },
	"scope1":  func(t *tuning) { t.scopeB = 1 },
	"body04":  func(t *tuning) { t.bodyW = 0.4 },
	"body08":  func(t *tuning) { t.bodyW = 0.8 },
	"def1":    func(t *tuning) { t.defScale = 1 },
	"winw05":  func(t *tuning) { t.on["win"] = true; t.winW = 0.5 },
	"winw2":   func(t *tuning) { t.on["win"] = true; t.winW = 2 },
	"winw4":   func(t *tuning) { t.on["win"] = true; t.winW = 4 },
	"wink60":  func(t *tuning) { t.on["win"] = true; t.winK = 60 },
	"ex0":     func(t *tuning) { t.exC = 0 },
	"winw8":   func(t *tuning) { t.on["win"] = true; t.winW = 8 },
	"wink15":  func(t *tuning) { t.winK = 15 },
	"wink30":  func(t *tuning) { t.winK = 30 },
	"def03":   func(t *tuning) { t.defScale = 0.3 },
	"ex2":     func(t *tuning) { t.exC = 2 },
	"qcommit": func(t *tuning) { t.qDef, t.qWin = t.defScale, t.winW },
}

// localizeBudget is the harness's budget: RETRIEVE_LOCALIZE_BUDGET, else
// 8000 as in the measurement.
func localizeBudget() int {
	if n, err := strconv.Atoi(os.Getenv("RETRIEVE_LOCALIZE_BUDGET")); err == nil && n > 0 {
		return n
	}
	return 8000
}

type lrow = struct {
	Repo   string   `json:"repo"`
	Commit string   `json:"commit"`
	Parent string   `json:"parent"`
	Query  string   `json:"query"`
	Gold   []string `json:"gold"`
}

type lget = func() (lrow, *Index, func(string) []Neighbour)

func rowsIx2[T any](xs []T, f lget1[T]) []lget {
	out := make([]lget, len(xs))
	for i, x := range xs {
		out[i] = func() (lrow, *Index, func(string) []Neighbour) { return f(x) }
	}
	return out
}

type lget1[T any] func(T) (lrow, *Index, func(string) []Neighbour)

// graphNeighbours is project's Query.Neighbours over g: the files a file
// depends on ("imported by", "used by" it) and the files using it
// ("imports", "uses"), with the edge's weight.
func graphNeighbours(g *graph.Graph) func(string) []Neighbour {
	return func(rel string) []Neighbour {
		deps, err := g.File(rel)
		if err != nil {
			return nil
		}
		out := make([]Neighbour, 0, len(deps.DependsOn)+len(deps.UsedBy))
		for _, d := range deps.DependsOn {
			r := "imported by"
			if d.Kind == graph.KindReference {
				r = "used by"
			}
			out = append(out, Neighbour{Path: d.Path, Relation: r, Weight: max(1, len(d.Symbols))})
		}
		for _, d := range deps.UsedBy {
			r := "imports"
			if d.Kind == graph.KindReference {
				r = "uses"
			}
			out = append(out, Neighbour{Path: d.Path, Relation: r, Weight: max(1, len(d.Symbols))})
		}
		return out
	}
}

func scoreLocalize(rows []lget, bm map[string]map[string]float64, out *json.Encoder) {
	type agg struct{ n, recall, all, hit1, hit3, tok, bRecall, bHit1, bHit3 float64 }
	per := map[string]*agg{}
	var order []string
	ctx := context.Background()
	for _, get := range rows {
		r, ix, nb := get()
		res, err := Search(ctx, ix, Query{Text: r.Query, BudgetTokens: localizeBudget(), Neighbours: nb})
		if err != nil {
			panic(err)
		}
		var paths []string
		for _, s := range res.Snippets {
			if !slices.Contains(paths, s.Path) {
				paths = append(paths, s.Path)
			}
		}
		found, ranks := 0, []int{}
		for _, g := range r.Gold {
			k := slices.Index(paths, g) + 1
			ranks = append(ranks, k)
			if k > 0 {
				found++
			}
		}
		hit := func(n int) float64 {
			for _, p := range paths[:min(n, len(paths))] {
				if slices.Contains(r.Gold, p) {
					return 1
				}
			}
			return 0
		}
		a := per[r.Repo]
		if a == nil {
			a = &agg{}
			per[r.Repo] = a
			order = append(order, r.Repo)
		}
		a.n++
		a.recall += float64(found) / float64(len(r.Gold))
		if found == len(r.Gold) {
			a.all++
		}
		a.hit1 += hit(1)
		a.hit3 += hit(3)
		a.tok += float64(res.UsedTokens)
		if b := bm[r.Commit]; b != nil {
			a.bRecall += b["recall"]
			a.bHit1 += b["hit1"]
			a.bHit3 += b["hit3"]
		}
		if out != nil {
			var reasons []string
			for _, s := range res.Snippets[:min(5, len(res.Snippets))] {
				reasons = append(reasons, fmt.Sprintf("%s %.1f %s", s.Path, s.Score, s.Reason))
			}
			// For each gold file, the first of the top 5 paths it is a graph
			// neighbour of (1-based; 0 = none): how far spreading could reach.
			near := make([]int, len(r.Gold))
			if nb != nil {
				for i, p := range paths[:min(5, len(paths))] {
					for _, n := range nb(p) {
						if k := slices.Index(r.Gold, n.Path); k >= 0 && near[k] == 0 {
							near[k] = i + 1
						}
					}
				}
			}
			rec := map[string]any{"repo": r.Repo, "commit": r.Commit, "gold": r.Gold, "ranks": ranks, "near": near,
				"files": len(paths), "tokens": res.UsedTokens, "top": reasons, "terms": res.Terms}
			// RETRIEVE_LOCALIZE_DEEP=1: each gold file's rank among the
			// distinct paths of the largest budget, i.e. how far down the
			// whole ranking it sits (0 = it matches no term at all).
			if os.Getenv("RETRIEVE_LOCALIZE_DEEP") != "" {
				deep, err := Search(ctx, ix, Query{Text: r.Query, BudgetTokens: MaxBudgetTokens, MaxSnippets: 100000, Neighbours: nb})
				if err == nil {
					var dp []string
					for _, s := range deep.Snippets {
						if !slices.Contains(dp, s.Path) {
							dp = append(dp, s.Path)
						}
					}
					dr := make([]int, len(r.Gold))
					for i, g := range r.Gold {
						dr[i] = slices.Index(dp, g) + 1
					}
					rec["deep"] = dr
					rec["deepFiles"] = len(dp)
				}
			}
			out.Encode(rec)
		}
	}
	var tot agg
	fmt.Printf("%-24s %4s %6s %6s %6s %6s %5s | %6s %6s %6s\n", "repo", "n", "recall", "all", "hit1", "hit3", "tok", "bm25r", "bhit1", "bhit3")
	line := func(name string, a *agg) {
		fmt.Printf("%-24s %4.0f %6.3f %6.3f %6.3f %6.3f %5.0f | %6.3f %6.3f %6.3f\n", name, a.n, a.recall/a.n, a.all/a.n,
			a.hit1/a.n, a.hit3/a.n, a.tok/a.n, a.bRecall/a.n, a.bHit1/a.n, a.bHit3/a.n)
	}
	sort.Strings(order)
	for _, repo := range order {
		a := per[repo]
		line(repo, a)
		tot.n += a.n
		tot.recall += a.recall
		tot.all += a.all
		tot.hit1 += a.hit1
		tot.hit3 += a.hit3
		tot.tok += a.tok
		tot.bRecall += a.bRecall
		tot.bHit1 += a.bHit1
		tot.bHit3 += a.bHit3
	}
	if tot.n > 0 {
		line("all", &tot)
		if tot.bRecall > 0 {
			fmt.Printf("recall ratio %.3f\n", tot.recall/tot.bRecall)
		}
	}
}

func readJSONL(t *testing.T, name string, each func([]byte)) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		each(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// parseCache is a parse hook caching tree-sitter results by content hash.
type parseCache struct {
	dir   string
	mu    sync.Mutex
	infos map[[32]byte]*syntax.FileInfo
	added bool
}

func newParseCache(dir string) *parseCache {
	pc := &parseCache{dir: dir, infos: map[[32]byte]*syntax.FileInfo{}}
	if dir != "" {
		if f, err := os.Open(filepath.Join(dir, "parses.gob")); err == nil {
			gob.NewDecoder(bufio.NewReader(f)).Decode(&pc.infos)
			f.Close()
		}
	}
	return pc
}

func (pc *parseCache) parse(ctx context.Context, abs string, f *workspace.File) (workspace.ParseResult, error) {
	if !syntax.Supported(f.Language) {
		return workspace.ParseResult{}, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	h := sha256.Sum256(append([]byte(f.Language+"\x00"), src...))
	pc.mu.Lock()
	info := pc.infos[h]
	pc.mu.Unlock()
	if info == nil {
		info, err = syntax.Parse(ctx, f.Language, src, nil)
		if err != nil {
			return workspace.ParseResult{}, err
		}
		pc.mu.Lock()
		pc.infos[h] = info
		pc.added = true
		pc.mu.Unlock()
	}
	return workspace.ParseResult{Symbols: len(info.Symbols), Data: info}, nil
}

func (pc *parseCache) save() {
	if pc.dir == "" || !pc.added {
		return
	}
	os.MkdirAll(pc.dir, 0o755)
	tmp := filepath.Join(pc.dir, "parses.gob.tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return
	}
	bw := bufio.NewWriter(f)
	if gob.NewEncoder(bw).Encode(pc.infos) == nil && bw.Flush() == nil && f.Close() == nil {
		os.Rename(tmp, filepath.Join(pc.dir, "parses.gob"))
	}
}
