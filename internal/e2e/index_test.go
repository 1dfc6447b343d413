package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// withoutTimes drops elapsedMs and buildMs at any depth of a JSON value.
func withoutTimes(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "elapsedMs")
			delete(x, "buildMs")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// indexAnswers opens root in p and returns what the client sees: the
// summary, the graph, one file's dependencies and two retrievals.
func indexAnswers(t *testing.T, p *proc, root string) []string {
	t.Helper()
	out := []string{withoutTimes(t, p.mustCall("workspace/open", map[string]any{"root": root}))}
	out = append(out, withoutTimes(t, p.mustCall("graph/project", map[string]any{})))
	out = append(out, withoutTimes(t, p.mustCall("graph/project", map[string]any{"level": "module"})))
	out = append(out, withoutTimes(t, p.mustCall("graph/file", map[string]any{"path": "internal/project/project.go"})))
	for _, q := range []string{"save the index atomically", "parse tree-sitter symbols"} {
		out = append(out, withoutTimes(t, p.mustCall("context/retrieve", map[string]any{"query": q, "budgetTokens": 3000})))
	}
	return out
}

// TestSavedIndexThroughTheBinary: a runtime with a dataDir saves the
// workspace index; a second runtime with the same dataDir reports phase
// loading (no indexing) and answers exactly as the first; a file changed
// while no runtime ran is indexed again (loading, then indexing of that
// one file) and its new symbol is found.
func TestSavedIndexThroughTheBinary(t *testing.T) {
	repo := copyRepo(t)
	dataDir := t.TempDir()

	p1 := start(t)
	p1.initialize(map[string]any{"dataDir": dataDir})
	first := indexAnswers(t, p1, repo)
	ph1, params1 := phases(p1)
	if slices.Contains(ph1, "loading") || !slices.Contains(ph1, "ready") {
		t.Fatalf("first open phases %v", ph1)
	}
	progressInOrder(t, "first open", ph1, params1)
	protocolPhases(t, "first open", params1)
	p1.mustCall("shutdown", nil) // saves the index
	p1.notify("exit", nil)
	p1.wait(10 * time.Second)
	saved, _ := filepath.Glob(filepath.Join(dataDir, "index", "*", "index.bin"))
	if len(saved) != 1 {
		t.Fatalf("saved index files: %v", saved)
	}

	p2 := start(t)
	p2.initialize(map[string]any{"dataDir": dataDir})
	second := indexAnswers(t, p2, repo)
	ph, params := phases(p2)
	if len(ph) == 0 || ph[0] != "loading" || slices.Contains(ph, "indexing") || ph[len(ph)-1] != "ready" {
		t.Errorf("reopen phases %v, want loading first, no indexing, ready last", ph)
	}
	progressInOrder(t, "reopen", ph, params)
	protocolPhases(t, "reopen", params)
	var files int
	json.Unmarshal(params[0]["files"], &files)
	if files == 0 {
		t.Errorf("loading phase without files: %v", params[0])
	}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("answer %d differs after reopen:\n first  %.300s\n second %.300s", i, first[i], second[i])
		}
	}
	p2.mustCall("shutdown", nil)
	p2.notify("exit", nil)
	p2.wait(10 * time.Second)

	f := filepath.Join(repo, "internal", "binx", "binx.go")
	src, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f, append(src, []byte("\n// ChangedWhileDownMarker is added while no runtime runs.\nfunc ChangedWhileDownMarker() {}\n")...), 0o644)
	p3 := start(t)
	p3.initialize(map[string]any{"dataDir": dataDir})
	p3.mustCall("workspace/open", map[string]any{"root": repo})
	ph, params = phases(p3)
	if len(ph) < 2 || ph[0] != "loading" || !slices.Contains(ph, "indexing") {
		t.Errorf("phases after a change %v, want loading then indexing", ph)
	}
	progressInOrder(t, "reopen after a change", ph, params)
	protocolPhases(t, "reopen after a change", params)
	for i, name := range ph {
		if name == "indexing" {
			var parsed int
			json.Unmarshal(params[i]["parsed"], &parsed)
			if parsed != 1 {
				t.Errorf("indexing parsed %d files, want the 1 changed", parsed)
			}
		}
	}
	raw := p3.mustCall("context/retrieve", map[string]any{"query": "ChangedWhileDownMarker", "budgetTokens": 2000})
	if !strings.Contains(string(raw), "internal/binx/binx.go") {
		t.Errorf("changed file's new symbol not retrieved: %.500s", raw)
	}
}

// progressInOrder checks one open's workspace/progress notifications: their
// elapsedMs never go back in time across phases (QA D2: the loading phase
// counted from the open's start, the scan's ticks from the scan's, and graph
// from neither), and files never pass a total.
func progressInOrder(t *testing.T, what string, names []string, params []map[string]json.RawMessage) {
	t.Helper()
	last := int64(-1)
	for i, m := range params {
		var n struct {
			Files     int   `json:"files"`
			Total     int   `json:"total"`
			ElapsedMs int64 `json:"elapsedMs"`
		}
		b, _ := json.Marshal(m)
		json.Unmarshal(b, &n)
		if n.ElapsedMs < last {
			t.Errorf("%s: %s elapsedMs %d after %d (phases %v)", what, names[i], n.ElapsedMs, last, names)
		}
		last = n.ElapsedMs
		if n.Total > 0 && n.Files > n.Total {
			t.Errorf("%s: %s files %d over total %d", what, names[i], n.Files, n.Total)
		}
	}
}
