package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// lines30 is "line 1\n" … "line 30\n", with eol as the line ending.
func lines30(eol string) string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d%s", i, eol)
	}
	return b.String()
}

// plan computes the plan of a call to an edit tool.
func plan(t *testing.T, env *tool.Env, name string, input any) (*tool.Plan, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	pv, ok := toolByName(t, name).(tool.Previewer)
	if !ok {
		t.Fatalf("%s is not a tool.Previewer", name)
	}
	return pv.Plan(context.Background(), env, raw)
}

// planApply plans a call, checks that planning wrote nothing, applies the
// plan and checks that the preview is the diff of what is now on disk and
// the diff the result carries. It returns the preview.
func planApply(t *testing.T, env *tool.Env, name string, input any, rel string, existed bool) string {
	t.Helper()
	before := ""
	if existed {
		before = readDisk(t, env, rel)
	}
	pl, err := plan(t, env, name, input)
	if err != nil {
		t.Fatalf("%s: plan: %v", name, err)
	}
	if existed && readDisk(t, env, rel) != before || !existed && exists(t, env, rel) {
		t.Fatalf("%s: planning wrote %s", name, rel)
	}
	res, err := pl.Apply(context.Background())
	if err != nil {
		t.Fatalf("%s: apply: %v", name, err)
	}
	after := readDisk(t, env, rel)
	want, _, _ := editlog.Diff(rel, before, after, existed, true)
	if pl.Preview != want {
		t.Errorf("%s: preview is not the diff of what was written:\n%s\nwritten:\n%s", name, pl.Preview, want)
	}
	var diff string
	switch d := res.Data.(type) {
	case editData:
		diff = d.Diff
	case patchData:
		diff = d.Diff
	default:
		t.Fatalf("%s: data %T", name, res.Data)
	}
	if diff != pl.Preview {
		t.Errorf("%s: result diff differs from the preview:\n%s\npreview:\n%s", name, diff, pl.Preview)
	}
	return pl.Preview
}

func TestPreviewReplaceText(t *testing.T) {
	env := workspace(t, map[string]string{"f.txt": lines30("\n")})
	got := planApply(t, env, "replace_text", map[string]any{"path": "f.txt", "oldText": "line 10\n", "newText": "line ten\nline ten b\n"}, "f.txt", true)
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,8 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n+line ten b\n line 11\n line 12\n line 13\n"
	if got != want {
		t.Errorf("preview\n%s\nwant\n%s", got, want)
	}
	// replaceAll: one hunk per match, numbered in the file as it is.
	env = workspace(t, map[string]string{"f.txt": lines30("\n")})
	got = planApply(t, env, "replace_text", map[string]any{"path": "f.txt", "oldText": "line 2", "newText": "LINE 2", "replaceAll": true}, "f.txt", true)
	for _, h := range []string{"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n line 3\n", "@@ -17,14 +17,14 @@\n line 17\n line 18\n line 19\n-line 20\n"} {
		if !strings.Contains(got, h) {
			t.Errorf("replaceAll preview lacks %q:\n%s", h, got)
		}
	}
}

func TestPreviewReplaceTextCRLF(t *testing.T) {
	env := workspace(t, map[string]string{"w.txt": lines30("\r\n")})
	// LF oldText and newText in a CRLF file: the file keeps CRLF and the
	// preview shows only the changed line, with its real number.
	got := planApply(t, env, "replace_text", map[string]any{"path": "w.txt", "oldText": "line 4\nline 5\n", "newText": "line four\nline 5\n"}, "w.txt", true)
	want := "--- a/w.txt\n+++ b/w.txt\n@@ -1,7 +1,7 @@\n line 1\r\n line 2\r\n line 3\r\n-line 4\r\n+line four\r\n line 5\r\n line 6\r\n line 7\r\n"
	if got != want {
		t.Errorf("preview %q\nwant    %q", got, want)
	}
	if disk := readDisk(t, env, "w.txt"); strings.Count(disk, "\r\n") != 30 || strings.Count(disk, "\n") != 30 {
		t.Errorf("the CRLF file lost its line endings: %q", disk)
	}
}

func TestPreviewWriteFile(t *testing.T) {
	env := workspace(t, map[string]string{"f.txt": lines30("\n")})
	got := planApply(t, env, "write_file", map[string]any{"path": "f.txt", "content": strings.Replace(lines30("\n"), "line 25\n", "", 1)}, "f.txt", true)
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -22,7 +22,6 @@\n line 22\n line 23\n line 24\n-line 25\n line 26\n line 27\n line 28\n"
	if got != want {
		t.Errorf("overwrite preview\n%s\nwant\n%s", got, want)
	}
	got = planApply(t, env, "write_file", map[string]any{"path": "sub/new.txt", "content": "one\ntwo"}, "sub/new.txt", false)
	want = "--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("new file preview %q\nwant %q", got, want)
	}
}

