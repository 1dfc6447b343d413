package retrieve

import (
	"context"
	"reflect"
	"testing"
)

// TestNameTableSameResults checks that Search answers every fixture query
// and a few with short, prefix and non-matching keys the same with the
// name table as without it, and that the table lists, for each symbol a
// unit matches, its name under one of the unit's keys.
func TestNameTableSameResults(t *testing.T) {
	_, ix := fixture(t)
	ix.waitNameTable()
	nt := ix.nameTable()
	if nt == nil || nt.names == 0 || len(nt.ids) == 0 {
		t.Fatalf("no name table: %+v", nt)
	}
	without := &Index{}
	*without = *ix
	without.nt = nil
	queries := []string{"config", "parse config file", "Load", "retry backoff policy", "ab", "x y", "zzzz nothing",
		"fix(config): LoadConfig ignores `retry_policy` when\n\nthe file is parsed twice; use ParseConfig"}
	for _, c := range readQueries(t) {
		queries = append(queries, c.query)
	}
	ctx := context.Background()
	checked := 0
	for _, q := range queries {
		for _, budget := range []int{0, 500} {
			a, err := Search(ctx, ix, Query{Text: q, BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			b, err := Search(ctx, without, Query{Text: q, BudgetTokens: budget})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%q budget %d: with the name table\n%+v\nwithout\n%+v", q, budget, a, b)
			}
		}
		text := capQuery(q)
		units := ix.units(text, Terms(text))
		mask := ix.nameMask(nt, units)
		if mask == nil {
			continue
		}
		// Every symbol some unit matches has its name marked.
		for id, f := range ix.files {
			syms := symbolsOf(f)
			ns := nt.ids[nt.symOff[id]:nt.symOff[id+1]]
			if len(ns) != len(syms) {
				t.Fatalf("file %d: %d name ids for %d symbols", id, len(ns), len(syms))
			}
			for i := range syms {
				if s, _ := matchSymbols(syms[i:i+1], units); s > 0 {
					checked++
					if mask[ns[i]>>6]&(1<<(ns[i]&63)) == 0 {
						t.Fatalf("%q: %s matches but its name is not marked", q, syms[i].Name)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d matching symbols checked", checked)
	}
}
