package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// graphFixture copies internal/graph/testdata/ts (a TypeScript project with
// index files, extensionless imports and an import cycle between
// src/app.tsx and src/lib/index.ts) into a temporary folder.
func graphFixture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "graph", "testdata", "ts")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// phases returns the workspace/progress phases recorded so far (and
// forgets them), with the params of each. A notification with a stage
// (additive: "loading" in indexing, "retrieval" in graph) is named by its
// stage.
func phases(p *proc) ([]string, []map[string]json.RawMessage) {
	var names []string
	var params []map[string]json.RawMessage
	for _, n := range p.notifications("workspace/progress") {
		var m map[string]json.RawMessage
		json.Unmarshal(n.Params, &m)
		var ph, stage string
		json.Unmarshal(m["phase"], &ph)
		json.Unmarshal(m["stage"], &stage)
		if stage != "" {
			ph = stage
		}
		names = append(names, ph)
		params = append(params, m)
	}
	return names, params
}

// protocolPhases checks that every workspace/progress notification has
// one of protocol.md's phases: a new value of an existing field is not an
// additive change (Compatibility), so the runtime's own stages ride in the
// additive stage field of the phase they belong to.
func protocolPhases(t *testing.T, what string, params []map[string]json.RawMessage) {
	t.Helper()
	for _, m := range params {
		var ph, stage string
		json.Unmarshal(m["phase"], &ph)
		json.Unmarshal(m["stage"], &stage)
		switch {
		case !slices.Contains([]string{"indexing", "graph", "ready", "updated", "failed"}, ph):
			t.Errorf("%s: workspace/progress phase %q is not one of protocol.md's", what, ph)
		case stage == "loading" && ph != "indexing", stage == "retrieval" && ph != "graph":
			t.Errorf("%s: stage %q in phase %q", what, stage, ph)
		}
	}
}

func dependsOn(d protocol.GraphFileResult, path, kind string) bool {
	return slices.ContainsFunc(d.DependsOn, func(e protocol.GraphDep) bool {
		return e.Path == path && string(e.Kind) == kind
	})
}

