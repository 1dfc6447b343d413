package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
)

type applyPatch struct{}

type applyPatchInput struct {
	Patch *string `json:"patch" jsonschema:"A unified diff (--- a/path, +++ b/path, @@ hunks) over one or more files."`
}

const applyPatchDescription = `
Apply a unified diff to one or more files at once, all or nothing: if any hunk does not apply, nothing is written and the error names the file and the hunk.
Each file starts with "--- a/path" and "+++ b/path" lines (paths relative to the workspace root); use "--- /dev/null" to create a file and "+++ /dev/null" to delete one. Hunks start with "@@ -start,count +start,count @@" followed by context lines (" "), removed lines ("-") and added lines ("+"); give about 3 lines of context. Hunks are found near their line numbers even when the numbers are a little off, but their context and removed lines must match the file. CRLF files keep CRLF. Renames are not supported: use move_path. Every changed file you read must not have changed on disk since; files under .git/ cannot be changed. The patch is at most {{.MaxMiB}} MiB.`

var applyPatchSchema = tool.InputSchema[applyPatchInput](tool.Constraints{
	"patch": {MinLength: tool.N(1)},
})

func (*applyPatch) Spec() tool.Spec {
	return tool.Spec{
		Name:        "apply_patch",
		Description: renderDescription(applyPatchDescription, map[string]int{"MaxMiB": maxFileBytes >> 20}),
		InputSchema: applyPatchSchema,
		Permission:  tool.ClassEdit,
	}
}

// patchData is the structured result of apply_patch.
type patchData struct {
	Files     []tool.FileChange `json:"files"`
	Diff      string            `json:"diff"`
	Operation string            `json:"operation,omitempty"`
}

// patchTarget is the running state of one file while the patch applies.
type patchTarget struct {
	abs      string
	existed  bool
	before   []byte
	content  string
	exists   bool
	mode     fs.FileMode
	sections int
	enc      textEncoding // how content maps to the file's bytes (encoding.go)
}

// Run applies the patch: Plan, then the plan's Apply, which writes all
// files in one edit-log operation.
func (t *applyPatch) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	pl, err := t.Plan(ctx, env, input)
	if err != nil {
		return tool.Result{}, err
	}
	return pl.Apply(ctx)
}

