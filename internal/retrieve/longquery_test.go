package retrieve

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongQueryIsCut: a query past MaxQueryBytes ranks as its first
// MaxQueryBytes (cut at a character boundary), so a pasted log costs what
// 64 KiB costs.
func TestLongQueryIsCut(t *testing.T) {
	_, ix := fixture(t)
	head := "retry config " + strings.Repeat("é", MaxQueryBytes/2) // ends mid-character at the cap
	long := head + strings.Repeat(" parseDuration", 100_000)
	if got := capQuery(long); len(got) > MaxQueryBytes || !utf8.ValidString(got) || !strings.HasPrefix(long, got) {
		t.Fatalf("capQuery: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	a, err := Search(context.Background(), ix, Query{Text: long})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Search(context.Background(), ix, Query{Text: capQuery(long)})
	if !reflect.DeepEqual(a, b) || slicesContain(a.Terms, "parseduration") {
		t.Fatalf("the long query ranked differently from its first %d bytes: terms %v", MaxQueryBytes, a.Terms)
	}
}

func slicesContain(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