func TestGraphThroughTheBinary(t *testing.T) {
	root := graphFixture(t)
	p := start(t)
	p.initialize(nil)

	// Without a workspace: -32004.
	for _, m := range []string{"graph/project", "graph/file", "workspace/refresh"} {
		if _, err := p.call(m, map[string]any{"path": "src/app.tsx"}); err == nil || err.Code != -32004 {
			t.Errorf("%s without a workspace: %v, want -32004", m, err)
		}
	}

	p.mustCall("workspace/open", map[string]any{"root": root})
	names, params := phases(p)
	protocolPhases(t, "workspace/open", params)
	if !slices.Contains(names, "retrieval") {
		t.Errorf("workspace/open phases %v: want the retrieval stage", names)
	}
	gi, ri := slices.Index(names, "graph"), slices.Index(names, "ready")
	if gi < 0 || ri < gi {
		t.Fatalf("workspace/open phases %v: want graph then ready", names)
	}
	var ready struct {
		Graph *struct {
			Files            int        `json:"files"`
			Version          string     `json:"version"`
			Cycles           int        `json:"cycles"`
			ImportCycles     [][]string `json:"importCycles"`
			ImportCycleSizes []int      `json:"importCycleSizes"`
		} `json:"graph"`
	}
	raw, _ := json.Marshal(params[ri])
	json.Unmarshal(raw, &ready)
	if ready.Graph == nil || ready.Graph.Version == "" {
		t.Fatalf("ready carries no graph stats: %s", raw)
	}
	// One small cycle: ready's preview is the whole list (graph/project's).
	if ready.Graph.Cycles != 1 || len(ready.Graph.ImportCycles) != 1 || !slices.Equal(ready.Graph.ImportCycleSizes, []int{2}) ||
		!slices.Equal(ready.Graph.ImportCycles[0], []string{"src/app.tsx", "src/lib/index.ts"}) {
		t.Errorf("ready import cycles: %s", raw)
	}
	if ready.Graph.Files == 0 {
		t.Fatalf("ready reports an empty graph (no file parsed): %s", raw)
	}

	var g protocol.GraphProjectResult
	json.Unmarshal(p.mustCall("graph/project", map[string]any{}), &g)
	if g.Stats.Files < 6 || g.Stats.ImportEdges < 7 || g.Total != len(g.Nodes) {
		t.Errorf("graph/project stats %+v total %d nodes %d", g.Stats, g.Total, len(g.Nodes))
	}
	if len(g.Stats.ImportCycles) != 1 || !slices.Equal(g.Stats.ImportCycles[0], []string{"src/app.tsx", "src/lib/index.ts"}) {
		t.Errorf("importCycles = %v", g.Stats.ImportCycles)
	}
	for _, e := range g.Edges {
		if e.From < 0 || e.From >= len(g.Nodes) || e.To < 0 || e.To >= len(g.Nodes) {
			t.Fatalf("edge out of range: %+v", e)
		}
	}

	// focus with depth, module level, bad params.
	var fg protocol.GraphProjectResult
	json.Unmarshal(p.mustCall("graph/project", map[string]any{"focus": filepath.Join(root, "src/components/Button.tsx"), "depth": 1}), &fg)
	if len(fg.Nodes) != 2 || fg.Nodes[0].ID != "src/components/Button.tsx" || fg.Nodes[1].ID != "src/app.tsx" {
		t.Errorf("focus Button.tsx depth 1: %+v", fg.Nodes)
	}
	var mg protocol.GraphProjectResult
	json.Unmarshal(p.mustCall("graph/project", map[string]any{"level": "module", "importsOnly": true}), &mg)
	for _, n := range mg.Nodes {
		if n.ID == "src/lib" && !n.InCycle {
			t.Errorf("module src/lib should be in the src ↔ src/lib cycle: %+v", mg.Nodes)
		}
	}
	for _, bad := range []map[string]any{{"level": "package"}, {"focus": "nope"}, {"maxNodes": -1}} {
		if _, err := p.call("graph/project", bad); err == nil || err.Code != -32602 {
			t.Errorf("graph/project %v: %v, want -32602", bad, err)
		}
	}

	var fd protocol.GraphFileResult
	json.Unmarshal(p.mustCall("graph/file", map[string]any{"path": "src/app.tsx"}), &fd)
	if !dependsOn(fd, "src/lib/index.ts", "import") || !dependsOn(fd, "src/components/Button.tsx", "import") ||
		!slices.Equal(fd.ImportCycle, []string{"src/app.tsx", "src/lib/index.ts"}) {
		t.Errorf("graph/file src/app.tsx = %+v", fd)
	}
	if _, err := p.call("graph/file", map[string]any{"path": "src/nope.ts"}); err == nil || err.Code != -32602 {
		t.Errorf("graph/file of an unindexed path: %v, want -32602", err)
	}

	// The tool gives the same data.
	var tc struct {
		Content string                   `json:"content"`
		Data    protocol.GraphFileResult `json:"data"`
	}
	json.Unmarshal(p.mustCall("tools/call", map[string]any{"name": "get_dependencies", "input": map[string]any{"path": "src/app.tsx"}}), &tc)
	if !slices.Equal(tc.Data.ImportCycle, fd.ImportCycle) || len(tc.Data.DependsOn) != len(fd.DependsOn) || tc.Content == "" {
		t.Errorf("get_dependencies = %+v", tc)
	}

	// Break the cycle on disk, tell the runtime, and the graph follows.
	if err := os.WriteFile(filepath.Join(root, "src/lib/index.ts"), []byte("export * from \"./math\";\nexport function util() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.notify("workspace/filesChanged", map[string]any{"paths": []string{"src/lib/index.ts"}})
	json.Unmarshal(p.mustCall("graph/file", map[string]any{"path": "src/app.tsx"}), &fd)
	if len(fd.ImportCycle) != 0 {
		t.Errorf("after filesChanged the cycle should be gone: %+v", fd)
	}
	if names, params := phases(p); !slices.Contains(names, "updated") {
		t.Errorf("filesChanged phases %v: want updated", names)
	} else {
		protocolPhases(t, "workspace/filesChanged", params)
	}
	// A deleted file leaves the graph.
	os.Remove(filepath.Join(root, "src/legacy.js"))
	p.notify("workspace/filesChanged", map[string]any{"paths": []string{filepath.Join(root, "src/legacy.js")}})
	if _, err := p.call("graph/file", map[string]any{"path": "src/legacy.js"}); err == nil || err.Code != -32602 {
		t.Errorf("graph/file of a deleted file: %v, want -32602", err)
	}

	// workspace/refresh: graph then ready, with the graph stats.
	os.WriteFile(filepath.Join(root, "src/extra.ts"), []byte("import { add } from \"./lib/math\";\nadd(1, 2);\n"), 0o644)
	p.mustCall("workspace/refresh", nil)
	names, params = phases(p)
	protocolPhases(t, "workspace/refresh", params)
	gi, ri = slices.Index(names, "graph"), slices.Index(names, "ready")
	if gi < 0 || ri < gi {
		t.Fatalf("workspace/refresh phases %v: want graph then ready", names)
	}
	raw, _ = json.Marshal(params[ri])
	var ready2 struct {
		Stats struct {
			IndexedFiles int `json:"indexedFiles"`
		} `json:"stats"`
		Graph struct {
			Cycles int `json:"cycles"`
		} `json:"graph"`
		ElapsedMs *int64 `json:"elapsedMs"`
	}
	json.Unmarshal(raw, &ready2)
	if ready2.Stats.IndexedFiles == 0 || ready2.Graph.Cycles != 0 || ready2.ElapsedMs == nil {
		t.Errorf("refresh ready = %s", raw)
	}
	json.Unmarshal(p.mustCall("graph/file", map[string]any{"path": "src/extra.ts"}), &fd)
	if !dependsOn(fd, "src/lib/math.ts", "import") {
		t.Errorf("graph/file src/extra.ts after refresh = %+v", fd)
	}
}
