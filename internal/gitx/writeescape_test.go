package gitx_test

// The write side of the escape matrix: the git the runtime runs to make,
// commit, seed and discard task worktrees writes into the repository (an
// index, objects, a branch, reflogs, a worktree's git folder), and a
// sandboxed command can put links in every one of those places, or point
// the workspace's .git at another repository. A pair passes when nothing
// outside the workspace's own repository was created, appended to,
// changed or deleted (the victim folder, the other repositories), and the
// call either gave its answer or refused with an error: never a write
// through a link.

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/worktree"
)

type writePlant struct {
	name    string
	install func(t *testing.T, fx *fixture)
}

// taskNames are the task worktrees any call site makes (t1, t2).
var taskNames = []string{"t1", "t2"}

// moveOut moves the entry at p (when it exists) to dst outside every
// repository and puts a link to it at p; when p does not exist, dst is
// made as a folder (dir) or a file holding "mine\n" first.
func moveOut(t *testing.T, p, dst string, dir bool) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p, dst); err != nil {
			t.Fatal(err)
		}
	} else if dir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		writeFile(t, dst, "mine\n")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dst, p); err != nil {
		t.Fatal(err)
	}
}

var writePlants = []writePlant{
	{"refs-dir-link", func(t *testing.T, fx *fixture) {
		// refs/heads/task-x a link to a folder outside: a new branch is
		// created there, a deleted one deleted there.
		moveOut(t, filepath.Join(fx.w, ".git", "refs", "heads", "task-x"), filepath.Join(fx.victim, "refs"), true)
		for _, n := range taskNames {
			if _, err := os.Lstat(filepath.Join(fx.victim, "refs", n)); err != nil {
				writeFile(t, filepath.Join(fx.victim, "refs", n), fx.head+"\n")
			}
		}
	}},
	{"ref-file-link", func(t *testing.T, fx *fixture) {
		for _, n := range taskNames {
			moveOut(t, filepath.Join(fx.w, ".git", "refs", "heads", "task-x", n), filepath.Join(fx.victim, "ref-"+n), false)
		}
	}},
	{"logs-link", func(t *testing.T, fx *fixture) {
		// Reflogs through links: the branch's, HEAD's, each worktree's.
		moveOut(t, filepath.Join(fx.w, ".git", "logs", "refs", "heads", "task-x"), filepath.Join(fx.victim, "logs"), true)
		for _, n := range taskNames {
			if _, err := os.Lstat(filepath.Join(fx.victim, "logs", n)); err != nil {
				writeFile(t, filepath.Join(fx.victim, "logs", n), "mine\n")
			}
		}
		moveOut(t, filepath.Join(fx.w, ".git", "logs", "HEAD"), filepath.Join(fx.victim, "log-HEAD"), false)
		ents, _ := os.ReadDir(filepath.Join(fx.w, ".git", "worktrees"))
		for _, e := range ents {
			moveOut(t, filepath.Join(fx.w, ".git", "worktrees", e.Name(), "logs", "HEAD"), filepath.Join(fx.victim, "log-wt-"+e.Name()), false)
		}
	}},
	{"objects-link", func(t *testing.T, fx *fixture) {
		// Every loose object folder a link to a folder outside (holding
		// what was there, so reads still work): a new object lands there.
		for i := 0; i < 256; i++ {
			x := fmt.Sprintf("%02x", i)
			moveOut(t, filepath.Join(fx.w, ".git", "objects", x), filepath.Join(fx.victim, "objects", x), true)
		}
	}},
	{"admin-dir-link", func(t *testing.T, fx *fixture) {
		// A task worktree's git folder a link to a folder outside (a copy
		// of it, or a folder of the user's before the worktree exists).
		for _, n := range taskNames {
			moveOut(t, filepath.Join(fx.w, ".git", "worktrees", n), filepath.Join(fx.victim, "admin-"+n), true)
		}
	}},
	{"index-link", func(t *testing.T, fx *fixture) {
		for _, n := range taskNames {
			if _, err := os.Stat(filepath.Join(fx.w, ".git", "worktrees", n)); err == nil {
				moveOut(t, filepath.Join(fx.w, ".git", "worktrees", n, "index"), filepath.Join(fx.victim, "index-"+n), false)
			}
		}
		moveOut(t, filepath.Join(fx.w, ".git", "index"), filepath.Join(fx.victim, "index-main"), false)
	}},
	{"head-link", func(t *testing.T, fx *fixture) {
		// Files git writes next to HEAD (ORIG_HEAD by reset, HEAD itself
		// by update-ref HEAD) as links to files outside.
		for _, n := range taskNames {
			d := filepath.Join(fx.w, ".git", "worktrees", n)
			if _, err := os.Stat(d); err == nil {
				moveOut(t, filepath.Join(d, "ORIG_HEAD"), filepath.Join(fx.victim, "orig-"+n), false)
			}
		}
		moveOut(t, filepath.Join(fx.w, ".git", "ORIG_HEAD"), filepath.Join(fx.victim, "orig-main"), false)
	}},
	{"worktrees-dir-link", func(t *testing.T, fx *fixture) {
		moveOut(t, filepath.Join(fx.w, ".git", "worktrees"), filepath.Join(fx.victim, "worktrees"), true)
	}},
	{"packed-refs-link", func(t *testing.T, fx *fixture) {
		// The branches packed, and packed-refs a link to a file outside:
		// git's lock file follows the link and replaces its target.
		tgit(t, fx.w, "pack-refs", "--all")
		moveOut(t, filepath.Join(fx.w, ".git", "packed-refs"), filepath.Join(fx.victim, "packed-refs"), false)
	}},
	{"gitdir-file", func(t *testing.T, fx *fixture) {
		// The workspace's .git moved away and replaced by a file naming
		// another repository: the runtime must not write into that one.
		if err := os.Rename(filepath.Join(fx.w, ".git"), filepath.Join(fx.w, ".git-moved")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(fx.w, ".git"), "gitdir: "+filepath.Join(fx.evil, ".git")+"\n")
	}},
	{"gitdir-commondir", func(t *testing.T, fx *fixture) {
		// The workspace's .git a file naming a folder inside the
		// workspace whose commondir names another repository.
		gd := filepath.Join(fx.w, "fake-gitdir")
		writeFile(t, filepath.Join(gd, "commondir"), filepath.Join(fx.evil, ".git")+"\n")
		writeFile(t, filepath.Join(gd, "HEAD"), fx.head+"\n")
		if err := os.Rename(filepath.Join(fx.w, ".git"), filepath.Join(fx.w, ".git-moved")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(fx.w, ".git"), "gitdir: "+gd+"\n")
	}},
}

