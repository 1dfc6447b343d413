package policy

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// The policies in the docs' JSON examples parse, and a run_command rule
// in them matches the command it names (docs/acp.md's config example:
// `run_command(go test *)` is not the policy syntax; `go test:*` is).
func TestDocsExamplePolicies(t *testing.T) {
	b, err := os.ReadFile("../../docs/acp.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(b, -1)
	n := 0
	for _, blk := range blocks {
		var doc struct {
			Policy json.RawMessage `json:"policy"`
		}
		if json.Unmarshal(blk[1], &doc) != nil || len(doc.Policy) == 0 {
			continue
		}
		n++
		p, err := Parse(doc.Policy)
		if err != nil {
			t.Fatalf("docs/acp.md policy %s: %v", doc.Policy, err)
		}
		spec := tool.Spec{Name: "run_command", Permission: tool.ClassCommand}
		if d, why := p.Decide(spec, json.RawMessage(`{"command":"go test ./..."}`)); d != Allow {
			t.Errorf("docs/acp.md policy %s: go test ./... is %v (%s), want allow", doc.Policy, d, why)
		}
	}
	if n == 0 {
		t.Fatal("no policy example in docs/acp.md")
	}
}
