//go:build unix

package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A sandboxed command can write the workspace's .git: a FIFO planted as its
// config or HEAD made the git stamp and the git state block on open(2) for
// good, so workspace/open never answered (QA of session 31). Each plant must
// leave the open finishing; the bound below only turns a hang into a failure.
func TestGitStateSurvivesPlantedFIFO(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, name := range []string{"config", "HEAD", "index"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			write(t, root, map[string]string{"a.go": "package a"})
			p := filepath.Join(root, ".git", name)
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = gitStampOf(root)
				_, _ = cachedIndexDigest(filepath.Join(root, ".git"))
				_ = gitUsesSHA256(filepath.Join(root, ".git"))
				StartGit(context.Background(), root, nil).result()
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("reading the git state blocked on a FIFO planted as .git/%s", name)
			}
		})
	}
}
