package fsx

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// testHookWrite, when set by a test, replaces the write of the data into the
// temp file, so a failure in the middle of a write can be injected.
var testHookWrite func(f *os.File, data []byte) (int, error)

// ops is the set of file operations an atomic write needs, so the same code
// runs on plain paths and inside an os.Root.
type ops interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Stat(name string) (fs.FileInfo, error)
	Rename(oldname, newname string) error
	Remove(name string) error
}

type osOps struct{}

func (osOps) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osOps) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (osOps) Rename(oldname, newname string) error  { return os.Rename(oldname, newname) }
func (osOps) Remove(name string) error              { return os.Remove(name) }

// WriteFileAtomic replaces (or creates) the file name with data: it writes a
// temp file in the same folder, fsyncs it, gives it the old file's permission
// bits (perm, less the umask, for a new file), renames it over name and
// fsyncs the folder. On every error the temp file is removed and the old file
// is left whole. The parent folder must exist. name may not be a folder.
func WriteFileAtomic(name string, data []byte, perm fs.FileMode) error {
	if err := writeAtomic(osOps{}, name, data, perm); err != nil {
		return err
	}
	syncDir(filepath.Dir(name))
	return nil
}

// WriteFileAtomicIn is WriteFileAtomic on the path name relative to root; the
// os.Root refuses any path or symlink that leaves the root.
func WriteFileAtomicIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	if err := writeAtomic(root, name, data, perm); err != nil {
		return err
	}
	syncDir(filepath.Join(root.Name(), filepath.Dir(name)))
	return nil
}

func writeAtomic(o ops, name string, data []byte, perm fs.FileMode) (err error) {
	mode, keepMode, err := modeOf(o, name)
	if err != nil {
		return err
	}
	f, tmp, err := createTemp(o, name, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = fill(f, name, data, mode, keepMode); err != nil {
		o.Remove(tmp)
		return err
	}
	if err = o.Rename(tmp, name); err != nil {
		o.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// modeOf returns the permission bits of the existing file name (keep true),
// or keep false when it does not exist; a folder is an error.
func modeOf(o ops, name string) (mode fs.FileMode, keep bool, err error) {
	fi, err := o.Stat(name)
	switch {
	case err == nil && fi.IsDir():
		return 0, false, fmt.Errorf("write %s: is a directory", name)
	case err == nil:
		return fi.Mode().Perm(), true, nil
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("write %s: %w", name, err)
}

// fill writes data into the new temp file f, gives it mode when keepMode,
// fsyncs and closes it. f is closed on every path.
func fill(f *os.File, name string, data []byte, mode fs.FileMode, keepMode bool) error {
	write := (*os.File).Write
	if testHookWrite != nil {
		write = testHookWrite
	}
	if _, err := write(f, data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if keepMode {
		if err := f.Chmod(mode); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: sync: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", name, err)
	}
	return nil
}

// WriteFileAtomicVia is WriteFileAtomicIn with the temp file kept out of the
// root: it is made in tmpDir (a folder of the caller's, outside the root)
// and renamed into place relative to the target's folder, opened through
// root (renameat(2); the last component is never followed), so the user's
// tree never holds a temp file, not even after a crash. That needs tmpDir on
// the same file system as the target's folder (a rename cannot cross file
// systems) and a folder without the setgid bit (a file made elsewhere would
// not get the folder's group). Otherwise, with tmpDir "" and where renameat
// is missing (Windows), it is WriteFileAtomicIn: the temp file is made next
// to the target.
func WriteFileAtomicVia(root *os.Root, name string, data []byte, perm fs.FileMode, tmpDir string) error {
	if tmpDir != "" {
		if done, err := writeVia(root, name, data, perm, tmpDir); done {
			return err
		}
	}
	return WriteFileAtomicIn(root, name, data, perm)
}

// createTemp creates a new hidden file next to name, as os.CreateTemp does
// (O_EXCL, a random suffix, a few attempts).
func createTemp(o ops, name string, perm fs.FileMode) (*os.File, string, error) {
	dir, base := filepath.Split(name)
	var b [8]byte
	for range 10 {
		rand.Read(b[:])
		tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(b[:]))
		f, err := o.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", errors.New("cannot create a unique temp file")
}

// syncDir fsyncs a folder so a rename in it is durable. Errors are ignored:
// some file systems cannot sync a folder, and the rename already happened.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
