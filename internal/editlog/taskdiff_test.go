package editlog

import (
	"fmt"
	"testing"
)

// TaskDiff is the diff of Pending's contents for the task's files only.
func TestTaskDiff(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "one\n")
	write(t, root, "b.txt", "bee\n")
	l, err := Open(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, l, modify("a.txt", "one\n", "two\n"), create("n.txt", "new\n"))
	if _, err := l.Apply(t.Context(), OpSpec{TaskID: "task-2", Tool: "test", Files: []FileSpec{modify("b.txt", "bee\n", "bee2\n")}}); err != nil {
		t.Fatal(err)
	}
	diff, paths, cut, err := l.TaskDiff("task-1")
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n"
	if err != nil || diff != want || fmt.Sprint(paths) != "[a.txt n.txt]" || cut {
		t.Fatalf("%q %v %v %v", diff, paths, cut, err)
	}
	if diff, paths, _, _ := l.TaskDiff("task-none"); diff != "" || len(paths) != 0 || paths == nil {
		t.Fatalf("unknown task: %q %v", diff, paths)
	}
}
