package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

var (
	readFile    = tool.Spec{Name: "read_file", Permission: tool.ClassRead}
	askUser     = tool.Spec{Name: "ask_user", Permission: tool.ClassInteractive}
	replaceText = tool.Spec{Name: "replace_text", Permission: tool.ClassEdit}
	writeFile   = tool.Spec{Name: "write_file", Permission: tool.ClassEdit}
	movePath    = tool.Spec{Name: "move_path", Permission: tool.ClassEdit}
	applyPatch  = tool.Spec{Name: "apply_patch", Permission: tool.ClassEdit}
	runCommand  = tool.Spec{Name: "run_command", Permission: tool.ClassCommand}
	deletePath  = tool.Spec{Name: "delete_path", Permission: tool.ClassDestructive}
	mcpTool     = tool.Spec{Name: "mcp__gh__create_issue", Permission: tool.ClassMCP}
)

func mustParse(t *testing.T, s string) Policy {
	t.Helper()
	p, err := Parse(json.RawMessage(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return p
}

func TestParse(t *testing.T) {
	for _, in := range []string{"", "null", "  ", "{}", `{"mode":""}`} {
		p, err := Parse(json.RawMessage(in))
		if err != nil || p.Mode != ModeDefault {
			t.Errorf("Parse(%q) = %+v, %v; want mode default", in, p.Mode, err)
		}
	}
	p := mustParse(t, `{"mode":"acceptEdits","allow":["run_command(npm test:*)"],"deny":["delete_path"],"allowAll":true,"extra":1}`)
	if p.Mode != ModeAcceptEdits || !p.AllowAll || len(p.Allow) != 1 || len(p.Deny) != 1 {
		t.Errorf("Parse kept %+v", p)
	}
	for in, want := range map[string]string{
		`{"mode":"yolo"}`:                  `unknown mode "yolo"`,
		`{"mode":1}`:                       "policy:",
		`[]`:                               "policy:",
		`{"allow":["run_command(npm"]}`:    "allow[0]",
		`{"deny":["ok","(x)"]}`:            "deny[1]",
		`{"deny":["replace_text()"]}`:      "empty pattern",
		`{"deny":["replace_text(src/[)"]}`: "invalid glob",
		`{"allow":["bad name"]}`:           "tool name",
	} {
		if _, err := Parse(json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) err = %v; want containing %q", in, err, want)
		}
	}
}

func TestDecide(t *testing.T) {
	cmd := func(c string) string { b, _ := json.Marshal(map[string]string{"command": c}); return string(b) }
	tests := []struct {
		name   string
		policy string
		spec   tool.Spec
		input  string
		want   Decision
	}{
		{"default read runs", `{}`, readFile, `{"path":"a.go"}`, Allow},
		{"default interactive runs", `{}`, askUser, `{}`, Allow},
		{"default edit asks", `{}`, replaceText, `{"path":"a.go"}`, Ask},
		{"default command asks", `{}`, runCommand, cmd("ls"), Ask},
		{"default destructive asks", `{}`, deletePath, `{"path":"a"}`, Ask},
		{"default mcp asks", `{}`, mcpTool, `{}`, Ask},
		{"unknown class asks", `{}`, tool.Spec{Name: "x"}, `{}`, Ask},
		{"acceptEdits edit runs", `{"mode":"acceptEdits"}`, writeFile, `{"path":"a"}`, Allow},
		{"acceptEdits command asks", `{"mode":"acceptEdits"}`, runCommand, cmd("ls"), Ask},
		{"acceptEdits destructive asks", `{"mode":"acceptEdits"}`, deletePath, `{"path":"a"}`, Ask},
		{"readOnly read runs", `{"mode":"readOnly"}`, readFile, `{"path":"a"}`, Allow},
		{"readOnly edit denied", `{"mode":"readOnly"}`, replaceText, `{"path":"a"}`, Deny},
		{"readOnly command denied", `{"mode":"readOnly"}`, runCommand, cmd("ls"), Deny},
		{"readOnly allowAll still refuses writes", `{"mode":"readOnly","allowAll":true}`, writeFile, `{"path":"a"}`, Deny},
		{"readOnly allowAll allows mcp", `{"mode":"readOnly","allowAll":true}`, mcpTool, `{}`, Allow},
		{"allowAll destructive", `{"allowAll":true}`, deletePath, `{"path":"a"}`, Allow},
		{"allowAll command", `{"allowAll":true}`, runCommand, cmd("rm -rf build"), Allow},
		{"deny beats allowAll", `{"allowAll":true,"deny":["run_command"]}`, runCommand, cmd("ls"), Deny},
		{"deny beats read", `{"deny":["read_file"]}`, readFile, `{"path":"a"}`, Deny},
		{"allow bare tool", `{"allow":["run_command"]}`, runCommand, cmd("make"), Allow},
		{"allow prefix", `{"allow":["run_command(npm test:*)"]}`, runCommand, cmd("npm test -- -u"), Allow},
		{"allow prefix exact", `{"allow":["run_command(npm test:*)"]}`, runCommand, cmd("npm  test"), Allow},
		{"allow prefix word boundary", `{"allow":["run_command(npm test:*)"]}`, runCommand, cmd("npm tests"), Ask},
		{"allow prefix compound uncovered", `{"allow":["run_command(npm test:*)"]}`, runCommand, cmd("npm test && rm -rf /"), Ask},
		{"allow prefix compound covered", `{"allow":["run_command(npm test:*)","run_command(go vet:*)"]}`, runCommand, cmd("npm test; go vet ./..."), Allow},
		{"allow prefix substitution asks", `{"allow":["run_command(npm test:*)"]}`, runCommand, cmd("npm test $(rm x)"), Ask},
		{"allow prefix redirect asks", `{"allow":["run_command(echo:*)"]}`, runCommand, cmd("echo hi > a.go"), Ask},
		{"allow prefix 2>&1 ok", `{"allow":["run_command(go test:*)"]}`, runCommand, cmd("go test ./... 2>&1"), Allow},
		{"allow exact command", `{"allow":["run_command(make lint)"]}`, runCommand, cmd("make lint"), Allow},
		{"allow exact command other", `{"allow":["run_command(make lint)"]}`, runCommand, cmd("make lint fix"), Ask},
		{"deny prefix", `{"allowAll":true,"deny":["run_command(rm:*)"]}`, runCommand, cmd("rm -rf build"), Deny},
		{"deny prefix in compound", `{"allowAll":true,"deny":["run_command(rm:*)"]}`, runCommand, cmd("ls && rm -rf build"), Deny},
		{"deny prefix in substitution", `{"allowAll":true,"deny":["run_command(rm:*)"]}`, runCommand, cmd("echo $(rm -rf build)"), Deny},
		{"deny prefix behind wrapper", `{"allowAll":true,"deny":["run_command(rm:*)"]}`, runCommand, cmd("FOO=1 sudo rm -rf build"), Deny},
		{"deny prefix not matching", `{"allowAll":true,"deny":["run_command(rm:*)"]}`, runCommand, cmd("rmdir x"), Allow},
		{"deny bad input fails closed", `{"allowAll":true,"deny":["run_command(rm:*)"]}`, runCommand, `"oops"`, Deny},
		{"allow glob", `{"allow":["replace_text(src/**)"]}`, replaceText, `{"path":"src/a/b.go"}`, Allow},
		{"allow glob dot-dot normalised", `{"allow":["replace_text(src/**)"]}`, replaceText, `{"path":"lib/../src/b.go"}`, Allow},
		{"allow glob other dir", `{"allow":["replace_text(src/**)"]}`, replaceText, `{"path":"lib/b.go"}`, Ask},
		{"allow glob escaping root", `{"allow":["replace_text(**)"]}`, replaceText, `{"path":"../x"}`, Ask},
		{"allow glob absolute without root", `{"allow":["replace_text(**)"]}`, replaceText, `{"path":"/etc/passwd"}`, Ask},
		{"allow glob other tool", `{"allow":["replace_text(src/**)"]}`, writeFile, `{"path":"src/b.go"}`, Ask},
		{"allow glob move needs both", `{"allow":["move_path(src/**)"]}`, movePath, `{"from":"src/a","to":"lib/a"}`, Ask},
		{"allow glob move both inside", `{"allow":["move_path(src/**)"]}`, movePath, `{"from":"src/a","to":"src/b"}`, Allow},
		{"allow pattern unjudgeable", `{"allow":["apply_patch(src/**)"]}`, applyPatch, `{"patch":"..."}`, Ask},
		{"deny glob", `{"mode":"acceptEdits","deny":["write_file(**/*.lock)"]}`, writeFile, `{"path":"a/yarn.lock"}`, Deny},
		{"deny glob other", `{"mode":"acceptEdits","deny":["write_file(**/*.lock)"]}`, writeFile, `{"path":"a/yarn.json"}`, Allow},
		{"deny glob move either", `{"allowAll":true,"deny":["move_path(secret/**)"]}`, movePath, `{"from":"a","to":"secret/a"}`, Deny},
		{"deny pattern unjudgeable fails closed", `{"allowAll":true,"deny":["apply_patch(src/**)"]}`, applyPatch, `{"patch":"..."}`, Deny},
		{"secret read asks", `{}`, readFile, `{"path":"config/.env.local"}`, Ask},
		{"secret key read asks in readOnly", `{"mode":"readOnly"}`, readFile, `{"path":"certs/server.KEY"}`, Ask},
		{"secret read allowAll", `{"allowAll":true}`, readFile, `{"path":".env"}`, Allow},
		{"plain dotfile read runs", `{}`, readFile, `{"path":".gitignore"}`, Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.policy)
			got, reason := p.Decide(tt.spec, json.RawMessage(tt.input))
			if got != tt.want {
				t.Errorf("Decide = %v (%s); want %v", got, reason, tt.want)
			}
			if reason == "" {
				t.Error("empty reason")
			}
		})
	}
}

