package editlog

import (
	"context"
	"testing"
)

// CallChanges gives a call's files with the content before its first
// operation and after its last; other calls and tasks are left out.
func TestCallChanges(t *testing.T) {
	root := newRoot(t)
	write(t, root, "a.txt", "one\n")
	write(t, root, "gone.txt", "bye\n")
	l, err := Open(root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, spec := range []OpSpec{
		{TaskID: "t1", CallID: "c1", Tool: "edit", Files: []FileSpec{modify("a.txt", "one\n", "two\n")}},
		{TaskID: "t1", CallID: "c1", Tool: "edit", Files: []FileSpec{modify("a.txt", "two\n", "three\n"), create("n.txt", "new\n")}},
		{TaskID: "t1", CallID: "c2", Tool: "delete", Files: []FileSpec{del("gone.txt", "bye\n")}},
		{TaskID: "t2", CallID: "c1", Tool: "edit", Files: []FileSpec{create("other.txt", "x\n")}},
	} {
		if _, err := l.Apply(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.CallChanges("t1", "c1")
	if err != nil || len(got) != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	if got[0].Path != "a.txt" || *got[0].Before != "one\n" || *got[0].After != "three\n" {
		t.Fatalf("a.txt: %+v", got[0])
	}
	if got[1].Path != "n.txt" || got[1].Before != nil || *got[1].After != "new\n" {
		t.Fatalf("n.txt: %+v", got[1])
	}
	got, _ = l.CallChanges("t1", "c2")
	if len(got) != 1 || *got[0].Before != "bye\n" || got[0].After != nil {
		t.Fatalf("delete: %+v", got)
	}
	if got, _ := l.CallChanges("t1", "none"); len(got) != 0 {
		t.Fatalf("unknown call: %+v", got)
	}
	if got, _ := l.CallChanges("t1", ""); len(got) != 0 {
		t.Fatalf("empty call id: %+v", got)
	}
}
