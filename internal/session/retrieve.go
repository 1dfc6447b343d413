package session

import (
	"context"
	"errors"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/retrieve"
)

// Retrieve is context/retrieve: excerpts of the open workspace for query
// within budgetTokens (nil: the default), focusPaths boosted, and the
// instructions that apply to them; invalid params for an empty query or a
// budget outside 1..200000.
func (s *Session) Retrieve(ctx context.Context, query string, budgetTokens *int, focusPaths []string) (protocol.RetrieveResult, error) {
	proj, err := s.project()
	if err != nil {
		return protocol.RetrieveResult{}, err
	}
	q, err := retrieve.NewQuery(query, budgetTokens)
	if err != nil {
		return protocol.RetrieveResult{}, Invalid("%v", err)
	}
	q.FocusPaths = focusPaths
	res, err := proj.Retrieve(ctx, q)
	if errors.Is(err, retrieve.ErrEmptyQuery) || errors.Is(err, retrieve.ErrBudget) {
		return protocol.RetrieveResult{}, Invalid("%v", err)
	}
	if err != nil {
		return protocol.RetrieveResult{}, err
	}
	return protocol.RetrieveResult{Retrieval: res, Instructions: proj.InstructionsFor(res.Snippets)}, nil
}
