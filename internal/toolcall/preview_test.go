package toolcall

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestPreview(t *testing.T) {
	if p := Preview("run_command", json.RawMessage(`{"command":"make","cwd":"src","background":true}`)); p != "$ make\n(cwd: src)\n(runs in the background)" {
		t.Errorf("command preview %q", p)
	}
	if p := Preview("move_path", json.RawMessage(`{"from":"a","to":"b"}`)); p != "move a → b" {
		t.Errorf("move preview %q", p)
	}
	if p := Preview("mcp__x__y", json.RawMessage(`{"q":1}`)); !strings.Contains(p, `"q": 1`) {
		t.Errorf("generic preview %q", p)
	}
	long := strings.Repeat("é", 5000)
	if p := CutPreview(long); len(p) > maxPreview+40 || !strings.Contains(p, "more bytes") || !json.Valid([]byte(fmt.Sprintf("%q", p))) {
		t.Errorf("long preview is %d bytes", len(p))
	}
}
