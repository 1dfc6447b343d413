package gitx

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPrivateIndexKeepsItsTime: the private copy of the index has the
// index's own modification time, which git's racy-clean check compares
// with each file's (a copy stamped now would make git trust the stat data
// of a file rewritten with the same size in the second of the checkout,
// and a task's change would be lost: seen in the escape matrix). A split
// index's shared file comes along, with its time.
func TestPrivateIndexKeepsItsTime(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "a.txt"}, {"update-index", "--split-index"}} {
		if args[0] == "add" {
			os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
	if err := os.Chtimes(filepath.Join(root, ".git", "index"), past, past); err != nil {
		t.Fatal(err)
	}
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.PrivateWrites("ref: refs/heads/main", true); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(r.priv.index)
	if err != nil || !fi.ModTime().Equal(past) {
		t.Fatalf("private index %v, mtime %v; want the index's %v", err, fi.ModTime(), past)
	}
	shared, _ := filepath.Glob(filepath.Join(r.priv.gitDir, "sharedindex.*"))
	if len(shared) != 1 {
		t.Fatalf("shared index files copied: %v", shared)
	}
	if out, err := r.Run(t.Context(), "ls-files"); err != nil || out != "a.txt\n" {
		t.Fatalf("git reads the private split index: %q %v", out, err)
	}
}
