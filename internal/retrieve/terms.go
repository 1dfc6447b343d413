package retrieve

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTermLen caps one term; longer identifiers (generated names, hashes)
// are not indexed.
const maxTermLen = 64

// maxQueryTerms caps the terms taken from one query.
const maxQueryTerms = 32

// stopWords are dropped from queries: English function words and the verbs
// of a request that say nothing about where the code is.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but not no nor of to in on at by for from with
		into onto over under about as is are was were be been being am do does did done doing
		have has had having it its it's this that these those there here then than so such
		i me my we our us you your he she they them their what which who whom whose when where
		why how can could should would will shall may might must let lets please
		some any all each every more most other another same very just only also too
		if else up down out off again once via per vs etc eg ie
		find show tell explain look see get give make use using used want need like
		code file files function functions method methods work works working happen happens
		does doesn don't isn't won't can't`) {
		stopWords[w] = true
	}
	// What the word splitter leaves of contractions ("isn't" → isn,
	// "they're" → re).
	for _, w := range strings.Fields(`isn doesn don won re ve ll didn wasn aren shouldn couldn wouldn hasn haven weren`) {
		stopWords[w] = true
	}
}

// Terms splits a query into search terms: quoted phrases are kept whole
// ("retry policy"), paths and identifiers are split on separators and case
// changes (parseConfig, parse_config, parse-config, src/config/load.go all
// give parse/config/...), everything is lower-cased, stop words and
// one-letter words are dropped, and duplicates are removed keeping the
// first. A quoted phrase of one word is an ordinary term. At most 32 terms.
func Terms(query string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t == "" || seen[t] || len(out) >= maxQueryTerms {
			return
		}
		seen[t] = true
		out = append(out, t)
	}
	rest := query
	for rest != "" {
		i := strings.IndexAny(rest, "\"`")
		if i < 0 {
			break
		}
		q := rest[i]
		j := strings.IndexByte(rest[i+1:], q)
		if j < 0 {
			break
		}
		words := splitWords(rest[:i])
		for _, w := range words {
			add(w)
		}
		phrase := splitWords(rest[i+1 : i+1+j])
		switch {
		case len(phrase) == 1:
			add(phrase[0])
		case len(phrase) > 1:
			add(strings.Join(phrase, " "))
		}
		rest = rest[i+1+j+1:]
	}
	for _, w := range splitWords(rest) {
		add(w)
	}
	return out
}

// splitWords splits free text into lower-cased identifier parts without
// stop words. A number written right after a word with "/", "-" or "."
// between them is joined to the word's last part, as identifiers spell
// it: "HTTP/2" → http, http2; "utf-8" → utf, utf8; "sha-256" → sha,
// sha256 ("base64" is one identifier and stays whole). Any other number
// of 3 to 10 digits is a term of its own (32004, -32004, port 8080).
func splitWords(s string) []string {
	var out []string
	prevEnd, prevLast := -1, ""
	for start := 0; start < len(s); {
		r, size := utf8.DecodeRuneInString(s[start:])
		if !isWordRune(r) {
			start += size
			continue
		}
		end := start + size
		for end < len(s) {
			r, size := utf8.DecodeRuneInString(s[end:])
			if !isWordRune(r) {
				break
			}
			end += size
		}
		tok := s[start:end]
		joinedNum := false
		if isDigits(tok) && prevLast != "" && prevEnd == start-1 && strings.IndexByte("/-.", s[prevEnd]) >= 0 {
			if j := prevLast + tok; !stopWords[j] {
				out = append(out, j)
				joinedNum = true
			}
		}
		parts := SplitIdentifier(tok)
		prevEnd, prevLast = end, ""
		if n := len(parts); n > 0 && !isDigits(parts[n-1]) {
			if r, _ := utf8.DecodeLastRuneInString(parts[n-1]); unicode.IsLetter(r) {
				prevLast = parts[n-1]
			}
		}
		for _, p := range parts {
			if len(p) < 2 || stopWords[p] || isDigits(p) && (joinedNum || !isNumberTerm(p)) {
				continue
			}
			out = append(out, p)
		}
		start = end
	}
	return out
}

// isWordRune is a byte of an identifier as the index reads one
// (tokenizeASCII): letters, digits and "_" of ASCII. Any other character
// separates words, so a query's terms are ones the index can hold ("café"
// is searched as caf, as the index split it).
func isWordRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// identifiers returns the runs of ASCII letters, digits and underscores of
// s (isWordRune).
func identifiers(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) })
}

// SplitIdentifier splits one identifier into lower-cased parts on "_", "-",
// "." and "/", and on case changes: "parseHTTPRequest" → parse, http,
// request; "snake_case_name" → snake, case, name; "v2Client" → v2, client.
// Digits stay with the letters before them.
func SplitIdentifier(id string) []string {
	var out []string
	start := -1
	prev := rune(0)
	emit := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(id[start:end]))
		}
		start = -1
	}
	for i, r := range id {
		if r == '_' || r == '-' || r == '.' || r == '/' || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			emit(i)
			prev = 0
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) {
			// lower→Upper starts a part; in an upper run, the last upper
			// before a lower starts one ("HTTPRequest" → HTTP, Request).
			next, _ := utf8.DecodeRuneInString(id[i+utf8.RuneLen(r):])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				emit(i)
				start = i
			}
		}
		prev = r
	}
	emit(len(id))
	return out
}

