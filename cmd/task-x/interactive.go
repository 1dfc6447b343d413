package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

const sessionHelp = `Type a prompt and Enter (Ctrl-J or Alt-Enter for a new line). Esc or Ctrl-C interrupts the
running turn; Ctrl-C twice at the prompt (or Ctrl-D) leaves. Follow-ups continue the same task.
Ctrl-O expands or collapses the last command's output; PgUp/PgDn scroll the transcript, Home/End
jump to its start/end (Ctrl-Home/Ctrl-End when the prompt holds text).
Up/Ctrl-P and Down/Ctrl-N recall earlier prompts of this folder; Esc Esc picks a message of
this session to edit and send again. @path mentions a file or folder (its content goes with
the prompt); Tab completes slash commands, @paths and paths. !command runs a shell command in
the sandbox; its output goes with your next prompt.
  /undo          undo this task's last edit operation (edits/undo)
  /diff          the agent's pending changes, as a diff (edits/pending)
  /keep          keep every pending change (edits/keep)
  /revert        revert every pending change, after you confirm (edits/revert)
  /tasks         the saved tasks
  /resume        pick a task of this folder to continue (its transcript is shown)
  /mode [MODE]   show or set the chat mode: agent, ask, plan or team
  /model [ID]    pick or set the model (checked against the provider's list)
  /provider [KIND [URL]]  show or set the provider kind and base URL
  /new           start a new task
  /clear         clear the screen and start a new task
  /compact       summarize this task and go on in a new task with the summary
  /init          have the agent write AGENTS.md from the project summary
  /SKILL [ARGS]  a skill of .task-x/skills, .claude/skills or ~/.task-x/skills (Tab lists them)
  /help          this text
  /exit          leave`

