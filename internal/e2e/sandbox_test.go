package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxThroughBinary: with the default sandbox, an agent task's
// command writes inside the root, while its write outside the root, its
// connection to a loopback listener of the test and its reads of the
// runtime's key (environment, /proc/1, /proc/$PPID) all fail.
func TestSandboxThroughBinary(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
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
	const key = "sk-ant-e2e-sandbox-key-271828"
	cmd := fmt.Sprintf(`echo inside > inside.txt && echo wrote-inside
if echo x > %s/escaped 2>/dev/null; then echo ESCAPED-WRITE; else echo denied-write; fi
if exec 3<>/dev/tcp/127.0.0.1/%d; then echo ESCAPED-NET; else echo denied-net; fi
env; cat /proc/1/environ /proc/$PPID/environ; echo END`, outside, ln.Addr().(*net.TCPAddr).Port)
	model, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd}}}},
		{text: "Done."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-sandbox-prov-161803"}
	p := start(t, "ANTHROPIC_API_KEY="+key)
	p.initialize(nil) // sandbox: true is the default
	finished := openAndRunAllowAll(t, p, root, "probe the sandbox", prov)
	if len(finished) != 1 {
		t.Fatalf("toolFinished events %v", finished)
	}
	out := fmt.Sprint(finished[0]["result"])
	if finished[0]["ok"] == false && strings.Contains(out+fmt.Sprint(finished[0]["error"]), "sandbox") {
		t.Skipf("no kernel sandbox here: %v", finished[0]["error"])
	}
	for _, w := range []string{"wrote-inside", "denied-write", "denied-net", "PATH=", "END"} {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in %s", w, out)
		}
	}
	for _, leak := range []string{"ESCAPED", key, "sk-e2e-sandbox-prov-161803"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q in the command's output: %s", leak, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "inside.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("in-root write: %q %v", b, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside the root: %v", ents)
	}
	select {
	case <-accepted:
		t.Error("the command reached the loopback listener")
	case <-time.After(100 * time.Millisecond):
	}
	// The model saw the same denials.
	body, _ := json.Marshal(model.bodies()[1]["messages"])
	if !strings.Contains(string(body), "denied-write") || strings.Contains(string(body), key) {
		t.Errorf("tool result sent to the model: %s", body)
	}
}
