package e2e

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// retrieveResult is context/retrieve's result.
type retrieveResult = protocol.RetrieveResult

// TestContextRetrieve runs context/retrieve through the binary on a copy
// of this repository: errors before a workspace and for bad params, then a
// ranked, budgeted result with reasons that never includes ignored files.
func TestContextRetrieve(t *testing.T) {
	repo := copyRepo(t)
	// An ignored file whose text matches the query better than anything.
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("bin/\nignored/\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "ignored"), 0o755)
	os.WriteFile(filepath.Join(repo, "ignored", "retrieval.go"), []byte("package ignored\n// retrieve retrieve snippets budget reason\nfunc Retrieve() {}\n"), 0o644)

	p := start(t)
	p.initialize(nil)
	if _, e := p.call("context/retrieve", map[string]any{"query": "retrieve"}); e == nil || e.Code != -32004 {
		t.Fatalf("without a workspace: %v, want -32004", e)
	}
	p.mustCall("workspace/open", map[string]any{"root": repo})
	for _, bad := range []map[string]any{
		{"query": ""}, {"query": "   "}, {"query": "x", "budgetTokens": 0}, {"query": "x", "budgetTokens": -5},
		{"query": "x", "budgetTokens": 200001}, {"query": 3},
	} {
		if _, e := p.call("context/retrieve", bad); e == nil || e.Code != -32602 {
			t.Errorf("%v: %v, want -32602", bad, e)
		}
	}

	raw := p.mustCall("context/retrieve", map[string]any{"query": "rank snippets for context/retrieve within the token budget", "budgetTokens": 3000})
	var r retrieveResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	rr := r.Retrieval
	if len(rr.Snippets) == 0 || rr.BudgetTokens != 3000 || rr.UsedTokens > 3000 || rr.UsedTokens == 0 || rr.FilesConsidered < len(rr.Snippets) {
		t.Fatalf("retrieval: %d snippets, budget %d used %d considered %d", len(rr.Snippets), rr.BudgetTokens, rr.UsedTokens, rr.FilesConsidered)
	}
	top := map[string]bool{}
	for i, s := range rr.Snippets {
		if s.Reason == "" || s.Text == "" || s.StartLine < 1 || s.EndLine < s.StartLine {
			t.Errorf("snippet %d: %+v", i, s)
		}
		if strings.HasPrefix(s.Path, "ignored/") || strings.HasPrefix(s.Path, "bin/") {
			t.Errorf("ignored file retrieved: %s", s.Path)
		}
		if i < 3 {
			top[s.Path] = true
		}
	}
	if !top["internal/retrieve/retrieve.go"] && !top["internal/server/retrieve.go"] {
		t.Errorf("retrieval code not in the top 3: %v", top)
	}
	if r.Instructions == nil {
		t.Error("instructions missing (want [] when none apply)")
	}

	// focusPaths rank a file first even when it matches nothing.
	raw = p.mustCall("context/retrieve", map[string]any{"query": "zzzunmatched", "focusPaths": []string{"go.mod"}})
	r = retrieveResult{}
	json.Unmarshal(raw, &r)
	if len(r.Retrieval.Snippets) == 0 || r.Retrieval.Snippets[0].Path != "go.mod" || !strings.Contains(r.Retrieval.Snippets[0].Reason, "focus") {
		t.Errorf("focus path: %+v", r.Retrieval.Snippets)
	}

	// The tools use the same index.
	raw = p.mustCall("tools/call", map[string]any{"name": "retrieve_context", "input": map[string]any{"query": "classify prompt task kind", "budgetTokens": 1500}})
	var tr struct {
		Content string `json:"content"`
	}
	json.Unmarshal(raw, &tr)
	if !strings.Contains(tr.Content, "## Repository excerpts") || !strings.Contains(tr.Content, "internal/retrieve/classify.go") {
		t.Errorf("retrieve_context content:\n%.600s", tr.Content)
	}
	raw = p.mustCall("tools/call", map[string]any{"name": "find_symbols", "input": map[string]any{"query": "Classify"}})
	json.Unmarshal(raw, &tr)
	if tr.Content == "" {
		t.Error("find_symbols returned nothing")
	}
	if _, e := p.call("tools/call", map[string]any{"name": "find_symbols", "input": map[string]any{"query": "x", "kind": "banana"}}); e == nil || e.Code != -32005 {
		t.Errorf("find_symbols with a bad kind: %v, want -32005", e)
	}
}

// TestCLIRetrieve runs task-x retrieve on a copy of this repository.
func TestCLIRetrieve(t *testing.T) {
	repo := copyRepo(t)
	cmd := exec.Command(filepath.Join(binDir, "task-x"), "retrieve", "--no-text", repo, "prompt classifier")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("task-x retrieve: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"terms: prompt, classifier", "internal/retrieve/classify.go", "score "} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
