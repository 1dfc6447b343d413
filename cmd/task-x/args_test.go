package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunArgs: the prompt is the argument, the folder -C; the older
// "run DIR [PROMPT]" works while DIR exists; a path-like argument that does
// not exist is an error naming it.
func TestRunArgs(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "src"), 0o755)
	t.Chdir(dir)
	cases := []struct {
		cd, p      string
		args       []string
		dir, wantP string
		bad        bool
	}{
		{args: []string{"fix the bug"}, wantP: "fix the bug"},
		{args: []string{"explain"}, wantP: "explain"},
		{cd: "src", args: []string{"fix it"}, dir: "src", wantP: "fix it"},
		{args: []string{"src"}, dir: "src"},
		{args: []string{"src", "fix it"}, dir: "src", wantP: "fix it"},
		{p: "fix it", args: []string{"src"}, dir: "src", wantP: "fix it"},
		{args: []string{"../wrokspace"}, bad: true},
		{args: []string{"srcc/"}, bad: true},
		{args: []string{"./nope", "fix it"}, bad: true},
		{cd: "nope", bad: true},
		{args: []string{"fix", "it"}, bad: true},
		{p: "fix it", args: []string{"also this"}, bad: true},
		{args: []string{"what does ./nope do?"}, wantP: "what does ./nope do?"},
	}
	for _, c := range cases {
		d, p, err := runArgs(c.cd, c.p, c.args)
		if c.bad != (err != nil) || !c.bad && (d != c.dir || p != c.wantP) {
			t.Errorf("runArgs(%q, %q, %q) = %q, %q, %v", c.cd, c.p, c.args, d, p, err)
		}
	}
}
