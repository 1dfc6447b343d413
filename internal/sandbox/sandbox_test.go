package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/proctree"
)

// modes are the three ways a command runs; the fallback is forced.
var modes = []struct {
	name      string
	sandboxed bool
	llOnly    bool
}{
	{"namespaces", true, false},
	{"landlockOnly", true, true},
	{"unsandboxed", false, false},
}

func needSandbox(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no kernel sandbox here: %v", err)
	}
}

func setMode(t *testing.T, llOnly bool) {
	t.Helper()
	forceLandlockOnly = llOnly
	t.Cleanup(func() { forceLandlockOnly = false })
}

func run(t *testing.T, spec Spec) Result {
	t.Helper()
	if spec.Env == nil {
		spec.Env = os.Environ()
	}
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Second
	}
	r, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("run %q: %v", spec.Command, err)
	}
	return r
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	_, zombie, ok := proctree.Parent(pid)
	return ok && !zombie
}

func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range pids {
		for alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d survived", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestSandboxWrites: writes outside the allowed folders fail, through a
// symlink too; writes inside the root, to TMPDIR and to the Go build cache
// work; the temp folder is removed afterwards.
func TestSandboxWrites(t *testing.T) {
	needSandbox(t)
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skipf("go env GOCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(gocache))
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	bashrc := filepath.Join(home, ".bashrc")
	_, bashrcErr := os.Stat(bashrc)
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			setMode(t, m.llOnly)
			root, outside := t.TempDir(), t.TempDir()
			if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			hostTmp := filepath.Join(os.TempDir(), fmt.Sprintf("task-x-escape-%d", time.Now().UnixNano()))
			t.Cleanup(func() { os.Remove(hostTmp) })
			try := func(name, cmd string) string {
				return fmt.Sprintf("if %s 2>/dev/null; then echo ESCAPED:%s; else echo denied:%s; fi\n", cmd, name, name)
			}
			script := try("outside", `echo x > "`+outside+`/f"`) +
				try("symlink", `echo x > link/f`) +
				try("hosttmp", `echo x > "`+hostTmp+`"`) +
				try("bashrc", `: >> "`+bashrc+`"`) +
				try("mkdirOut", `mkdir "`+outside+`/d"`) +
				`echo in > in.txt && mkdir -p sub && mv in.txt sub/in.txt && echo ok:root` + "\n" +
				`echo t > "$TMPDIR/t" && echo ok:tmp` + "\n" +
				`p="` + cache + `/task-x-probe-$$" && echo c > "$p" && rm "$p" && echo ok:gocache` + "\n" +
				`echo tmpdir:$TMPDIR`
			r := run(t, Spec{Command: script, Dir: root, WritableDirs: []string{root}, Sandboxed: true})
			if r.ExitCode != 0 || strings.Contains(r.Output, "ESCAPED") {
				t.Fatalf("exit %d, output:\n%s", r.ExitCode, r.Output)
			}
			for _, w := range []string{"denied:outside", "denied:symlink", "denied:hosttmp", "denied:bashrc", "denied:mkdirOut", "ok:root", "ok:tmp", "ok:gocache"} {
				if !strings.Contains(r.Output, w+"\n") {
					t.Errorf("missing %q in:\n%s", w, r.Output)
				}
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("files written outside: %v", ents)
			}
			if _, err := os.Stat(hostTmp); err == nil {
				t.Error("wrote into the host /tmp")
			}
			if _, err := os.Stat(filepath.Join(root, "sub", "in.txt")); err != nil {
				t.Errorf("in-root write lost: %v", err)
			}
			i := strings.Index(r.Output, "tmpdir:")
			tmp := strings.TrimSpace(r.Output[i+len("tmpdir:"):])
			if !strings.Contains(tmp, "task-x-cmd-") {
				t.Fatalf("TMPDIR %q", tmp)
			}
			if _, err := os.Stat(tmp); !os.IsNotExist(err) {
				t.Errorf("private temp folder %s left behind: %v", tmp, err)
			}
			if r.Confinement != map[bool]string{false: ConfinementNamespaces, true: ConfinementLandlock}[m.llOnly] {
				t.Errorf("confinement %q", r.Confinement)
			}
		})
	}
	if os.IsNotExist(bashrcErr) {
		os.Remove(bashrc) // in case the sandbox failed and created it
	}
}

