package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/skills"
)

// loadSkills reads the skills of the open workspace (if any) and the
// user's home (Options.Home, else $HOME), fresh on every call.
func (s *Server) loadSkills() *skills.Set {
	root := ""
	if ws, err := s.workspace(); err == nil {
		root = ws.Root()
	}
	home := s.opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return skills.Load(root, home)
}

// skillsList: skills/list → {skills: [{name, description, source, path,
// triggers, paths, params}], errors: [{path, message}]}. Works without a
// workspace (user skills only).
func (s *Server) skillsList(ctx context.Context, params json.RawMessage) (any, error) {
	set := s.loadSkills()
	list := set.Skills
	if list == nil {
		list = []*skills.Skill{}
	}
	errs := set.Errors
	if errs == nil {
		errs = []skills.LoadError{}
	}
	return map[string]any{"skills": list, "errors": errs}, nil
}

type resolveSkillsParams struct {
	Prompt string   `json:"prompt"`
	Paths  []string `json:"paths"`
}

// skillsResolve: skills/resolve {prompt, paths?} → {active: [{name, reason,
// source, text}]}. An empty prompt is -32602.
func (s *Server) skillsResolve(ctx context.Context, params json.RawMessage) (any, error) {
	var p resolveSkillsParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, invalidParams("prompt is required")
	}
	return map[string]any{"active": s.loadSkills().Resolve(p.Prompt, p.Paths)}, nil
}

// activeSkills is the skills block for an agent task: the skills resolved
// for its prompt and the editor's files (active file, open files,
// mentions, selection).
func (s *Server) activeSkills(prompt string, paths []string) string {
	return skills.Block(s.loadSkills().Resolve(prompt, paths))
}

// editorPaths lists the editor's files (root-relative, "/") for skill path
// patterns: the active file, the selection's file, open files, mentions.
func editorPaths(root string, e *editorContext) []string {
	if e == nil {
		return nil
	}
	all := append([]string{e.ActiveFile}, e.OpenFiles...)
	if e.Selection != nil {
		all = append(all, e.Selection.Path)
	}
	all = append(all, e.Mentions...)
	var out []string
	for _, p := range all {
		if p == "" {
			continue
		}
		if rel, err := filepath.Rel(root, p); err == nil && filepath.IsAbs(p) && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		out = append(out, filepath.ToSlash(p))
	}
	return out
}
