package session

import (
	"errors"
	"strings"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// GraphProject is graph/project: the project graph at a level, around a
// focus (a client path); invalid params for bad options or an unknown
// focus.
func (s *Session) GraphProject(p protocol.GraphProjectParams) (protocol.GraphProjectResult, error) {
	proj, err := s.project()
	if err != nil {
		return protocol.GraphProjectResult{}, err
	}
	if p.Focus != "" {
		if p.Focus, err = clientRel(proj, "focus", p.Focus); err != nil {
			return protocol.GraphProjectResult{}, err
		}
	}
	res, err := proj.Graph().Project(p)
	if errors.Is(err, graph.ErrInvalid) {
		return protocol.GraphProjectResult{}, Invalid("%v", err)
	}
	if err != nil {
		return protocol.GraphProjectResult{}, err
	}
	return res, nil
}

// GraphFile is graph/file: a file's dependencies, users and import cycle;
// invalid params when the path is missing or not an indexed file.
func (s *Session) GraphFile(path string) (protocol.GraphFileResult, error) {
	proj, err := s.project()
	if err != nil {
		return protocol.GraphFileResult{}, err
	}
	if strings.TrimSpace(path) == "" {
		return protocol.GraphFileResult{}, Invalid("path is required")
	}
	rel, err := clientRel(proj, "path", path)
	if err != nil {
		return protocol.GraphFileResult{}, err
	}
	res, err := proj.Graph().File(rel)
	if errors.Is(err, graph.ErrNotIndexed) {
		return protocol.GraphFileResult{}, Invalid("%s is not an indexed file", rel)
	}
	if err != nil {
		return protocol.GraphFileResult{}, err
	}
	return res, nil
}