func TestDecideRootRelativisesAbsolutePaths(t *testing.T) {
	p := mustParse(t, `{"allow":["replace_text(src/**)"],"deny":["write_file(secret/**)"]}`).WithRoot("/w/proj")
	if d, r := p.Decide(replaceText, json.RawMessage(`{"path":"/w/proj/src/a.go"}`)); d != Allow {
		t.Errorf("absolute inside root = %v (%s)", d, r)
	}
	if d, r := p.Decide(replaceText, json.RawMessage(`{"path":"/w/other/src/a.go"}`)); d != Ask {
		t.Errorf("absolute outside root = %v (%s)", d, r)
	}
	if d, r := p.Decide(writeFile, json.RawMessage(`{"path":"/w/proj/secret/k"}`)); d != Deny {
		t.Errorf("absolute deny = %v (%s)", d, r)
	}
}

func TestLiteralPolicyWithoutParse(t *testing.T) {
	p := Policy{Mode: ModeDefault, Allow: []string{"run_command(go test:*)"}, Deny: []string{"delete_path(", "write_file(x/**)"}}
	if d, _ := p.Decide(runCommand, json.RawMessage(`{"command":"go test ./..."}`)); d != Allow {
		t.Errorf("literal allow = %v", d)
	}
	if d, _ := p.Decide(deletePath, json.RawMessage(`{"path":"a"}`)); d != Deny {
		t.Errorf("malformed literal deny must fail closed, got %v", d)
	}
	if d, _ := (Policy{}).Decide(readFile, json.RawMessage(`{"path":"a"}`)); d != Allow {
		t.Errorf("zero policy read = %v", d)
	}
}

