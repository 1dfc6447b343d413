package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

func TestReadFile(t *testing.T) {
	env := workspace(t, map[string]string{
		"a.txt":     "one\ntwo\r\nthree\n",
		"bom.txt":   "\ufefffirst\nsecond",
		"empty.txt": "",
		"bin.dat":   "ab\x00cd",
		"dir/x.go":  "package x\n",
	})
	res := runOK(t, env, "read_file", map[string]any{"path": "a.txt"})
	if want := "     1\tone\n     2\ttwo\n     3\tthree\n"; res.Content != want {
		t.Fatalf("content %q, want %q", res.Content, want)
	}
	d := res.Data.(readFileData)
	if d.TotalLines != 3 || d.StartLine != 1 || d.EndLine != 3 || d.Truncated || d.Path != "a.txt" {
		t.Fatalf("data %+v", d)
	}

	res = runOK(t, env, "read_file", map[string]any{"path": "a.txt", "startLine": 2, "endLine": 2})
	if !strings.HasPrefix(res.Content, "     2\ttwo\n") || !strings.Contains(res.Content, "3 lines") {
		t.Fatalf("range: %q", res.Content)
	}
	res = runOK(t, env, "read_file", map[string]any{"path": "bom.txt"})
	if res.Content != "     1\tfirst\n     2\tsecond\n" {
		t.Fatalf("bom: %q", res.Content)
	}
	res = runOK(t, env, "read_file", map[string]any{"path": "empty.txt"})
	if !strings.Contains(res.Content, "empty") {
		t.Fatalf("empty: %q", res.Content)
	}
	// ".." that stays inside, and an absolute path inside.
	runOK(t, env, "read_file", map[string]any{"path": "dir/../a.txt"})
	runOK(t, env, "read_file", map[string]any{"path": filepath.Join(env.Root, "dir", "x.go")})

	_, err := run(t, env, "read_file", map[string]any{"path": "a.txt", "startLine": 9})
	wantKind(t, err, tool.ErrInvalidInput, "3 lines")
	_, err = run(t, env, "read_file", map[string]any{"path": "a.txt", "startLine": 3, "endLine": 2})
	wantKind(t, err, tool.ErrInvalidInput)
	_, err = run(t, env, "read_file", map[string]any{"path": "bin.dat"})
	wantKind(t, err, tool.ErrInvalidInput, "binary")
	_, err = run(t, env, "read_file", map[string]any{"path": "dir"})
	wantKind(t, err, tool.ErrInvalidInput, "list_files")
	_, err = run(t, env, "read_file", map[string]any{"path": "missing.txt"})
	wantKind(t, err, tool.ErrNotFound)
	_, err = run(t, env, "read_file", map[string]any{"path": "a.txt/x"})
	wantKind(t, err, tool.ErrNotFound)
	_, err = run(t, env, "read_file", map[string]any{"path": ""})
	wantKind(t, err, tool.ErrInvalidInput)
}

func TestReadFileLimits(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	long := strings.Repeat("é", 1500) // 3000 bytes
	env := workspace(t, map[string]string{"big.txt": b.String(), "long.txt": long + "\nshort\n"})

	res := runOK(t, env, "read_file", map[string]any{"path": "big.txt"})
	d := res.Data.(readFileData)
	if !d.Truncated || d.EndLine != 2000 || !strings.Contains(res.Content, "startLine 2001") {
		t.Fatalf("cap: %+v tail %q", d, res.Content[len(res.Content)-120:])
	}
	res = runOK(t, env, "read_file", map[string]any{"path": "big.txt", "startLine": 2001})
	if d := res.Data.(readFileData); d.Truncated || d.EndLine != 2500 || !strings.HasPrefix(res.Content, "  2001\tline 2001\n") {
		t.Fatalf("second page: %+v", d)
	}

	res = runOK(t, env, "read_file", map[string]any{"path": "long.txt"})
	first := strings.SplitN(res.Content, "\n", 2)[0]
	if !strings.Contains(first, "line cut, 1000 more bytes") || !strings.HasPrefix(first, "     1\t"+strings.Repeat("é", 1000)+" ") {
		t.Fatalf("long line: %q", first[:40])
	}
	if d := res.Data.(readFileData); !d.Truncated || strings.Contains(res.Content, "output cut at line") {
		t.Fatalf("a cut line is truncated content (and no page is missing): %+v", d)
	}
}

