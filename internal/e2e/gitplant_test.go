package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlantedGitProgramsNotRunByRuntime: a sandboxed run_command plants an
// fsmonitor, a clean filter, a textconv and hooks in the workspace's .git
// (it may: the root is writable); the runtime's own git then runs (project
// detection after the edit, workspace/refresh, filesChanged) and must run
// none of them: each would write the runtime's environment outside the root.
// The test's own plain git status at the end proves the planted programs work.
func TestPlantedGitProgramsNotRunByRuntime(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, outside := t.TempDir(), t.TempDir()
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "a.txt"}, {"commit", "-qm", "init"}} {
		if args[0] == "add" {
			os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
		}
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	const key = "sk-ant-e2e-gitplant-key-314159"
	plant := fmt.Sprintf(`set -e
printf '#!/bin/sh\nenv > %[1]s/pwned-$(basename $0)-$$\ncat\n' > .git/evil.sh
chmod +x .git/evil.sh
git config core.fsmonitor "$PWD/.git/evil.sh"
git config filter.evil.clean "$PWD/.git/evil.sh"
git config diff.evil.textconv "$PWD/.git/evil.sh"
echo '* filter=evil diff=evil' > .gitattributes
for h in post-index-change reference-transaction pre-commit post-checkout; do cp .git/evil.sh .git/hooks/$h; done
echo planted`, outside)
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": plant}}}},
		{calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "a.txt", "content": "two\n"}}}},
		{text: "Done."},
	})
	prov := map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-gitplant-prov-2718"}
	p := start(t, "ANTHROPIC_API_KEY="+key)
	p.initialize(nil)
	finished := openAndRunAllowAll(t, p, root, "plant", prov)
	if len(finished) == 0 || !strings.Contains(fmt.Sprint(finished[0]["result"]), "planted") {
		if len(finished) > 0 && strings.Contains(fmt.Sprint(finished[0]), "sandbox") {
			t.Skipf("no kernel sandbox here: %v", finished[0])
		}
		t.Fatalf("the planting command did not run: %v", finished)
	}
	p.notify("workspace/filesChanged", map[string]any{"paths": []string{"a.txt", ".gitattributes"}})
	refreshed := p.mustCall("workspace/refresh", nil)
	if !strings.Contains(string(refreshed), `"dirty"`) {
		t.Errorf("refresh shows no git state (git did not run?): %s", refreshed)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		b, _ := os.ReadFile(filepath.Join(outside, names[0]))
		t.Fatalf("the runtime's git ran planted programs %v (key leaked: %v)", names, strings.Contains(string(b), key))
	}
	// Control: a plain git status runs them.
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	cmd.Run()
	if ents, _ := os.ReadDir(outside); len(ents) == 0 {
		t.Error("a plain git status ran none of the planted programs: the attack did not take")
	}
}

// TestNestedRepoFilterNotRunByRuntime is issue 32's escape, step by step
// as a sandboxed command would do it (here the test does it directly): a
// nested repository with `* filter=evil` in its .gitattributes and a clean
// filter in its own .git/config that runs `id > OUTSIDE`, committed in
// the workspace as a gitlink, then a file of it changed keeping its size.
// git status without --ignore-submodules recurses into it and runs the
// filter as the user. workspace/open, workspace/refresh and an open by a
// new runtime on the same data folder (the saved index) must not; the
// test's own plain git status at the end proves the plant works.
func TestNestedRepoFilterNotRunByRuntime(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := gitRepo(t, map[string]string{"a.txt": "one\n"})
	outside := filepath.Join(t.TempDir(), "OUTSIDE")
	sub := filepath.Join(root, "sub")
	os.MkdirAll(sub, 0o755)
	gitCmd(t, sub, "init", "-q", ".")
	os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "f.txt"), []byte("hello\n"), 0o644)
	gitCmd(t, sub, "add", "-A")
	gitCmd(t, sub, "commit", "-qm", "sub")
	gitCmd(t, sub, "config", "filter.evil.clean", fmt.Sprintf(`sh -c "id > %s"; cat`, outside))
	gitCmd(t, root, "add", "sub")
	gitCmd(t, root, "commit", "-qm", "gitlink")
	touch := func(content string) {
		// Same size, a new modification time: git must read the content.
		p := filepath.Join(sub, "f.txt")
		os.WriteFile(p, []byte(content), 0o644)
		later := time.Now().Add(time.Minute)
		os.Chtimes(p, later, later)
	}
	ran := func(when string) {
		t.Helper()
		if b, err := os.ReadFile(outside); err == nil {
			t.Fatalf("%s: the runtime's git ran the nested repository's filter: OUTSIDE holds %q", when, b)
		}
	}
	os.Remove(outside) // whatever the setup's own git did
	touch("jello\n")
	dataDir := t.TempDir()
	p := start(t)
	p.initialize(map[string]any{"dataDir": dataDir})
	opened := p.mustCall("workspace/open", map[string]any{"root": root})
	ran("workspace/open")
	if !strings.Contains(string(opened), `"dirty":0`) {
		t.Errorf("workspace/open: git state is not the workspace's own (clean): %s", opened)
	}
	touch("mello\n")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("two\n"), 0o644)
	refreshed := p.mustCall("workspace/refresh", nil)
	ran("workspace/refresh")
	if !strings.Contains(string(refreshed), `"dirty":1`) {
		t.Errorf("workspace/refresh: want dirty 1 (a.txt): %s", refreshed)
	}
	p.stdin.Close()
	p.wait(10 * time.Second)
	// A new runtime on the same data folder opens the saved index.
	touch("cello\n")
	p2 := start(t)
	p2.initialize(map[string]any{"dataDir": dataDir})
	p2.mustCall("workspace/open", map[string]any{"root": root})
	ran("workspace/open after a restart")
	// Control: a plain git status runs the filter.
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	cmd.Run()
	if _, err := os.Stat(outside); err != nil {
		t.Error("a plain git status did not run the planted filter: the attack did not take")
	}
}