func TestPreviewApplyPatch(t *testing.T) {
	env := workspace(t, map[string]string{"f.txt": lines30("\n")})
	// The patch's line numbers are off by three and it has one line of
	// context: the preview is the file's diff with its real numbers and
	// three lines of context.
	patch := "--- a/f.txt\n+++ b/f.txt\n@@ -17,3 +17,3 @@\n line 19\n-line 20\n+line twenty\n line 21\n"
	withLog(t, env)
	got := planApply(t, env, "apply_patch", map[string]any{"patch": patch}, "f.txt", true)
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -17,7 +17,7 @@\n line 17\n line 18\n line 19\n-line 20\n+line twenty\n line 21\n line 22\n line 23\n"
	if got != want {
		t.Errorf("preview\n%s\nwant\n%s", got, want)
	}
}

// TestPlanFailsLikeRun: an edit that cannot apply fails when it is planned
// (before anyone is asked), with the error Run gives, and writes nothing.
func TestPlanFailsLikeRun(t *testing.T) {
	env := workspace(t, map[string]string{"f.txt": lines30("\n"), "dup.txt": "x\ny\nx\n"})
	outside := t.TempDir() + "/evil.txt"
	cases := []struct {
		name, tool string
		input      map[string]any
		kind       string
	}{
		{"no match", "replace_text", map[string]any{"path": "f.txt", "oldText": "line 99\n", "newText": "x"}, tool.ErrNoMatch},
		{"ambiguous", "replace_text", map[string]any{"path": "dup.txt", "oldText": "x\n", "newText": "z\n"}, tool.ErrAmbiguous},
		{"outside the root", "replace_text", map[string]any{"path": "../outside.txt", "oldText": "a", "newText": "b"}, tool.ErrOutsideWorkspace},
		{"write outside the root", "write_file", map[string]any{"path": outside, "content": "x"}, tool.ErrOutsideWorkspace},
		{".git", "write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, tool.ErrDenied},
		{"hunk does not apply", "apply_patch", map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -3,1 +3,1 @@\n-no such line\n+x\n"}, tool.ErrInvalidInput},
	}
	for _, c := range cases {
		_, perr := plan(t, env, c.tool, c.input)
		_, rerr := run(t, env, c.tool, c.input)
		wantKind(t, perr, c.kind)
		if perr.Error() != rerr.Error() {
			t.Errorf("%s: plan says %q, run says %q", c.name, perr, rerr)
		}
	}
	if readDisk(t, env, "f.txt") != lines30("\n") || readDisk(t, env, "dup.txt") != "x\ny\nx\n" {
		t.Error("a failed plan wrote")
	}

	// Stale: read, then changed outside the task.
	runOK(t, env, "read_file", map[string]any{"path": "f.txt"})
	writeDisk(t, env, "f.txt", lines30("\n")+"more\n")
	for _, name := range []string{"replace_text", "write_file", "apply_patch"} {
		in := map[string]any{"path": "f.txt", "oldText": "line 3\n", "newText": "x\n"}
		switch name {
		case "write_file":
			in = map[string]any{"path": "f.txt", "content": "x\n"}
		case "apply_patch":
			in = map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -3,1 +3,1 @@\n-line 3\n+x\n"}
		}
		_, err := plan(t, env, name, in)
		wantKind(t, err, tool.ErrStale, "read it again")
	}
}

// TestApplyRechecksTheFile: a file changed between the plan (the approval
// preview) and its Apply is not overwritten: Apply fails staleEdit, with
// and without an edit log.
func TestApplyRechecksTheFile(t *testing.T) {
	for _, logged := range []bool{false, true} {
		for _, name := range []string{"replace_text", "write_file", "apply_patch"} {
			env := workspace(t, map[string]string{"f.txt": lines30("\n")})
			if logged {
				withLog(t, env)
			}
			in := map[string]any{"path": "f.txt", "oldText": "line 3\n", "newText": "x\n"}
			switch name {
			case "write_file":
				in = map[string]any{"path": "f.txt", "content": "x\n"}
			case "apply_patch":
				in = map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -3,1 +3,1 @@\n-line 3\n+x\n"}
			}
			pl, err := plan(t, env, name, in)
			if err != nil {
				t.Fatal(err)
			}
			changed := lines30("\n") + "added while the user was asked\n"
			writeDisk(t, env, "f.txt", changed)
			_, err = pl.Apply(context.Background())
			wantKind(t, err, tool.ErrStale, "f.txt")
			if readDisk(t, env, "f.txt") != changed {
				t.Errorf("%s (log %v): the file changed in between was overwritten", name, logged)
			}
		}
		// A new file planned, then created by someone else.
		env := workspace(t, map[string]string{})
		if logged {
			withLog(t, env)
		}
		pl, err := plan(t, env, "write_file", map[string]any{"path": "n.txt", "content": "mine\n"})
		if err != nil {
			t.Fatal(err)
		}
		writeDisk(t, env, "n.txt", "theirs\n")
		_, err = pl.Apply(context.Background())
		wantKind(t, err, tool.ErrStale, "n.txt")
		if readDisk(t, env, "n.txt") != "theirs\n" {
			t.Errorf("log %v: a file created in between was overwritten", logged)
		}
	}
}