// Plan parses the patch and applies every hunk in memory; its preview is
// the diff of the files as they are to what they become (not the patch as
// given: its line numbers may be off and its context short). Failures:
// invalidInput (a malformed patch, a hunk that does not apply, overlapping
// hunks, creating a file that exists, a patch that changes nothing, a
// character a file's encoding lacks), notFound (changing a missing file),
// outsideWorkspace, denied (.git/), staleEdit.
func (t *applyPatch) Plan(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Plan, error) {
	var in applyPatchInput
	if err := decodeInput(input, &in); err != nil {
		return nil, err
	}
	if in.Patch == nil || strings.TrimSpace(*in.Patch) == "" {
		return nil, tool.Errorf(tool.ErrInvalidInput, "patch is required")
	}
	if len(*in.Patch) > maxFileBytes {
		return nil, tool.Errorf(tool.ErrInvalidInput, "patch is over the %d MiB limit", maxFileBytes>>20)
	}
	if err := needRoot(env); err != nil {
		return nil, err
	}
	sections, err := parsePatch(*in.Patch)
	if err != nil {
		return nil, tool.Errorf(tool.ErrInvalidInput, "the patch cannot be read: %v. Nothing was written.", err)
	}
	root, err := openRoot(env)
	if err != nil {
		return nil, err
	}
	defer root.Close()

	targets := map[string]*patchTarget{}
	var order []string
	for _, sec := range sections {
		p, err := resolvePath(env, sec.path())
		if err != nil {
			return nil, err
		}
		if err := checkEditable(p); err != nil {
			return nil, err
		}
		tg := targets[p.Rel]
		if tg == nil {
			tg = &patchTarget{abs: p.Abs}
			fi, serr := root.Stat(osName(p.Rel))
			switch {
			case errors.Is(serr, fs.ErrNotExist):
			case serr != nil:
				return nil, fsError(p.Rel, serr)
			default:
				data, rerr := readRegular(root, p.Rel)
				if rerr != nil {
					return nil, rerr
				}
				if err := checkStale(env, p, data); err != nil {
					return nil, err
				}
				tg.enc = detectEncoding(data)
				tg.existed, tg.exists, tg.before, tg.content, tg.mode = true, true, data, tg.enc.decode(data), fi.Mode().Perm()
			}
			targets[p.Rel] = tg
			order = append(order, p.Rel)
		}
		tg.sections++
		switch {
		case sec.oldPath == "" && tg.exists:
			return nil, tool.Errorf(tool.ErrInvalidInput, "the patch creates %s (--- /dev/null) but it already exists; patch it with --- a/%s instead. Nothing was written.", p.Rel, p.Rel)
		case sec.oldPath != "" && !tg.exists:
			return nil, tool.Errorf(tool.ErrNotFound, "the patch changes %s but it does not exist; create it with --- /dev/null. Nothing was written.", p.Rel)
		}
		out, err := applyHunks(p.Rel, tg.content, sec.hunks)
		if err != nil {
			return nil, tool.Errorf(tool.ErrInvalidInput, "%v. Nothing was written; read the file again and regenerate the patch.", err)
		}
		if sec.newPath == "" {
			if out != "" && len(sec.hunks) > 0 {
				return nil, tool.Errorf(tool.ErrInvalidInput,
					"the patch deletes %s (+++ /dev/null) but its removed lines do not cover the whole file. Nothing was written.", p.Rel)
			}
			tg.content, tg.exists = "", false
			continue
		}
		tg.content, tg.exists = out, true
	}

	var files []tool.FileEdit
	var changes []tool.FileChange
	var diff strings.Builder
	for _, rel := range order {
		tg := targets[rel]
		after, err := tg.enc.encode(tg.content)
		if err != nil {
			return nil, tool.Errorf(tool.ErrInvalidInput, "%s is in %s and the patch adds %v. Nothing was written.", rel, tg.enc.name, err)
		}
		if tg.existed == tg.exists && string(tg.before) == string(after) {
			continue
		}
		fe := tool.FileEdit{Path: rel, Existed: tg.existed, Before: tg.before, After: after, Delete: !tg.exists, Mode: tg.mode}
		files = append(files, fe)
		kind := "modified"
		switch {
		case !tg.existed:
			kind = "created"
		case !tg.exists:
			kind = "deleted"
		}
		df := diffFiles(rel, tg.enc.decode(tg.before), tg.content, tg.existed, tg.exists)
		diff.WriteString(df.Text)
		changes = append(changes, tool.FileChange{Path: rel, Kind: protocol.FileChangeKind(kind), Added: df.Added, Removed: df.Removed})
	}
	if len(files) == 0 {
		return nil, tool.Errorf(tool.ErrInvalidInput, "the patch changes nothing")
	}
	// The placeholder guard over the whole patch: a rename carries its
	// content (and placeholders) from the old path to the new one.
	var before, after []byte
	for _, f := range files {
		before, after = append(before, f.Before...), append(after, f.After...)
	}
	if err := checkPlaceholder(fsx.Resolved{Rel: files[0].Path}, before, after); err != nil {
		return nil, err
	}
	text, cut := truncateRunes(diff.String(), maxDiffBytes)
	if cut {
		text += "\n[... diff truncated ...]\n"
	}
	apply := func(ctx context.Context) (tool.Result, error) {
		if ctx.Err() != nil {
			return tool.Result{}, tool.Errorf(tool.ErrCancelled, "cancelled before writing")
		}
		// The edit log (or the throwaway one) checks that every file still
		// holds what the plan read.
		opID, err := applyEdits(ctx, env, "apply_patch", files)
		if err != nil {
			return tool.Result{}, err
		}
		recordWrites(env, func(rel string) string { return targets[rel].abs }, files)
		var msg strings.Builder
		fmt.Fprintf(&msg, "Applied the patch to %s:", plural(len(changes), "file"))
		for _, c := range changes {
			fmt.Fprintf(&msg, "\n%s %s (+%d -%d)", c.Kind, c.Path, c.Added, c.Removed)
		}
		return tool.Result{Content: msg.String(), Data: patchData{Files: changes, Diff: text, Operation: opID}, Changes: changes, Operation: opID}, nil
	}
	return &tool.Plan{Preview: text, Apply: apply}, nil
}