// Numbers of minNumberLen..maxNumberLen digits are terms (error codes
// such as 32004, ports, issue numbers, HTTP statuses); shorter ones are
// everywhere and say nothing, longer ones are mostly data (test vectors,
// tables) that would only grow the index.
const (
	minNumberLen = 3
	maxNumberLen = 10
)

// isNumberTerm reports whether b is a number that is a term.
func isNumberTerm[T string | []byte](b T) bool {
	if len(b) < minNumberLen || len(b) > maxNumberLen {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// stem folds simple English plurals so "configs" finds "config" and
// "entries" finds "entry". It is applied to index and query terms alike.
func stem(t string) string {
	n := len(t)
	switch {
	case n > 4 && strings.HasSuffix(t, "ies"):
		return t[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(t, "sses") || strings.HasSuffix(t, "xes") || strings.HasSuffix(t, "ches") || strings.HasSuffix(t, "shes")):
		return t[:n-2]
	case n > 3 && t[n-1] == 's' && t[n-2] != 's' && t[n-2] != 'u' && t[n-2] != 'i':
		return t[:n-1]
	}
	return t
}

// tokenizeASCII calls fn with every identifier of src ([A-Za-z_][A-Za-z0-9_]*,
// 2..64 bytes) and each of its parts, lower-cased and stemmed, reusing buf.
// Bytes outside ASCII separate identifiers. It is the index's hot loop, so
// it works on bytes.
func tokenizeASCII(src []byte, buf []byte, fn func(term []byte)) []byte {
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		if isDigit(c) {
			// A number standing alone (an error code, a port, an issue
			// number) is a term of its digits; digits running into an
			// identifier ("0x1f", "1e9") are skipped as before.
			j := i + 1
			for j < n && isDigit(src[j]) {
				j++
			}
			if (j == n || !isIdentStart(src[j])) && isNumberTerm(src[i:j]) {
				buf = append(buf[:0], src[i:j]...)
				fn(buf)
			}
			i = j
			continue
		}
		if !isIdentStart(c) {
			i++
			continue
		}
		j := i + 1
		for j < n && isIdentByte(src[j]) {
			j++
		}
		id := src[i:j]
		i = j
		if len(id) < 2 || len(id) > maxTermLen {
			continue
		}
		buf = identParts(id, buf, fn)
	}
	return buf
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9')
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// identParts emits the whole identifier (lower-cased, without "_") when it
// has more than one part, and each part of two or more bytes that is not
// all digits. Terms are stemmed.
func identParts(id []byte, buf []byte, fn func([]byte)) []byte {
	parts := 0
	start := -1
	emit := func(end int) {
		if start >= 0 && end > start {
			p := id[start:end]
			parts++
			if len(p) >= 2 && !isDigits(string(p)) || isNumberTerm(p) {
				buf = append(buf[:0], p...)
				lowerASCII(buf)
				fn(stemBytes(buf))
			}
		}
		start = -1
	}
	for k := 0; k < len(id); k++ {
		c := id[k]
		if c == '_' {
			emit(k)
			continue
		}
		if start < 0 {
			start = k
			continue
		}
		if isUpper(c) {
			prev := id[k-1]
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && k+1 < len(id) && isLower(id[k+1])) {
				emit(k)
				start = k
			}
		}
	}
	emit(len(id))
	if parts > 1 {
		buf = joinedLower(buf[:0], id)
		if len(buf) >= 2 {
			fn(stemBytes(buf))
		}
	}
	return buf
}

// joinedLower appends id's ASCII bytes without its underscores, lower
// case, to buf: the whole-identifier term of a name with several parts.
func joinedLower(buf []byte, id []byte) []byte {
	for _, c := range id {
		if c != '_' {
			buf = append(buf, c)
		}
	}
	lowerASCII(buf)
	return buf
}

func lowerASCII(b []byte) {
	for i, c := range b {
		if isUpper(c) {
			b[i] = c + 32
		}
	}
}

// stemBytes is stem on a byte slice, without allocating; it may return a
// shorter slice of b (and rewrite its tail for "ies" → "y").
func stemBytes(b []byte) []byte {
	n := len(b)
	if n <= 3 || b[n-1] != 's' {
		return b
	}
	has := func(suf string) bool { return n >= len(suf) && string(b[n-len(suf):]) == suf }
	switch {
	case n > 4 && has("ies"):
		b[n-3] = 'y'
		return b[:n-2]
	case n > 4 && (has("sses") || has("xes") || has("ches") || has("shes")):
		return b[:n-2]
	case b[n-2] != 's' && b[n-2] != 'u' && b[n-2] != 'i':
		return b[:n-1]
	}
	return b
}

// joined is the lower-cased concatenation of parts, the form an identifier
// like parseConfig or parse_config takes in the index.
func joined(parts []string) string { return strings.Join(parts, "") }
