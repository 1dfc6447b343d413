package session

import (
	"errors"
	"strings"

	"github.com/task-x/task-x-runtime/internal/graph"
)

// GraphProject is graph/project: the project graph at a level, around a
// focus (a client path); invalid params for bad options or an unknown
// focus.
func (s *Session) GraphProject(p graph.ProjectOptions) (graph.ProjectResult, error) {
	proj, err := s.project()
	if err != nil {
		return graph.ProjectResult{}, err
	}
	if p.Focus != "" {
		if p.Focus, err = clientRel(proj, "focus", p.Focus); err != nil {
			return graph.ProjectResult{}, err
		}
	}
	res, err := proj.Graph().Project(p)
	if errors.Is(err, graph.ErrInvalid) {
		return graph.ProjectResult{}, Invalid("%v", err)
	}
	if err != nil {
		return graph.ProjectResult{}, err
	}
	return res, nil
}

// GraphFile is graph/file: a file's dependencies, users and import cycle;
// invalid params when the path is missing or not an indexed file.
func (s *Session) GraphFile(path string) (graph.FileDeps, error) {
	proj, err := s.project()
	if err != nil {
		return graph.FileDeps{}, err
	}
	if strings.TrimSpace(path) == "" {
		return graph.FileDeps{}, Invalid("path is required")
	}
	rel, err := clientRel(proj, "path", path)
	if err != nil {
		return graph.FileDeps{}, err
	}
	res, err := proj.Graph().File(rel)
	if errors.Is(err, graph.ErrNotIndexed) {
		return graph.FileDeps{}, Invalid("%s is not an indexed file", rel)
	}
	if err != nil {
		return graph.FileDeps{}, err
	}
	return res, nil
}
