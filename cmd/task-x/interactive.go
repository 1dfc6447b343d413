package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
)

const sessionHelp = `Type a prompt and Enter. Esc or Ctrl-C interrupts the running turn; Ctrl-C twice at the
prompt (or Ctrl-D) leaves. Follow-up prompts continue the same task.
  /undo          undo the agent's last edit operation (edits/undo)
  /diff          the agent's pending changes, as a diff (edits/pending)
  /keep          keep every pending change (edits/keep)
  /revert        revert every pending change (edits/revert)
  /tasks         the saved tasks
  /mode [MODE]   show or set the chat mode: agent, ask or plan
  /model [ID]    show or set the model
  /new           start a new task
  /output        the whole output of the last command
  /help          this text
  /exit          leave
`

// interactiveSession reads prompts on the terminal until the user leaves;
// it returns the exit code (0, or 130 after Ctrl-C twice at the prompt).
func interactiveSession(r *runner, kb *keyboard, ans *answers) int {
	p := r.p
	fmt.Fprintf(p.ew, "%s %s · %s/%s · %s mode · /help for commands\n", p.st.prompt.Render("task-x"), r.s.root, r.prov.Provider, r.prov.Model, r.prov.Mode)
	interrupts := 0
	for {
		line, res := readLine(p.ew, p.st.prompt.Render("› "), kb.next)
		switch res {
		case lineEOF:
			return 0
		case lineInterrupt:
			if strings.TrimSpace(line) != "" {
				interrupts = 0
				continue
			}
			interrupts++
			if interrupts >= 2 {
				return exitCancelled
			}
			fmt.Fprintln(p.ew, p.st.dim.Render("(Ctrl-C again to leave)"))
			continue
		case lineEsc:
			continue
		}
		interrupts = 0
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			if done := slashCommand(r, line); done {
				return 0
			}
			continue
		}
		runTurn(r, kb, ans, line)
	}
}

// runTurn runs one prompt; keys pressed meanwhile go to an approval when
// one is asked, else Esc or Ctrl-C interrupt the turn.
func runTurn(r *runner, kb *keyboard, ans *answers, prompt string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.interrupt = cancel
	defer func() { r.interrupt = nil }()
	done := make(chan struct{})
	go func() {
		var fwd chan byte
		for {
			select {
			case <-done:
				if fwd != nil {
					close(fwd)
				}
				return
			case c := <-ans.owner:
				fwd = c
			case <-kb.eof:
				if fwd != nil {
					close(fwd)
					fwd = nil
				}
				<-done
				return
			case b := <-kb.keys:
				if fwd != nil {
					fwd <- b
					continue
				}
				if b == keyEsc || b == keyCtrlC {
					cancel()
				}
			}
		}
	}()
	start := time.Now()
	sum, err := r.turn(ctx, prompt)
	close(done)
	// drain a late release of the approval input
	for len(ans.owner) > 0 {
		<-ans.owner
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(r.p.ew, "%s %s\n", r.p.st.warn.Render("■ interrupted"), r.p.st.dim.Render("(the task is kept: type a follow-up, or /undo)"))
			return
		}
		fmt.Fprintln(r.p.ew, r.p.st.bad.Render("error:"), friendly(err))
		return
	}
	r.p.printSummary(sum, time.Since(start))
}

