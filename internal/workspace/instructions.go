package workspace

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Instruction scopes (addendum §2).
const (
	ScopeWorkspace = "workspace"
	ScopeDirectory = "directory"
	ScopeUser      = "user"
)

// MaxInstructionSize is the cut applied to each instruction's content, in
// bytes (32 KiB), on a UTF-8 boundary.
const MaxInstructionSize = 32 << 10

// maxImportDepth bounds nested @imports in CLAUDE.md (as Claude Code does).
const maxImportDepth = 5

// Instruction is one loaded instruction file. Source is its root-relative
// path ("~/.task-x/instructions.md" for the user one); Dir is the folder it
// applies to ("" for workspace and user scope).
type Instruction = protocol.Instruction

// instructionRank orders instruction files within one folder.
var instructionRank = map[string]int{
	"AGENTS.md": 0, "CLAUDE.md": 1, "CLAUDE.local.md": 2, "GEMINI.md": 3, ".github": 4,
	".cursorrules": 5, ".cursor": 6, ".clinerules": 7, ".windsurfrules": 8, ".task-x": 9,
}

// isInstructionName reports whether a folder entry may hold instructions:
// an instruction file, or a folder that holds one.
func isInstructionName(name string) bool {
	_, ok := instructionRank[name]
	return ok
}

// loadInstructions reads the user instructions and every instruction file
// among cands (root-relative entries noted by the walk). Order: user, then
// workspace, then directory scope from shallow to deep.
func (w *Workspace) loadInstructions(cands []string) []Instruction {
	type item struct {
		in   Instruction
		rank int
	}
	var items []item
	add := func(rel string, rank int) {
		in, ok := w.readInstruction(rel)
		if !ok {
			return
		}
		items = append(items, item{in, rank})
	}
	for _, rel := range cands {
		name := path.Base(rel)
		rank := instructionRank[name]
		switch name {
		case ".github":
			add(rel+"/copilot-instructions.md", rank)
		case ".task-x":
			add(rel+"/instructions.md", rank)
		case ".cursor":
			for _, f := range w.listFiles(rel+"/rules", ".mdc") {
				add(f, rank)
			}
		case ".clinerules":
			if fi, err := os.Stat(w.abs(rel)); err == nil && fi.IsDir() {
				for _, f := range w.listFiles(rel, "") {
					add(f, rank)
				}
			} else {
				add(rel, rank)
			}
		default:
			add(rel, rank)
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		da, db := depthOf(a.in.Dir), depthOf(b.in.Dir)
		if da != db {
			return da < db
		}
		if a.in.Dir != b.in.Dir {
			return a.in.Dir < b.in.Dir
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.in.Source < b.in.Source
	})
	out := []Instruction{}
	if w.opts.Home != "" && w.opts.Home != "-" {
		abs := filepath.Join(w.opts.Home, ".task-x", "instructions.md")
		if data, err := readSmall(abs); err == nil {
			content, cut := cutUTF8(string(data), MaxInstructionSize)
			out = append(out, Instruction{Source: "~/.task-x/instructions.md", Scope: ScopeUser, Content: content, Truncated: cut})
		}
	}
	for _, it := range items {
		out = append(out, it.in)
	}
	return out
}

func depthOf(dir string) int {
	if dir == "" {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// abs turns a root-relative path into an absolute one.
func (w *Workspace) abs(rel string) string {
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// listFiles returns the sorted root-relative paths of the regular files in
// the folder rel whose names end with ext ("" for all, hidden files aside).
func (w *Workspace) listFiles(rel, ext string) []string {
	entries, err := os.ReadDir(w.abs(rel))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		out = append(out, rel+"/"+e.Name())
	}
	return out
}

// instructionOwner returns the folder an instruction file at rel applies to:
// the folder holding it, or for files inside .github, .cursor/rules,
// .clinerules/ and .task-x, the folder holding those.
func instructionOwner(rel string) string {
	dir := path.Dir(rel)
	for {
		base := path.Base(dir)
		if base == ".github" || base == ".cursor" || base == "rules" && path.Base(path.Dir(dir)) == ".cursor" ||
			base == ".clinerules" || base == ".task-x" {
			dir = path.Dir(dir)
			continue
		}
		break
	}
	if dir == "." {
		return ""
	}
	return dir
}

// readInstruction reads one instruction file, expanding @imports in
// CLAUDE.md and CLAUDE.local.md, and cuts it at MaxInstructionSize.
func (w *Workspace) readInstruction(rel string) (Instruction, bool) {
	abs := w.abs(rel)
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return Instruction{}, false
	}
	if target, err := filepath.EvalSymlinks(abs); err != nil || !within(w.root, target) {
		return Instruction{}, false
	}
	data, err := readSmall(abs)
	if err != nil {
		return Instruction{}, false
	}
	content := string(data)
	if name := path.Base(rel); name == "CLAUDE.md" || name == "CLAUDE.local.md" {
		content = w.expandImports(rel, content, map[string]bool{rel: true}, 0)
	}
	content, cut := cutUTF8(content, MaxInstructionSize)
	in := Instruction{Source: rel, Scope: ScopeWorkspace, Content: content, Truncated: cut}
	if dir := instructionOwner(rel); dir != "" {
		in.Scope, in.Dir = ScopeDirectory, dir
	}
	return in, true
}

// expandImports replaces each line that is only "@relative/path" (outside
// code fences) with the content of that file, relative to the importing
// file's folder. A file is imported once: a second import of it, an import
// cycle, a path outside the root or a missing file leaves the line as it is.
// Imports nest up to maxImportDepth.
func (w *Workspace) expandImports(rel, content string, seen map[string]bool, depth int) string {
	if depth >= maxImportDepth || !strings.Contains(content, "@") {
		return content
	}
	lines := strings.SplitAfter(content, "\n")
	var b strings.Builder
	inFence := false
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		if inFence || len(t) < 2 || t[0] != '@' || strings.ContainsAny(t, " \t") {
			b.WriteString(line)
			continue
		}
		target := t[1:]
		if strings.HasPrefix(target, "~") || path.IsAbs(target) || filepath.IsAbs(target) {
			b.WriteString(line)
			continue
		}
		trel := path.Clean(path.Join(path.Dir(rel), filepath.ToSlash(target)))
		if trel == ".." || strings.HasPrefix(trel, "../") || seen[trel] {
			b.WriteString(line)
			continue
		}
		abs := w.abs(trel)
		resolved, err := filepath.EvalSymlinks(abs)
		if err != nil || !within(w.root, resolved) {
			b.WriteString(line)
			continue
		}
		data, err := readSmall(abs)
		if err != nil {
			b.WriteString(line)
			continue
		}
		seen[trel] = true
		text := w.expandImports(trel, string(data), seen, depth+1)
		b.WriteString(strings.TrimSuffix(text, "\n"))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// cutUTF8 cuts s to at most max bytes without splitting a UTF-8 sequence.
func cutUTF8(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
