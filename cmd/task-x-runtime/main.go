// Command task-x-runtime is the engine behind the task-x VS Code extension.
// With no flags it serves the JSON-RPC 2.0 protocol of
// ../shared/spec/protocol.md on stdio (one JSON object per line; stdout
// carries protocol messages only, stderr carries logs at the TASK_X_LOG
// level). --version prints the version; --print-schema prints the JSON
// Schema of the protocol (schema/protocol.schema.json). --cpuprofile FILE and
// --memprofile FILE write pprof profiles: the CPU profile of the whole
// run, and the heap profile at exit after a GC (flags only, so the
// runtimes it starts itself, which inherit its environment, never write
// the same file).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/task-x/task-x-runtime/internal/claudecode"
	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/protocol/schema"
	"github.com/task-x/task-x-runtime/internal/sandbox"
	"github.com/task-x/task-x-runtime/internal/server"
	taskxversion "github.com/task-x/task-x-runtime/internal/version"
)

// version is internal/version's (one for both binaries; release builds set
// it there with -ldflags).
var version = taskxversion.Version

// Without --memprofile the runtime samples no allocations: at the default
// rate (one sample per 512 KiB allocated) the samples' stack records grew
// to ~1.5 MB (runtime/metrics profiling/buckets) by the end of a cold
// open of the mixed tree (docs/index.md "Memory: tenth pass"), memory a
// heap profile nobody asked for held. Set here, in the first init of the
// main package, before the open allocates.
func init() {
	if !memProfileFlag(os.Args[1:]) {
		runtime.MemProfileRate = 0
	}
}

// memProfileFlag reports whether args hold the --memprofile flag (in any
// of the flag package's spellings), before the flags are parsed.
func memProfileFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "memprofile" {
			return true
		}
	}
	return false
}

func main() {
	// The command helper of internal/sandbox (the runtime re-executes
	// itself for every run_command); it returns at once otherwise. The
	// package's init already does this; calling it here keeps it visible.
	sandbox.HelperMain()
	os.Exit(run())
}

// helpText is what --help prints above the flags.
const helpText = `task-x-runtime is the engine behind the task-x VS Code extension and the task-x
terminal client. With no flags it serves the task-x protocol (JSON-RPC 2.0, one
JSON object per line) on stdin and stdout; stderr carries logs. Clients start it
themselves: you run it by hand to serve the tools to another MCP client, or to
check its version.

Usage:
  task-x-runtime [flags]
  task-x-runtime --mcp-server [--root DIR] [--data-dir DIR] [--no-tools]
                 [--policy JSON] [--hooks FILE] [--workspace-trusted]
  task-x-runtime --acp [--data-dir DIR]
  task-x-runtime --hook-shell-edit
  task-x-runtime --version

Environment:
  TASK_X_LOG   log level on stderr: error, warn (default), info, debug, trace
  With --acp: TASK_X_PROVIDER, TASK_X_MODEL, TASK_X_BASE_URL, the provider's
  key (ANTHROPIC_API_KEY, OPENAI_API_KEY, TASK_X_API_KEY) and
  TASK_X_ACP_CONFIG (default ~/.task-x/acp.json); see docs/acp.md

Examples:
  # Serve the protocol on stdio (what the extension and task-x do):
  task-x-runtime
  # Be the agent of an ACP editor (Zed, JetBrains, Neovim CodeCompanion):
  TASK_X_PROVIDER=anthropic TASK_X_MODEL=claude-sonnet-4-5 task-x-runtime --acp
  # Serve this folder's tools (read_file, replace_text, ...) to an MCP client:
  task-x-runtime --mcp-server --root ~/src/project
  # The same, refusing writes and running the user's PreToolUse hooks:
  task-x-runtime --mcp-server --root ~/src/project --policy '{"mode":"readOnly"}' \
    --hooks ~/.claude/settings.json
  # Print the version:
  task-x-runtime --version
  # A protocol session by hand (initialize, then open a folder):
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"sh","version":"0"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"workspace/open","params":{"root":"/abs/path"}}' | task-x-runtime

Flags:
`

// usage prints the help: what the command does, examples and the flags.
func usage(fs *flag.FlagSet) {
	io.WriteString(fs.Output(), helpText)
	fs.PrintDefaults()
}

