package tool

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"sync"
)

// Index is the read-only view of the workspace index that tools use: the
// indexed files and the exclude rules. Paths are relative to the root with "/".
type Index interface {
	// Files returns the indexed file paths, sorted.
	Files() []string
	// Excluded reports whether rel is excluded (.gitignore, built-in
	// excludes, the request's globs). isDir marks a directory.
	Excluded(rel string, isDir bool) bool
}

// Env is the environment of one task's tool calls. Root is absolute with
// symlinks resolved. Index may be nil when no workspace is open (tools that
// need one fail with ErrNoWorkspace). Sandbox is the initialize sandbox
// setting. Reads is the task's stale-edit record and is never nil once
// NewEnv built the Env.
//
// Edits is the workspace's edit log; when nil (tools/call before a log
// exists, tests) the edit tools write atomically without logging.
type Env struct {
	Root    string
	Index   Index
	Sandbox bool
	TaskID  string
	Reads   *ReadTracker
	Edits   EditLog
}

// NewEnv returns an Env with a fresh ReadTracker.
func NewEnv(root string, idx Index, sandbox bool, taskID string) *Env {
	return &Env{Root: root, Index: idx, Sandbox: sandbox, TaskID: taskID, Reads: NewReadTracker()}
}

// ReadTracker remembers, per absolute path, the content hash the agent last
// read or wrote, for the stale-edit check of addendum §4.
type ReadTracker struct {
	mu   sync.Mutex
	seen map[string][sha256.Size]byte
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker {
	return &ReadTracker{seen: map[string][sha256.Size]byte{}}
}

// Record stores content as what the agent last saw of path.
func (t *ReadTracker) Record(path string, content []byte) {
	sum := sha256.Sum256(content)
	t.mu.Lock()
	t.seen[path] = sum
	t.mu.Unlock()
}

// Forget drops the record of path (after a delete or move).
func (t *ReadTracker) Forget(path string) {
	t.mu.Lock()
	delete(t.seen, path)
	t.mu.Unlock()
}

// Stale reports whether path has a record that differs from content. A path
// the agent never read or wrote is not stale.
func (t *ReadTracker) Stale(path string, content []byte) bool {
	t.mu.Lock()
	sum, ok := t.seen[path]
	t.mu.Unlock()
	return ok && sum != sha256.Sum256(content)
}

// FileEdit is one file of an edit handed to the edit log. Path is relative to
// the root with "/". Before is the content the tool read and based the edit
// on; Existed is false for a file the edit creates. After is the new content,
// ignored when Delete. Mode is the permission of a created file (0: 0o644).
type FileEdit struct {
	Path    string
	Existed bool
	Before  []byte
	Delete  bool
	After   []byte
	Mode    fs.FileMode
}

// EditLog records and performs edits (implemented over internal/editlog by
// builtin.LogEdits; addendum §4 "every edit goes through the edit log").
// Apply checks that every file still holds Before (a *Error of kind
// ErrStale otherwise), records the operation, writes every file atomically
// or none, and returns the operation id.
type EditLog interface {
	Apply(ctx context.Context, taskID, callID, tool string, files []FileEdit) (operation string, err error)
}

type callIDKey struct{}

// WithCallID returns a ctx carrying the id of the tool call being run, so the
// edit log can record which call made an operation.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the tool call id set by WithCallID, or "".
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
