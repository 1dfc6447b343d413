package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// getDependencies is the read-only get_dependencies tool {path}: the
// file's graph/file data (protocol.md graph/file: dependsOn, usedBy,
// importCycle) from the graph of env.Project.
type getDependencies struct{}

type getDependenciesInput struct {
	Path string `json:"path" jsonschema:"File path, relative to the workspace root or absolute inside it."`
}

const getDependenciesDescription = `Show how a file fits in the project graph: the files it depends on and the files that use it, each with the kind of link ("import": a resolved import statement; "reference": it uses a symbol defined there) and the symbols involved, plus the import cycle it belongs to, if any.
The path is relative to the workspace root (absolute paths inside the root work too). Use it before changing a file's API to find the callers to update.`

var getDependenciesSchema = tool.InputSchema[getDependenciesInput](nil)

func (*getDependencies) Spec() tool.Spec {
	return tool.Spec{
		Name:        "get_dependencies",
		Description: getDependenciesDescription,
		InputSchema: getDependenciesSchema,
		Permission:  tool.ClassRead,
	}
}

// Run answers with the file's dependencies. A file that is not indexed
// (excluded, binary, missing) fails with ErrNotFound.
func (t *getDependencies) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in getDependenciesInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	if err := needRoot(env); err != nil {
		return tool.Result{}, err
	}
	if strings.TrimSpace(in.Path) == "" {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "path is empty")
	}
	p, err := resolvePath(env, in.Path)
	if err != nil {
		return tool.Result{}, err
	}
	if env.Project == nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
	}
	g := env.Project.Graph()
	deps, err := g.File(p.Rel)
	if errors.Is(err, graph.ErrNotIndexed) {
		return tool.Result{}, tool.Errorf(tool.ErrNotFound, "%s is not an indexed file (excluded, binary, too large or not a file)", p.Rel)
	}
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: formatDeps(deps), Data: deps}, nil
}

// formatDeps renders the dependencies for the model, one file a line.
func formatDeps(d graph.FileDeps) string {
	var b strings.Builder
	section := func(title string, list []graph.Dep) {
		fmt.Fprintf(&b, "%s (%d):\n", title, len(list))
		if len(list) == 0 {
			b.WriteString("  (none)\n")
		}
		for _, e := range list {
			fmt.Fprintf(&b, "  %s [%s]", e.Path, e.Kind)
			if len(e.Symbols) > 0 {
				syms := e.Symbols
				more := ""
				if len(syms) > 12 {
					more = fmt.Sprintf(" and %d more", len(syms)-12)
					syms = syms[:12]
				}
				fmt.Fprintf(&b, ": %s%s", strings.Join(syms, ", "), more)
			}
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "%s\n", d.Path)
	section("depends on", d.DependsOn)
	section("used by", d.UsedBy)
	if len(d.ImportCycle) > 0 {
		fmt.Fprintf(&b, "import cycle: %s\n", strings.Join(d.ImportCycle, " ↔ "))
	}
	return b.String()
}
