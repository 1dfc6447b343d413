package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/tool"
	ws "github.com/task-x/task-x-runtime/internal/workspace"
)

func TestGetDependencies(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a.ts", "b.ts", "notes.md"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := graph.BuildFrom([]graph.Input{
		{Path: "a.ts", Language: "typescript", Info: &syntax.FileInfo{Imports: []syntax.Import{{Path: "./b", Kind: "import", Names: []string{"B"}}}}},
		{Path: "b.ts", Language: "typescript", Info: &syntax.FileInfo{
			Symbols: []syntax.Symbol{{Name: syntax.InternName("B"), Kind: syntax.KindClass, Exported: true}},
			Imports: []syntax.Import{{Path: "./a", Kind: "import"}}}},
		{Path: "notes.md", Language: "markdown"},
	}, nil)
	tl := &getDependencies{}
	if s := tl.Spec(); s.Name != "get_dependencies" || s.Permission != tool.ClassRead {
		t.Fatalf("spec %+v", s)
	}
	env := tool.NewEnv(root, &fakeIndex{files: []string{"a.ts", "b.ts", "notes.md"}}, false, "")
	env.Project = graphProject{g}
	res, err := tl.Run(context.Background(), env, json.RawMessage(`{"path": "`+filepath.Join(root, "a.ts")+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := res.Data.(graph.FileDeps)
	if !ok || d.Path != "a.ts" || len(d.DependsOn) != 1 || d.DependsOn[0].Path != "b.ts" || len(d.ImportCycle) != 2 {
		t.Fatalf("data = %+v", res.Data)
	}
	for _, want := range []string{"depends on (1)", "b.ts [import]: B", "import cycle: a.ts ↔ b.ts"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, res.Content)
		}
	}
	for input, kind := range map[string]string{
		`{"path": "missing.ts"}`: tool.ErrNotFound,
		`{"path": "../x.ts"}`:    tool.ErrOutsideWorkspace,
		`{"path": ""}`:           tool.ErrInvalidInput,
		`{"file": "a.ts"}`:       tool.ErrInvalidInput,
	} {
		_, err := tl.Run(context.Background(), env, json.RawMessage(input))
		if te, ok := tool.AsError(err); !ok || te.Kind != kind {
			t.Errorf("%s: err = %v, want kind %s", input, err, kind)
		}
	}
	if _, err := tl.Run(context.Background(), tool.NewEnv("", nil, false, ""), json.RawMessage(`{"path": "a.ts"}`)); err == nil {
		t.Error("no workspace: want an error")
	}
}

// graphProject is a tool.Project holding only a graph.
type graphProject struct{ g *graph.Graph }

func (p graphProject) Snapshot() *ws.Snapshot { return nil }
func (p graphProject) Graph() *graph.Graph    { return p.g }
func (p graphProject) Retrieve(context.Context, retrieve.Query) (retrieve.Result, error) {
	return retrieve.Result{}, nil
}
