package gitx

// The write side (docs/sandbox.md "What the runtime's own git may
// write"): a sandboxed command can put links anywhere in .git (refs/,
// logs/, objects/, worktrees/NAME, index, packed-refs, ORIG_HEAD), and git
// follows them when it writes: its lock files resolve a link to a file
// (packed-refs, index, ORIG_HEAD), and it creates refs, reflogs and loose
// objects through a linked folder. The runtime's git never writes into
// the repository: it writes into a private store of the snapshot (a git
// folder of its own holding HEAD and the index, and an object folder of
// its own, the repository's objects read as an alternate), with reflogs
// off; then the runtime moves the result into the repository itself,
// through an os.Root of the common folder (a link out of it is refused,
// whatever a sandboxed command does meanwhile), refusing any link on the
// way, and writes or deletes the branch itself under git's own lock
// files (NAME.lock, packed-refs.lock).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// ErrOutside is returned when a place the runtime would write in the
// repository is a link, not a file or folder of its own, or leads out of
// the repository's git folder.
var ErrOutside = errors.New("gitx: refusing to write through a link in the repository's git folder")

// private is a Repo's private store (PrivateWrites).
type private struct {
	gitDir, index, objects string
}

// PrivateWrites makes every later git of r write into a private store in
// the snapshot instead of the repository: GIT_DIR a folder of its own
// whose HEAD is head ("ref: refs/heads/..." or a commit id), GIT_INDEX_FILE
// a private index (a copy of the repository's GitDir/index when seedIndex,
// read through an os.Root of the common folder), GIT_OBJECT_DIRECTORY a
// private object folder with the repository's objects as an alternate.
// Publish moves what git wrote into the repository. A command that makes
// a linked worktree (worktree add) must not get the index (its checkout
// runs with GIT_INDEX_FILE inherited): pass seedIndex false and call
// NoPrivateIndex.
func (r *Repo) PrivateWrites(head string, seedIndex bool) error {
	if !validHead(head) {
		return fmt.Errorf("gitx: invalid HEAD %q", head)
	}
	p := &private{gitDir: filepath.Join(r.snap, "private"), objects: filepath.Join(r.snap, "private-objects")}
	p.index = filepath.Join(p.gitDir, "index")
	for _, d := range []string{p.gitDir, p.objects} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("gitx: private store: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.gitDir, "HEAD"), []byte(head+"\n"), 0o600); err != nil {
		return fmt.Errorf("gitx: private store: %w", err)
	}
	// git's ref store takes the common folder from this file, not from
	// GIT_COMMON_DIR: the snapshot.
	if err := os.WriteFile(filepath.Join(p.gitDir, "commondir"), []byte("..\n"), 0o600); err != nil {
		return fmt.Errorf("gitx: private store: %w", err)
	}
	if seedIndex {
		if err := r.copyIndexIn(p.index); err != nil {
			return err
		}
	}
	r.priv = p
	return nil
}

// NoPrivateIndex drops GIT_INDEX_FILE from later commands (the private
// git folder and objects stay).
func (r *Repo) NoPrivateIndex() {
	if r.priv != nil {
		r.priv.index = ""
	}
}

var (
	hexID   = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	refName = regexp.MustCompile(`^refs/heads/[a-zA-Z0-9][a-zA-Z0-9._-]*(/[a-zA-Z0-9][a-zA-Z0-9_-]*)*$`)
)

func validHead(h string) bool {
	if r, ok := strings.CutPrefix(h, "ref: "); ok {
		return refName.MatchString(r)
	}
	return hexID.MatchString(h)
}

func (r *Repo) privateEnv() []string {
	p := r.priv
	if p == nil {
		return nil
	}
	env := []string{"GIT_DIR=" + p.gitDir, "GIT_OBJECT_DIRECTORY=" + p.objects,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(r.CommonDir, "objects")}
	if p.index != "" {
		env = append(env, "GIT_INDEX_FILE="+p.index)
	}
	return env
}

// openCommon opens the common folder as an os.Root from its parent, so
// that a common folder replaced by a link out of its parent (.git -> a
// folder of another repository) is refused, not followed.
func openCommon(commonDir string) (*os.Root, error) {
	parent, err := os.OpenRoot(filepath.Dir(commonDir))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	root, err := parent.OpenRoot(filepath.Base(commonDir))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrOutside, commonDir, err)
	}
	return root, nil
}

// OpenCommon is an os.Root of the common folder commonDir, opened from
// its parent (a common folder replaced by a link out of its parent is
// refused), for callers that write into it themselves (a worktree's git
// folder).
func OpenCommon(commonDir string) (*os.Root, error) { return openCommon(commonDir) }

// NoLinks checks that no component of rel (a slash path inside root) is
// a symbolic link: the os.Root keeps every write inside root whatever
// happens, and this refuses even a link that stays inside.
func NoLinks(root *os.Root, rel string) error {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		p := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		fi, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrOutside, p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s", ErrOutside, filepath.Join(root.Name(), p))
		}
	}
	return nil
}

