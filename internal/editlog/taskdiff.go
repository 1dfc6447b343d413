package editlog

import (
	"fmt"
	"os"
	"strings"
)

// TaskDiffLimit is the most bytes of a TaskDiff; a longer one is cut with
// CutText's marker.
const TaskDiffLimit = 4 << 20

// TaskDiff is the whole unified diff of what task taskID changed and is not
// settled yet, as edits/pending shows it: for every pending file that one
// of the task's operations touched, in Pending's order, the diff from the
// file's content before its first unsettled operation to the file on disk
// now (keys redacted, as in Pending), and the paths. A file another task
// changed too shows the net change of both. cut reports that the diff
// was longer than TaskDiffLimit and was cut.
func (l *Log) TaskDiff(taskID string) (diff string, paths []string, cut bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	mine := map[string]bool{}
	for _, op := range l.ops {
		if op.TaskID == taskID && op.Committed {
			mine[op.ID] = true
		}
	}
	files := l.pending()
	if len(mine) == 0 || len(files) == 0 {
		return "", []string{}, false, nil
	}
	root, err := os.OpenRoot(l.root)
	if err != nil {
		return "", nil, false, fmt.Errorf("editlog: open root: %w", err)
	}
	defer root.Close()
	var b strings.Builder
	paths = []string{}
	for _, p := range files {
		touched := false
		for _, id := range p.opIDs {
			touched = touched || mine[id]
		}
		if !touched {
			continue
		}
		disk, ok, rerr := readDisk(root, p.path)
		hasAfter := rerr == nil && ok
		original, err := l.content(p.first.BeforeHash)
		if err != nil {
			return "", nil, false, fmt.Errorf("editlog: the original content of %s: %w", p.path, err)
		}
		var before, after string
		if p.first.BeforeHash != "" {
			before = l.redact(string(original))
		}
		if hasAfter {
			after = l.redact(string(disk))
		}
		text, _, _ := Diff(p.path, before, after, p.first.BeforeHash != "", hasAfter)
		if text == "" {
			continue
		}
		b.WriteString(text)
		paths = append(paths, p.path)
	}
	diff, cut = CutText(b.String(), TaskDiffLimit)
	return diff, paths, cut, nil
}