func TestOffered(t *testing.T) {
	classes := []tool.Class{tool.ClassRead, tool.ClassInteractive, tool.ClassEdit, tool.ClassCommand, tool.ClassDestructive, tool.ClassMCP}
	tests := []struct {
		policy, chat string
		want         []bool // in classes order
	}{
		{`{}`, "agent", []bool{true, true, true, true, true, true}},
		{`{}`, "team", []bool{true, true, true, true, true, true}},
		{`{}`, "ask", []bool{true, true, false, false, false, false}},
		{`{}`, "plan", []bool{true, true, false, false, false, false}},
		{`{}`, "bogus", []bool{true, true, false, false, false, false}},
		{`{"mode":"readOnly"}`, "agent", []bool{true, true, false, false, false, false}},
		{`{"mode":"readOnly","allowAll":true}`, "agent", []bool{true, true, false, false, false, true}},
		{`{"allowAll":true}`, "ask", []bool{true, true, false, false, false, true}},
	}
	for _, tt := range tests {
		p := mustParse(t, tt.policy)
		var got []bool
		for _, c := range classes {
			got = append(got, p.Offered(c, tt.chat))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s: Offered = %v; want %v", tt.policy, tt.chat, got, tt.want)
		}
	}
	p := mustParse(t, `{"deny":["run_command","write_file(x/**)"]}`)
	if p.OfferedTool(runCommand, "agent") {
		t.Error("a bare deny rule must hide the tool")
	}
	if !p.OfferedTool(writeFile, "agent") {
		t.Error("a pattern deny rule must not hide the tool")
	}
}

// TestDecideAsksForLinksToSecrets: read_file of a link whose target is
// secret-looking asks like the target itself (QA D1), by root-relative and
// absolute path; a link to an ordinary file runs.
func TestDecideAsksForLinksToSecrets(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"envlink": ".env", "readme": "README.md"} {
		if err := os.WriteFile(filepath.Join(root, target), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	p := mustParse(t, `{}`).WithRoot(root)
	for _, in := range []string{`{"path":"envlink"}`, `{"path":"` + filepath.Join(root, "envlink") + `"}`, `{"path":".env"}`} {
		if d, r := p.Decide(readFile, json.RawMessage(in)); d != Ask {
			t.Errorf("read_file %s = %v (%s), want Ask", in, d, r)
		}
	}
	if d, r := p.Decide(readFile, json.RawMessage(`{"path":"readme"}`)); d != Allow {
		t.Errorf("read_file of a link to README.md = %v (%s), want Allow", d, r)
	}
	if d, _ := mustParse(t, `{}`).Decide(readFile, json.RawMessage(`{"path":"envlink"}`)); d != Allow {
		t.Errorf("without a root the name alone decides: got %v", d)
	}
}
