package session

import (
	"os"
	"strings"

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
func (s *Session) Skills() ([]*skills.Skill, []skills.LoadError) {
	set := s.loadSkills()
	list := set.Skills
	if list == nil {
		list = []*skills.Skill{}
	}
	errs := set.Errors
	if errs == nil {
		errs = []skills.LoadError{}
	}
	return list, errs
}

// ResolveSkills is skills/resolve: the skills active for prompt and the
// editor's paths; an empty prompt is invalid params.
func (s *Session) ResolveSkills(prompt string, paths []string) ([]skills.Active, error) {
	if strings.TrimSpace(prompt) == "" {
		return nil, Invalid("prompt is required")
	}
	return s.loadSkills().Resolve(prompt, paths), nil
}