// slashCommand runs one /command; true means leave.
func slashCommand(r *runner, line string) bool {
	p := r.p
	fields := strings.Fields(line)
	ctx := context.Background()
	arg := ""
	if len(fields) > 1 {
		arg = fields[1]
	}
	fail := func(err error) { fmt.Fprintln(p.ew, p.st.bad.Render("error:"), friendly(err)) }
	switch fields[0] {
	case "/help", "/?":
		fmt.Fprint(p.ew, sessionHelp)
	case "/exit", "/quit":
		return true
	case "/new":
		r.taskID = ""
		p.mu.Lock()
		p.task = ""
		p.mu.Unlock()
		fmt.Fprintln(p.ew, "the next prompt starts a new task")
	case "/mode":
		switch arg {
		case "":
			fmt.Fprintf(p.ew, "mode: %s\n", r.prov.Mode)
		case "agent", "ask", "plan":
			r.prov.Mode = arg
			fmt.Fprintf(p.ew, "mode: %s\n", arg)
		default:
			fmt.Fprintln(p.ew, "the mode is agent, ask or plan")
		}
	case "/model":
		if arg != "" {
			r.prov.Model = arg
			saveDefaults(r.s.dataDir, r.prov)
		}
		fmt.Fprintf(p.ew, "model: %s/%s\n", r.prov.Provider, r.prov.Model)
	case "/tasks":
		tasks, err := listTasks(r.s)
		if err != nil {
			fail(err)
			break
		}
		printTasks(p.ew, p.st, tasks, p.width)
	case "/output":
		if p.lastOutput == "" {
			fmt.Fprintln(p.ew, "no command output yet")
		} else {
			fmt.Fprintln(p.ew, strings.TrimRight(p.lastOutput, "\n"))
		}
	case "/undo":
		var list struct {
			Operations []struct {
				ID       string `json:"id"`
				Tool     string `json:"tool"`
				Undone   bool   `json:"undone"`
				Undoable bool   `json:"undoable"`
				Files    []struct {
					Path string `json:"path"`
				} `json:"files"`
			} `json:"operations"`
		}
		if err := r.s.call(ctx, "edits/list", map[string]any{}, &list); err != nil {
			fail(err)
			break
		}
		found := false
		for i := len(list.Operations) - 1; i >= 0; i-- {
			op := list.Operations[i]
			if op.Undone || !op.Undoable {
				continue
			}
			found = true
			var res struct {
				Restored  []string `json:"restored"`
				Conflicts []string `json:"conflicts"`
			}
			if err := r.s.call(ctx, "edits/undo", map[string]any{"operation": op.ID}, &res); err != nil {
				fail(err)
				break
			}
			fmt.Fprintf(p.ew, "undid %s: restored %s\n", op.Tool, strings.Join(res.Restored, ", "))
			if len(res.Conflicts) > 0 {
				fmt.Fprintf(p.ew, "%s changed since and were left as they are: %s\n", p.st.warn.Render("conflicts:"), strings.Join(res.Conflicts, ", "))
			}
			break
		}
		if !found {
			fmt.Fprintln(p.ew, "nothing to undo")
		}
	case "/diff":
		var pend struct {
			Files []struct {
				Path     string  `json:"path"`
				Original *string `json:"original"`
				Current  *string `json:"current"`
			} `json:"files"`
		}
		if err := r.s.call(ctx, "edits/pending", map[string]any{}, &pend); err != nil {
			fail(err)
			break
		}
		if len(pend.Files) == 0 {
			fmt.Fprintln(p.ew, "no pending changes")
		}
		for _, f := range pend.Files {
			fmt.Fprint(p.ew, renderDiff(p.st, fileDiff(f.Path, f.Original, f.Current), 0))
		}
	case "/keep":
		var res json.RawMessage
		if err := r.s.call(ctx, "edits/keep", map[string]any{}, &res); err != nil {
			fail(err)
			break
		}
		fmt.Fprintln(p.ew, "kept the pending changes")
	case "/revert":
		var res struct {
			Reverted  []string `json:"reverted"`
			Conflicts []string `json:"conflicts"`
		}
		if err := r.s.call(ctx, "edits/revert", map[string]any{}, &res); err != nil {
			fail(err)
			break
		}
		fmt.Fprintf(p.ew, "reverted %d files\n", len(res.Reverted))
		if len(res.Conflicts) > 0 {
			fmt.Fprintf(p.ew, "%s changed since and were left as they are: %s\n", p.st.warn.Render("conflicts:"), strings.Join(res.Conflicts, ", "))
		}
	default:
		fmt.Fprintf(p.ew, "unknown command %s; /help lists them\n", fields[0])
	}
	return false
}

// fileDiff is the unified diff of one pending file (nil: absent).
func fileDiff(path string, original, current *string) string {
	a, b := "", ""
	if original != nil {
		a = *original
	}
	if current != nil {
		b = *current
	}
	return udiff.Unified("a/"+path, "b/"+path, a, b)
}

var _ = os.Stderr
