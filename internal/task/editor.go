package task

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// EditorContext of agent/run (protocol.md EditorContext, addendum §11):
// what the editor shows the user when they send the prompt. It becomes a
// delimited <editor-context> block in front of the task's first user
// message, so the model sees it with the prompt and it is saved with the
// conversation.

// Limits of the editor block. The mention limits are protocol.md's; the
// others keep one editor state from crowding the prompt.
const (
	maxMentions          = 10      // protocol.md: at most 10
	maxMentionChars      = 40_000  // protocol.md: each file's text
	maxMentionTotalChars = 120_000 // protocol.md: all mentioned files together
	maxFolderEntries     = 500     // files listed for one mentioned folder
	maxOpenFiles         = 50      // open files listed
	maxDiagnostics       = 50      // diagnostics listed
	maxDiagnosticChars   = 500     // one diagnostic message
	maxSelectionChars    = 40_000  // the selected text
	maxEditorPathLen     = 4096    // one path, in bytes
)

// Editor is protocol.md EditorContext (selection lines 1-based, inclusive;
// diagnostics { path, line, severity, message, source? }, the fields VS
// Code's Diagnostic maps to). Unknown fields are ignored (editors send more
// than the runtime reads).
type Editor = protocol.EditorContext

// ParseEditor decodes agent/run `editor`; absent or null gives nil. A wrong
// shape, more than 10 mentions, a mention outside the workspace root or a
// bad path is -32602.
func ParseEditor(raw json.RawMessage) (*Editor, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var e Editor
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, invalidf("editor: %v", err)
	}
	if len(e.Mentions) > maxMentions {
		return nil, invalidf("editor.mentions: at most %d paths, got %d", maxMentions, len(e.Mentions))
	}
	check := func(field, p string, required bool) error {
		switch {
		case p == "" && required:
			return invalidf("editor.%s: a path is required", field)
		case len(p) > maxEditorPathLen:
			return invalidf("editor.%s: path longer than %d bytes", field, maxEditorPathLen)
		case strings.ContainsRune(p, 0) || !utf8.ValidString(p):
			return invalidf("editor.%s: invalid path", field)
		}
		return nil
	}
	if err := check("activeFile", e.ActiveFile, false); err != nil {
		return nil, err
	}
	if sel := e.Selection; sel != nil {
		if err := check("selection.path", sel.Path, true); err != nil {
			return nil, err
		}
		if sel.StartLine < 1 || sel.EndLine < sel.StartLine {
			return nil, invalidf("editor.selection: need 1 <= startLine <= endLine, got %d..%d", sel.StartLine, sel.EndLine)
		}
	}
	for i, p := range e.OpenFiles {
		if err := check(fmt.Sprintf("openFiles[%d]", i), p, true); err != nil {
			return nil, err
		}
	}
	for i, d := range e.Diagnostics {
		if err := check(fmt.Sprintf("diagnostics[%d].path", i), d.Path, true); err != nil {
			return nil, err
		}
		if d.Line < 0 {
			return nil, invalidf("editor.diagnostics[%d].line: negative", i)
		}
	}
	for i, p := range e.Mentions {
		if err := check(fmt.Sprintf("mentions[%d]", i), p, true); err != nil {
			return nil, err
		}
	}
	return &e, nil
}

// editorPlan is an editor context checked by Prepare: the lines that need
// no decision (active file, selection, open files, diagnostics) and each
// mention with what will be attached. The mentioned files' text is read
// when the block is rendered, in Run, after the approvals.
type editorPlan struct {
	head     string
	mentions []mentionPlan
}

// mentionPlan is one mention: an indexed file (size >= 0) under read_file's
// policy decision, a folder's file list, or a reason it is not attached.
type mentionPlan struct {
	rel      string
	path     string // the indexed file's path; "" when not a file
	size     int64
	folder   []string
	missing  string          // why nothing is attached (not a file or folder)
	decision policy.Decision // for a file: read_file's decision
	reason   string          // the decision's reason (for Deny, what the model is told)
}

