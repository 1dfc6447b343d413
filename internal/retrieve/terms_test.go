package retrieve

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		{"parseConfig", []string{"parse", "config"}},
		{"parse_config and retry-policy", []string{"parse", "config", "retry", "policy"}},
		{"where is HTTPServer started?", []string{"http", "server", "started"}},
		{"src/config/loadFile.ts", []string{"src", "config", "load", "ts"}},
		{`find "retry policy" in the client`, []string{"retry policy", "client"}},
		{"`Backoff` jitter", []string{"backoff", "jitter"}},
		{"The the THE of", nil},
		{"v2Client 404 x", []string{"v2", "client", "404"}},
		{"32004", []string{"32004"}},
		{"error -32004 from the server", []string{"error", "32004", "server"}},
		{"ERR_32004 on port 8080, not 12345678901 or 42", []string{"err", "32004", "port", "8080"}},
		{"Config config CONFIG", []string{"config"}},
		{`unclosed "quote here`, []string{"unclosed", "quote"}},
		{"where is the HTTP/2 frame parsed", []string{"http", "http2", "frame", "parsed"}},
		{"utf-8 decoding", []string{"utf", "utf8", "decoding"}},
		{"base64 of sha-256", []string{"base64", "sha", "sha256"}},
		{"HTTP/1.1 status 200", []string{"http", "http1", "status", "200"}},
		{"go 1.22", []string{"go"}},
	}
	for _, c := range cases {
		if got := Terms(c.query); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

func TestVerbForms(t *testing.T) {
	cases := map[string][]string{
		"parsed":   {"pars", "parse"},
		"loaded":   {"load", "loade"},
		"verified": {"verify", "verifi", "verifie"},
		"parsing":  {"pars", "parse"},
		"mark":     nil,
	}
	for in, want := range cases {
		if got := verbForms(in); !slices.Equal(got, want) {
			t.Errorf("verbForms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitIdentifier(t *testing.T) {
	cases := map[string][]string{
		"parseHTTPRequest": {"parse", "http", "request"},
		"snake_case_name":  {"snake", "case", "name"},
		"kebab-case":       {"kebab", "case"},
		"XMLHttpRequest":   {"xml", "http", "request"},
		"v2Client":         {"v2", "client"},
		"a/b.go":           {"a", "b", "go"},
		"ÉtéParser":        {"été", "parser"},
		"":                 nil,
	}
	for in, want := range cases {
		if got := SplitIdentifier(in); !slices.Equal(got, want) {
			t.Errorf("SplitIdentifier(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenizeMatchesQuerySide(t *testing.T) {
	var got []string
	tokenizeASCII([]byte("func parseHTTPRequest(retry_policies int) { x := entries; __init__ }"), nil, func(b []byte) {
		got = append(got, string(b))
	})
	want := []string{"func", "parse", "http", "request", "parsehttprequest", "retry", "policy", "retrypolicy", "int", "entry", "init"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	for _, w := range []string{"configs", "entries", "classes", "status", "analysis"} {
		var b []byte
		b = append(b, w...)
		if string(stemBytes(b)) != stem(w) {
			t.Errorf("stemBytes(%q) = %q, stem = %q", w, stemBytes([]byte(w)), stem(w))
		}
	}
}

// TestTokenizeNumbers checks that numbers of 3 to 10 digits standing
// alone or as an identifier's part are indexed, and that digits running
// into an identifier, short numbers and long digit runs are not.
func TestTokenizeNumbers(t *testing.T) {
	var got []string
	tokenizeASCII([]byte(`return -32004, ":8080" 0x1f3 1e100 42 12345678901 ERR_32004 v404`), nil, func(b []byte) {
		got = append(got, string(b))
	})
	want := []string{"return", "32004", "8080", "x1f3", "e100", "err", "32004", "err32004", "v404"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
}

// shardTerms adds src to a new shard as one file and returns its terms
// with their frequencies and the shard's term count.
func shardTerms(src []byte) (map[string]uint32, uint32) {
	sh := newShard()
	sh.add(7, src, nil)
	got := map[string]uint32{}
	sh.each(func(lid int32, p uint32) {
		if p>>tfBits != 7 {
			panic("wrong file id")
		}
		got[string(sh.dict.term(lid))] += p & maxTF
	}, nil)
	return got, sh.last
}

// tokenizeTerms is what tokenizeASCII gives for src, counted as a shard
// counts (term frequencies capped at maxTF).
func tokenizeTerms(src []byte) (map[string]uint32, uint32) {
	want := map[string]uint32{}
	var n uint32
	tokenizeASCII(src, nil, func(b []byte) {
		n++
		want[string(b)]++
	})
	for t, c := range want {
		want[t] = min(c, maxTF)
	}
	return want, n
}

func checkShardTokenize(t *testing.T, src []byte) {
	t.Helper()
	got, n := shardTerms(src)
	want, wn := tokenizeTerms(src)
	if n != wn || !maps.Equal(got, want) {
		t.Fatalf("shard tokenize of %q: %d terms %v, tokenizeASCII %d terms %v", src, n, got, wn, want)
	}
}

// The shard's tokenizer (its fast path for one lower-case word, its
// identParts without closures) gives the terms tokenizeASCII gives.
func TestShardTokenizeMatches(t *testing.T) {
	for _, s := range shardTokenizeSeeds {
		checkShardTokenize(t, []byte(s))
	}
	// This package's own source, every file.
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkShardTokenize(t, data)
	}
}

var shardTokenizeSeeds = []string{
	"", "a", "ab", "entries", "ies", "aies", "bies", "policies Policies POLICIES", "classes boxes matches wishes bus is",
	"func parseHTTPRequest(retry_policies int) { x := entries; __init__ }",
	`return -32004, ":8080" 0x1f3 1e100 42 12345678901 ERR_32004 v404`,
	"XMLHttpRequest v2Client a1b2 A1B2 ABC ABCdef abcDEF _x x_ __ _ a__b 9abc abc9 ab12345",
	"caf\xc3\xa9 na\xefve \x00abc\xffdef " + strings.Repeat("x", 64) + " " + strings.Repeat("y", 65),
	"CONSTANT_NAME kHTTPStatus HTTP2Server http2server Http2 h2c S3Bucket s3bucket IO",
	"retry_entries_x ENTRIES_list fooEntries a_ies Policies_Entries _policies_ x_y_z __ab__cd__ AB_12345 ab_12 Ab_Cd_Eies " + strings.Repeat("Ab_", 21) + "c",
	strings.Repeat("tick ", maxTF+3) + "tock " + strings.Repeat("TickTock ", maxTF+1),
}

func FuzzShardTokenize(f *testing.F) {
	for _, s := range shardTokenizeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkShardTokenize(t, src)
	})
}
