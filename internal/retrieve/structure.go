package retrieve

import (
	"path"
	"strings"
)

// queryShape is what the query's structure says beyond its terms: the
// terms of its first line (a commit subject, a question's title), the
// identifiers written in backticks, and the scope of a conventional
// subject ("fix(css): ...", "printer: ...", "ignore/types: ...").
type queryShape struct {
	multiLine bool
	head      map[string]bool // stemmed terms of the first line
	ticked    map[string]bool // stemmed parts and joined forms of `code` spans
	scope     []string        // stemmed scope words
	// scopeGroups are the comma-separated parts of a scope of several
	// words ("pr checks", "net/http, crypto/tls"), stemmed; Search keeps
	// such a scope only when each part names an indexed path.
	scopeGroups [][]string
	question    bool // one line asking how, where, what... or ending in "?"
}

// questionWords open a question a user asks about the code ("where are
// TLS certificates verified"); commit subjects never start with them.
var questionWords = map[string]bool{
	"how": true, "where": true, "what": true, "which": true, "why": true, "when": true, "who": true,
}

// conventionalTypes are the change types of conventional subjects; a
// subject "fix: x" has no scope.
var conventionalTypes = map[string]bool{
	"fix": true, "feat": true, "chore": true, "refactor": true, "perf": true, "docs": true,
	"test": true, "tests": true, "build": true, "ci": true, "style": true, "revert": true,
	"feature": true, "bugfix": true, "hotfix": true, "dx": true, "wip": true,
}

// placeTypes are the change types that also say where a change is.
var placeTypes = map[string]bool{"docs": true, "test": true, "tests": true, "build": true, "ci": true}

// dropFences removes the Markdown code blocks of a query (```go ... ```),
// fences and contents: the language tag is no term, and a block's words
// (a commit's benchmark table "name old time/op delta GetPage-10 ...", a
// pasted log) outweighed the subject around it when read as terms
// (docs/index.md). An unclosed fence runs to the end of the query.
func dropFences(text string) string {
	if !strings.Contains(text, "```") {
		return text
	}
	lines := strings.Split(text, "\n")
	out := lines[:0]
	in := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func shapeOf(text string) queryShape {
	var sh queryShape
	text = strings.TrimSpace(text)
	first, rest, multi := strings.Cut(text, "\n")
	sh.multiLine = multi && strings.TrimSpace(rest) != ""
	if f := strings.Fields(first); !sh.multiLine && len(f) > 0 {
		sh.question = questionWords[strings.ToLower(f[0])] || strings.HasSuffix(first, "?")
	}
	sh.head = map[string]bool{}
	for _, t := range Terms(first) {
		for _, w := range strings.Fields(t) {
			sh.head[stem(w)] = true
		}
		sh.head[stem(strings.ReplaceAll(t, " ", ""))] = true
	}
	sh.ticked = map[string]bool{}
	for s := text; ; {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			break
		}
		span := s[i+1 : i+1+j]
		s = s[i+1+j+1:]
		if len(span) > 80 {
			continue
		}
		for _, id := range identifiers(span) {
			parts := SplitIdentifier(id)
			for _, p := range parts {
				if len(p) >= 2 {
					sh.ticked[stem(p)] = true
				}
			}
			if len(parts) > 1 {
				sh.ticked[stem(joined(parts))] = true
			}
		}
	}
	sh.scope = scopeOf(first)
	if sh.scope != nil {
		if colon := strings.Index(first, ":"); colon > 0 && !strings.Contains(first[:colon], "(") && scopeWords(first[:colon]) {
			for _, part := range strings.Split(first[:colon], ",") {
				sh.scopeGroups = append(sh.scopeGroups, scopeTerms(part))
			}
		}
	}
	return sh
}

// scopeOf returns the stemmed words of a subject's scope: "fix(runtime-dom):
// x" → runtime, dom; "ignore/types: x" → ignore, type; "fix: x" → none.
func scopeOf(first string) []string {
	colon := strings.Index(first, ":")
	if colon <= 0 || colon > 40 || colon+1 < len(first) && first[colon+1] != ' ' {
		return nil
	}
	head := strings.TrimSuffix(first[:colon], "!")
	var scope string
	if i := strings.IndexByte(head, '('); i >= 0 && strings.HasSuffix(head, ")") {
		scope = head[i+1 : len(head)-1]
	} else if !strings.ContainsAny(head, " \t") && !conventionalTypes[strings.ToLower(head)] {
		scope = head
	} else if scopeWords(head) {
		// A scope of a few lower-case words, as cli/cli writes "pr checks:"
		// and Go writes "net/http, crypto/tls:".
		scope = head
	}
	return scopeTerms(scope)
}

