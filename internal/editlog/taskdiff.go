package editlog

import (
	"strings"
)

// TaskDiffLimit is the most bytes of a TaskDiff; a longer one is cut with
// CutText's marker.
const TaskDiffLimit = 4 << 20

// TaskDiff is the whole unified diff of what task taskID changed and is not
// settled yet, exactly as edits/pending shows it: for every Pending file
// that one of the task's operations touched, in Pending's order, the diff
// (Diff) from its Original to its Current (keys redacted and contents
// bounded as Pending bounds them), and the paths. A file another task
// changed too shows the net change of both. cut reports that a content
// was cut (Pending's Truncated) or the diff was longer than TaskDiffLimit.
func (l *Log) TaskDiff(taskID string) (diff string, paths []string, cut bool, err error) {
	mine := map[string]bool{}
	for _, id := range l.TaskOperations(taskID) {
		mine[id] = true
	}
	paths = []string{}
	if len(mine) == 0 {
		return "", paths, false, nil
	}
	files, err := l.pendingEntries(false)
	if err != nil {
		return "", nil, false, err
	}
	var b strings.Builder
	for _, f := range files {
		touched := false
		for _, id := range f.Operations {
			touched = touched || mine[id]
		}
		if !touched {
			continue
		}
		var before, after string
		if f.Original != nil {
			before = *f.Original
		}
		if f.Current != nil {
			after = *f.Current
		}
		text, _, _ := Diff(f.Path, before, after, f.Original != nil, f.Current != nil)
		if text == "" {
			continue
		}
		b.WriteString(text)
		paths = append(paths, f.Path)
		cut = cut || f.Truncated
	}
	diff, over := CutText(b.String(), TaskDiffLimit)
	return diff, paths, cut || over, nil
}
