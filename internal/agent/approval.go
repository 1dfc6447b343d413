package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/task-x/task-x-runtime/internal/policy"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Decision is protocol.md agent/requestApproval result.decision.
type Decision string

const (
	DecisionAllow        Decision = "allow"
	DecisionAllowSession Decision = "allowSession"
	DecisionDeny         Decision = "deny"
)

// ApprovalRequest is the protocol.md agent/requestApproval params { taskId,
// callId, tool, permission, input, preview }.
type ApprovalRequest struct {
	TaskID     string          `json:"taskId"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Permission tool.Class      `json:"permission"`
	Input      json.RawMessage `json:"input"`
	Preview    string          `json:"preview"`
}

// Approver asks the user about one tool call (the server sends
// agent/requestApproval). ctx ends when the task is cancelled or the approval
// timeout passes. An error, the end of ctx, or any answer other than allow or
// allowSession counts as deny.
type Approver func(ctx context.Context, req ApprovalRequest) (Decision, error)

// grants are the allowSession answers of one task (addendum §11): a tool name
// for any tool but run_command; for run_command, program names.
type grants struct {
	tools    map[string]bool
	programs map[string]bool
}

func newGrants() *grants {
	return &grants{tools: map[string]bool{}, programs: map[string]bool{}}
}

// remember records an allowSession answer for the call.
func (g *grants) remember(name string, input json.RawMessage) {
	if name != "run_command" {
		g.tools[name] = true
		return
	}
	progs, ok := policy.CommandPrograms(commandOf(input))
	if !ok {
		return
	}
	for _, p := range progs {
		// A wrapper (sh, env, xargs, sudo, …) would approve anything, so it
		// is never remembered and commands through it always ask.
		if !policy.RunsOtherPrograms(p) {
			g.programs[p] = true
		}
	}
}

// covers reports whether an earlier allowSession answer covers the call: for
// run_command, every program of a simple command was remembered (the
// shell-parser issue replaces policy.CommandPrograms later).
func (g *grants) covers(name string, input json.RawMessage) bool {
	if name != "run_command" {
		return g.tools[name]
	}
	progs, ok := policy.CommandPrograms(commandOf(input))
	if !ok {
		return false
	}
	for _, p := range progs {
		if !g.programs[p] {
			return false
		}
	}
	return true
}

func commandOf(input json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(input, &in)
	return in.Command
}

// maxPreview bounds an approval preview, in bytes.
const maxPreview = 4000

// maxPreviewFile is the largest existing file read for a write_file diff.
const maxPreviewFile = 1 << 20

// preview renders what the user approves: a unified diff for replace_text
// and for write_file over an existing file, the new text for a new file, the
// patch for apply_patch, the command and cwd for run_command, and the input
// JSON for anything else. It is cut at about 4000 bytes.
func preview(env *tool.Env, name string, input json.RawMessage) string {
	var in struct {
		Path       string `json:"path"`
		Content    string `json:"content"`
		OldText    string `json:"oldText"`
		NewText    string `json:"newText"`
		Patch      string `json:"patch"`
		From       string `json:"from"`
		To         string `json:"to"`
		Command    string `json:"command"`
		Cwd        string `json:"cwd"`
		Background bool   `json:"background"`
	}
	_ = json.Unmarshal(input, &in)
	var s string
	switch name {
	case "replace_text":
		// The texts are fragments: end both with a newline so the diff has
		// no "No newline at end of file" markers.
		s = udiff.Unified("a/"+in.Path, "b/"+in.Path, withNewline(in.OldText), withNewline(in.NewText))
	case "write_file":
		if old, ok := readForPreview(env, in.Path); ok {
			s = udiff.Unified("a/"+in.Path, "b/"+in.Path, old, in.Content)
			if s == "" {
				s = "(no change to " + in.Path + ")"
			}
		} else {
			s = "new file " + in.Path + "\n" + in.Content
		}
	case "apply_patch":
		s = in.Patch
	case "delete_path":
		s = "delete " + in.Path
	case "move_path":
		s = "move " + in.From + " → " + in.To
	case "run_command":
		cwd := in.Cwd
		if cwd == "" {
			cwd = "."
		}
		s = fmt.Sprintf("$ %s\n(cwd: %s)", in.Command, cwd)
		if in.Background {
			s += "\n(runs in the background)"
		}
	default:
		b, err := json.MarshalIndent(json.RawMessage(rawOrEmpty(input)), "", "  ")
		if err != nil {
			b = input
		}
		s = string(b)
	}
	return cut(s, maxPreview)
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// readForPreview reads the current text of a workspace file through os.Root,
// so a path or symlink that leaves the root is never read.
func readForPreview(env *tool.Env, p string) (string, bool) {
	if env == nil || env.Root == "" || p == "" {
		return "", false
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(env.Root, p)
		if err != nil {
			return "", false
		}
		p = rel
	}
	root, err := os.OpenRoot(env.Root)
	if err != nil {
		return "", false
	}
	defer root.Close()
	f, err := root.Open(filepath.Clean(p))
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPreviewFile+1))
	if err != nil || len(b) > maxPreviewFile {
		return "", false
	}
	return string(b), true
}

// cut shortens s to at most n bytes on a rune boundary, saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("\n… (%d more bytes)", len(s)-i)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// resultDenied is what the model sees for a call the user denied.
const resultDenied = "The user denied this tool call."

// normalise maps a client answer to a Decision; anything unknown is deny.
func normalise(d Decision) Decision {
	switch Decision(strings.TrimSpace(string(d))) {
	case DecisionAllow:
		return DecisionAllow
	case DecisionAllowSession:
		return DecisionAllowSession
	}
	return DecisionDeny
}
