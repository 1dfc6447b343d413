package retrieve

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var mentionRE = regexp.MustCompile("mentions `([^`]+)`")

// TestNumbersSearched checks that a number of 3+ digits is a query term
// found in the files that hold it ("32004" gave no terms and no snippet),
// and that a reason does not count one word twice ("32 MiB" said
// "mentions `MiB` once; mentions `mi` once").
func TestNumbersSearched(t *testing.T) {
	_, ix := realFixture(t, map[string]string{
		"server/errors.go": "package server\n\n// codeOverloaded is the JSON-RPC error a full queue answers.\nconst codeOverloaded = -32004\n",
		"jsonrpc/frame.go": "package jsonrpc\n\n// maxLine caps one frame: 32 MiB.\nconst maxLine = 32 << 20 // MiB\n",
	})
	for _, q := range []string{"32004", "-32004", "error -32004 when the queue is full"} {
		res, err := Search(context.Background(), ix, Query{Text: q, BudgetTokens: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(res.Terms, "32004") {
			t.Errorf("%q: terms %q lack 32004", q, res.Terms)
		}
		if len(res.Snippets) == 0 || res.Snippets[0].Path != "server/errors.go" {
			t.Errorf("%q: first snippet is not server/errors.go: %+v", q, res.Snippets)
		} else if !strings.Contains(res.Snippets[0].Reason, "mentions `32004` once") {
			t.Errorf("%q: reason %q", q, res.Snippets[0].Reason)
		}
	}
	res, err := Search(context.Background(), ix, Query{Text: "32 MiB frame cap", BudgetTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range res.Snippets {
		var words []string
		for _, m := range mentionRE.FindAllStringSubmatch(s.Reason, -1) {
			words = append(words, strings.ToLower(m[1]))
		}
		if slices.Contains(words, "mib") && slices.Contains(words, "mi") {
			t.Errorf("%s: reason counts MiB twice: %q", s.Path, s.Reason)
		}
		if s.Path == "jsonrpc/frame.go" {
			found = true
		}
	}
	if !found {
		t.Fatalf("jsonrpc/frame.go not retrieved for 32 MiB: %+v", res.Snippets)
	}
}
