package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneVersion: task-x --version, task-x-runtime --version and the
// runtime's initialize serverInfo.version are one version (one source of
// truth, internal/version).
func TestOneVersion(t *testing.T) {
	run := func(bin string) string {
		out, err := exec.Command(filepath.Join(binDir, bin), "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", bin, err)
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), bin+" ")
		if !ok || v == "" {
			t.Fatalf("%s --version printed %q", bin, out)
		}
		return v
	}
	client, runtime := run("task-x"), run("task-x-runtime")
	p := start(t)
	var init struct {
		ServerInfo struct {
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	json.Unmarshal(p.initialize(nil), &init)
	if client != runtime || runtime != init.ServerInfo.Version {
		t.Fatalf("task-x %q, task-x-runtime %q, serverInfo %q: want one version", client, runtime, init.ServerInfo.Version)
	}
}
