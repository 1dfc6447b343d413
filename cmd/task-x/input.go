package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// lineResult is how a line edit ended.
type lineResult int

const (
	lineOK lineResult = iota
	lineEOF
)

// answers is where a one-shot run's approvals and questions are answered:
// lines of stdin (scripts), else nothing. The interactive session asks in
// its own program (tui.go).
type answers struct {
	mu  sync.Mutex
	r   *bufio.Reader // stdin lines
	eof bool          // stdin ended: nothing more can be asked
}

// line reads one answer; ok is false when no answer can be had.
func (a *answers) line(w io.Writer, prompt string) (string, lineResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.r == nil || a.eof {
		return "", lineEOF
	}
	fmt.Fprint(w, prompt)
	s, err := a.r.ReadString('\n')
	if err != nil && s == "" {
		a.eof = true
		fmt.Fprintln(w)
		return "", lineEOF
	}
	return strings.TrimRight(s, "\r\n"), lineOK
}

// approval is the decision for one agent/requestApproval and an optional
// message for the model.
type approval struct {
	decision string
	message  string
	unasked  bool // no one could be asked
	stop     bool // the user interrupted the turn
}

// approve shows the request with its preview (a coloured diff for edits)
// and asks allow once / allow for the session / deny on stderr, reading
// the answer from stdin (one-shot mode).
func (p *printer) approve(params json.RawMessage, a *answers) approval {
	var req protocol.RequestApprovalParams
	json.Unmarshal(params, &req)
	p.spin.setPaused(true)
	defer p.spin.setPaused(false)
	p.mu.Lock()
	p.flushText()
	fmt.Fprint(p.ew, "\n"+p.st.warn.Render(approvalTitle(req))+"\n")
	fmt.Fprint(p.ew, approvalBody(p.st, req.Tool, req.Input, req.Preview))
	p.mu.Unlock()
	for {
		ans, res := a.line(p.ew, "allow? [y] once / [a] for the rest of this task / [n] no, tell it what to do instead: ")
		switch res {
		case lineEOF:
			return approval{decision: "deny", unasked: true}
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			return approval{decision: "allow"}
		case "a", "always":
			return approval{decision: "allowSession"}
		case "n", "no", "":
			msg, res := a.line(p.ew, "what should it do instead? (Enter to just deny) ")
			if res != lineOK {
				msg = ""
			}
			return approval{decision: "deny", message: strings.TrimSpace(msg)}
		}
	}
}

// approvalTitle says what the agent asks to do: "the agent wants to edit
// README.md (replace_text)", "… to run a command (run_command)".
func approvalTitle(req protocol.RequestApprovalParams) string {
	var in struct {
		Path string `json:"path"`
	}
	json.Unmarshal(req.Input, &in)
	on := ""
	if in.Path != "" {
		on = " " + in.Path
	}
	switch req.Permission {
	case protocol.PermissionEdit:
		if on == "" {
			on = " files"
		}
		return fmt.Sprintf("the agent wants to edit%s (%s)", on, req.Tool)
	case protocol.PermissionCommand:
		return fmt.Sprintf("the agent wants to run a command (%s)", req.Tool)
	case protocol.PermissionDestructive:
		return fmt.Sprintf("the agent wants to use %s%s (destructive)", req.Tool, on)
	case protocol.PermissionMCP:
		return fmt.Sprintf("the agent wants to call the MCP tool %s", req.Tool)
	}
	return fmt.Sprintf("the agent wants to use %s%s", req.Tool, on)
}

// approvalBody is the preview: a diff coloured line by line, else the
// command or the input.
func approvalBody(st styles, tool string, input json.RawMessage, preview string) string {
	if preview != "" {
		if strings.Contains(preview, "\n@@") || strings.HasPrefix(preview, "---") || strings.HasPrefix(preview, "@@") {
			return renderDiff(st, preview, 60)
		}
		return indent(preview) + "\n"
	}
	var cmd struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(input, &cmd) == nil && cmd.Command != "" {
		return "    $ " + cmd.Command + "\n"
	}
	return indent(plainJSON(input)) + "\n"
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("… %d more lines", len(lines)-40))
	}
	return "    " + strings.Join(lines, "\n    ")
}

// askUser asks agent/askUser's questions: a number per option (several,
// separated by spaces or commas, for a checkbox question). An empty answer
// to every question dismisses them (answers: null).
func (p *printer) askUser(params json.RawMessage, a *answers) map[string][]string {
	var req protocol.AskUserParams
	if json.Unmarshal(params, &req) != nil {
		return nil
	}
	p.spin.setPaused(true)
	defer p.spin.setPaused(false)
	answers := map[string][]string{}
	answered := false
	for _, q := range req.Questions {
		p.mu.Lock()
		p.flushText()
		fmt.Fprintf(p.ew, "\n%s\n", q.Text)
		for i, o := range q.Options {
			fmt.Fprintf(p.ew, "  %d) %s\n", i+1, o)
		}
		p.mu.Unlock()
		prompt := "choose one, empty to skip: "
		if q.Kind == protocol.QuestionCheckbox {
			prompt = "choose any (e.g. 1 3), empty to skip: "
		}
		line, _ := a.line(p.ew, prompt)
		picked := []string{}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
			var n int
			if _, err := fmt.Sscan(f, &n); err == nil && n >= 1 && n <= len(q.Options) {
				picked = append(picked, q.Options[n-1])
			}
		}
		if len(picked) > 0 {
			answered = true
		}
		answers[q.ID] = picked
	}
	if !answered {
		return nil
	}
	return answers
}
