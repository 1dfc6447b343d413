package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unixProbe is a python script: connect to argv[1] (print CONNECTED or
// the error), then socketpair (print PAIR-OK).
const unixProbe = `import socket, sys
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    print("CONNECTED")
except OSError as e:
    print("DENIED", e)
a, b = socket.socketpair()
a.sendall(b"x")
print("PAIR-OK" if b.recv(1) == b"x" else "PAIR-BAD")
`

// TestSandboxUnixSocket: a sandboxed command cannot connect to a pathname
// UNIX socket listening outside its writable folders (the stand-in for
// ssh-agent or the docker socket), in both sandboxed modes; socketpair
// still works; an unsandboxed command connects (the test can fail).
func TestSandboxUnixSocket(t *testing.T) {
	needSandbox(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	script := filepath.Join(t.TempDir(), "probe.py")
	os.WriteFile(script, []byte(unixProbe), 0o644)
	cmd := fmt.Sprintf("%s %s %s", py, script, sock)
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			setMode(t, m.llOnly)
			r := run(t, Spec{Command: cmd, Dir: t.TempDir(), Sandboxed: true})
			if strings.Contains(r.Output, "CONNECTED") || !strings.Contains(r.Output, "DENIED") {
				t.Fatalf("sandboxed connect: exit %d %q", r.ExitCode, r.Output)
			}
			if !strings.Contains(r.Output, "PAIR-OK") {
				t.Errorf("socketpair broke: %q", r.Output)
			}
		})
	}
	select {
	case <-accepted:
		t.Fatal("a sandboxed command reached the socket")
	default:
	}
	r := run(t, Spec{Command: cmd, Dir: t.TempDir()})
	if !strings.Contains(r.Output, "CONNECTED") {
		t.Fatalf("control run did not connect: %q", r.Output)
	}
	select {
	case <-accepted:
	case <-time.After(60 * time.Second):
		t.Fatal("control connection not accepted")
	}
}

// TestSandboxAgentEnv: SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS and the
// like are out of a sandboxed command's environment, kept unsandboxed.
func TestSandboxAgentEnv(t *testing.T) {
	needSandbox(t)
	env := append(os.Environ(), "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1/bus",
		"DOCKER_HOST=unix:///var/run/docker.sock", "XDG_RUNTIME_DIR=/run/user/1", "MY_APP_SOCKET=/x", "KEEP_ME=1")
	r := run(t, Spec{Command: "env", Dir: t.TempDir(), Sandboxed: true, Env: env})
	for _, k := range []string{"SSH_AUTH_SOCK=", "DBUS_SESSION_BUS_ADDRESS=", "DOCKER_HOST=", "XDG_RUNTIME_DIR=", "MY_APP_SOCKET="} {
		if strings.Contains(r.Output, k) {
			t.Errorf("sandboxed env holds %s", k)
		}
	}
	if !strings.Contains(r.Output, "KEEP_ME=1") {
		t.Errorf("env lost KEEP_ME: %q", r.Output)
	}
	r = run(t, Spec{Command: "env", Dir: t.TempDir(), Env: env})
	if !strings.Contains(r.Output, "SSH_AUTH_SOCK=") {
		t.Errorf("unsandboxed env lost SSH_AUTH_SOCK")
	}
}

// The filter's shape: socket(AF_UNIX) and io_uring_setup are denied, and
// a foreign arch is killed (pinned without running it).
func TestUnixSocketFilterProgram(t *testing.T) {
	prog, err := unixSocketFilter()
	if err != nil {
		t.Skip(err)
	}
	var rets []uint32
	for _, ins := range prog {
		if ins.Code == 0x06 { // BPF_RET|BPF_K
			rets = append(rets, ins.K)
		}
	}
	want := map[uint32]bool{0x80000000: true, 0x50000 | 1: true, 0x50000 | 13: true, 0x7fff0000: true}
	for _, r := range rets {
		delete(want, r)
	}
	if len(want) != 0 {
		t.Errorf("filter lacks returns %v (has %x)", want, rets)
	}
}
