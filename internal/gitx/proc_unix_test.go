//go:build linux

package gitx

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCancelEndsDescendants: a git (here a wrapper first in PATH) whose
// child holds its output open does not keep Run waiting once the context
// ends, and the child is killed with it.
func TestCancelEndsDescendants(t *testing.T) {
	bin := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "child")
	// The wrapper starts a child that inherits its stdout, writes the
	// child's pid, then says so on stdout and waits.
	wrapper := "#!/bin/sh\nsleep 600 &\necho $! > " + pidFile + "\necho started\nwait\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := Command(ctx, t.TempDir(), "status")
	pr, pw := io.Pipe() // not an *os.File: Wait copies the output, and waits for its end
	defer pr.Close()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || line != "started\n" {
		t.Fatalf("wrapper said %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("Wait after cancel: no error")
	}
	pw.Close()
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone and reaped already
	}
	defer unix.Close(fd)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, 20_000)
	for err == unix.EINTR {
		n, err = unix.Poll(pfd, 20_000)
	}
	if n != 1 {
		t.Fatalf("git's child %d still runs 20 s after the cancel", pid)
	}
}
