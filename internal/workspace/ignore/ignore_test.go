package ignore

import (
	"strings"
	"testing"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"foo", "foo", true},
		{"foo", "foobar", false},
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", false},
		{"a/*.go", "a/main.go", true},
		{"a/*.go", "a/b/main.go", false},
		{"?", "x", true},
		{"?", "/", false},
		{"?", "é", true},
		{"[abc]x", "bx", true},
		{"[!abc]x", "bx", false},
		{"[^abc]x", "dx", true},
		{"[a-c]", "b", true},
		{"[a-c]", "d", false},
		{"[]]", "]", true},
		{"[[:digit:]]*", "9lives", true},
		{"[[:upper:]]", "a", false},
		{"[abc", "a", false},
		{`\*`, "*", true},
		{`\*`, "x", false},
		{`\#a`, "#a", true},
		{`\!a`, "!a", true},
		{`a\`, "a", false},
		{"**/foo", "foo", true},
		{"**/foo", "a/b/foo", true},
		{"**/foo/bar", "x/foo/bar", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/xb", false},
		{"a/**", "a/x/y", true},
		{"a/**", "a", false},
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false},
		{"*", "a/b", false},
		{"*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 60), false},
	}
	for _, tc := range tests {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want Rule
	}{
		{"", false, Rule{}},
		{"# comment", false, Rule{}},
		{`\#file`, true, Rule{Pattern: `\#file`}},
		{"!keep.log", true, Rule{Pattern: "keep.log", Negate: true}},
		{`\!bang`, true, Rule{Pattern: `\!bang`}},
		{"build/", true, Rule{Pattern: "build", DirOnly: true}},
		{"/root.txt", true, Rule{Pattern: "root.txt", Anchored: true}},
		{"a/b", true, Rule{Pattern: "a/b", Anchored: true}},
		{"trail   ", true, Rule{Pattern: "trail"}},
		{`trail\ `, true, Rule{Pattern: `trail\ `}},
		{"crlf\r", true, Rule{Pattern: "crlf"}},
		{"/", false, Rule{}},
		{"!", false, Rule{}},
	}
	for _, tc := range tests {
		got, ok := ParseLine(tc.line, "")
		if ok != tc.ok {
			t.Errorf("ParseLine(%q) ok = %v, want %v", tc.line, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if got.Pattern != tc.want.Pattern || got.Negate != tc.want.Negate || got.DirOnly != tc.want.DirOnly || got.Anchored != tc.want.Anchored {
			t.Errorf("ParseLine(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func TestListMatch(t *testing.T) {
	rootRules := Parse([]byte("*.log\n!keep.log\nbuild/\n/only-root.txt\ndocs/*.md\n**/gen/**\nspace\\ \n"), "")
	subRules := Parse([]byte("*.tmp\n/anchored\n!important.tmp\n"), "sub")
	all := append(append(List{}, rootRules...), subRules...)
	tests := []struct {
		rel   string
		isDir bool
		want  Result
	}{
		{"a.log", false, Ignore},
		{"x/y/a.log", false, Ignore},
		{"keep.log", false, Include},
		{"x/keep.log", false, Include},
		{"build", true, Ignore},
		{"build", false, NoMatch}, // dir-only does not match a file
		{"x/build", true, Ignore},
		{"only-root.txt", false, Ignore},
		{"x/only-root.txt", false, NoMatch},
		{"docs/a.md", false, Ignore},
		{"docs/x/a.md", false, NoMatch},
		{"x/docs/a.md", false, NoMatch}, // middle slash anchors
		{"a/gen/b/c.go", false, Ignore},
		{"space ", false, Ignore},
		{"space", false, NoMatch},
		{"sub/a.tmp", false, Ignore},
		{"a.tmp", false, NoMatch}, // sub rules apply only below sub
		{"sub/anchored", false, Ignore},
		{"sub/x/anchored", false, NoMatch},
		{"anchored", false, NoMatch},
		{"sub/important.tmp", false, Include},
		{"subway/a.tmp", false, NoMatch},
	}
	for _, tc := range tests {
		if got := all.Match(tc.rel, tc.isDir); got != tc.want {
			t.Errorf("Match(%q, dir=%v) = %v, want %v", tc.rel, tc.isDir, got, tc.want)
		}
	}
}

// FuzzMatch checks that matching never panics or hangs, that a literal
// pattern matches exactly itself, and that the compiled fast paths agree
// with the general matcher.
func FuzzMatch(f *testing.F) {
	f.Add("*.go", "main.go")
	f.Add("a/**/b", "a/x/b")
	f.Add("[a-", "a")
	f.Add(`\`, `\`)
	f.Add("!x/", "x")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 256 || len(name) > 256 {
			return
		}
		got := Match(pattern, name)
		if !strings.ContainsAny(pattern, `*?[\`) && got != (pattern == name) {
			t.Fatalf("literal %q vs %q: %v", pattern, name, got)
		}
		if r, ok := ParseLine(pattern, ""); ok && !r.DirOnly && r.Anchored {
			if r.Match(name, false) != Match(r.Pattern, name) {
				t.Fatalf("rule %+v disagrees with Match on %q", r, name)
			}
		}
		if r, ok := ParseLine(pattern, ""); ok && !r.Anchored && !strings.Contains(name, "/") {
			if r.Match(name, true) != Match(r.Pattern, name) {
				t.Fatalf("rule %+v disagrees with Match on %q", r, name)
			}
		}
	})
}