// treeState is what a folder holds: each path's kind and content (a
// file's hash, a link's target).
func treeState(dir string) map[string]string {
	st := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			st[rel] = "link " + l
		case d.IsDir():
			st[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			st[rel] = fmt.Sprintf("file %x", sha256.Sum256(b))
		}
		return nil
	})
	return st
}

func diffState(before, after map[string]string) []string {
	var d []string
	for p, v := range before {
		if w, ok := after[p]; !ok {
			d = append(d, "deleted "+p)
		} else if w != v {
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	slices.Sort(d)
	return d
}

// TestRuntimeGitWritesNothingOutside is the write matrix: every worktree
// call site against every write plant, each pair in a fresh fixture.
func TestRuntimeGitWritesNothingOutside(t *testing.T) {
	if testing.Short() {
		t.Skip("the matrix makes a repository per pair")
	}
	tmpl := makeTemplate(t)
	var sites []callSite
	for _, cs := range callSites {
		if strings.HasPrefix(cs.name, "worktree ") {
			sites = append(sites, cs)
		}
	}
	var mu sync.Mutex
	var failed, refused []string
	pairs := 0
	t.Run("pairs", func(t *testing.T) {
		for _, cs := range sites {
			for _, pl := range writePlants {
				pairs++
				name := cs.name + "/" + pl.name
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					fx := newFixture(t, tmpl)
					fx.plant = pl.name
					if cs.prepare != nil {
						cs.prepare(t, fx)
					}
					pl.install(t, fx)
					outside := []string{fx.victim, fx.evil, fx.sub, fx.alt, fx.u}
					before := make([]map[string]string, len(outside))
					for i, d := range outside {
						before[i] = treeState(d)
					}
					_, err := func() (ans string, err error) {
						defer func() {
							if p := recover(); p != nil {
								err = fmt.Errorf("panic: %v", p)
								t.Errorf("%v", err)
							}
						}()
						if fx.m == nil {
							// The manager opened after the plant (it
							// refuses a .git that names another
							// repository).
							m, err := worktree.Open(fx.w, &worktree.Options{DataDir: filepath.Join(filepath.Dir(fx.w), "data"), StateDir: t.TempDir()})
							if err != nil {
								return "", err
							}
							fx.m = m
						}
						return cs.call(t, fx)
					}()
					var changed []string
					for i, d := range outside {
						for _, c := range diffState(before[i], treeState(d)) {
							changed = append(changed, filepath.Base(d)+": "+c)
						}
					}
					mu.Lock()
					defer mu.Unlock()
					if len(changed) > 0 {
						failed = append(failed, name)
						t.Errorf("the runtime's git wrote outside the workspace's repository: %v", changed)
					}
					if err != nil {
						refused = append(refused, name)
						t.Logf("refused: %v", err)
					}
				})
			}
		}
	})
	t.Logf("%d call sites x %d write plants = %d pairs; %d wrote outside %v; %d refused %v",
		len(sites), len(writePlants), pairs, len(failed), failed, len(refused), refused)
}
