package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditsKeepEndingsAndEncoding drives replace_text and read_file through
// the binary (issue 13 item 16): a CRLF file edited with a newText holding
// "\n" stays CRLF; a windows-1252 file reads decoded with its encoding named,
// and an edit of it writes windows-1252 back, every other byte unchanged.
func TestEditsKeepEndingsAndEncoding(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "win.txt"), []byte("one\r\ntwo\r\n"), 0o644)
	latin := "caf\xe9 cr\xe8me\n\x93quoted\x94 \xff\n"
	os.WriteFile(filepath.Join(root, "latin.txt"), []byte(latin), 0o644)
	p := start(t)
	p.initialize(map[string]any{"dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})

	p.mustCall("tools/call", map[string]any{"name": "replace_text", "input": map[string]any{"path": "win.txt", "oldText": "two", "newText": "two\nthree"}})
	if got, _ := fileText(t, root, "win.txt"); got != "one\r\ntwo\r\nthree\r\n" {
		t.Fatalf("CRLF file after replace_text: %q", got)
	}

	var read struct {
		Content string `json:"content"`
		Data    struct {
			Encoding string `json:"encoding"`
		} `json:"data"`
	}
	json.Unmarshal(p.mustCall("tools/call", map[string]any{"name": "read_file", "input": map[string]any{"path": "latin.txt"}}), &read)
	if read.Data.Encoding != "windows-1252" || !strings.Contains(read.Content, "windows-1252") ||
		!strings.Contains(read.Content, "café crème") || !strings.Contains(read.Content, "“quoted” ÿ") || strings.Contains(read.Content, "\ufffd") {
		t.Fatalf("read_file of a windows-1252 file: %+v", read)
	}
	p.mustCall("tools/call", map[string]any{"name": "replace_text", "input": map[string]any{"path": "latin.txt", "oldText": "café", "newText": "thé"}})
	if got, _ := fileText(t, root, "latin.txt"); got != "th\xe9 cr\xe8me\n\x93quoted\x94 \xff\n" {
		t.Fatalf("windows-1252 file after replace_text: %q", got)
	}
}
