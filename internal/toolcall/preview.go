package toolcall

import (
	"encoding/json"
	"fmt"
)

// maxPreview bounds an approval preview, in bytes.
const maxPreview = 4000

// Preview is what the user approves of a call to a tool that cannot plan
// it (tool.Previewer plans the edit tools' real diffs), uncut: the path
// for delete_path, both paths for move_path, the command and cwd for
// run_command (and Claude Code's Bash), and the input JSON for anything
// else. Every engine shows the same previews.
func Preview(name string, input json.RawMessage) string {
	var in struct {
		Path       string `json:"path"`
		From       string `json:"from"`
		To         string `json:"to"`
		Command    string `json:"command"`
		Cwd        string `json:"cwd"`
		Background bool   `json:"background"`
	}
	_ = json.Unmarshal(input, &in)
	switch name {
	case "delete_path":
		return "delete " + in.Path
	case "move_path":
		return "move " + in.From + " → " + in.To
	case "run_command", "Bash":
		cwd := in.Cwd
		if cwd == "" {
			cwd = "."
		}
		s := fmt.Sprintf("$ %s\n(cwd: %s)", in.Command, cwd)
		if in.Background {
			s += "\n(runs in the background)"
		}
		return s
	}
	raw := input
	if len(raw) == 0 || !json.Valid(raw) {
		raw = json.RawMessage("{}")
	}
	b, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		b = input
	}
	return string(b)
}

// CutPreview cuts a preview at about maxPreview bytes on a rune boundary,
// saying how many were left out, as agent/requestApproval carries it.
func CutPreview(s string) string {
	if len(s) <= maxPreview {
		return s
	}
	i := maxPreview
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + fmt.Sprintf("\n… (%d more bytes)", len(s)-i)
}
