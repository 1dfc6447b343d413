package server

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/task-x/task-x-runtime/internal/skills"
)

// loadSkills reads the skills of the open workspace (if any) and the
// user's home (Options.Home, else $HOME), fresh on every call.
func (s *Server) loadSkills() *skills.Set {
	root := ""
	if proj, err := s.project(); err == nil {
		root = proj.Root()
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
