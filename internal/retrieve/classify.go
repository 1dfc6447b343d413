package retrieve

import (
	"regexp"
	"strings"
)

// Task kinds (addendum §10), the values Classify returns.
const (
	KindQuestion         = "question"
	KindCodeModification = "codeModification"
	KindBugFix           = "bugFix"
	KindRefactoring      = "refactoring"
	KindTesting          = "testing"
	KindDocumentation    = "documentation"
	KindReview           = "review"
	KindPlanning         = "planning"
)

// signal is one pattern and the weight it adds to a kind.
type signal struct {
	kind   string
	weight float64
	re     *regexp.Regexp
}

func sig(kind string, weight float64, pattern string) signal {
	return signal{kind, weight, regexp.MustCompile(`(?i)` + pattern)}
}

// signals are matched against the whole prompt. Weights: 3 a telling
// phrase, 2 a strong word, 1 a weak hint. Word boundaries keep "test" out
// of "latest" and "fix" out of "prefix".
var signals = []signal{
	sig(KindBugFix, 3, `\b(fix|fixes|fixing|debug|debugging)\b`),
	sig(KindBugFix, 2, `\b(bug|bugs|crash(es|ed|ing)?|panic(s|ked)?|exception|traceback|stack ?trace|segfault|regression|broken|fails?|failing|failure|wrong|incorrect|not working|doesn'?t work|does not work|error(s)?|nil pointer|null pointer|undefined is not|off[- ]by[- ]one|leak(s|ing)?|hangs?|deadlock)\b`),
	sig(KindTesting, 3, `\b(unit|integration|e2e|end[- ]to[- ]end|regression|table[- ]driven|snapshot|property[- ]based)[- ]tests?\b`),
	sig(KindTesting, 3, `\b(write|add|create|generate|improve|increase)\b[^.?!]{0,40}\b(tests?|specs?|test cases?|coverage)\b`),
	sig(KindTesting, 2, `\b(tests?|testing|coverage|pytest|jest|vitest|mocha|junit|go test|fixtures?|mocks?)\b`),
	sig(KindDocumentation, 3, `\b(document|documentation|docstrings?|jsdoc|godoc|javadoc|readme|changelog|api docs?)\b`),
	sig(KindDocumentation, 2, `\b(docs|comments?|explain in the code|usage guide|tutorial)\b`),
	sig(KindRefactoring, 3, `\b(refactor(ing)?|restructure|reorganize|reorganise|deduplicate|dedupe|clean ?up|simplify|extract (a |an |the )?(function|method|class|module|interface|helper|component)|rename|split [^.?!]{0,40} into|move [^.?!]{0,40} (to|into) )\b`),
	sig(KindRefactoring, 2, `\b(duplicat(ed|ion)|tidy|decouple|modularize|readability|code smell|dry)\b`),
	sig(KindReview, 3, `\b(review|code review|audit|critique|look over|check (my|this|the) (code|changes|diff|pr|pull request)|feedback on|pull request|pr #?\d+)\b`),
	sig(KindReview, 2, `\b(security issues?|vulnerabilit(y|ies)|best practices|what('s| is) wrong with)\b`),
	sig(KindPlanning, 3, `\b(plan|roadmap|design doc|architecture|break (it |this )?down|step[- ]by[- ]step plan|migration plan|strategy|milestones?)\b`),
	sig(KindPlanning, 2, `\b(how should (we|i)|what('s| is) the best (way|approach)|approach|trade-?offs?|propose|outline|design)\b`),
	sig(KindCodeModification, 2, `^\s*(please\s+)?(add|implement|create|build|make|change|update|modify|remove|delete|replace|support|introduce|enable|disable|convert|port|upgrade|bump|integrate|wire|expose|allow|let|set up|write)\b`),
	sig(KindCodeModification, 1, `\b(add|implement|create|new endpoint|new feature|feature|support for|hook up|handle)\b`),
	sig(KindQuestion, 2, `^\s*(what|why|how|where|when|which|who|does|do|is|are|can|could|should|would|explain|describe|tell me|show me|walk me through)\b`),
	sig(KindQuestion, 1, `\?\s*$`),
	sig(KindQuestion, 1, `\b(explain|understand|what does|how does|where is|where are|why does|overview)\b`),
}

// priority breaks ties: the more specific kind wins.
var priority = map[string]int{
	KindBugFix: 8, KindTesting: 7, KindRefactoring: 6, KindDocumentation: 5,
	KindReview: 4, KindPlanning: 3, KindCodeModification: 2, KindQuestion: 1,
}

// Classify returns the task kind of a prompt (addendum §10): question,
// codeModification, bugFix, refactoring, testing, documentation, review or
// planning. It weighs keyword and pattern signals; a question that names a
// failure ("why does X crash?") is a bugFix; a prompt with no signal is a
// question when it ends with "?", else codeModification.
func Classify(prompt string) string {
	p := strings.TrimSpace(prompt)
	if len(p) > 4000 {
		p = p[:4000] // the task is stated first; long pastes are logs and code
	}
	if p == "" {
		return KindQuestion
	}
	score := map[string]float64{}
	for _, s := range signals {
		if s.re.MatchString(p) {
			score[s.kind] += s.weight
		}
	}
	// A question that names a failure, tests, a review, a plan... is that
	// task; a plain question only wins against weak action words.
	for _, k := range []string{KindBugFix, KindTesting, KindRefactoring, KindDocumentation, KindReview, KindPlanning} {
		if score[k] >= 2 {
			score[KindQuestion] = 0
		}
	}
	if score[KindQuestion] >= 2 && score[KindCodeModification] <= 1 {
		score[KindQuestion] += 1
	}
	best, bestScore := "", 0.0
	for kind, v := range score {
		if v > bestScore || (v == bestScore && priority[kind] > priority[best]) {
			best, bestScore = kind, v
		}
	}
	if best == "" {
		if strings.HasSuffix(p, "?") {
			return KindQuestion
		}
		return KindCodeModification
	}
	return best
}
