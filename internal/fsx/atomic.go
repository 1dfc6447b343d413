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
	mode := fs.FileMode(0)
	keepMode := false
	if fi, serr := o.Stat(name); serr == nil {
		if fi.IsDir() {
			return fmt.Errorf("write %s: is a directory", name)
		}
		mode, keepMode = fi.Mode().Perm(), true
	} else if !errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", name, serr)
	}

	f, tmp, err := createTemp(o, name, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			o.Remove(tmp)
		}
	}()
	write := (*os.File).Write
	if testHookWrite != nil {
		write = testHookWrite
	}
	if _, err = write(f, data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if keepMode {
		if err = f.Chmod(mode); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", name, err)
	}
	if err = o.Rename(tmp, name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
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
