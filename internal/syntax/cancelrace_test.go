package syntax

import (
	"bytes"
	"context"
	"runtime"
	"testing"
)

// TestParseAfterCanceledContext: a parse whose context ends right after
// it returned must not stop the next parse on the same pooled parser (its
// context watcher once set the parser's cancel flag late, and the next
// file's parse stopped at once: TimedOut, no symbols).
func TestParseAfterCanceledContext(t *testing.T) {
	// One P: a watcher goroutine then runs only when the parsing one
	// yields, often during a later parse (the race made likely).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Long enough for tree-sitter to look at the cancel flag.
	src := bytes.Repeat([]byte("pub struct Client { conn: u32 }\nimpl Client { pub fn new() -> Self { Client { conn: 0 } } }\n"), 100)
	for i := range 300 {
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := Parse(ctx, "rust", src, nil); err != nil {
			t.Fatal(err)
		}
		cancel()
		info, err := Parse(context.Background(), "rust", src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if info.TimedOut || len(info.Symbols) == 0 {
			t.Fatalf("parse %d stopped after the previous parse's context ended: %+v", i, info)
		}
	}
}
