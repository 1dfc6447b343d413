package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// fakeIndex is a tool.Index over a fixed file list; excluded holds path
// prefixes ("vendor/") and exact paths that are excluded.
type fakeIndex struct {
	files    []string
	excluded []string
}

func (f *fakeIndex) Files() []string {
	out := append([]string(nil), f.files...)
	sort.Strings(out)
	return out
}

func (f *fakeIndex) Excluded(rel string, isDir bool) bool {
	if isDir {
		rel += "/"
	}
	for _, e := range f.excluded {
		if rel == e || (strings.HasSuffix(e, "/") && strings.HasPrefix(rel, e)) {
			return true
		}
	}
	return false
}

// workspace creates files (path → content) in a fresh root and returns an
// Env with a fake index of the non-excluded ones.
func workspace(t *testing.T, files map[string]string, excluded ...string) *tool.Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	idx := &fakeIndex{excluded: excluded}
	for p, c := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if !idx.Excluded(p, false) && !idx.Excluded(path.Dir(p), true) {
			idx.files = append(idx.files, p)
		}
	}
	return tool.NewEnv(root, idx, false, "task-1")
}

func toolByName(t *testing.T, name string) tool.Tool {
	t.Helper()
	for _, tl := range New(nil) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func run(t *testing.T, env *tool.Env, name string, input any) (tool.Result, error) {
	t.Helper()
	return runCtx(t, context.Background(), env, name, input)
}

func runCtx(t *testing.T, ctx context.Context, env *tool.Env, name string, input any) (tool.Result, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return toolByName(t, name).Run(ctx, env, raw)
}

// wantKind checks that err is a tool failure of kind whose message holds
// every fragment.
func wantKind(t *testing.T, err error, kind string, fragments ...string) {
	t.Helper()
	te, ok := tool.AsError(err)
	if !ok {
		t.Fatalf("want tool error %s, got %v", kind, err)
	}
	if te.Kind != kind {
		t.Fatalf("want kind %s, got %s: %s", kind, te.Kind, te.Message)
	}
	for _, f := range fragments {
		if !strings.Contains(te.Message, f) {
			t.Errorf("message %q lacks %q", te.Message, f)
		}
	}
}

// runOK runs a tool that must succeed.
func runOK(t *testing.T, env *tool.Env, name string, input any) tool.Result {
	t.Helper()
	return runCtxOK(t, context.Background(), env, name, input)
}

func runCtxOK(t *testing.T, ctx context.Context, env *tool.Env, name string, input any) tool.Result {
	t.Helper()
	res, err := runCtx(t, ctx, env, name, input)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", name, err)
	}
	return res
}

func readDisk(t *testing.T, env *tool.Env, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeDisk(t *testing.T, env *tool.Env, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(env.Root, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSpecs(t *testing.T) {
	want := map[string]tool.Class{
		"read_file": tool.ClassRead, "list_files": tool.ClassRead, "search_text": tool.ClassRead,
		"write_file": tool.ClassEdit, "replace_text": tool.ClassEdit, "run_command": tool.ClassCommand,
		"apply_patch": tool.ClassEdit, "move_path": tool.ClassEdit, "delete_path": tool.ClassDestructive,
		"find_symbols": tool.ClassRead, "retrieve_context": tool.ClassRead, "get_dependencies": tool.ClassRead,
		"ask_user": tool.ClassInteractive, "update_plan": tool.ClassRead,
	}
	r := tool.NewRegistry()
	Register(r, &Options{})
	specs := r.Specs()
	if len(specs) != len(want) {
		t.Fatalf("got %d tools", len(specs))
	}
	for _, s := range specs {
		if want[s.Name] != s.Permission {
			t.Errorf("%s: class %q, want %q", s.Name, s.Permission, want[s.Name])
		}
		if s.Description == "" || strings.Contains(s.Description, "{{") {
			t.Errorf("%s: description not rendered: %q", s.Name, s.Description)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema must be a closed object", s.Name)
		}
		for _, req := range schema.Required {
			if _, ok := schema.Properties[req]; !ok {
				t.Errorf("%s: required %q not a property", s.Name, req)
			}
		}
		for name, p := range schema.Properties {
			var prop struct{ Description string }
			json.Unmarshal(p, &prop)
			if prop.Description == "" {
				t.Errorf("%s.%s: no description", s.Name, name)
			}
		}
	}
}

func TestUnknownFieldAndNoWorkspace(t *testing.T) {
	env := workspace(t, map[string]string{"a.txt": "x"})
	_, err := run(t, env, "read_file", map[string]any{"path": "a.txt", "bogus": 1})
	wantKind(t, err, tool.ErrInvalidInput, "bogus")
	_, err = toolByName(t, "read_file").Run(context.Background(), env, json.RawMessage(`{"path": 3}`))
	wantKind(t, err, tool.ErrInvalidInput)

	empty := tool.NewEnv("", nil, false, "t")
	for _, name := range []string{"read_file", "list_files", "search_text", "write_file", "replace_text", "run_command"} {
		in := map[string]any{"path": "a.txt", "content": "x", "oldText": "a", "newText": "b", "query": "x", "command": "true"}
		switch name {
		case "list_files":
			in = map[string]any{}
		case "search_text":
			in = map[string]any{"query": "x"}
		case "run_command":
			in = map[string]any{"command": "true"}
		case "read_file":
			in = map[string]any{"path": "a.txt"}
		case "write_file":
			in = map[string]any{"path": "a.txt", "content": "x"}
		case "replace_text":
			in = map[string]any{"path": "a.txt", "oldText": "a", "newText": "b"}
		}
		_, err := run(t, empty, name, in)
		wantKind(t, err, tool.ErrNoWorkspace)
	}
}

func TestIsSecretPath(t *testing.T) {
	for _, p := range []string{".env", ".env.local", "config/.ENV.prod", "certs/server.pem", "tls.key",
		"home/id_rsa", "id_rsa.pub", ".npmrc", "a/.netrc", "credentials", "aws/credentials.json"} {
		if !IsSecretPath(p) {
			t.Errorf("IsSecretPath(%q) = false", p)
		}
	}
	for _, p := range []string{"env.go", "src/environment.ts", "keys.go", "key", "pem.go", "my_credentials.txt", "README.md"} {
		if IsSecretPath(p) {
			t.Errorf("IsSecretPath(%q) = true", p)
		}
	}
}
