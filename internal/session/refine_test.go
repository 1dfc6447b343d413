package session

import "testing"

func TestCleanRefined(t *testing.T) {
	cases := map[string]string{
		"<think>plan</think>\nAdd a flag.":                        "Add a flag.",
		"reasoning with no opening tag</think>Add a flag.":        "Add a flag.",
		"<THINK>a</THINK> <think>b</think>Add a flag.":            "Add a flag.",
		"```\nAdd a flag.\n```":                                   "Add a flag.",
		"```markdown\n<request>Add a flag.</request>\n```":        "Add a flag.",
		"<request>\n```\nAdd a flag.\n```\n</request>":            "Add a flag.",
		"Add a flag.\n```go\nx := 1\n```":                         "Add a flag.\n```go\nx := 1\n```", // an inner fence stays
		"Add a flag.<think>cut off":                               "Add a flag.",
		"<reasoning>r</reasoning><Request >Add a flag.</request>": "Add a flag.",
		"  plain  ": "plain",
	}
	for in, want := range cases {
		if got := CleanRefined(in); got != want {
			t.Errorf("CleanRefined(%q) = %q, want %q", in, got, want)
		}
	}
}
