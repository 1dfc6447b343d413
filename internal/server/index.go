package server

import (
	"context"
	"fmt"
	"os"

	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// parseFile is the workspace.Parser the server installs: it reads the
// indexed file (at most 1 MiB, the scanner skips larger ones) and, for a
// language internal/syntax supports, stores the *syntax.FileInfo in
// File.Parsed with its symbol count. Files of other languages get an empty
// result. A parse stopped by the time limit returns an error, which the
// workspace counts in stats.parseErrors; a tree with syntax errors is not
// an error (its symbols are kept).
func parseFile(ctx context.Context, abs string, f *workspace.File) (workspace.ParseResult, error) {
	if !syntax.Supported(f.Language) {
		return workspace.ParseResult{}, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	info, err := syntax.Parse(ctx, f.Language, src, nil)
	if err != nil {
		return workspace.ParseResult{}, err
	}
	if info.TimedOut {
		return workspace.ParseResult{}, fmt.Errorf("parse of %s stopped after %v", f.Path, syntax.DefaultTimeout)
	}
	return workspace.ParseResult{Symbols: len(info.Symbols), Data: info}, nil
}
