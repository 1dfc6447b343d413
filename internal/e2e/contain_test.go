package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesChangedSymlinkOutsideThroughBinary: workspace/filesChanged of a
// file reached through an in-root symlink to an outside folder does not
// index it: context/retrieve never returns its text, graph/file and an
// editor mention of it are refused or not attached; an ordinary file is
// found (the query can fail).
func TestFilesChangedSymlinkOutsideThroughBinary(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	const secret = "zqxoutsidesecretword"
	os.WriteFile(filepath.Join(outside, "secret.go"), []byte("package s\n\n// "+secret+" lives outside\nfunc Zqx() {}\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\n// zqxinsideword\nfunc main() {}\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	p := start(t)
	p.initialize(nil)
	p.mustCall("workspace/open", map[string]any{"root": root})
	p.notify("workspace/filesChanged", map[string]any{"paths": []string{"link/secret.go", filepath.Join(root, "link", "secret.go"), "link"}})
	raw := p.mustCall("context/retrieve", map[string]any{"query": secret, "focusPaths": []string{"link/secret.go"}})
	if strings.Contains(string(raw), "lives outside") || strings.Contains(string(raw), "link/secret.go") {
		t.Errorf("retrieve returned the outside file: %s", raw)
	}
	raw = p.mustCall("context/retrieve", map[string]any{"query": "zqxinsideword"})
	if !strings.Contains(string(raw), "main.go") {
		t.Errorf("control: retrieve did not find main.go: %s", raw)
	}
	if res, err := p.call("graph/file", map[string]any{"path": "link/secret.go"}); err == nil {
		t.Errorf("graph/file of the outside file answered %s", res)
	}
}
