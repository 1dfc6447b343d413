// Package archtest checks that imports point one way, from the front ends
// down through the task layer and the project layer to the parts (README
// "Layout", docs/layers.md): the wire packages depend on the standard
// library only and internal/protocol on nothing of this module, so it is a
// leaf vocabulary; the packages that name it are listed (protocolUsers: the
// front ends, the session and the schema generator; the engines and the
// task layer, which emit its events; the parts whose results are its types
// as they are, one definition each); the JSON-RPC server imports only the
// wire packages and the session, provider adapters never import each other,
// no part imports the server, tools never import a front end or the layers
// above them, the task layer knows no front end and no engine, Claude Code
// and team mode never import the agent loop, and a front end never imports
// another front end.
package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/task-x/task-x-runtime"

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func internal(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}

// protocolUsers may import internal/protocol besides cmd/: the front ends,
// the session and the schema generator map wire shapes; the task layer and
// the engines (the agent loop, Claude Code, team mode) emit its events
// (protocol.AgentEvent, a closed set), the one vocabulary of a task's
// stream from the engine to the client. A package not listed here that
// means to name a wire type joins the list with its reason.
var protocolUsers = map[string]bool{
	"internal/server": true, "internal/acp": true, "internal/session": true, "internal/protocol/schema": true,
	"internal/task": true, "internal/agent": true, "internal/claudecode": true, "internal/team": true,
	// The task store writes a crash-swept task's summary (protocol.AgentSummary).
	"internal/store": true,
	// Parts whose results are wire shapes as they are name protocol's types
	// (one definition): the workspace summary, the graph queries, a model's
	// description, a skill, a pending file, the MCP servers' status, a
	// tool's spec and changes, a worktree's apply result, a check's result,
	// a retrieval.
	"internal/workspace": true, "internal/graph": true, "internal/provider": true, "internal/skills": true,
	"internal/editlog": true, "internal/mcp": true, "internal/tool": true, "internal/tool/builtin": true, "internal/worktree": true,
	"internal/validate": true, "internal/retrieve": true,
}

func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		self, _ := internal(p.ImportPath)
		for _, imp := range p.Imports {
			dep, ours := internal(imp)
			if !ours {
				switch self {
				case "internal/jsonrpc", "internal/protocol":
					if strings.Contains(imp, ".") {
						t.Errorf("%s imports %s: the wire packages use the standard library only", self, imp)
					}
				}
				continue
			}
			switch {
			case self == "internal/protocol":
				t.Errorf("internal/protocol imports %s: the wire vocabulary imports nothing of this module (every layer may name it)", dep)
			case dep == "internal/server" && !strings.HasPrefix(self, "cmd/"):
				t.Errorf("%s imports the server: parts never import it", self)
			case dep == "internal/protocol" && !protocolUsers[self] && !strings.HasPrefix(self, "cmd/"):
				t.Errorf("%s imports internal/protocol: it is not in protocolUsers (front ends, session, schema generator, engines and task layer, and the parts whose results are wire types)", self)
			case strings.HasPrefix(self, "internal/provider/") && strings.HasPrefix(dep, "internal/provider/") &&
				self != "internal/provider/all" && !strings.HasSuffix(dep, "test"):
				t.Errorf("provider adapter %s imports %s: adapters never import each other", self, dep)
			case strings.HasPrefix(dep, "cmd/"):
				t.Errorf("%s imports a command package %s", self, dep)
			}
		}
	}
}