// TestSandboxFreshHome: on a home folder without ~/.cache a sandboxed
// command can still use the user's cache folder (go's build cache lives
// there): the runtime makes the folder first, private to the user.
func TestSandboxFreshHome(t *testing.T) {
	needSandbox(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("GOCACHE", "")
	r := run(t, Spec{Command: `mkdir -p "$HOME/.cache/go-build" && echo c > "$HOME/.cache/go-build/probe" && echo ok:cache`,
		Dir: home, Sandboxed: true})
	if r.ExitCode != 0 || !strings.Contains(r.Output, "ok:cache") {
		t.Fatalf("exit %d, output:\n%s", r.ExitCode, r.Output)
	}
	fi, err := os.Stat(filepath.Join(home, ".cache"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("~/.cache: %v %v", fi, err)
	}
}

// TestSandboxNetwork: a TCP connection to a loopback listener of the test
// fails, and the listener sees no connection.
func TestSandboxNetwork(t *testing.T) {
	needSandbox(t)
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
	port := ln.Addr().(*net.TCPAddr).Port
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			setMode(t, m.llOnly)
			cmd := fmt.Sprintf(`if exec 3<>/dev/tcp/127.0.0.1/%d; then echo CONNECTED; fi`, port)
			r := run(t, Spec{Command: cmd, Dir: t.TempDir(), Sandboxed: true})
			if strings.Contains(r.Output, "CONNECTED") || !strings.Contains(r.Output, "connect: ") {
				t.Fatalf("connected: exit %d %q", r.ExitCode, r.Output)
			}
		})
	}
	// The same command unconfined connects: the test can fail.
	r := run(t, Spec{Command: fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED`, port), Dir: t.TempDir()})
	if !strings.Contains(r.Output, "CONNECTED") {
		t.Fatalf("control run did not connect: %q", r.Output)
	}
	select {
	case <-accepted:
	case <-time.After(60 * time.Second):
		t.Fatal("control connection not accepted")
	}
	select {
	case <-accepted:
		t.Fatal("a sandboxed command reached the listener")
	default:
	}
}

const fakeKey = "sk-ant-task-x-fake-runtime-key-3141592653"

// TestSandboxSecrets runs this test binary as a fake runtime whose initial
// environment holds a provider key (so /proc/<pid>/environ has it), and
// checks that no sandboxed command reads it: not from env, not from
// /proc/1, /proc/$PPID or the runtime's pid.
func TestSandboxSecrets(t *testing.T) {
	needSandbox(t)
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFakeRuntime$", "-test.v")
			cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY="+fakeKey, "GITHUB_TOKEN="+fakeKey+"-gh",
				"COPY_OF_KEY="+fakeKey, "TASK_X_FAKE_RUNTIME=1", "TASK_X_FAKE_LLONLY="+strconv.FormatBool(m.llOnly))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("fake runtime: %v\n%s", err, out)
			}
			s := string(out)
			if strings.Contains(s, fakeKey) {
				t.Fatalf("the key leaked:\n%s", s)
			}
			// The command did run and did look.
			for _, w := range []string{"PATH=", "environ-1", "environ-ppid", "environ-runtime"} {
				if !strings.Contains(s, w) {
					t.Fatalf("missing %q in:\n%s", w, s)
				}
			}
		})
	}
}

// TestFakeRuntime is the fake runtime of TestSandboxSecrets.
func TestFakeRuntime(t *testing.T) {
	if os.Getenv("TASK_X_FAKE_RUNTIME") != "1" {
		t.Skip("run by TestSandboxSecrets")
	}
	b, _ := os.ReadFile("/proc/self/environ")
	if !strings.Contains(string(b), fakeKey) {
		t.Fatal("the fake runtime's environ lacks the key")
	}
	setMode(t, os.Getenv("TASK_X_FAKE_LLONLY") == "true")
	script := fmt.Sprintf(`env; echo environ-1; cat /proc/1/environ; echo environ-ppid; cat /proc/$PPID/environ
echo environ-runtime; cat /proc/%d/environ; cat /proc/*/environ; for p in /proc/[0-9]*; do tr '\0' '\n' < $p/environ; done; true`, os.Getpid())
	r := run(t, Spec{Command: script, Dir: t.TempDir(), Sandboxed: true, Secrets: []string{fakeKey}})
	fmt.Println(strings.ReplaceAll(r.Output, "\x00", "\n"))
}

// treeScript starts descendants that leave the process group, records their
// pids in a file, and then does what tail says.
func treeScript(pidfile, tail string) string {
	return `setsid sleep 1000 & echo $! >> ` + pidfile + `
setsid -f sleep 1001
sleep 1002 & echo $! >> ` + pidfile + `
echo started >> ` + pidfile + `
` + tail
}

// hostPids waits for the command to write "started" and returns every
// process under the helper, in the host's pid view.
func hostPids(t *testing.T, p *Process, pidfile string) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(pidfile)
		if strings.Contains(string(b), "started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command never started: %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// setsid -f's child may not have exec'd sleep yet: poll.
	var ds []int
	for {
		ds = proctree.Descendants(p.Pid())
		var sleeps int
		for _, d := range ds {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d)); err == nil && strings.HasPrefix(string(b), "sleep\x00100") {
				sleeps++
			}
		}
		if sleeps >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expected 3 sleeps under the helper, found %d among %v", sleeps, ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ds
}

// TestTreeEnds: the whole tree, setsid descendants included, is gone after
// a timeout, a cancel, a Stop, and once the shell exits, in every mode.
func TestTreeEnds(t *testing.T) {
	needSandbox(t)
	for _, m := range modes {
		for _, how := range []string{"timeout", "cancel", "stop", "exit"} {
			t.Run(m.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				pidfile := filepath.Join(dir, "pids")
				tail := "sleep 1000"
				if how == "exit" {
					tail = "exit 0"
				}
				spec := Spec{Command: treeScript(pidfile, tail), Dir: dir, Env: os.Environ(), WritableDirs: []string{dir},
					Sandboxed: m.sandboxed, Timeout: time.Minute}
				if how == "timeout" {
					spec.Timeout = 1500 * time.Millisecond
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if m.llOnly {
					// Not setMode: the subtests run in parallel.
					p, err := startLandlockOnly(ctx, spec)
					check(t, p, err, how, pidfile, cancel)
					return
				}
				p, err := Start(ctx, spec)
				check(t, p, err, how, pidfile, cancel)
			})
		}
	}
}

func check(t *testing.T, p *Process, err error, how, pidfile string, cancel func()) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	if how != "exit" {
		pids = hostPids(t, p, pidfile)
	}
	start := time.Now()
	switch how {
	case "cancel":
		cancel()
	case "stop":
		p.Stop()
		p.Stop() // twice is fine
	}
	r := p.Wait()
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("took %v", el)
	}
	switch how {
	case "timeout":
		if !r.TimedOut || r.ExitCode != -1 {
			t.Errorf("result %+v", r)
		}
	case "cancel", "stop":
		if !r.Cancelled || r.TimedOut {
			t.Errorf("result %+v", r)
		}
	case "exit":
		if r.ExitCode != 0 || r.TimedOut || r.Cancelled {
			t.Errorf("result %+v", r)
		}
	}
	waitGone(t, pids)
	if how == "exit" || p.spec.Sandboxed == false {
		// Unconfined, the recorded pids are host pids: check them too.
		b, _ := os.ReadFile(pidfile)
		var recorded []int
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil && !p.spec.Sandboxed {
				recorded = append(recorded, n)
			}
		}
		waitGone(t, recorded)
	}
	if left := proctree.Descendants(p.Pid()); len(left) > 0 {
		t.Errorf("left under the helper: %v", left)
	}
	// No sleep of this test survives anywhere.
	for _, d := range proctree.Descendants(1) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", d))
		if slices.Contains(strings.Split(string(b), "\x00"), "TMPDIR="+p.tmp) {
			t.Errorf("process %d of the command survived", d)
		}
	}
}

// startLandlockOnly is Start with the namespaces skipped.
func startLandlockOnly(ctx context.Context, spec Spec) (*Process, error) {
	abi, err := landlockABI()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "task-x-cmd-")
	if err != nil {
		return nil, err
	}
	return launch(ctx, spec, ConfinementLandlock, abi, tmp)
}

func TestExitCodesAndOutput(t *testing.T) {
	dir := t.TempDir()
	for _, m := range modes {
		if m.sandboxed && Available() != nil {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			setMode(t, m.llOnly)
			r := run(t, Spec{Command: "echo out; echo err >&2; pwd; exit 3", Dir: dir, Sandboxed: m.sandboxed})
			if r.ExitCode != 3 || r.Output != "out\nerr\n"+dir+"\n" {
				t.Fatalf("%+v", r)
			}
			r = run(t, Spec{Command: "kill -9 $$", Dir: dir, Sandboxed: m.sandboxed})
			if r.ExitCode != -1 || r.TimedOut || r.Cancelled {
				t.Fatalf("signal: %+v", r)
			}
			r = run(t, Spec{Command: "head -c 1000 /dev/zero | tr '\\0' x", Dir: dir, OutputCap: 100, Sandboxed: m.sandboxed})
			if !r.Truncated || !strings.Contains(r.Output, "[... 900 bytes omitted ...]") {
				t.Fatalf("cap: %+v", r)
			}
		})
	}
}

func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []Spec{
		{Command: " ", Dir: dir},
		{Command: "a\x00b", Dir: dir},
		{Command: "true", Dir: "rel"},
		{Command: "true", Dir: filepath.Join(dir, "missing")},
		{Command: "true", Dir: dir, Timeout: -1},
	} {
		if _, err := Start(context.Background(), s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

func TestCleanEnv(t *testing.T) {
	in := []string{"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=b", "OPENROUTER_API_KEY=c", "TASK_X_API_KEY=d",
		"GITHUB_TOKEN=e", "aws_secret=f", "MISTRAL_API_KEY=g", "COPY=held", "EXTRA=h", "broken",
		"PATH=/bin", "HOME=/root", "TOKENIZER=ok"}
	got := CleanEnv(in, []string{"held", ""}, []string{"EXTRA"})
	want := []string{"PATH=/bin", "HOME=/root", "TOKENIZER=ok"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10)
	for _, s := range []string{"ab", "cdefg", "hijklmnop", "q", "rstuvwxyz"} {
		h.Write([]byte(s))
	}
	got, cut := h.String()
	if want := "abcde\n[... 16 bytes omitted ...]\nvwxyz"; got != want || !cut {
		t.Fatalf("got %q", got)
	}
	h = newHeadTail(10)
	h.Write([]byte("short"))
	h.Write([]byte("ok"))
	if got, cut := h.String(); got != "shortok" || cut {
		t.Fatalf("got %q", got)
	}
}

// TestKillAll runs last in this file's order of intent: it closes the
// registry and reopens it for any later test.
func TestKillAll(t *testing.T) {
	dir := t.TempDir()
	var ps []*Process
	for _, sb := range []bool{false, Available() == nil} {
		p, err := Start(context.Background(), Spec{Command: "setsid -f sleep 1000; sleep 1000 & wait", Dir: dir, Sandboxed: sb, Env: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	// Wait (bounded) until both sleeps of each command run under its helper
	// (a child subreaper keeps the setsid one), not a fixed pause.
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range ps {
		for sleepsUnder(p.Pid()) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("the sleeps of helper %d did not start: %v", p.Pid(), proctree.Descendants(p.Pid()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var pids []int
	for _, p := range ps {
		pids = append(pids, p.Pid())
		pids = append(pids, proctree.Descendants(p.Pid())...)
	}
	if len(pids) < 4 {
		t.Fatalf("too few processes: %v", pids)
	}
	KillAll()
	t.Cleanup(func() {
		registry.mu.Lock()
		registry.closed = false
		registry.mu.Unlock()
	})
	for _, p := range ps {
		select {
		case <-p.Done():
		default:
			t.Fatal("KillAll returned before the command ended")
		}
		if r := p.Wait(); !r.Cancelled {
			t.Errorf("result %+v", r)
		}
	}
	waitGone(t, pids)
	if _, err := Start(context.Background(), Spec{Command: "true", Dir: dir}); err != ErrClosed {
		t.Fatalf("Start after KillAll: %v", err)
	}
}

// sleepsUnder counts the sleep processes below pid.
func sleepsUnder(pid int) int {
	n := 0
	for _, d := range proctree.Descendants(pid) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", d)); strings.TrimSpace(string(b)) == "sleep" {
			n++
		}
	}
	return n
}