func run() int {
	fs := flag.NewFlagSet("task-x-runtime", flag.ContinueOnError)
	showVersion := fs.Bool("version", false, "print the version and exit")
	mcpServer := fs.Bool("mcp-server", false, "serve the tool registry as an MCP server on stdio")
	acpMode := fs.Bool("acp", false, "serve the Agent Client Protocol v1 on stdio (Zed, JetBrains IDEs, Neovim; docs/acp.md)")
	mcpRoot := fs.String("root", "", "workspace root for --mcp-server (default: the current folder)")
	mcpDataDir := fs.String("data-dir", "", "with --mcp-server, the runtime's data folder (shares the edit log); with --acp, where sessions are saved")
	mcpNoTools := fs.Bool("no-tools", false, "with --mcp-server, serve only the approve tool")
	mcpTaskID := fs.String("task-id", "", "with --mcp-server, the task the edits are recorded under")
	mcpForward := fs.Bool("forward", false, "with --mcp-server, run every tool call in the parent runtime named by TASK_X_APPROVAL (claude/run)")
	mcpPolicy := fs.String("policy", "", `with --mcp-server, agent/run's policy as JSON ({"mode","allow","deny","allowAll"}): a denied call fails, one it would ask about is refused`)
	mcpHooks := fs.String("hooks", "", "with --mcp-server, a file of Claude Code hooks settings whose PreToolUse/PostToolUse hooks run around each call")
	mcpTrusted := fs.Bool("workspace-trusted", false, "with --mcp-server, run the workspace's .task-x/hooks.json hooks too")
	hook := fs.Bool("hook-shell-edit", false, "run as the Claude Code PreToolUse hook")
	printSchema := fs.Bool("print-schema", false, "print the JSON Schema (2020-12) of the protocol and exit")
	cpuProfile := fs.String("cpuprofile", "", "write a pprof CPU profile of the run to this file")
	memProfile := fs.String("memprofile", "", "write a pprof heap profile to this file at exit")
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {} // printed below: the help on stdout, an error in one line
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			usage(fs)
			return 0
		}
		fmt.Fprintln(os.Stderr, "task-x-runtime: see task-x-runtime --help")
		return 2 // the flag package printed the error
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "task-x-runtime: unexpected argument %q (see task-x-runtime --help)\n", fs.Arg(0))
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "task-x-runtime: cpuprofile:", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "task-x-runtime: memprofile:", err)
			return 2
		}
		defer func() {
			runtime.GC()
			if err := pprof.WriteHeapProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, "task-x-runtime: memprofile:", err)
			}
			f.Close()
		}()
	}
	if *showVersion {
		fmt.Println("task-x-runtime", version)
		return 0
	}
	if *printSchema {
		b, err := schema.JSON(protocol.Source)
		if err != nil {
			fmt.Fprintln(os.Stderr, "task-x-runtime: print-schema:", err)
			return 1
		}
		os.Stdout.Write(b)
		return 0
	}
	if *hook {
		return claudecode.Hook(os.Stdin, os.Stdout, os.Stderr, os.Getenv("TASK_X_HOOK") == "sandbox")
	}

	secrets := &logx.Secrets{}
	level, lerr := logx.ParseLevel(os.Getenv("TASK_X_LOG"))
	handler := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level, ReplaceAttr: logx.LevelName})
	logger := slog.New(logx.NewRedactingHandler(handler, secrets))
	if lerr != nil {
		logger.Warn(lerr.Error())
	}
	// Keys the runtime itself holds are redacted from logs too.
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "TASK_X_API_KEY"} {
		secrets.Add(os.Getenv(k))
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// No command outlives the runtime (addendum §9).
	defer sandbox.KillAll()
	if *mcpServer {
		return runMCPServer(ctx, *mcpRoot, *mcpDataDir, *mcpTaskID, *mcpNoTools, *mcpForward,
			mcpOptions{policy: *mcpPolicy, hooksFile: *mcpHooks, trusted: *mcpTrusted}, logger, secrets)
	}
	home, _ := os.UserHomeDir()
	if *acpMode {
		return runACP(ctx, home, *mcpDataDir, logger, secrets)
	}
	srv := server.New(&server.Options{Version: version, Logger: logger, Secrets: secrets, Home: home})
	if err := srv.Serve(ctx, os.Stdin, os.Stdout); err != nil {
		logger.Error("session ended", "err", err)
		return 1
	}
	return 0
}