// layerRules: a package under the prefix never imports the listed packages
// (or anything under them).
var layerRules = []struct {
	pkg, why string
	banned   []string
}{
	{"internal/tool", "tools take everything from tool.Env, never from a front end or the layers above them",
		[]string{"internal/server", "internal/mcp", "internal/project", "internal/task", "internal/agent", "internal/jsonrpc"}},
	{"internal/task", "the task layer knows no front end and no engine (the agent loop imports it: task.Summary, approvals and the events are the shared vocabulary)",
		[]string{"internal/server", "internal/mcp", "internal/jsonrpc", "internal/agent", "internal/claudecode", "internal/team"}},
	{"internal/claudecode", "the Claude Code engine speaks the task layer's vocabulary, never the agent loop's or a front end's",
		[]string{"internal/server", "internal/jsonrpc", "internal/agent", "internal/team"}},
	{"internal/project", "the project layer is opened by every front end and knows none of them, nor tasks",
		[]string{"internal/server", "internal/mcp", "internal/task", "internal/agent", "internal/protocol", "internal/jsonrpc"}},
	{"internal/team", "the team layer runs subagents through the task layer and knows no front end nor the agent loop",
		[]string{"internal/server", "internal/mcp", "internal/jsonrpc", "internal/agent", "internal/claudecode"}},
	{"internal/worktree", "worktrees are a part: git (through gitx) and the edit log, below the task and project layers",
		[]string{"internal/server", "internal/mcp", "internal/task", "internal/project", "internal/agent", "internal/team", "internal/jsonrpc", "internal/tool"}},
	{"internal/acp", "a front end never imports another front end",
		[]string{"internal/server", "internal/mcp"}},
	{"internal/mcp", "a front end never imports another front end",
		[]string{"internal/server", "internal/task"}},
	{"internal/toolcall", "the tool-call pipeline is a part under every engine and front end",
		[]string{"internal/server", "internal/mcp", "internal/session", "internal/task", "internal/agent", "internal/project", "internal/protocol", "internal/jsonrpc"}},
	{"internal/session", "the session is below every front end: it knows no JSON-RPC and no front end",
		[]string{"internal/server", "internal/jsonrpc"}},
	{"cmd/task-x", "the terminal client drives the runtime over the protocol only (addendum §1)",
		[]string{"internal/server", "internal/task", "internal/project", "internal/agent", "internal/tool", "internal/mcp"}},
}

// serverImports are the only packages of this module the JSON-RPC server
// may import: it decodes, calls the session and encodes (docs/layers.md).
var serverImports = map[string]bool{
	"internal/protocol": true, "internal/jsonrpc": true, "internal/session": true,
	"internal/logx": true, "internal/version": true,
}

// TestServerIsThin keeps internal/server and internal/acp (the Agent
// Client Protocol front end) front ends over the session: each
// imports the protocol types, the JSON-RPC layer and the session (plus
// logging and version), nothing below them.
func TestServerIsThin(t *testing.T) {
	for _, front := range []string{"internal/server", "internal/acp"} {
		seen := false
		for _, p := range listPackages(t) {
			self, _ := internal(p.ImportPath)
			if self != front {
				continue
			}
			seen = true
			for _, imp := range p.Imports {
				if dep, ours := internal(imp); ours && !serverImports[dep] {
					t.Errorf("%s imports %s: a front end imports only the protocol types, the JSON-RPC layer and the session (plus logx and version)", front, dep)
				}
			}
		}
		if !seen {
			t.Fatalf("%s not found", front)
		}
	}
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

func TestLayers(t *testing.T) {
	for _, p := range listPackages(t) {
		self, ok := internal(p.ImportPath)
		if !ok {
			continue
		}
		for _, rule := range layerRules {
			if !under(self, rule.pkg) || (rule.pkg == "cmd/task-x" && self != "cmd/task-x") {
				continue
			}
			for _, imp := range p.Imports {
				dep, ours := internal(imp)
				if !ours {
					continue
				}
				for _, b := range rule.banned {
					if under(dep, b) {
						t.Errorf("%s imports %s: %s", self, dep, rule.why)
					}
				}
			}
		}
	}
}

// TestNoStdoutOutsideCmd guards the protocol stream: a stray print to stdout
// from a part would corrupt it, so only cmd/ may touch os.Stdout, os.Stdin or
// os.Exit, or print with fmt.Print*.
func TestNoStdoutOutsideCmd(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.Dir}}{{range .GoFiles}} {{.}}{{end}}`, module+"/internal/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"os.Stdout", "os.Stdin", "os.Exit(", "fmt.Print(", "fmt.Println(", "fmt.Printf("}
	// The sandbox helper is a separate process (the runtime re-executed):
	// its stdout is the command's output pipe, never the protocol stream.
	allowed := map[string]bool{"internal/sandbox/helper_linux.go": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		dir := fields[0]
		for _, f := range fields[1:] {
			if rel, ok := strings.CutPrefix(dir+"/"+f, moduleDir(t)+"/"); ok && allowed[rel] {
				continue
			}
			data, err := readFile(dir + "/" + f)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range banned {
				if strings.Contains(data, b) {
					t.Errorf("%s/%s uses %s: only cmd/ may", dir, f, b)
				}
			}
		}
	}
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func moduleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
