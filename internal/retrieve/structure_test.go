package retrieve

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestScopeOf(t *testing.T) {
	for _, c := range []struct {
		subject string
		want    []string
	}{
		{"fix(runtime-dom): set css vars", []string{"runtime", "dom"}},
		{"ignore/types: add LLVM", []string{"ignore", "type"}},
		{"printer: finish removal", []string{"printer"}},
		{"feat(types)!: internal options", []string{"type"}},
		{"fix: binding time", nil},
		{"Fix the bug: it crashes", nil},
		{"where is the config loaded", nil},
	} {
		if got := scopeOf(c.subject); !slices.Equal(got, c.want) {
			t.Errorf("scopeOf(%q) = %v, want %v", c.subject, got, c.want)
		}
	}
}

func TestShapeHeadAndTicks(t *testing.T) {
	sh := shapeOf("retry: back off longer\n\nThe `parseConfig` helper and the loader change too.")
	if !sh.multiLine || !sh.head["back"] || sh.head["loader"] {
		t.Errorf("head terms %v (multiLine %v)", sh.head, sh.multiLine)
	}
	if !sh.ticked["parseconfig"] || !sh.ticked["parse"] || sh.ticked["loader"] {
		t.Errorf("ticked %v", sh.ticked)
	}
}

// TestMapSection checks that a budget too small for every file's snippet
// ends with one-line map entries of further files, within the budget.
func TestMapSection(t *testing.T) {
	_, ix := fixture(t)
	res, err := Search(context.Background(), ix, Query{Text: "user login store", BudgetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	if res.UsedTokens > 400 {
		t.Fatalf("used %d tokens of 400", res.UsedTokens)
	}
	full, mapped := 0, 0
	seen := map[string]bool{}
	for _, s := range res.Snippets {
		if strings.HasPrefix(s.Reason, "map entry") {
			mapped++
			if s.StartLine != s.EndLine || strings.Contains(s.Text, "\n") {
				t.Errorf("map entry %s:%d-%d is not one line: %q", s.Path, s.StartLine, s.EndLine, s.Text)
			}
			if seen[s.Path] {
				t.Errorf("map entry for %s, which already has a snippet", s.Path)
			}
		} else {
			if mapped > 0 {
				t.Errorf("full snippet %s after the map section", s.Path)
			}
			full++
		}
		seen[s.Path] = true
	}
	if full == 0 || mapped == 0 {
		t.Fatalf("%d full snippets and %d map entries, want both: %+v", full, mapped, res.Snippets)
	}
}

func TestKebabWords(t *testing.T) {
	got := kebabWords("Change `gh repo set-default --view` in runtime-dom, not a - b or --")
	if want := []string{"set-default", "runtime-dom"}; !slices.Equal(got, want) {
		t.Errorf("kebabWords = %v, want %v", got, want)
	}
}
