package editlog

import "slices"

// state is the log itself: the operations, oldest first, and the intents
// (reverts and undos) that have not finished writing.
type state struct {
	ops     []*Operation
	intents []*intent
}

func (s *state) find(id string) *Operation {
	for _, op := range s.ops {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// apply makes the changes of one record (journal.go), in the order of its
// fields.
func (s *state) apply(r *record) {
	if r.Op != nil {
		if old := s.find(r.Op.ID); old != nil {
			*old = *mergeOp(old, r.Op)
		} else {
			c := copyOp(r.Op)
			s.ops = append(s.ops, &c)
		}
	}
	if r.Commit != "" {
		if op := s.find(r.Commit); op != nil {
			op.Committed = true
		}
	}
	if r.Abort != "" {
		s.ops = slices.DeleteFunc(s.ops, func(op *Operation) bool { return op.ID == r.Abort && !op.Committed })
	}
	if r.Intent != nil && !slices.ContainsFunc(s.intents, func(in *intent) bool { return in.ID == r.Intent.ID }) {
		c := *r.Intent
		c.Files = slices.Clone(r.Intent.Files)
		s.intents = append(s.intents, &c)
	}
	for _, ref := range r.Settle {
		if op := s.find(ref.Op); op != nil {
			for i := range op.Files {
				if slices.Contains(ref.Paths, op.Files[i].Path) {
					op.Files[i].Settled = true
				}
			}
		}
	}
	for _, id := range r.Undone {
		if op := s.find(id); op != nil {
			op.Undone = true
		}
	}
	for _, id := range r.Drop {
		if op := s.find(id); op != nil {
			op.Dropped, op.Diff = true, ""
		}
	}
	if r.Done != "" {
		s.intents = slices.DeleteFunc(s.intents, func(in *intent) bool { return in.ID == r.Done })
	}
}

// settleRefs groups path edits by operation, in the order given.
func settleRefs(path string, ops []string) []settleRef {
	out := make([]settleRef, len(ops))
	for i, id := range ops {
		out[i] = settleRef{Op: id, Paths: []string{path}}
	}
	return out
}
