// Package tool owns the tool abstraction shared by the agent, tools/list and
// tools/call, and (later) the MCP server: a tool's spec (name, description,
// JSON Schema input, permission class), the registry, the per-task
// environment a tool runs in, and the split between a tool failure (a result
// the model sees, *Error) and a runtime failure (any other error).
//
// Source: ../shared/spec/addendum.md §4 and §11 (tool names, classes, inputs).
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Class is a permission class (addendum §4).
type Class = protocol.Permission

// The permission classes.
const (
	ClassRead        = protocol.PermissionRead
	ClassEdit        = protocol.PermissionEdit
	ClassCommand     = protocol.PermissionCommand
	ClassDestructive = protocol.PermissionDestructive
	ClassMCP         = protocol.PermissionMCP
	ClassInteractive = protocol.PermissionInteractive
)

// Spec is what tools/list reports for a tool: { name, description,
// inputSchema, permission }.
type Spec = protocol.ToolSpec

// FileChange records one file a tool changed, for fileChanged events and the
// summary's changedFiles. Path is relative to the root with "/". Kind is
// "created", "modified" or "deleted". Added and Removed count lines.
type FileChange = protocol.FileChange

// ChangedPaths is the paths of changes, in order (what an index is told
// after a call).
func ChangedPaths(changes []FileChange) []string {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	return paths
}

// Result is a successful tool run. Content is the text the model sees. Data is
// the structured result returned by tools/call and carried by the toolFinished
// event (nil means Content is used). Changes lists files the call changed.
// Background is set when the call goes on after Run returned (run_command
// with background: true, protocol.md agent/event): Content and Data then
// describe the start, and the job delivers the final Result.
type Result struct {
	Content    string
	Data       any
	Changes    []FileChange
	Background *BackgroundJob
	// Operation is the edit-log operation id of an edit (EditLog.Apply);
	// "" when the call changed nothing or ran without an edit log. The
	// agent lists these in its summary's operations.
	Operation string
	// Operations are more operation ids of one call, after Operation (a
	// plan merges each step as an operation of its own).
	Operations []string
}

// BackgroundJob is a tool call still running after Run returned. Done
// delivers exactly one final Result (its Content is the output the model gets
// as a user message) and is then closed. Cancel stops the job and its whole
// process tree; it is safe to call more than once and after the job ended.
type BackgroundJob struct {
	Done   <-chan Result
	Cancel func()
}

// Error kinds of a tool failure (tools/call -32005 data.kind).
const (
	ErrInvalidInput       = "invalidInput"
	ErrNotFound           = "notFound"
	ErrOutsideWorkspace   = "outsideWorkspace"
	ErrExcluded           = "excluded"
	ErrStale              = "staleEdit"
	ErrNoMatch            = "noMatch"
	ErrAmbiguous          = "ambiguous"
	ErrTimeout            = "timeout"
	ErrSandboxUnavailable = "sandboxUnavailable"
	ErrDenied             = "denied"
	ErrCancelled          = "cancelled"
	ErrIO                 = "io"
	ErrUnknownTool        = "unknownTool"
	ErrNoWorkspace        = "noWorkspace"
)

// Error is a tool failure: the model sees Message; tools/call answers -32005
// with data {kind, message}.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Errorf builds a tool failure of the given kind.
func Errorf(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// AsError reports whether err is (or wraps) a tool failure.
func AsError(err error) (*Error, bool) {
	var te *Error
	ok := errors.As(err, &te)
	return te, ok
}

// Tool is one callable tool. Run returns a *Error for a failure the model
// should see and any other error when the runtime itself failed.
type Tool interface {
	Spec() Spec
	Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

// Plan is a change a tool computed before making it (Previewer). Preview is
// what the user approves: for an edit, the unified diff of every file it
// changes ("a/<path>" → "b/<path>", "/dev/null" for a created or deleted
// file, the files' real line numbers, 3 lines of context). Apply makes
// exactly that change and returns what Run would have; it re-checks that
// every file still holds what the plan was computed from and fails with a
// *Error of kind ErrStale when one does not. Apply is called at most once;
// a plan never applied leaves nothing behind.
type Plan struct {
	Preview string
	Apply   func(ctx context.Context) (Result, error)
}

// Previewer is a tool that can compute its change before making it, with
// the code its Run uses (Run is Plan then Apply). Plan fails with the error
// Run would give (no match, ambiguous match, stale file, refused path,
// encoding), so a call that cannot apply fails before the user is asked,
// and an approved call applies the plan the user saw, never a recomputation.
// The edit tools (write_file, replace_text, apply_patch) implement it.
type Previewer interface {
	Tool
	Plan(ctx context.Context, env *Env, input json.RawMessage) (*Plan, error)
}

// Registry is a set of tools by name, safe for concurrent use. A registry
// made by With also offers its base's tools (its own win by name).
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	base  *Registry
}

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range tools {
		r.Add(t)
	}
	return r
}

// With returns a registry of tools on top of r: its Get and Specs see r's
// tools as they are at each call (tools that join r later included) and
// these, which win by name. Add and Remove on it change only its own
// tools. A task's own tools (team mode's) are added so.
func (r *Registry) With(tools ...Tool) *Registry {
	out := NewRegistry(tools...)
	out.base = r
	return out
}

// Add registers t, replacing a tool of the same name.
func (r *Registry) Add(t Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools[t.Spec().Name] = t
}

// Remove drops the tools with these names; unknown names are ignored.
func (r *Registry) Remove(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		delete(r.tools, n)
	}
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	t, ok := r.tools[name]
	base := r.base
	r.mu.RUnlock()
	if !ok && base != nil {
		return base.Get(name)
	}
	return t, ok
}

// Specs returns every tool's spec sorted by name.
func (r *Registry) Specs() []Spec {
	var out []Spec
	own := map[string]bool{}
	r.mu.RLock()
	for name, t := range r.tools {
		out = append(out, t.Spec())
		own[name] = true
	}
	base := r.base
	r.mu.RUnlock()
	if base != nil {
		for _, s := range base.Specs() {
			if !own[s.Name] {
				out = append(out, s)
			}
		}
	}
	if out == nil {
		out = []Spec{}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PlanStep is one step of an update_plan plan: its text and status
// (pending, inProgress or completed).
type PlanStep = protocol.PlanItem

// PlanUpdate is update_plan's result Data: the whole plan as it stands
// (the agent loop sends it as a `plan` event).
type PlanUpdate struct {
	Explanation string     `json:"explanation"`
	Plan        []PlanStep `json:"plan"`
}
