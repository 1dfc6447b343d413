//go:build unix

package fsx

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "config")
	if err := os.WriteFile(plain, []byte("[core]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegular(plain, 1<<10); err != nil || string(b) != "[core]\n" {
		t.Fatalf("regular file: %q, %v", b, err)
	}
	if _, err := ReadRegular(plain, 3); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a file over the limit must be an error, got %v", err)
	}
	// A FIFO with no writer: a plain open would block for good.
	fifo := filepath.Join(dir, "HEAD")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := ReadRegular(fifo, 1<<10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO must be refused, got %v", err)
	}
	// A link to a device that never ends.
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegular(zero, 1<<10); err == nil {
		t.Fatal("a link to /dev/zero must be refused")
	}
	if _, err := ReadRegular(dir, 1<<10); err == nil {
		t.Fatal("a folder must be refused")
	}
}
