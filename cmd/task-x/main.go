// Command task-x is a terminal client of task-x-runtime: it starts the
// runtime, speaks the protocol of ../shared/spec/protocol.md over its stdio as
// the VS Code extension does, and shows the results on the terminal. It is a
// protocol front end only: tasks are assembled by the runtime (addendum §1).
//
// It owns the command line (cobra), the interactive session (a bubbletea
// program with bubbles and huh), the one-shot mode, rendering (lipgloss,
// glamour), the persisted defaults (data folder, MCP files) and the
// user-facing error sentences. docs/terminal.md.
//
// The API key comes from the provider's usual environment variable
// (ANTHROPIC_API_KEY, OPENAI_API_KEY; TASK_X_API_KEY for an OpenAI-compatible
// server or Ollama behind a proxy), never from a flag that shows in ps.
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	taskxversion "github.com/task-x/task-x-runtime/internal/version"
)

// version is internal/version's (one for both binaries; release builds set
// it there with -ldflags).
var version = taskxversion.Version

func main() {
	os.Exit(execute(os.Args[1:]))
}

// exitError carries an exit code through cobra; its message (if any) is
// already printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code}
}

// globals are the flags every command has.
type globals struct {
	verbose bool
	dataDir string
	noColor bool
}

var g globals

func execute(args []string) int {
	root := newRoot()
	root.SetArgs(defaultToRun(root, args))
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "task-x:", err)
	return 2
}

func newRoot() *cobra.Command {
	g = globals{}
	root := &cobra.Command{
		Use:   "task-x",
		Short: "A terminal client of task-x-runtime: open folders, run agent tasks, inspect the index",
		Long: `task-x drives task-x-runtime over its protocol (JSON-RPC on stdio), as the VS Code
extension does. With no command and a terminal, "task-x run" starts an interactive session.

The key is read from ANTHROPIC_API_KEY (anthropic), OPENAI_API_KEY (openai, and
openaiCompatible when TASK_X_API_KEY is unset) or TASK_X_API_KEY. TASK_X_RUNTIME names the
runtime binary (default: task-x-runtime next to this program, else on PATH).`,
		Example: `  task-x open .
  task-x run --provider anthropic --model claude-sonnet-4-5 .
  task-x run -p "where is the config parsed?" --mode ask --provider ollama --model qwen3:latest
  task-x resume
  task-x graph --level module .`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("task-x {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.BoolVar(&g.verbose, "verbose", false, "show protocol error codes and data")
	pf.StringVar(&g.dataDir, "data-dir", "", "folder for saved tasks, checkpoints and logs (default $XDG_DATA_HOME/task-x)")
	pf.BoolVar(&g.noColor, "no-color", false, "no colours (also when NO_COLOR is set or output is not a terminal)")
	root.AddCommand(newOpenCmd(), newRunCmd(), newResumeCmd(), newTasksCmd(), newRetrieveCmd(), newGraphCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintf(os.Stderr, "%s: %v (see %s --help)\n", c.CommandPath(), err, c.CommandPath())
		return exitCode(2)
	})
	return root
}

// defaultToRun makes "run" the command when none is named, as claude and
// codex take a prompt with no command: task-x -p "explain", task-x
// "prompt", cat log | task-x -p "explain", task-x -C DIR. --help and
// --version stay the root's.
func defaultToRun(root *cobra.Command, args []string) []string {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") || slices.Contains(args, "--version") {
		return args
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--data-dir":
			i++ // its value
		case strings.HasPrefix(a, "-"):
		default:
			if c, _, err := root.Find([]string{a}); err == nil && c != root {
				return args // a command
			}
			if a == "help" || a == "completion" {
				return args
			}
			return append([]string{"run"}, args...)
		}
	}
	return append([]string{"run"}, args...)
}

// usageError prints a one-line usage error and returns exit code 2.
func usageError(c *cobra.Command, format string, a ...any) error {
	fmt.Fprintf(os.Stderr, "%s: %s (see %s --help)\n", c.CommandPath(), fmt.Sprintf(format, a...), c.CommandPath())
	return exitCode(2)
}
