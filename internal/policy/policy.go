// Package policy owns the approval decisions of the agent: the protocol.md
// `policy` object ({ mode, allow, deny, allowAll }), which tools the model is
// offered in a chat mode, and whether one tool call runs at once, asks the
// user (agent/requestApproval) or is refused. It fails closed: whatever it
// cannot judge honestly asks (for an allow rule) or refuses (for a deny rule).
//
// Rules are a tool name or `tool(pattern)` in the Claude Code style (see
// Rule). run_command strings are parsed with mvdan.cc/sh/v3/syntax (shell.go)
// so that every command a line runs is checked: operands of && || ; & and
// pipes, subshells and groups, $(…), backquotes, process substitutions,
// sh -c and eval strings, redirects that write files, assignments, wrappers.
//
// Source: ../shared/spec/protocol.md ("Agent, tools, and extensions": the
// policy paragraph) and addendum §5, §10 (no policy means mode default) and
// §11 (secret files ask; allowSession for run_command).
package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Mode is protocol.md policy.mode.
type Mode string

const (
	// ModeDefault runs read and interactive tools; edit, command,
	// destructive and mcp tools ask.
	ModeDefault Mode = "default"
	// ModeAcceptEdits runs edit tools too.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModeReadOnly offers only read and interactive tools and refuses any
	// other call (MCP tools are allowed with allowAll, protocol.md).
	ModeReadOnly Mode = "readOnly"
)

// Chat modes of agent/run (protocol.md).
const (
	ChatAsk   = "ask"
	ChatPlan  = "plan"
	ChatAgent = "agent"
	ChatTeam  = "team"
)

// Policy is protocol.md policy { mode, allow, deny, allowAll? }. Build it
// with Parse so that mode and rules are validated; the zero value is mode
// default with no rules.
type Policy struct {
	Mode     Mode     `json:"mode"`
	Allow    []string `json:"allow"`
	Deny     []string `json:"deny"`
	AllowAll bool     `json:"allowAll"`

	root  string // workspace root for relativising absolute paths; see WithRoot
	allow []Rule
	deny  []Rule
}

