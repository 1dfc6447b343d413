// Package builtin owns the runtime's built-in tools: read_file, list_files,
// search_text, write_file, replace_text, apply_patch, move_path, delete_path,
// run_command, find_symbols, retrieve_context, get_dependencies and
// ask_user, with their JSON Schemas, permission classes and limits. A tool
// takes everything from its tool.Env (root, index, project, edit log,
// asker, the live key set), never from a front end, so every front end
// serves the same registry (Registry). Every path a tool takes is resolved
// inside the workspace root (fsx.Resolve) and file operations go through an
// os.Root; edits are atomic and checked against the task's read record
// (stale edit); with an edit log in the Env every edit is an operation of
// that log (LogEdits).
//
// Source: ../shared/spec/addendum.md §4 (names, classes, stale edit), §6
// (sandbox), §9 and §11 (inputs, excluded and secret-looking files, process
// trees); protocol.md "Agent, tools, and extensions" (tools/list, tools/call).
package builtin

import (
	"context"
	"log/slog"
	"strings"
	"text/template"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Options configures the built-in tools. A nil *Options is the zero value.
type Options struct {
	// Secrets are the key values the runtime holds (provider API keys). An
	// environment variable whose value equals one is removed from the
	// environment of run_command.
	Secrets []string
	// SecretEnv names more environment variables (for example
	// "MISTRAL_API_KEY") removed from the environment of run_command, on top
	// of ANTHROPIC_API_KEY, OPENAI_API_KEY and OPENROUTER_API_KEY.
	SecretEnv []string
	// Logger receives debug records (tool outcomes, durations, exit codes;
	// never paths' contents, commands or output). Default: discard.
	Logger *slog.Logger
}

// New returns the built-in tools: read_file, list_files, search_text,
// write_file, replace_text, apply_patch, move_path, delete_path,
// run_command, find_symbols, retrieve_context, get_dependencies and
// ask_user.
func New(opts *Options) []tool.Tool {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Secrets = append([]string(nil), o.Secrets...)
	o.SecretEnv = append([]string(nil), o.SecretEnv...)
	return []tool.Tool{
		&readFile{},
		&listFiles{},
		&searchText{},
		&writeFile{write: writeAtomic},
		&replaceText{write: writeAtomic},
		&applyPatch{},
		&movePath{},
		&deletePath{},
		newRunCommand(&o),
		&findSymbols{},
		&retrieveContext{},
		&getDependencies{},
		&askUser{log: o.Logger},
		updatePlan{},
	}
}

// Registry returns a registry of the built-in tools: the one registry the
// protocol server, the MCP server mode and every task serve.
func Registry(opts *Options) *tool.Registry { return tool.NewRegistry(New(opts)...) }

// Register adds the built-in tools of New to r.
func Register(r *tool.Registry, opts *Options) {
	for _, t := range New(opts) {
		r.Add(t)
	}
}

type secretApprovedKey struct{}

// WithSecretApproved returns a ctx under which read_file may read a
// secret-looking file (IsSecretPath): the policy layer sets it once the user
// approved the read (addendum §11).
func WithSecretApproved(ctx context.Context) context.Context {
	return context.WithValue(ctx, secretApprovedKey{}, true)
}

func secretApproved(ctx context.Context) bool {
	v, _ := ctx.Value(secretApprovedKey{}).(bool)
	return v
}

// renderDescription fills a tool description template with its limits.
func renderDescription(text string, data any) string {
	var b strings.Builder
	t, err := template.New("").Parse(text)
	if err == nil {
		err = t.Execute(&b, data)
	}
	if err != nil {
		return strings.TrimSpace(text) // a bad template shows as written; tests catch it
	}
	return strings.TrimSpace(b.String())
}
