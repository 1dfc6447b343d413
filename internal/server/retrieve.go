package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// firstRequestBudget is the token budget of the repository excerpts given
// to the agent's first request (addendum §3: about 3000-8000 tokens).
const firstRequestBudget = 6000

type retrieveParams struct {
	Query        string   `json:"query"`
	BudgetTokens *int     `json:"budgetTokens"`
	FocusPaths   []string `json:"focusPaths"`
}

// retrieveResult is context/retrieve's result.
type retrieveResult struct {
	Retrieval    retrieve.Result         `json:"retrieval"`
	Instructions []workspace.Instruction `json:"instructions"`
}

// contextRetrieve: context/retrieve {query, budgetTokens?, focusPaths?} →
// {retrieval, instructions}. -32004 without a workspace; -32602 for an
// empty query or a budget outside 1..200000.
func (s *Server) contextRetrieve(ctx context.Context, params json.RawMessage) (any, error) {
	var p retrieveParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	proj, err := s.project()
	if err != nil {
		return nil, err
	}
	q, err := retrieve.NewQuery(p.Query, p.BudgetTokens)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	q.FocusPaths = p.FocusPaths
	res, err := proj.Retrieve(ctx, q)
	if errors.Is(err, retrieve.ErrEmptyQuery) || errors.Is(err, retrieve.ErrBudget) {
		return nil, invalidParams("%v", err)
	}
	if err != nil {
		return nil, err
	}
	return retrieveResult{Retrieval: res, Instructions: proj.InstructionsFor(res.Snippets)}, nil
}
