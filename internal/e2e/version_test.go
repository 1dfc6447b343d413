package e2e

import (
	"encoding/json"
	"errors"
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

// TestRuntimeHelp: task-x-runtime --help (and -h) exits 0 and prints what
// the command does, its examples and its flags on stdout, as the README
// promises for every command; a flag it does not know, or an argument,
// is a usage error (exit 2) that points at --help.
func TestRuntimeHelp(t *testing.T) {
	bin := filepath.Join(binDir, "task-x-runtime")
	for _, arg := range []string{"--help", "-h"} {
		cmd := exec.Command(bin, arg)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("task-x-runtime %s: %v (stderr %q)", arg, err, stderr.String())
		}
		for _, want := range []string{"serves the task-x protocol", "Examples:", "task-x-runtime --mcp-server --root", "-version", "TASK_X_LOG"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("task-x-runtime %s lacks %q:\n%s", arg, want, out)
			}
		}
		if stderr.Len() != 0 {
			t.Errorf("task-x-runtime %s wrote to stderr: %q", arg, stderr.String())
		}
	}
	for _, args := range [][]string{{"--no-such-flag"}, {"stray"}} {
		cmd := exec.Command(bin, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || len(out) != 0 || !strings.Contains(stderr.String(), "--help") {
			t.Errorf("task-x-runtime %v: err %v, stdout %q, stderr %q; want exit 2 pointing at --help", args, err, out, stderr.String())
		}
	}
}
