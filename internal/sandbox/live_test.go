package sandbox

import (
	"strings"
	"sync"
	"testing"
)

// TestOnOutput: with OnOutput set, each stream's output reaches it as it
// comes, in order, and the Result's Output still holds both, in every
// mode.
func TestOnOutput(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if m.sandboxed {
				needSandbox(t)
			}
			setMode(t, m.llOnly)
			var mu sync.Mutex
			got := map[string]string{}
			r := run(t, Spec{Command: "echo one; echo two >&2; echo three", Dir: t.TempDir(), Sandboxed: m.sandboxed,
				OnOutput: func(stream string, p []byte) {
					mu.Lock()
					got[stream] += string(p)
					mu.Unlock()
				}})
			if got["stdout"] != "one\nthree\n" || got["stderr"] != "two\n" || len(got) != 2 {
				t.Fatalf("live %q", got)
			}
			// A line written in pieces stays whole in the kept output
			// whatever the other stream writes meanwhile.
			r2 := run(t, Spec{Command: "printf 'sk-'; echo between >&2; sleep 0.1; printf 'whole\n'", Dir: t.TempDir(),
				Sandboxed: m.sandboxed, OnOutput: func(string, []byte) {}})
			if !strings.Contains(r2.Output, "sk-whole\n") || !strings.Contains(r2.Output, "between\n") {
				t.Fatalf("kept output %q", r2.Output)
			}
			for _, line := range []string{"one\n", "two\n", "three\n"} {
				if !strings.Contains(r.Output, line) || r.ExitCode != 0 {
					t.Fatalf("result %+v", r)
				}
			}
		})
	}
}
