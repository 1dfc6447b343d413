package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
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

// captureStderr is what f writes to os.Stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	defer func() { os.Stderr = old }()
	f()
	w.Close()
	os.Stderr = old
	return string(<-done)
}

// TestRunPromptWords: a prompt typed without quotes (task-x run fix the
// bug) is exit 2 with a message that shows it quoted and -p, not cobra's
// "accepts at most 2 arg(s)"; one quoted argument is the prompt.
func TestRunPromptWords(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"run", "fix", "the", "bug"}, "fix the bug"},
		{[]string{"fix", "the", "bug"}, "fix the bug"},
		{[]string{"run", "fix", "it"}, "fix it"},
	} {
		args := c.args
		code := 0
		msg := captureStderr(t, func() { code = execute(args) })
		if code != exitUsage || !strings.Contains(msg, `quote it, task-x run "`+c.words+`"`) || !strings.Contains(msg, `-p "`+c.words+`"`) {
			t.Errorf("task-x %s: exit %d, %q", strings.Join(args, " "), code, msg)
		}
	}
	// The advice is pasted into a shell: what it would expand or split is
	// in single quotes; a folder given first stays; -p and words is the
	// prompt given twice.
	os.Mkdir("web", 0o755)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "say", `he said "hi" $HOME`}, `task-x run 'say he said "hi" $HOME', or pass it with -p 'say he said "hi" $HOME'`},
		{[]string{"run", "don't", "echo", "`id`"}, `task-x run 'don'\''t echo ` + "`id`" + `'`},
		{[]string{"run", "web", "fix", "the", "bug"}, `task-x run -C web "fix the bug"`},
		{[]string{"run", "-p", "fix", "the", "bug"}, `give the prompt once: -p fix, and 2 more words ("the bug")`},
	} {
		code := 0
		msg := captureStderr(t, func() { code = execute(c.args) })
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("task-x %s: exit %d, %q, want %s", strings.Join(c.args, " "), code, msg, c.want)
		}
	}
	d, p, err := runArgs("", "", []string{"fix the bug"})
	if err != nil || d != "" || p != "fix the bug" {
		t.Errorf(`run "fix the bug" = %q, %q, %v`, d, p, err)
	}
}

// TestOpenMissingFolder: task-x open of a folder that does not exist (or
// of a file) is bad usage, exit 2, naming the folder and the command; it
// was exit 1, "task-x: the folder … does not exist".
func TestOpenMissingFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct{ arg, want string }{
		{filepath.Join(dir, "missing"), "does not exist; pass an existing folder"},
		{file, "is a file, not a folder"},
	} {
		code := 0
		msg := captureStderr(t, func() { code = execute([]string{"open", c.arg}) })
		if code != exitUsage || !strings.HasPrefix(msg, "task-x open: ") || !strings.Contains(msg, c.arg) || !strings.Contains(msg, c.want) {
			t.Errorf("task-x open %s: exit %d, %q", c.arg, code, msg)
		}
	}
}
