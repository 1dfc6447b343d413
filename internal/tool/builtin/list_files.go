package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// listMaxEntries caps the entries list_files returns.
const listMaxEntries = 1000

type listFiles struct{}

type listFilesInput struct {
	Path      string `json:"path,omitempty" jsonschema:"Folder to list, relative to the workspace root. Default: the root."`
	Glob      string `json:"glob,omitempty" jsonschema:"Pattern matched against paths relative to the folder, with * (within a folder), ** (any depth), ? and {a,b}. Example: **/*.ts"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"List every entry below the folder, not only its direct entries. Default false."`
}

// listFilesData is the structured result of list_files. Entries are relative
// to the root with "/"; folders end with "/".
type listFilesData struct {
	Entries   []string `json:"entries"`
	Total     int      `json:"total"`
	Truncated bool     `json:"truncated"`
}

const listFilesDescription = `
List the files and folders of a workspace folder (default: the root). Folders end with "/". Paths in the result are relative to the workspace root.
By default only the folder's direct entries are listed; set recursive to list everything below it. glob filters by a pattern matched against the path relative to the listed folder, with "**" for any depth: "*.go" matches the folder's own Go files, "**/*_test.go" every test file below it (a glob implies a recursive walk).
Files excluded from the workspace (.gitignore, dependency and build folders) are never listed. At most {{.Max}} entries are returned; narrow the path or the glob to see more.`

var listFilesSchema = tool.InputSchema[listFilesInput](nil)

func (*listFiles) Spec() tool.Spec {
	return tool.Spec{
		Name:        "list_files",
		Description: renderDescription(listFilesDescription, map[string]int{"Max": listMaxEntries}),
		InputSchema: listFilesSchema,
		Permission:  tool.ClassRead,
	}
}

// Run lists entries from env.Index: the indexed files under the folder and
// the folders derived from their paths, never an excluded one.
func (*listFiles) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in listFilesInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid glob %q", in.Glob)
	}
	if err := needRoot(env); err != nil {
		return tool.Result{}, err
	}
	if env.Index == nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace index is open")
	}
	if in.Path == "" {
		in.Path = "."
	}
	p, err := resolvePath(env, in.Path)
	if err != nil {
		return tool.Result{}, err
	}
	root, err := openRoot(env)
	if err != nil {
		return tool.Result{}, err
	}
	fi, err := root.Stat(osName(p.Rel))
	root.Close()
	if err != nil {
		return tool.Result{}, fsError(p.Rel, err)
	}
	if !fi.IsDir() {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "%s is a file, not a folder; use read_file to read it", p.Rel)
	}
	if p.Rel != "." && env.Index.Excluded(p.Rel, true) {
		return tool.Result{}, tool.Errorf(tool.ErrExcluded, "%s is excluded from the workspace (ignore rules or built-in excludes); its entries are not listed", p.Rel)
	}

	seen := map[string]bool{}
	var entries []string
	add := func(e string) {
		if !seen[e] {
			seen[e] = true
			entries = append(entries, e)
		}
	}
	walk := in.Recursive || in.Glob != ""
	for _, f := range env.Index.Files() {
		if ctx.Err() != nil {
			return tool.Result{}, tool.Errorf(tool.ErrCancelled, "cancelled")
		}
		sub, ok := underFolder(p.Rel, f)
		if !ok || env.Index.Excluded(f, false) {
			continue
		}
		parts := strings.Split(sub, "/")
		if !walk {
			if len(parts) == 1 {
				add(f)
			} else if d := path.Join(p.Rel, parts[0]); !env.Index.Excluded(d, true) {
				add(d + "/")
			}
			continue
		}
		// Every folder between the listed one and the file, then the file.
		for i := 1; i <= len(parts); i++ {
			relSub := strings.Join(parts[:i], "/")
			full := path.Join(p.Rel, relSub)
			isDir := i < len(parts)
			if isDir && env.Index.Excluded(full, true) {
				break
			}
			if in.Glob != "" {
				if m, _ := doublestar.Match(in.Glob, relSub); !m {
					continue
				}
			}
			if isDir {
				full += "/"
			}
			add(full)
		}
	}
	sort.Strings(entries)
	d := listFilesData{Entries: entries, Total: len(entries)}
	if len(entries) > listMaxEntries {
		d.Entries, d.Truncated = entries[:listMaxEntries], true
	}
	if d.Entries == nil {
		d.Entries = []string{}
	}

	var b strings.Builder
	for _, e := range d.Entries {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	switch {
	case len(entries) == 0 && in.Glob != "":
		fmt.Fprintf(&b, "(no entries under %s match %q)\n", p.Rel, in.Glob)
	case len(entries) == 0:
		fmt.Fprintf(&b, "(%s has no listed entries)\n", p.Rel)
	case d.Truncated:
		fmt.Fprintf(&b, "[... %d more entries not shown; narrow the path or the glob]\n", len(entries)-listMaxEntries)
	}
	return tool.Result{Content: b.String(), Data: d}, nil
}

// underFolder returns f relative to folder dir (both root-relative, "/"),
// and whether f lies under dir. dir "." holds every path.
func underFolder(dir, f string) (string, bool) {
	if dir == "." {
		return f, f != ""
	}
	sub, ok := strings.CutPrefix(f, dir+"/")
	return sub, ok && sub != ""
}