// readFileSpec is the read tool's spec whose policy a mentioned file is
// attached under (tools' own spec when the registry has it).
func readFileSpec(tools *tool.Registry) tool.Spec {
	if tools != nil {
		if t, ok := tools.Get("read_file"); ok {
			return t.Spec()
		}
	}
	return tool.Spec{Name: "read_file", Permission: tool.ClassRead}
}

// planEditor checks the editor context against the project and decides each
// mentioned file the way a read_file call of it is decided (pol.Decide on
// read_file {path}): Allow attaches it, Deny never does and Ask waits for
// the user in Run (approveMentions). A mention outside the root is -32602.
func planEditor(proj *project.Project, e *Editor, pol policy.Policy, read tool.Spec) (*editorPlan, error) {
	if e == nil {
		return nil, nil
	}
	snap := proj.Snapshot()
	var b strings.Builder
	show := func(p string) string {
		if rel, err := proj.Rel(p); err == nil {
			return rel
		}
		return filepath.ToSlash(p)
	}
	if e.ActiveFile != "" {
		fmt.Fprintf(&b, "Active file: %s\n", show(e.ActiveFile))
	}
	if sel := e.Selection; sel != nil {
		text, cut := cutChars(sel.Text, maxSelectionChars)
		fmt.Fprintf(&b, "Selection in %s, lines %d-%d:\n<selection>\n%s%s\n</selection>\n", show(sel.Path), sel.StartLine, sel.EndLine, text, cutMarker(cut, fmt.Sprintf("%d characters selected", utf8.RuneCountInString(sel.Text))))
	}
	if len(e.OpenFiles) > 0 {
		b.WriteString("Open files:")
		for i, p := range e.OpenFiles {
			if i == maxOpenFiles {
				fmt.Fprintf(&b, " … (%d more)", len(e.OpenFiles)-i)
				break
			}
			b.WriteString(" " + show(p))
		}
		b.WriteString("\n")
	}
	if len(e.Diagnostics) > 0 {
		b.WriteString("Diagnostics:\n")
		for i, d := range e.Diagnostics {
			if i == maxDiagnostics {
				fmt.Fprintf(&b, "… (%d more diagnostics)\n", len(e.Diagnostics)-i)
				break
			}
			msg, _ := cutChars(strings.Join(strings.Fields(d.Message), " "), maxDiagnosticChars)
			sev := d.Severity
			if sev == "" {
				sev = "info"
			}
			if d.Source != "" {
				msg = d.Source + ": " + msg
			}
			fmt.Fprintf(&b, "- %s:%d %s %s\n", show(d.Path), d.Line, sev, msg)
		}
	}
	plan := &editorPlan{head: b.String()}
	pol = pol.WithRoot(proj.Root())
	for i, m := range e.Mentions {
		rel, err := proj.Rel(m)
		if err != nil {
			return nil, invalidf("editor.mentions[%d]: %q is outside the workspace root", i, m)
		}
		if rel == "." {
			rel = ""
		}
		mp := mentionPlan{rel: rel}
		if f, ok := snap.File(rel); ok {
			mp.path, mp.size = f.Path, f.Size
			input, _ := json.Marshal(map[string]string{"path": rel})
			mp.decision, mp.reason = pol.Decide(read, input)
			if mp.decision == policy.Deny {
				mp.reason = "denied by policy: " + mp.reason
			}
		} else if files := folderFiles(snap, rel); files != nil {
			mp.folder = files
		} else if snap.Excluded(rel, false) {
			mp.missing = "excluded"
		} else {
			mp.missing = "not in the index"
		}
		plan.mentions = append(plan.mentions, mp)
	}
	return plan, nil
}

// mentionCallID is the callId of the approval for mention i: it is no
// model's tool call, so it gets an id of its own kind (like validation:NAME).
func mentionCallID(i int) string { return fmt.Sprintf("mention:%d", i) }

