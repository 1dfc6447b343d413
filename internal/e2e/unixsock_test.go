package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxUnixSocketThroughBinary: an agent task's sandboxed command
// cannot connect to a UNIX socket listening outside the root (a stand-in
// for ssh-agent or the docker socket) and does not see SSH_AUTH_SOCK or
// DBUS_SESSION_BUS_ADDRESS of the runtime's environment.
func TestSandboxUnixSocketThroughBinary(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	root := t.TempDir()
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
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	cmd := fmt.Sprintf(`%s -c 'import socket,sys
try:
    s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("ESCAPED-UNIX")
except OSError as e:
    print("denied-unix", e)' %s
env; echo END`, py, sock)
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd}}}},
		{text: "Done."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-unix-prov-1414"}
	p := start(t, "SSH_AUTH_SOCK="+sock, "DBUS_SESSION_BUS_ADDRESS=unix:path="+sock)
	p.initialize(nil)
	finished := openAndRunAllowAll(t, p, root, "probe", prov)
	if len(finished) != 1 {
		t.Fatalf("toolFinished events %v", finished)
	}
	out := fmt.Sprint(finished[0]["result"])
	if finished[0]["ok"] == false && strings.Contains(out+fmt.Sprint(finished[0]["error"]), "sandbox") {
		t.Skipf("no kernel sandbox here: %v", finished[0]["error"])
	}
	for _, w := range []string{"denied-unix", "PATH=", "END"} {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in %s", w, out)
		}
	}
	for _, leak := range []string{"ESCAPED", "SSH_AUTH_SOCK=", "DBUS_SESSION_BUS_ADDRESS="} {
		if strings.Contains(out, leak) {
			t.Errorf("%q in the command's output: %s", leak, out)
		}
	}
	select {
	case <-accepted:
		t.Error("the command reached the socket")
	default:
	}
}
