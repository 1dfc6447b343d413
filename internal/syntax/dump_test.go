package syntax

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchExt maps the extensions of the mixed benchmark tree to language ids
// (a subset of internal/workspace's table).
var benchExt = map[string]string{
	".rs": "rust", ".py": "python", ".pyi": "python", ".ts": "typescript", ".mts": "typescript",
	".cts": "typescript", ".tsx": "tsx", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "javascript", ".go": "go",
}

// TestDumpTree writes Parse's FileInfo of every Rust, Python, TypeScript,
// JavaScript and Go file under TASK_X_BENCH_DIR to TASK_X_DUMP, one JSON
// line per file in walk order, so two builds can be compared file by file
// (cmp). Skipped without both variables.
func TestDumpTree(t *testing.T) {
	dir, out := os.Getenv("TASK_X_BENCH_DIR"), os.Getenv("TASK_X_DUMP")
	if dir == "" || out == "" {
		t.Skip("TASK_X_BENCH_DIR or TASK_X_DUMP not set")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	walkParseable(dir, func(path, lang string, src []byte) {
		info, err := Parse(context.Background(), lang, src, nil)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return
		}
		enc.Encode(struct {
			Path string
			Info *FileInfo
		}{path, info})
	})
}

// walkParseable calls fn with every file of benchExt's languages under dir
// (up to 1 MiB, as the workspace), in walk order, skipping .git and
// node_modules (but for dir itself, and any when TASK_X_BENCH_NODE_MODULES=1).
func walkParseable(dir string, fn func(path, lang string, src []byte)) {
	modules := os.Getenv("TASK_X_BENCH_NODE_MODULES") == "1"
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" && !modules && path != dir {
				return filepath.SkipDir
			}
			return nil
		}
		lang, ok := benchExt[strings.ToLower(filepath.Ext(path))]
		if !ok {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || len(src) > 1<<20 {
			return nil
		}
		fn(path, lang, src)
		return nil
	})
}