// slashCommand runs one /command, writing what it shows to w; true means
// leave.
func slashCommand(r *runner, line string, w io.Writer, st styles, width int) bool {
	fields := strings.Fields(line)
	ctx := context.Background()
	arg := ""
	if len(fields) > 1 {
		arg = fields[1]
	}
	fail := func(err error) { fmt.Fprintln(w, st.bad.Render("error:"), friendlyIn(err, sessionWords)) }
	switch fields[0] {
	case "/help", "/?":
		fmt.Fprintln(w, sessionHelp)
	case "/exit", "/quit":
		return true
	case "/new":
		r.undoSkipped = nil
		r.taskID = ""
		r.p.mu.Lock()
		r.p.task = ""
		r.p.mu.Unlock()
		fmt.Fprintln(w, "the next prompt starts a new task")
	case "/mode":
		switch arg {
		case "":
			fmt.Fprintf(w, "mode: %s\n", r.prov.Mode)
		case "agent", "ask", "plan", "team":
			r.prov.Mode = arg
			fmt.Fprintf(w, "mode: %s\n", arg)
		default:
			fmt.Fprintln(w, "the mode is "+chatModes)
		}
	case "/model":
		fmt.Fprintf(w, "model: %s/%s\n", r.prov.Provider, r.prov.Model)
	case "/tasks":
		tasks, err := listTasks(r.s)
		if err != nil {
			fail(err)
			break
		}
		printTasks(w, st, tasks, width)
	case "/undo":
		// This task's operations, newest first; one that could not be
		// undone (its files changed since) is skipped from then on.
		var list protocol.EditsListResult
		if r.taskID == "" {
			fmt.Fprintln(w, "nothing to undo: this session has no task yet (task-x resume continues an earlier one)")
			break
		}
		if err := r.s.call(ctx, "edits/list", map[string]any{}, &list); err != nil {
			fail(err)
			break
		}
		found := false
		for i := len(list.Operations) - 1; i >= 0; i-- {
			op := list.Operations[i]
			if op.Undone || !op.Undoable || op.TaskID != r.taskID || r.undoSkipped[op.ID] {
				continue
			}
			found = true
			var res protocol.UndoResult
			if err := r.s.call(ctx, protocol.MethodEditsUndo, protocol.UndoParams{Operation: op.ID}, &res); err != nil {
				fail(err)
				break
			}
			if len(res.Restored) > 0 {
				fmt.Fprintf(w, "undid %s: restored %s\n", op.Tool, strings.Join(res.Restored, ", "))
			}
			if len(res.Conflicts) > 0 {
				if r.undoSkipped == nil {
					r.undoSkipped = map[string]bool{}
				}
				r.undoSkipped[op.ID] = true
				verb := "were"
				if len(res.Conflicts) == 1 {
					verb = "was"
				}
				what := "could not undo " + op.Tool
				if len(res.Restored) > 0 {
					what = "and"
				}
				fmt.Fprintf(w, "%s %s: %s changed since and %s left as it is; /undo again goes to the edit before\n",
					st.warn.Render("conflict:"), what, strings.Join(res.Conflicts, ", "), verb)
			}
			break
		}
		if !found {
			fmt.Fprintln(w, "nothing left to undo in this task")
		}
	case "/diff":
		var pend protocol.EditsPendingResult
		if err := r.s.call(ctx, "edits/pending", map[string]any{}, &pend); err != nil {
			fail(err)
			break
		}
		if pendingDiffs(w, st, pend.Files) == 0 {
			fmt.Fprintln(w, "no pending changes: the agent's edits were kept, reverted or undone, or it made none")
		}
	case "/keep":
		var res json.RawMessage
		if err := r.s.call(ctx, "edits/keep", map[string]any{}, &res); err != nil {
			fail(err)
			break
		}
		fmt.Fprintln(w, "kept the pending changes")
	case "/revert":
		// The session asks first (revertAsk); this reverts what it listed.
		revertFiles(r, fields[1:], w, st)
	default:
		fmt.Fprintf(w, "unknown command %s; /help lists them\n", fields[0])
	}
	return false
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// pendingPaths are the files with pending changes that differ from their
// original.
func pendingPaths(r *runner) ([]string, error) {
	var pend protocol.EditsPendingResult
	if err := r.s.call(context.Background(), "edits/pending", map[string]any{}, &pend); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range pend.Files {
		if strings.TrimSpace(fileDiff(f.Path, f.Original, f.Current)) != "" {
			paths = append(paths, f.Path)
		}
	}
	return paths, nil
}

// revertFiles reverts the pending changes of paths (edits/revert).
func revertFiles(r *runner, paths []string, w io.Writer, st styles) {
	var res protocol.RevertResult
	if err := r.s.call(context.Background(), "edits/revert", protocol.PathsParams{Paths: paths}, &res); err != nil {
		fmt.Fprintln(w, st.bad.Render("error:"), friendlyIn(err, sessionWords))
		return
	}
	if len(res.Reverted) > 0 {
		fmt.Fprintf(w, "reverted %s: %s\n", plural(len(res.Reverted), "file"), strings.Join(res.Reverted, ", "))
	} else if len(res.Conflicts) == 0 {
		fmt.Fprintln(w, "nothing to revert: no pending changes")
	}
	if len(res.Conflicts) > 0 {
		fmt.Fprintf(w, "%s %s changed since and left as it is: %s\n", st.warn.Render("conflict:"), plural(len(res.Conflicts), "file"), strings.Join(res.Conflicts, ", "))
	}
}

// fileDiff is the unified diff of one pending file (nil: absent).
func fileDiff(path string, original, current *string) string {
	a, b := "", ""
	from, to := "a/"+path, "b/"+path
	if original != nil {
		a = *original
	} else {
		from = "/dev/null" // created, as the approval's preview says
	}
	if current != nil {
		b = *current
	} else {
		to = "/dev/null" // deleted
	}
	return udiff.Unified(from, to, a, b)
}

// pendingDiffs writes /diff's diff of each pending file and returns how
// many it wrote (a file back as it was has none). A file the runtime cut
// to keep its reply under the message cap, or that changed after the
// agent's edit, says so under its diff (QA: a cut file's diff showed the
// cut as lines removed, as if the agent had removed them).
func pendingDiffs(w io.Writer, st styles, files []protocol.PendingFile) int {
	shown := 0
	for _, f := range files {
		d := fileDiff(f.Path, f.Original, f.Current)
		if strings.TrimSpace(d) == "" {
			continue // back as it was (an edit undone)
		}
		shown++
		fmt.Fprint(w, renderDiff(st, d, 0))
		if f.Truncated {
			fmt.Fprintf(w, "    %s\n", st.warn.Render(fmt.Sprintf("(%s was cut to fit the reply: this diff shows part of it; the agent's edits are +%d -%d lines)", f.Path, f.Added, f.Removed)))
		}
		if f.ChangedOutside {
			fmt.Fprintf(w, "    %s\n", st.warn.Render(fmt.Sprintf("(%s changed outside the agent after its edit)", f.Path)))
		}
	}
	return shown
}