// gitDirRel is GitDir relative to the common folder ("" for the common
// folder itself, "worktrees/NAME" for a linked worktree).
func (r *Repo) gitDirRel() (string, error) {
	if filepath.Clean(r.GitDir) == filepath.Clean(r.CommonDir) {
		return "", nil
	}
	rel, err := filepath.Rel(r.CommonDir, r.GitDir)
	if err != nil || filepath.Dir(rel) != "worktrees" || !local(filepath.Base(rel)) {
		return "", fmt.Errorf("%w: %s is not a git folder of %s", ErrOutside, r.GitDir, r.CommonDir)
	}
	return filepath.ToSlash(rel), nil
}

// local reports whether name is one path component (not empty, . or ..).
func local(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}

// copyIndexIn copies the repository's index (GitDir/index; absent: no
// copy, git starts from an empty index) to dst.
func (r *Repo) copyIndexIn(dst string) error {
	rel, err := r.gitDirRel()
	if err != nil {
		return err
	}
	root, err := openCommon(r.CommonDir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.Join(filepath.FromSlash(rel), "index")
	if err := NoLinks(root, name); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrOutside, filepath.Join(r.GitDir, "index"))
	}
	if err := copyOut(f, dst, fi); err != nil {
		return err
	}
	// A split index (git update-index --split-index) names a
	// sharedindex.<id> file next to it, which git looks for in GIT_DIR:
	// those come too (git then writes the index whole: core.splitIndex
	// is false for the runtime's git).
	dir, err := root.Open(filepath.Join(filepath.FromSlash(rel), "."))
	if err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "sharedindex.") || !hexID.MatchString(strings.TrimPrefix(n, "sharedindex.")) {
			continue
		}
		sf, err := root.OpenFile(filepath.Join(filepath.FromSlash(rel), n), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue // a link or gone: git reports the index as broken if it needed it
		}
		sfi, err := sf.Stat()
		if err == nil && sfi.Mode().IsRegular() {
			err = copyOut(sf, filepath.Join(filepath.Dir(dst), n), sfi)
		}
		sf.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// copyOut copies f (whose FileInfo is fi) to the new file dst with f's
// modification time: git takes an entry whose file changed in the same
// second the index was written as racily clean and reads the file again;
// a copy stamped now would make git trust the stat data of a file
// rewritten with the same size in that second (a task's change lost).
func copyOut(f io.Reader, dst string, fi fs.FileInfo) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	if _, err := io.Copy(out, f); err != nil {
		out.Close()
		return fmt.Errorf("gitx: index: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	if err := os.Chtimes(dst, fi.ModTime(), fi.ModTime()); err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	return nil
}

// Publish moves what git wrote in the private store into the repository:
// the new objects into the common folder's objects (each once: objects
// are named by their content), then the private index to GitDir/index
// (under index.lock, as git does; skipped without a private index or
// when git wrote none). Every write goes through an os.Root of the common
// folder with no link on the way (ErrOutside).
func (r *Repo) Publish() error {
	p := r.priv
	if p == nil {
		return errors.New("gitx: Publish without PrivateWrites")
	}
	root, err := openCommon(r.CommonDir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := publishObjects(root, p.objects); err != nil {
		return err
	}
	if p.index == "" {
		return nil
	}
	b, err := os.ReadFile(p.index)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitx: index: %w", err)
	}
	rel, err := r.gitDirRel()
	if err != nil {
		return err
	}
	return replaceLocked(root, filepath.Join(filepath.FromSlash(rel), "index"), b, 0o644)
}

// publishObjects copies every file git wrote in the private object folder
// (loose objects XX/..., packs) to objects/ of root, packs' .idx after
// their .pack, skipping an object that exists.
func publishObjects(root *os.Root, src string) error {
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(filepath.Base(rel), "tmp_") && !strings.HasPrefix(rel, "info"+string(filepath.Separator)) {
				files = append(files, rel)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gitx: objects: %w", err)
	}
	// An index names its pack: copy it last.
	slices.SortStableFunc(files, func(a, b string) int {
		ai, bi := strings.HasSuffix(a, ".idx"), strings.HasSuffix(b, ".idx")
		switch {
		case ai == bi:
			return strings.Compare(a, b)
		case ai:
			return 1
		}
		return -1
	})
	for _, rel := range files {
		dst := filepath.Join("objects", rel)
		if err := NoLinks(root, dst); err != nil {
			return err
		}
		if fi, err := root.Lstat(dst); err == nil && fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return fmt.Errorf("gitx: objects: %w", err)
		}
		if err := root.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("gitx: objects: %w", err)
		}
		if err := NoLinks(root, filepath.Dir(dst)); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(dst), "tmp_obj_task-x-"+randHex())
		if err := writeNew(root, tmp, b, 0o444); err != nil {
			return fmt.Errorf("gitx: objects: %w", err)
		}
		if err := root.Rename(tmp, dst); err != nil {
			root.Remove(tmp)
			return fmt.Errorf("gitx: objects: %w", err)
		}
	}
	return nil
}

func randHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeNew creates name (never an existing entry, never through a link)
// holding b.
func writeNew(root *os.Root, name string, b []byte, perm fs.FileMode) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		root.Remove(name)
		return err
	}
	if err := f.Close(); err != nil {
		root.Remove(name)
		return err
	}
	return nil
}

// replaceLocked replaces name in root with b as git does: name.lock made
// exclusively (a git holding the lock makes this fail), then renamed over
// name (a link at name is replaced, not followed). No component of name
// may be a link.
func replaceLocked(root *os.Root, name string, b []byte, perm fs.FileMode) error {
	if err := NoLinks(root, name); err != nil {
		return err
	}
	lock := name + ".lock"
	if err := writeNew(root, lock, b, perm); err != nil {
		return fmt.Errorf("gitx: %s: %w", name, err)
	}
	if err := root.Rename(lock, name); err != nil {
		root.Remove(lock)
		return fmt.Errorf("gitx: %s: %w", name, err)
	}
	return nil
}

// refValue is the commit ref names now ("" when there is no such ref).
func (r *Repo) refValue(ctx context.Context, ref string) string {
	out, err := r.Run(ctx, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// filesRefs reports whether the repository keeps refs as files (git's
// default); another ref storage is not written by hand.
func (r *Repo) filesRefs() error {
	b, _ := os.ReadFile(filepath.Join(r.snap, "config"))
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(k) == "refstorage" && strings.TrimSpace(v) != "files" {
			return fmt.Errorf("gitx: the repository keeps its refs as %s: not supported", strings.TrimSpace(v))
		}
	}
	return nil
}

// SetRef makes the branch ref (refs/heads/...) name the commit id new if
// it names old now ("" old: the ref must not exist). The runtime writes
// the loose ref itself, under ref.lock, through an os.Root of the common
// folder with no link on the way, and appends no reflog.
func (r *Repo) SetRef(ctx context.Context, ref, new, old string) error {
	if !refName.MatchString(ref) || !hexID.MatchString(new) || (old != "" && !hexID.MatchString(old)) {
		return fmt.Errorf("gitx: invalid ref update %s %s %s", ref, new, old)
	}
	if err := r.filesRefs(); err != nil {
		return err
	}
	if cur := r.refValue(ctx, ref); cur != old {
		if old == "" {
			return fmt.Errorf("gitx: %s exists", ref)
		}
		return fmt.Errorf("gitx: %s names %q, not %s", ref, cur, old)
	}
	root, err := openCommon(r.CommonDir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.FromSlash(ref)
	if err := NoLinks(root, name); err != nil {
		return err
	}
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("gitx: %s: %w", ref, err)
	}
	return replaceLocked(root, name, []byte(new+"\n"), 0o644)
}

// DeleteRef deletes the branch ref if it names old (nothing to do when it
// does not exist): its line in packed-refs (rewritten under
// packed-refs.lock), its loose file and its reflog, each through an
// os.Root of the common folder with no link on the way.
func (r *Repo) DeleteRef(ctx context.Context, ref, old string) error {
	if !refName.MatchString(ref) || !hexID.MatchString(old) {
		return fmt.Errorf("gitx: invalid ref deletion %s %s", ref, old)
	}
	if err := r.filesRefs(); err != nil {
		return err
	}
	cur := r.refValue(ctx, ref)
	if cur == "" {
		return nil
	}
	if cur != old {
		return fmt.Errorf("gitx: %s names %s, not %s", ref, cur, old)
	}
	root, err := openCommon(r.CommonDir)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.FromSlash(ref)
	for _, p := range []string{"packed-refs", name} {
		if err := NoLinks(root, p); err != nil {
			return err
		}
	}
	// A reflog reached through a link is left alone (deleting it would
	// delete what the link names); the ref itself goes.
	logLinked := NoLinks(root, filepath.Join("logs", name)) != nil
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil { // pack-refs removes empty folders
		return fmt.Errorf("gitx: %s: %w", ref, err)
	}
	lock := name + ".lock"
	if err := writeNew(root, lock, nil, 0o644); err != nil {
		return fmt.Errorf("gitx: %s: %w", ref, err)
	}
	defer root.Remove(lock)
	if b, err := root.ReadFile("packed-refs"); err == nil {
		var out []string
		lines := strings.SplitAfter(string(b), "\n")
		found := false
		for i := 0; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\n")
			if f := strings.Fields(l); len(f) == 2 && f[1] == ref && !strings.HasPrefix(l, "#") {
				found = true
				if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "^") {
					i++ // its peeled line
				}
				continue
			}
			out = append(out, lines[i])
		}
		if found {
			if err := replaceLocked(root, "packed-refs", []byte(strings.Join(out, "")), 0o644); err != nil {
				return err
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitx: packed-refs: %w", err)
	}
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitx: %s: %w", ref, err)
	}
	if logLinked {
		return nil
	}
	if err := root.Remove(filepath.Join("logs", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gitx: reflog of %s: %w", ref, err)
	}
	return nil
}
