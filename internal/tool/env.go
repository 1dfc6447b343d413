package tool

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"sync"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/workspace"
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

// Project is what tools read of the open project beyond its files: the
// index snapshot with parsed symbols, the import/reference graph and ranked
// retrieval. *project.Project implements it; every front end (protocol
// server, MCP server mode, a subagent's worktree) gives its tools one.
type Project interface {
	// Snapshot is the current index snapshot (parsed symbols in
	// File.Parsed).
	Snapshot() *workspace.Snapshot
	// Graph is the graph of the current snapshot, built on first use.
	Graph() *graph.Graph
	// Retrieve ranks the project's code for q (graph neighbours included).
	Retrieve(ctx context.Context, q retrieve.Query) (retrieve.Result, error)
}

// Question is one ask_user question (addendum §4). Kind is "radio" or
// "checkbox"; ID is unique in its call.
type Question struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Kind    string   `json:"kind"`
	Options []string `json:"options"`
}

// Asker puts questions to the user of a task (the protocol server sends
// agent/askUser) and returns the labels picked per question id. An error,
// or nil answers, means the user dismissed the questions; an error that is
// ErrCannotAsk means the user could not be asked at all.
type Asker func(ctx context.Context, taskID, callID string, questions []Question) (map[string][]string, error)

// ErrCannotAsk is (wrapped in) an Asker's error when the client has no way
// to put these questions to its user (an ACP client without a form for a
// question of several answers): ask_user then tells the model the user
// could not be asked, with the reason, rather than that they dismissed it.
var ErrCannotAsk = errors.New("the client cannot put these questions to the user")

// Env is the environment of one task's tool calls: everything a tool uses
// comes from here, never from a front end. Root is absolute with symlinks
// resolved. Index may be nil when no workspace is open (tools that need one
// fail with ErrNoWorkspace). Sandbox is the initialize sandbox setting.
// Reads is the task's stale-edit record and is never nil once NewEnv built
// the Env.
//
// Edits is the workspace's edit log; when nil (tools/call before a log
// exists, tests) the edit tools write atomically without logging. Project
// is the open project (nil: find_symbols, retrieve_context and
// get_dependencies fail with ErrNoWorkspace). Ask is ask_user's way to the
// user (nil: every question is dismissed). Secrets returns the key values
// the runtime holds now (the live set: a key first sent in a later
// ProviderConfig is in it), removed from run_command's environment and
// output; nil means none beyond the tools' own Options.
type Env struct {
	Root    string
	Index   Index
	Sandbox bool
	TaskID  string
	Reads   *ReadTracker
	Edits   EditLog
	Project Project
	Ask     Asker
	Secrets func() []string
	// Editor is the client editor's view of the files (nil: the disk
	// only): read_file and the edit tools read its text of a UTF-8 file
	// (its unsaved buffer wins over the disk) and tell it what the edit
	// log wrote.
	Editor Editor
}

// Editor is a client editor's view of the workspace's files (an Agent
// Client Protocol client's fs/read_text_file and fs/write_text_file).
// Text is its text of the file abs for task taskID, the unsaved buffer
// when the file is open, and false when it has none (the disk is read
// then). Wrote tells it the content the edit log just wrote to abs, so
// its buffer shows the edit. Neither ever fails a tool call.
type Editor interface {
	Text(ctx context.Context, taskID, abs string) (string, bool)
	Wrote(ctx context.Context, taskID, abs string, content []byte)
}

// ForTask returns a copy of e for the task taskID with a fresh stale-edit
// record (every task has its own, addendum §4).
func (e *Env) ForTask(taskID string) *Env {
	cp := *e
	cp.TaskID = taskID
	cp.Reads = NewReadTracker()
	return &cp
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

type outputKey struct{}

// OutputFunc receives a tool's output as it comes: its stream ("stdout"
// or "stderr") and a piece of it. It may be called from any goroutine, one
// call at a time, and must not keep p.
type OutputFunc func(stream string, p []byte)

// WithOutput returns ctx carrying fn: a tool that produces output while it
// runs (run_command) hands it to fn as well as returning it in its result.
func WithOutput(ctx context.Context, fn OutputFunc) context.Context {
	return context.WithValue(ctx, outputKey{}, fn)
}

// Output returns the OutputFunc set by WithOutput, or nil.
func Output(ctx context.Context) OutputFunc {
	fn, _ := ctx.Value(outputKey{}).(OutputFunc)
	return fn
}
