package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// tempInfix is what names a temp file of an atomic write:
// ".<name>.tmp-<16 hex digits>".
const tempInfix = ".tmp-"

// IsTempName reports whether a file name (no folder) has the form of an
// atomic write's temp file, ".<name>.tmp-<16 hex digits>".
func IsTempName(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndex(name, tempInfix)
	if i < 2 {
		return false
	}
	return isHex16(name[i+len(tempInfix):])
}

// IsTempOf reports whether name (no folder) is a temp file of an atomic write
// of the file named base: ".<base>.tmp-<16 hex digits>".
func IsTempOf(name, base string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+tempInfix)
	return ok && isHex16(rest)
}

func isHex16(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// RemoveTemps removes the temp files of atomic writes (IsTempName) directly
// in dir that were last modified before notAfter (the zero time: all of
// them), and returns how many it removed. A missing dir is no error.
func RemoveTemps(dir string, notAfter time.Time) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	var firstErr error
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsTempName(e.Name()) {
			continue
		}
		if !notAfter.IsZero() {
			if fi, err := e.Info(); err != nil || fi.ModTime().After(notAfter) {
				continue
			}
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if firstErr == nil {
				firstErr = fmt.Errorf("remove temp file: %w", err)
			}
			continue
		}
		n++
	}
	return n, firstErr
}

// RemoveTempsOf removes, through root, the temp files of atomic writes of
// the files bases left in the folder dir (root-relative, "." for the root):
// ".<base>.tmp-<16 hex digits>" next to them. It returns how many it
// removed. A missing folder is no error.
func RemoveTempsOf(root *os.Root, dir string, bases ...string) (int, error) {
	d, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	n := 0
	var firstErr error
	for _, name := range names {
		if !slices.ContainsFunc(bases, func(b string) bool { return IsTempOf(name, b) }) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := root.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if firstErr == nil {
				firstErr = fmt.Errorf("remove temp file: %w", err)
			}
			continue
		}
		n++
	}
	return n, firstErr
}