// Parse decodes and validates a protocol.md policy object. A nil, empty or
// JSON null raw value gives mode default (addendum §10); an empty mode is
// default too. An unknown mode, a malformed rule or a non-object value is an
// error (the server answers it with -32602). Unknown fields are ignored.
func Parse(raw json.RawMessage) (Policy, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return Policy{Mode: ModeDefault}, nil
	}
	var p Policy
	if err := json.Unmarshal(raw, &p); err != nil {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	if err := p.compile(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// compile validates Mode and parses Allow and Deny into rules.
func (p *Policy) compile() error {
	switch p.Mode {
	case "":
		p.Mode = ModeDefault
	case ModeDefault, ModeAcceptEdits, ModeReadOnly:
	default:
		return fmt.Errorf("policy: unknown mode %q (want default, acceptEdits or readOnly)", p.Mode)
	}
	var err error
	if p.allow, err = parseRules("allow", p.Allow); err != nil {
		return err
	}
	p.deny, err = parseRules("deny", p.Deny)
	return err
}

func parseRules(field string, src []string) ([]Rule, error) {
	out := make([]Rule, 0, len(src))
	for i, s := range src {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("policy: %s[%d]: %w", field, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// rules returns the compiled rules, compiling on the fly for a Policy built
// as a literal rather than by Parse (malformed entries are then skipped in
// allow and match everything of their tool in deny, failing closed).
func (p Policy) rules() (allow, deny []Rule) {
	if p.allow != nil || p.deny != nil || (len(p.Allow) == 0 && len(p.Deny) == 0) {
		return p.allow, p.deny
	}
	for _, s := range p.Allow {
		if r, err := ParseRule(s); err == nil {
			allow = append(allow, r)
		}
	}
	for _, s := range p.Deny {
		r, err := ParseRule(s)
		if err != nil {
			name, _, _ := strings.Cut(strings.TrimSpace(s), "(")
			r = Rule{Tool: strings.TrimSpace(name)}
		}
		deny = append(deny, r)
	}
	return allow, deny
}

// WithRoot returns p with the workspace root (absolute) used to turn absolute
// path inputs into root-relative paths for path patterns.
func (p Policy) WithRoot(root string) Policy {
	p.root = root
	return p
}

// Decision is the outcome of Decide.
type Decision int

const (
	// Allow runs the call without asking.
	Allow Decision = iota
	// Ask sends agent/requestApproval first.
	Ask
	// Deny refuses the call; the model gets an error result.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Decide judges one call of the tool spec with its JSON input and returns the
// decision with a short human-readable reason. The order is:
//  1. a matching deny rule refuses (deny always wins);
//  2. readOnly refuses every class but read and interactive (and mcp under
//     allowAll);
//  3. allowAll allows;
//  4. a read_file of a secret-looking file (.env*, *.pem, *.key, id_rsa*,
//     .npmrc, .netrc, credentials*) asks (addendum §11);
//  5. read and interactive tools are allowed;
//  6. a matching allow rule allows;
//  7. acceptEdits allows edit tools;
//  8. anything else (edit, command, destructive, mcp, an unknown class) asks.
func (p Policy) Decide(spec tool.Spec, input json.RawMessage) (Decision, string) {
	allowRules, denyRules := p.rules()
	for _, r := range denyRules {
		if r.Tool == spec.Name && r.matchDeny(input, p.root) {
			return Deny, fmt.Sprintf("deny rule %q", r.String())
		}
	}
	if p.Mode == ModeReadOnly {
		switch {
		case spec.Permission == tool.ClassRead || spec.Permission == tool.ClassInteractive:
		case spec.Permission == tool.ClassMCP && p.AllowAll:
		default:
			return Deny, fmt.Sprintf("readOnly mode refuses %s tools", classOr(spec.Permission))
		}
	}
	if p.AllowAll {
		return Allow, "allowAll"
	}
	if spec.Name == "read_file" && secretPath(input, p.root) {
		return Ask, "reading a file that may hold secrets"
	}
	if spec.Permission == tool.ClassRead || spec.Permission == tool.ClassInteractive {
		return Allow, fmt.Sprintf("%s tools run without approval", spec.Permission)
	}
	if spec.Name == "run_command" {
		if commandAllowed(allowRules, input) {
			return Allow, "allow rules cover every part of the command"
		}
	} else {
		for _, r := range allowRules {
			if r.Tool == spec.Name && r.matchAllow(input, p.root) {
				return Allow, fmt.Sprintf("allow rule %q", r.String())
			}
		}
	}
	if p.Mode == ModeAcceptEdits && spec.Permission == tool.ClassEdit {
		return Allow, "acceptEdits mode runs edit tools"
	}
	return Ask, fmt.Sprintf("%s tools need approval", classOr(spec.Permission))
}

func classOr(c tool.Class) string {
	if c == "" {
		return "unclassified"
	}
	return string(c)
}

// Offered reports whether a tool of the given class is offered to the model
// in chatMode (addendum §5): ask and plan offer read and interactive tools;
// agent and team offer every class, except that policy mode readOnly keeps
// them to read and interactive. With allowAll, MCP tools are offered in every
// mode (protocol.md). An unknown chat mode offers read and interactive only.
func (p Policy) Offered(class tool.Class, chatMode string) bool {
	if class == tool.ClassRead || class == tool.ClassInteractive {
		return true
	}
	if class == tool.ClassMCP && p.AllowAll {
		return true
	}
	if p.Mode == ModeReadOnly {
		return false
	}
	return chatMode == ChatAgent || chatMode == ChatTeam
}

// OfferedTool is Offered for spec.Permission, and also hides a tool that a
// bare deny rule (the tool name without a pattern) refuses outright.
func (p Policy) OfferedTool(spec tool.Spec, chatMode string) bool {
	if !p.Offered(spec.Permission, chatMode) {
		return false
	}
	_, deny := p.rules()
	for _, r := range deny {
		if r.Tool == spec.Name && !r.HasPattern {
			return false
		}
	}
	return true
}

// secretNames are the base-name globs of addendum §11.
var secretNames = []string{".env*", "*.pem", "*.key", "id_rsa*", ".npmrc", ".netrc", "credentials*"}

// secretPath reports whether a read_file input names a secret-looking file
// (secretNames), by the name as written or, with a root, by the name of the
// file a symbolic link there resolves to (what read_file will read).
func secretPath(input json.RawMessage, root string) bool {
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(input, &in) != nil || in.Path == "" {
		return false
	}
	if secretName(in.Path) {
		return true
	}
	if root == "" {
		return false
	}
	abs := filepath.FromSlash(in.Path)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	target, err := filepath.EvalSymlinks(abs)
	return err == nil && secretName(target)
}

func secretName(p string) bool {
	base := strings.ToLower(path.Base(filepath.ToSlash(p)))
	for _, g := range secretNames {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}
