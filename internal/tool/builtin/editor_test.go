package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// fakeEditor holds open buffers by absolute path and records what it is
// told was written.
type fakeEditor struct {
	mu      sync.Mutex
	buffers map[string]string
	wrote   map[string]string
}

func (e *fakeEditor) Text(_ context.Context, taskID, abs string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.buffers[abs]
	return s, ok
}

func (e *fakeEditor) Wrote(_ context.Context, taskID, abs string, content []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wrote[abs] = string(content)
}

// With an editor, read_file shows its unsaved buffer, replace_text edits
// the buffer's text and writes the result through the edit log (the log's
// operation goes from the disk's content to the new one), the editor is
// told; a file the editor does not hold is read from the disk; write_file
// checks staleness against what the agent saw.
func TestEditorBuffers(t *testing.T) {
	env := workspace(t, map[string]string{"a.go": "package a\n\nvar x = 1\n", "b.go": "package b\n"})
	l, err := editlog.Open(env.Root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	env.Edits = LogEdits(l)
	a := filepath.Join(env.Root, "a.go")
	ed := &fakeEditor{buffers: map[string]string{a: "package a\n\nvar x = 1 // unsaved\n"}, wrote: map[string]string{}}
	env.Editor = ed

	res := runOK(t, env, "read_file", map[string]any{"path": "a.go"})
	if !strings.Contains(res.Content, "// unsaved") {
		t.Fatalf("read_file did not show the buffer: %s", res.Content)
	}
	if res := runOK(t, env, "read_file", map[string]any{"path": "b.go"}); !strings.Contains(res.Content, "package b") {
		t.Fatalf("read_file of a file the editor lacks: %s", res.Content)
	}
	if _, err := runCtx(t, tool.WithCallID(context.Background(), "c1"), env, "replace_text",
		map[string]any{"path": "a.go", "oldText": "x = 1 // unsaved", "newText": "x = 2 // unsaved"}); err != nil {
		t.Fatal(err)
	}
	want := "package a\n\nvar x = 2 // unsaved\n"
	if b, _ := os.ReadFile(a); string(b) != want {
		t.Fatalf("disk: %q", b)
	}
	if ed.wrote[a] != want {
		t.Fatalf("the editor was told %q", ed.wrote[a])
	}
	ch, err := l.CallChanges("task-1", "c1")
	if err != nil || len(ch) != 1 || *ch[0].Before != "package a\n\nvar x = 1\n" || *ch[0].After != want {
		t.Fatalf("the operation: %+v %v", ch, err)
	}
	// The buffer changes again without the agent reading it: stale.
	ed.buffers[a] = "package a\n\nvar x = 3\n"
	_, err = run(t, env, "write_file", map[string]any{"path": "a.go", "content": "package a\n"})
	wantKind(t, err, tool.ErrStale)
}