// scopeTerms is the stemmed words of a scope: split at "/,-_ .*" and case
// changes, parts of one letter left out.
func scopeTerms(scope string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(scope, func(r rune) bool { return strings.ContainsRune("/,-_ .*", r) }) {
		for _, p := range SplitIdentifier(w) {
			if len(p) >= 2 {
				out = appendUnique(out, stem(p))
			}
		}
	}
	return out
}

// dropTypePrefixes removes the change type of each conventional line of a
// commit message, the subject's and those of a squash merge's bullets
// ("* fix(editor): copy ..." → "* (editor): copy ..."): the type says what
// kind of change it is, not where, and as a term it matches changelog
// scripts and contributing guides. The scope stays a term.
func dropTypePrefixes(text string) string {
	// docs, test, build and ci say where the change is (docs/, tests,
	// build scripts, .github/workflows) and stay terms.
	if !strings.Contains(text, ":") {
		return text
	}
	lines := strings.Split(text, "\n")
	changed := false
	for i, line := range lines {
		body := strings.TrimLeft(line, " \t")
		lead := len(line) - len(body)
		if len(body) > 2 && (body[0] == '*' || body[0] == '-') && body[1] == ' ' {
			body = body[2:]
			lead += 2
		}
		colon := strings.IndexByte(body, ':')
		if colon <= 0 || colon > 40 || colon+1 < len(body) && body[colon+1] != ' ' {
			continue
		}
		word := body[:colon]
		if j := strings.IndexAny(word, "(!"); j >= 0 {
			word = word[:j]
		}
		if w := strings.ToLower(word); !conventionalTypes[w] || placeTypes[w] {
			continue
		}
		lines[i] = line[:lead] + body[len(word):]
		changed = true
	}
	if !changed {
		return text
	}
	return strings.Join(lines, "\n")
}

// scopeWords reports whether head, holding spaces, reads as a scope of
// two to four words ("pr checks", "cmd/go, runtime"): each lower-case
// letters, digits and path punctuation, none a change type ("fix bug")
// or a stop word ("the parser").
func scopeWords(head string) bool {
	words := strings.Fields(head)
	if len(words) < 2 || len(words) > 4 {
		return false
	}
	for _, w := range words {
		w = strings.TrimSuffix(w, ",")
		if w == "" || conventionalTypes[w] || stopWords[w] {
			return false
		}
		for i := 0; i < len(w); i++ {
			c := w[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && strings.IndexByte("/._*-", c) >= 0) {
				return false
			}
		}
	}
	return true
}

// scopeHits counts the scope words among the path's terms.
func scopeHits(rel string, scope []string) int {
	if len(scope) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, t := range SplitIdentifier(rel) {
		have[stem(t)] = true
	}
	n := 0
	ext := strings.ToLower(path.Ext(rel))
	for _, s := range scope {
		if have[s] || ext != "" && scopeLanguage[s] != "" && strings.Contains(scopeLanguage[s], ext+" ") {
			n++
		}
	}
	return n
}

// scopeLanguage maps a scope word naming a language (`fix(python):` in a
// repository with Rust and Python sides) to the extensions of its files,
// each followed by a space.
var scopeLanguage = map[string]string{
	"python": ".py .pyi ", "py": ".py .pyi ", "rust": ".rs ", "rs": ".rs ", "go": ".go ", "golang": ".go ",
	"typescript": ".ts .tsx .mts .cts ", "ts": ".ts .tsx .mts .cts ", "javascript": ".js .jsx .mjs .cjs ",
	"js": ".js .jsx .mjs .cjs ", "node": ".js .mjs .cjs .ts ", "java": ".java ", "ruby": ".rb ", "cpp": ".cc .cpp .h .hpp ",
}

// proseExts are files of prose or data rather than code: they rank lower
// (×0.5) than code matching as well, since a question about where
// something happens is answered by code.
var proseExts = map[string]bool{
	".md": true, ".markdown": true, ".rst": true, ".txt": true, ".adoc": true,
	".json": true, ".yaml": true, ".yml": true, ".toml": true, ".lock": true,
	".csv": true, ".svg": true, ".snap": true, ".ipynb": true,
}

// isProsePath reports prose and data files: by extension, or a bare
// upper-case name such as CHANGELOG, LICENSE, AUTHORS.
func isProsePath(rel string) bool {
	base := path.Base(rel)
	ext := strings.ToLower(path.Ext(base))
	if proseExts[ext] {
		return true
	}
	return ext == "" && base == strings.ToUpper(base) && strings.ToLower(base) != base
}

// kebabWords returns the words of s joined by single hyphens between
// letters or digits: "gh repo set-default --view" → set-default.
func kebabWords(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		f = strings.Trim(f, "-")
		if strings.Contains(f, "-") && !strings.Contains(f, "--") {
			out = append(out, f)
		}
	}
	return out
}
