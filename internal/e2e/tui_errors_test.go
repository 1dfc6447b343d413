package e2e

import (
	"net"
	"strings"
	"testing"
)

// TestProviderErrors: a failed model call is one sentence naming the fix,
// shown once, without the Go error text; a 404 names --model; --verbose
// adds the provider's details (issue 38, item 6: `Post "http://…": dial
// tcp …` was printed raw, in the error line and again in the summary).
func TestProviderErrors(t *testing.T) {
	_, srv := newScriptedModel(t, "openai", []step{{text: "unused"}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	dir := t.TempDir()
	run := func(base string, extra ...string) (string, int) {
		return ptyRun(t, []string{"TASK_X_API_KEY=sk-provider-errors"}, append([]string{"run", "-C", dir, "-p", "hi",
			"--provider", "openaiCompatible", "--base-url", base, "--model", "no-such-model", "--data-dir", t.TempDir(), "--no-sandbox"}, extra...)...)
	}
	out, code := run(closed)
	if code != 1 || strings.Contains(out, "dial tcp") || strings.Contains(out, `Post "`) ||
		!strings.Contains(out, "--base-url") || !strings.Contains(out, "nothing is listening") || strings.Count(out, "error:") != 1 {
		t.Errorf("a closed port: exit %d, want 1 and one sentence naming --base-url, no Go error text:\n%s", code, out)
	}
	out, code = run(srv.URL + "/wrong/v1")
	if code != 1 || !strings.Contains(out, "--model") || !strings.Contains(out, "404") || !strings.Contains(out, `"no-such-model"`) ||
		strings.Count(out, "error:") != 1 || strings.Contains(out, "notFound") {
		t.Errorf("a 404: exit %d, want 1 and one sentence naming the model and --model:\n%s", code, out)
	}
	out, _ = run(srv.URL+"/wrong/v1", "--verbose")
	if !strings.Contains(out, "notFound, HTTP 404") {
		t.Errorf("--verbose does not show the details:\n%s", out)
	}

	// The session shows the same sentence once, and keeps going.
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-provider-errors", "TERM=xterm-256color", "NO_COLOR=1"}, "run", "-C", dir,
		"--provider", "openaiCompatible", "--base-url", srv.URL+"/wrong/v1", "--model", "no-such-model", "--data-dir", t.TempDir(), "--no-sandbox")
	pt.expect("/help for commands")
	pt.send("hi\r")
	pt.expect("check the name")
	pt.expect("--model MODEL")
	pt.expect("failed")
	pt.send("\x04")
	pt.cmd.Wait()
	pt.mu.Lock()
	screen := pt.plain()
	pt.mu.Unlock()
	// The transcript printed at exit holds each line once.
	tail := screen[strings.LastIndex(screen, "› hi"):]
	if n := strings.Count(tail, "error:"); n != 1 {
		t.Errorf("the transcript shows %d error lines, want 1:\n%s", n, tail)
	}
}
