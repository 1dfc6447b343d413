package session

import (
	"os"
	"strings"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/skills"
)

// loadSkills reads the skills of the open workspace (if any) and the
// user's home (Options.Home, else $HOME), fresh on every call.
func (s *Session) loadSkills() *skills.Set {
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

// Skills is skills/list: every skill of the workspace and the user's home
// and the files that failed to load. Works without a workspace.
func (s *Session) Skills() protocol.SkillsListResult {
	set := s.loadSkills()
	out := protocol.SkillsListResult{Errors: set.Errors, Skills: make([]protocol.Skill, len(set.Skills))}
	for i, sk := range set.Skills {
		out.Skills[i] = sk.Skill
	}
	if out.Errors == nil {
		out.Errors = []protocol.SkillError{}
	}
	return out
}

// ResolveSkills is skills/resolve: the skills active for prompt and the
// editor's paths; an empty prompt is invalid params.
func (s *Session) ResolveSkills(prompt string, paths []string) (protocol.SkillsResolveResult, error) {
	if strings.TrimSpace(prompt) == "" {
		return protocol.SkillsResolveResult{}, Invalid("prompt is required")
	}
	return protocol.SkillsResolveResult{Active: s.loadSkills().Resolve(prompt, paths)}, nil
}