// approveMentions asks approve about every mentioned file whose read_file
// decision is Ask, as the agent loop asks about a call: allow and
// allowSession attach it (for this mention only), anything else (deny, an
// error, no answer within the approval timeout, the task's end) does not.
// It returns the approval events, which the Runner reports after the
// engine's started.
func (p *editorPlan) approveMentions(ctx context.Context, taskID string, read tool.Spec, approve Approver) []protocol.AgentEvent {
	if p == nil {
		return nil
	}
	var events []protocol.AgentEvent
	for i := range p.mentions {
		m := &p.mentions[i]
		if m.path == "" || m.decision != policy.Ask {
			continue
		}
		input, _ := json.Marshal(map[string]string{"path": m.rel})
		req := ApprovalRequest{TaskID: taskID, CallID: mentionCallID(i), Tool: read.Name, Permission: read.Permission,
			Input: input, Preview: fmt.Sprintf("Attach %s (mentioned in the editor, %d bytes) to the prompt: %s.", m.rel, m.size, m.reason)}
		events = append(events, ApprovalRequested(req))
		d := DecisionDeny
		if approve != nil {
			actx, stop := context.WithTimeout(ctx, ApprovalTimeout)
			got, err := approve(actx, req)
			if err == nil && actx.Err() == nil && (got.Decision == DecisionAllow || got.Decision == DecisionAllowSession) {
				d = got.Decision
			}
			if actx.Err() != nil {
				events = append(events, protocol.ApprovalWithdrawnEvent{CallID: req.CallID})
			}
			stop()
		}
		events = append(events, protocol.ApprovalResolvedEvent{CallID: req.CallID, Tool: req.Tool, Decision: protocol.Decision(d)})
		if d == DecisionDeny {
			m.decision, m.reason = policy.Deny, "the user did not approve attaching it"
		} else {
			m.decision = policy.Allow
		}
	}
	return events
}

// render is the editor block for the first user message, or "" when there
// is nothing to say. A mentioned file is attached only when its decision is
// Allow (by now every Ask was answered); it is read through os.Root so a
// symlink cannot leave the root. Others are named with the reason: denied by
// policy, excluded or not in the index.
func (p *editorPlan) render(root string) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(p.head)
	budget := maxMentionTotalChars
	for _, m := range p.mentions {
		switch {
		case m.path != "" && m.decision != policy.Allow:
			fmt.Fprintf(&b, "<mention path=%q>not attached: %s</mention>\n", m.rel, m.reason)
		case m.path != "":
			text, err := readIndexed(root, m.path)
			if err != nil {
				fmt.Fprintf(&b, "<mention path=%q>not attached: %s</mention>\n", m.rel, err)
				continue
			}
			shown, cut := cutChars(text, min(maxMentionChars, budget))
			budget -= utf8.RuneCountInString(shown)
			fmt.Fprintf(&b, "<mention path=%q>\n%s%s\n</mention>\n", m.rel, shown, cutMarker(cut, fmt.Sprintf("the file has %d bytes", m.size)))
		case m.folder != nil:
			fmt.Fprintf(&b, "<mention path=%q kind=\"folder\">\n", m.rel)
			for j, f := range m.folder {
				if j == maxFolderEntries {
					fmt.Fprintf(&b, "… (%d more files)\n", len(m.folder)-j)
					break
				}
				b.WriteString(f + "\n")
			}
			b.WriteString("</mention>\n")
		default:
			fmt.Fprintf(&b, "<mention path=%q>not attached: %s</mention>\n", m.rel, m.missing)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "<editor-context>\n" + b.String() + "</editor-context>\n\n"
}

// folderFiles lists the indexed files under dir ("" is the root); nil when
// none is.
func folderFiles(snap *workspace.Snapshot, dir string) []string {
	var out []string
	prefix := dir + "/"
	for _, f := range snap.Files() {
		if dir == "" || strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return out
}

// readIndexed reads an indexed file through os.Root, at most a little more
// than maxMentionChars runes' worth of bytes.
func readIndexed(root, rel string) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", fmt.Errorf("cannot open the workspace root")
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(rel))
	if err != nil {
		return "", fmt.Errorf("cannot be read")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4*maxMentionChars+4))
	if err != nil {
		return "", fmt.Errorf("cannot be read")
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), nil
}

// cutChars keeps the first n characters (runes) of s; cut reports whether
// anything was dropped.
func cutChars(s string, n int) (string, bool) {
	if n <= 0 {
		return "", s != ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

// cutMarker is the line that says a text was cut, with what the whole was.
func cutMarker(cut bool, whole string) string {
	if !cut {
		return ""
	}
	return "\n[… cut here: " + whole + "; the rest is not attached]"
}
