package builtin

import (
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// The model sees keys as [redacted]: writing that back would replace the
// user's key with the placeholder. write_file and replace_text refuse to
// add the placeholder; a file that already holds it can be edited around it.
func TestPlaceholderNotWrittenBack(t *testing.T) {
	env := workspace(t, map[string]string{"a.env": "KEY=sk-real-key-123\nX=1\n", "doc.md": "shown as [redacted]\n"})
	_, err := run(t, env, "write_file", map[string]any{"path": "a.env", "content": "KEY=[redacted]\nX=2\n"})
	wantKind(t, err, tool.ErrInvalidInput, "placeholder")
	_, err = run(t, env, "replace_text", map[string]any{"path": "a.env", "oldText": "X=1", "newText": "Y=[redacted]"})
	wantKind(t, err, tool.ErrInvalidInput, "placeholder")
	if got := readDisk(t, env, "a.env"); got != "KEY=sk-real-key-123\nX=1\n" {
		t.Fatalf("file changed: %q", got)
	}
	runOK(t, env, "replace_text", map[string]any{"path": "a.env", "oldText": "X=1", "newText": "X=2"})
	runOK(t, env, "replace_text", map[string]any{"path": "doc.md", "oldText": "shown", "newText": "still shown"})
	if got := readDisk(t, env, "a.env"); got != "KEY=sk-real-key-123\nX=2\n" {
		t.Fatalf("edit around the key: %q", got)
	}
}

func TestPlaceholderNotPatchedIn(t *testing.T) {
	env := workspace(t, map[string]string{"a.env": "KEY=sk-real-key-123\nX=1\n"})
	patch := "--- a/a.env\n+++ b/a.env\n@@ -1,2 +1,2 @@\n KEY=sk-real-key-123\n-X=1\n+X=[redacted]\n"
	_, err := run(t, env, "apply_patch", map[string]any{"patch": patch})
	wantKind(t, err, tool.ErrInvalidInput, "placeholder")
	if got := readDisk(t, env, "a.env"); got != "KEY=sk-real-key-123\nX=1\n" {
		t.Fatalf("file changed: %q", got)
	}
}
