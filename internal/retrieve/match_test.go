package retrieve

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestASCIISplitMatchesSplitIdentifier pins the allocation-free matcher of
// matchSymbols to the allocating definition (SplitIdentifier, joined, stem)
// on fixed and random ASCII names and keys.
func TestASCIISplitMatchesSplitIdentifier(t *testing.T) {
	names := []string{"parseHTTPRequest", "snake_case_names", "v2Client", "HTTPServer", "Entries", "classes",
		"parse.config", "a-b/c", "__init__", "X", "_", "", "ABCs", "ioutil.ReadAll", "SYS_IOCTL", "Status",
		"buses", "bus", "matches", "wishes", "addresses", "ParseConfigs"}
	keys := []string{"parse", "http", "request", "parsehttprequest", "parsehttp", "snake", "case", "name",
		"snakecasename", "v2", "client", "v2client", "server", "entry", "entri", "classe", "class", "config",
		"parseconfig", "init", "abc", "ab", "read", "readall", "ioutilreadall", "sys", "ioctl", "status", "statu",
		"bus", "buse", "match", "wish", "address", "par", "pa"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "aAbBsSyYeEiIcChHxX_09.-/ "
	for range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		names = append(names, b.String())
		k := strings.ToLower(b.String())
		keys = append(keys, stem(joined(SplitIdentifier(k))))
	}
	var sp asciiSplit
	for _, name := range names {
		if !sp.split(name) {
			t.Fatalf("split(%q) = false for an ASCII name", name)
		}
		parts := SplitIdentifier(name)
		if got, want := string(sp.joined), joined(parts); got != want {
			t.Fatalf("joined(%q) = %q, want %q", name, got, want)
		}
		full := stem(joined(parts))
		for _, key := range keys {
			if key == "" {
				continue
			}
			want := matchNone
			switch {
			case full == key:
				want = matchExact
			case len(key) >= 3 && strings.HasPrefix(full, key):
				want = matchPrefix
			default:
				for _, p := range parts {
					if stem(p) == key {
						want = matchPart
						break
					}
				}
			}
			if got := sp.level(key); got != want {
				t.Fatalf("level(%q, %q) = %d, want %d (parts %q)", name, key, got, want, parts)
			}
		}
	}
	if sp.split("naïve") {
		t.Error("split accepted a non-ASCII name")
	}
}

// TestMayMatchNeverDropsAMatch checks the pre-check of matchSymbols against
// the full match on names with "_" (fixed and random).
func TestMayMatchNeverDropsAMatch(t *testing.T) {
	names := []string{"SYS_IOCTL", "parse_config", "__init__", "_x", "read_all_entries", "a_b_c", "HTTP_Server"}
	keys := []string{"sysioctl", "ioctl", "parseconfig", "config", "init", "readallentry", "entry", "abc", "httpserver", "server", "http"}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := "aAbBsSeEiI_0"
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(10) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		names = append(names, b.String())
		keys = append(keys, stem(joined(SplitIdentifier(b.String()))))
	}
	var sp asciiSplit
	for _, name := range names {
		sp.split(name)
		for _, key := range keys {
			if key == "" {
				continue
			}
			if sp.level(key) != matchNone && !mayMatch(name, []unit{{key: key}}) {
				t.Fatalf("mayMatch(%q, %q) = false, but it matches at level %d", name, key, sp.level(key))
			}
		}
	}
	if mayMatch("SYS_IOCTL", []unit{{key: "buffer"}}) {
		t.Error("mayMatch let SYS_IOCTL through for buffer")
	}
}

// TestBestLineMatchesPerLineSearch pins bestLine (one search over the
// whole lower-cased text) to the per-line definition: the first line with
// the highest sum of idf*weight over the units it contains.
func TestBestLineMatchesPerLineSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"parse", "Parse", "config", "CONFIG", "x", "retry policy", "retrypolicy", "\r", " ", "ab"}
	units := []unit{
		{key: "parse", display: "parse", weight: 1, idf: 2},
		{key: "config", display: "Config", weight: 0.5, idf: 3},
		{key: "retrypolicy", display: "retry policy", weight: 0.8, idf: 1.5},
		{key: "ab", display: "ab", weight: 1, idf: 0.25},
		{key: "x", display: "X", weight: 0.3, idf: 0.7},
	}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(5) == 0 {
				b.WriteByte('\n')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		lines := splitLines([]byte(b.String()))
		want, wantScore := 1, 0.0
		for i, l := range lines {
			low := strings.ToLower(string(l))
			s := 0.0
			for _, u := range units {
				if strings.Contains(low, strings.ToLower(u.display)) || strings.Contains(low, u.key) {
					s += u.idf * u.weight
				}
			}
			if s > wantScore {
				want, wantScore = i+1, s
			}
		}
		if got := bestLine(lines, units); got != want {
			t.Fatalf("bestLine(%q) = %d, want %d", b.String(), got, want)
		}
	}
}

// TestSplitLinesInto checks the reusing splitter against bytes.Split.
func TestSplitLinesInto(t *testing.T) {
	var dst [][]byte
	for _, in := range []string{"", "\n", "a", "a\n", "a\r\nb\r\n", "\n\nx\n\n", "a\rb\n\r", "last\r"} {
		all := splitLines([]byte(in))
		for _, limit := range []int{-1, 0, 1, 2, 3} {
			dst = splitLinesInto(dst[:0], []byte(in), limit)
			want := all
			if limit >= 0 && limit < len(all) {
				want = all[:limit]
			}
			if len(dst) != len(want) {
				t.Fatalf("%q limit %d: %d lines, want %d", in, limit, len(dst), len(want))
			}
			for i := range want {
				if string(dst[i]) != string(want[i]) {
					t.Fatalf("%q limit %d line %d = %q, want %q", in, limit, i, dst[i], want[i])
				}
			}
		}
	}
}

// TestMatcherScanFindsEveryNeedle pins the matcher's one-pass scan (byte
// pair bitmap) to a bytes.Contains of each unit's needle in the lower-cased
// name, for many units at once, names with and without "_", and short keys.
func TestMatcherScanFindsEveryNeedle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := "aAbBsSeE_0.x"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 300 {
		var units []unit
		for range 1 + rng.IntN(70) {
			k := strings.ToLower(strings.NewReplacer("_", "", ".", "").Replace(word(1 + rng.IntN(5))))
			units = append(units, unit{key: k})
		}
		var m matcher
		m.init(units)
		for range 50 {
			name := word(rng.IntN(14))
			low := strings.ToLower(name)
			if strings.Contains(name, "_") {
				low = strings.ToLower(strings.NewReplacer("_", "", ".", "").Replace(name))
			}
			any := m.scan(name, true)
			wantAny := false
			for k, u := range units {
				needle := u.key
				if len(needle) > 2 {
					needle = needle[:len(needle)-1]
				}
				want := strings.Contains(low, needle)
				wantAny = wantAny || want
				if m.found[k] != want {
					t.Fatalf("scan(%q) found[%q] = %v, want %v", name, needle, m.found[k], want)
				}
			}
			if any != wantAny || m.mayMatch(name) != wantAny {
				t.Fatalf("scan(%q) = %v, mayMatch %v, want %v", name, any, m.mayMatch(name), wantAny)
			}
		}
	}
	var m matcher
	m.init([]unit{{key: "buffer"}})
	if !m.scan("naïve", true) || !m.found[0] {
		t.Error("a non-ASCII name must be let through for every unit")
	}
}