func TestReadFileSecrets(t *testing.T) {
	env := workspace(t, map[string]string{".env": "KEY=1\n", "cfg/server.pem": "x\n", "ok.txt": "x\n"})
	_, err := run(t, env, "read_file", map[string]any{"path": ".env"})
	wantKind(t, err, tool.ErrDenied, "reading secret-looking files needs approval")
	_, err = run(t, env, "read_file", map[string]any{"path": "cfg/server.pem"})
	wantKind(t, err, tool.ErrDenied)
	// A harmless name that is a symlink to a secret file is still refused.
	if err := os.Symlink(".env", filepath.Join(env.Root, "config.txt")); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, env, "read_file", map[string]any{"path": "config.txt"})
	wantKind(t, err, tool.ErrDenied)

	res := runCtxOK(t, WithSecretApproved(context.Background()), env, "read_file", map[string]any{"path": ".env"})
	if !strings.Contains(res.Content, "KEY=1") {
		t.Fatalf("approved read: %q", res.Content)
	}
}

func TestReadFileExcludedInsideRoot(t *testing.T) {
	env := workspace(t, map[string]string{"node_modules/lib/index.js": "x\n"}, "node_modules/")
	runOK(t, env, "read_file", map[string]any{"path": "node_modules/lib/index.js"})
}

func TestContainment(t *testing.T) {
	env := workspace(t, map[string]string{"in/a.txt": "a\n", "in/sub/b.txt": "b\n"})
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s\n"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(env.Root, "filelink"))
	os.Symlink(outside, filepath.Join(env.Root, "dirlink"))
	os.Symlink(filepath.Join(env.Root, "in"), filepath.Join(env.Root, "inlink"))

	for _, p := range []string{"../x", "in/../../x", filepath.Join(outside, "secret.txt"), "filelink", "dirlink/secret.txt"} {
		_, err := run(t, env, "read_file", map[string]any{"path": p})
		wantKind(t, err, tool.ErrOutsideWorkspace)
	}
	for _, p := range []string{"dirlink/new.txt", "dirlink/deep/new.txt", "../new.txt", "filelink"} {
		_, err := run(t, env, "write_file", map[string]any{"path": p, "content": "x"})
		wantKind(t, err, tool.ErrOutsideWorkspace)
	}
	_, err := run(t, env, "replace_text", map[string]any{"path": "filelink", "oldText": "s", "newText": "t"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	_, err = run(t, env, "list_files", map[string]any{"path": "dirlink"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	_, err = run(t, env, "run_command", map[string]any{"command": "true", "cwd": "dirlink"})
	wantKind(t, err, tool.ErrOutsideWorkspace)
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Fatal("a file was created outside the root")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "s\n" {
		t.Fatal("outside file changed")
	}

	// Inside: ".." that stays in, and a symlink that stays in.
	runOK(t, env, "read_file", map[string]any{"path": "in/sub/../a.txt"})
	res := runOK(t, env, "read_file", map[string]any{"path": "inlink/sub/b.txt"})
	if res.Data.(readFileData).Path != "in/sub/b.txt" {
		t.Fatalf("symlink inside resolved to %q", res.Data.(readFileData).Path)
	}
	runOK(t, env, "write_file", map[string]any{"path": "inlink/c.txt", "content": "c\n"})
	if readDisk(t, env, "in/c.txt") != "c\n" {
		t.Fatal("write through inside symlink")
	}
}
