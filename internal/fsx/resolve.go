package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is returned (wrapped) by Resolve for a path that leaves the
// root lexically, as an absolute path elsewhere, or through a symlink.
var ErrOutsideRoot = errors.New("path is outside the workspace root")

// maxLinkHops bounds how many dangling symlinks Resolve follows by hand, as
// the kernel's own limit on symlink chains (40 on Linux).
const maxLinkHops = 40

// Resolved is a path contained in a root. Abs is absolute with every existing
// symlink resolved; Rel is Abs relative to the root with "/" separators ("."
// for the root itself).
type Resolved struct {
	Abs string
	Rel string
}

// Resolve maps p, absolute or relative to root, to a path inside root. root
// must be an absolute folder; it is resolved through symlinks here too. A ".."
// that stays inside the root is fine. The path is refused with an error
// wrapping ErrOutsideRoot when the cleaned path leaves the root, or when any
// existing component along it is a symlink whose target leaves the root; for
// a path that does not exist yet, its deepest existing ancestor is resolved
// (so a new file under a symlinked folder pointing outside is refused), and a
// dangling symlink is followed to where it would create a file. Containment
// is checked with filepath.Rel on resolved paths, never a string prefix.
//
// Errors: an empty path or one holding a NUL byte; ErrOutsideRoot; the error
// of filepath.EvalSymlinks other than "does not exist" (for example a path
// component that is a regular file).
func Resolve(root, p string) (Resolved, error) {
	if p == "" {
		return Resolved{}, errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return Resolved{}, errors.New("path contains a NUL byte")
	}
	if !filepath.IsAbs(root) {
		return Resolved{}, fmt.Errorf("root %q is not absolute", root)
	}
	root = filepath.Clean(root)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return Resolved{}, fmt.Errorf("resolve root: %w", err)
	}

	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	// Lexical check first: an absolute path may name the root as given or
	// as resolved.
	if !within(root, abs) && !within(realRoot, abs) {
		return Resolved{}, fmt.Errorf("%s: %w", p, ErrOutsideRoot)
	}

	real, err := evalExisting(abs)
	if err != nil {
		return Resolved{}, err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || !local(rel) {
		return Resolved{}, fmt.Errorf("%s: a symlink leads %w", p, ErrOutsideRoot)
	}
	return Resolved{Abs: real, Rel: filepath.ToSlash(rel)}, nil
}

// within reports whether path is root or lies under it, lexically.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && local(rel)
}

// local reports whether rel (a filepath.Rel result) stays inside its base.
func local(rel string) bool {
	return rel == "." || filepath.IsLocal(rel)
}

// evalExisting resolves the symlinks of the deepest existing ancestor of abs
// (abs itself when it exists) and appends the components that do not exist
// yet. A dangling symlink is followed to its target, lexically.
func evalExisting(abs string) (string, error) {
	cur := abs
	var rest []string // missing components, innermost last
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling symlink: a write would create its target.
			if hops++; hops > maxLinkHops {
				return "", fmt.Errorf("%s: too many levels of symbolic links", abs)
			}
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			cur = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(append([]string{cur}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// ClientRel is the one containment check of every path a client gives
// (workspace/filesChanged, editor mentions and diagnostics, focusPaths,
// graph/file and graph focus, edits paths): the same rule as the scan,
// which never indexes a file through a symlink that leaves the root.
// p is absolute (the root as given or as resolved, or another spelling of
// it whose folder resolves inside the root) or relative to root; rel is
// its clean root-relative "/" path as the client named it (an in-root
// symlink keeps its own name, "." is the root). Errors wrap ErrOutsideRoot
// when p leaves the root lexically (rel is then "") or when an existing
// component of it is a symlink leading outside (Resolve): then rel is
// still set, so an index can forget what it held under that name, but the
// path must not be read. Other errors: an empty path or a NUL byte.
func ClientRel(root, p string) (rel string, err error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	root = filepath.Clean(root)
	abs := filepath.FromSlash(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	switch {
	case within(root, abs):
		rel, _ = filepath.Rel(root, abs)
	default:
		realRoot, rerr := filepath.EvalSymlinks(root)
		if rerr == nil && within(realRoot, abs) {
			rel, _ = filepath.Rel(realRoot, abs)
		} else if d, derr := filepath.EvalSymlinks(filepath.Dir(abs)); derr == nil && rerr == nil && within(realRoot, d) {
			// Another spelling of the root (a symlinked parent).
			rel, _ = filepath.Rel(realRoot, filepath.Join(d, filepath.Base(abs)))
		} else {
			return "", fmt.Errorf("%s: %w", p, ErrOutsideRoot)
		}
	}
	rel = filepath.ToSlash(rel)
	if _, err := Resolve(root, filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		if errors.Is(err, ErrOutsideRoot) {
			return rel, fmt.Errorf("%s: a symlink leads %w", p, ErrOutsideRoot)
		}
		// A component that is a file (ENOTDIR) or unreadable: nothing
		// under it can be read; the name is still inside.
		return rel, nil
	}
	return rel, nil
}
