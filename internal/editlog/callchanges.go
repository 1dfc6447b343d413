package editlog

import "unicode/utf8"

// CallChange is one file a tool call changed: its content before the
// call's first operation on it and after its last (keys redacted, each cut
// within one Budget). Before is nil for a file the call created, After nil
// for one it deleted. Binary is true for a content that is not UTF-8 text
// (both contents are then left out).
type CallChange struct {
	Path   string
	Before *string
	After  *string
	Binary bool
}

// CallChanges returns the files the committed operations of task taskID's
// call callID changed, in first-change order: what a front end shows as the
// call's diff (the Agent Client Protocol's diff content). A call with no
// operation has none; an operation whose contents were dropped (too old) is
// left out.
func (l *Log) CallChanges(taskID, callID string) ([]CallChange, error) {
	if callID == "" {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	type span struct{ before, after string }
	var order []string
	spans := map[string]*span{}
	for _, op := range l.ops {
		if !op.Committed || op.Dropped || op.TaskID != taskID || op.CallID != callID {
			continue
		}
		for _, f := range op.Files {
			sp := spans[f.Path]
			if sp == nil {
				sp = &span{before: f.BeforeHash}
				spans[f.Path] = sp
				order = append(order, f.Path)
			}
			sp.after = f.AfterHash
		}
	}
	var b Budget
	out := make([]CallChange, 0, len(order))
	for _, p := range order {
		sp := spans[p]
		c := CallChange{Path: p}
		for _, side := range []struct {
			hash string
			dst  **string
		}{{sp.before, &c.Before}, {sp.after, &c.After}} {
			if side.hash == "" {
				continue
			}
			data, err := l.content(side.hash)
			if err != nil {
				return nil, err
			}
			if !utf8.Valid(data) {
				c.Binary = true
				continue
			}
			s, _ := b.Cut(l.redact(string(data)))
			*side.dst = &s
		}
		if c.Binary {
			c.Before, c.After = nil, nil
		}
		out = append(out, c)
	}
	return out, nil
}
