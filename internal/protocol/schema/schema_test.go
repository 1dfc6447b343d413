package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

var update = flag.Bool("update", false, "rewrite schema/protocol.schema.json and schema/protocol.d.ts from the Go types")

// TestCommittedFilesCurrent fails when the committed schema or TypeScript
// declarations drift from the Go types of internal/protocol; with -update it
// rewrites them.
func TestCommittedFilesCurrent(t *testing.T) {
	js, err := JSON(protocol.Source)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := TypeScript(protocol.Source)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{JSONFile: js, TSFile: ts} {
		path := filepath.Join("..", "..", "..", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v; regenerate it from the repository root with: %s", name, err, RegenerateCommand)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the Go types of internal/protocol generate (%s); regenerate it from the repository root with:\n\t%s",
				name, firstDiff(got, want), RegenerateCommand)
		}
	}
}

// firstDiff describes the first line where the committed file got differs
// from the generated want.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, gl, wl)
		}
	}
	return "same lines"
}

// TestEveryTypeDocumented: every named type the schema describes has a doc
// comment, and so has every $defs entry (the TypeScript comments come from
// the same place).
func TestEveryTypeDocumented(t *testing.T) {
	s, err := Build(protocol.Source)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Defs) < 100 {
		t.Fatalf("only %d $defs", len(s.Defs))
	}
	for name, d := range s.Defs {
		if d.Description == "" {
			t.Errorf("$defs/%s has no description: document the Go type", name)
		}
	}
}

// TestMethodsComplete: every method name constant is in the method table
// once, with params and result types in the schema.
func TestMethodsComplete(t *testing.T) {
	s, err := Build(protocol.Source)
	if err != nil {
		t.Fatal(err)
	}
	methods := s.Extra["x-methods"].(map[string]any)
	seen := map[string]bool{}
	for _, m := range protocol.Methods {
		if seen[m.Name] {
			t.Errorf("%s is in the method table twice", m.Name)
		}
		seen[m.Name] = true
		if methods[m.Name] == nil {
			t.Errorf("%s is not in x-methods", m.Name)
		}
	}
	src, err := protocol.Source.ReadFile("protocol.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasPrefix(f[0], "Method") && f[1] == "=" {
			var name string
			if err := json.Unmarshal([]byte(f[2]), &name); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if !seen[name] {
				t.Errorf("%s (%s) is not in protocol.Methods", f[0], name)
			}
		}
	}
	if len(seen) < 45 {
		t.Errorf("only %d methods", len(seen))
	}
}
