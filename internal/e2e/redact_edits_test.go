package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditsRedactKey: a file the agent writes holding a key the runtime
// holds (here the provider's API key) shows the key as [redacted] in
// edits/pending, edits/list and the checkpoint's diffs, while the file on
// disk keeps it; a later write of the placeholder back into the file is
// refused and leaves the key in place.
func TestEditsRedactKey(t *testing.T) {
	root, dataDir := t.TempDir(), t.TempDir()
	const key = "sk-e2e-redact-edits-key-662607"
	content := "NAME=demo\nAPI_KEY=" + key + "\n"
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "settings.txt", "content": content}}}},
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "settings.txt", "content": "NAME=demo2\nAPI_KEY=[redacted]\n"}}}},
		{text: "Done."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": key}
	p := start(t)
	p.initialize(map[string]any{"dataDir": dataDir})
	finished := openAndRunAllowAll(t, p, root, "write settings", prov)
	if len(finished) != 2 || finished[0]["ok"] != true || finished[1]["ok"] != false ||
		!strings.Contains(fmt.Sprint(finished[1]["error"]), "placeholder") {
		t.Fatalf("want the first write ok and the placeholder write refused: %v", finished)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "settings.txt")); string(b) != content {
		t.Errorf("file on disk = %q, want the key kept", b)
	}
	for _, m := range []string{"edits/pending", "edits/list"} {
		raw := string(p.mustCall(m, nil))
		if strings.Contains(raw, key) || !strings.Contains(raw, "[redacted]") {
			t.Errorf("%s: key shown or no placeholder: %s", m, raw)
		}
	}
	// The snapshot and the journal (docs/edits.md, Persistence) hold the
	// diffs; the blobs keep the exact bytes that revert writes back.
	snaps, _ := filepath.Glob(filepath.Join(dataDir, "checkpoints", "*.json"))
	journals, _ := filepath.Glob(filepath.Join(dataDir, "checkpoints", "*.journal"))
	cps := append(snaps, journals...)
	if len(journals) == 0 {
		t.Fatal("no checkpoint written")
	}
	for _, cp := range cps {
		b, _ := os.ReadFile(cp)
		if strings.Contains(string(b), key) {
			t.Errorf("checkpoint %s holds the key in clear text", cp)
		}
	}
}
