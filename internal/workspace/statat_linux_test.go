package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStatAtIntoMatchesLstat: statAtInto, with the name's C string built
// in a scratch buffer or not (too small, a NUL in the name), gives what
// os.Lstat gives, and the same errors.
func TestStatAtIntoMatchesLstat(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("n", 200)
	for _, name := range []string{"f.go", long} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("package f\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("f.go", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for _, scratch := range [][]byte{nil, make([]byte, 0, 16), make([]byte, 0, 8192)} {
		for _, name := range []string{"f.go", long, "link", "sub"} {
			var got statInfo
			if err := statAtInto(fd, name, &got, scratch); err != nil {
				t.Fatalf("cap %d, %s: %v", cap(scratch), name, err)
			}
			want, err := os.Lstat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if got.size != want.Size() || !got.modTime.Equal(want.ModTime()) || got.mode != want.Mode() ||
				got.ino != inodeOf(want) || got.ctime != ctimeOf(want) || got.name != name {
				t.Errorf("cap %d, %s: %+v, want size %d mode %v mtime %v", cap(scratch), name, got, want.Size(), want.Mode(), want.ModTime())
			}
		}
		var st statInfo
		if err := statAtInto(fd, "missing", &st, scratch); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cap %d, missing: %v", cap(scratch), err)
		}
		if err := statAtInto(fd, "f.go\x00x", &st, scratch); err == nil {
			t.Errorf("cap %d: a name with a NUL was stated", cap(scratch))
		}
	}
}

// TestStatAtIntoAllocatesNothing: the stat of an unchanged file on a
// refresh allocates nothing when the scratch buffer holds the name.
func TestStatAtIntoAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	scratch := make([]byte, 0, 64)
	var st statInfo
	if n := testing.AllocsPerRun(100, func() {
		if err := statAtInto(fd, "a.go", &st, scratch); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per stat", n)
	}
	if st.modTime.After(time.Now()) {
		t.Errorf("mtime %v", st.modTime)
	}
}
