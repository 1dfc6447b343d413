// Command task-x is a terminal client of task-x-runtime: it starts the
// runtime, speaks the protocol of ../shared/spec/protocol.md over its stdio as
// the VS Code extension does, and shows the results on the terminal.
//
//	task-x open [DIR]
//	task-x run --provider KIND --model M [--base-url URL] [--mode agent|ask] [DIR] "prompt"
//	task-x graph [--focus PATH] [--level file|module] [--format text|dot|svg] [DIR]
//
// The API key comes from the provider's usual environment variable
// (ANTHROPIC_API_KEY, OPENAI_API_KEY; TASK_X_API_KEY for an OpenAI-compatible
// server or Ollama behind a proxy), never from a flag that shows in ps.
package main

import (
	"fmt"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

const usage = `usage:
  task-x open [--json] [DIR]
      open a folder and print the workspace summary
  task-x run --provider KIND --model MODEL [--base-url URL] [--mode agent|ask]
             [--accept-edits] [--no-sandbox] [--no-validate] [--data-dir DIR] [DIR] "prompt"
      run an agent task on the folder, streaming the answer and asking approvals here
  task-x retrieve [--budget N] [--focus PATH] [--json] [--no-text] [DIR] "query"
      print the snippets context/retrieve ranks for the query, with scores and reasons

  task-x graph [--focus PATH] [--level file|module] [--format text|dot|svg]
             [--depth N] [--max-nodes N] [--imports-only] [DIR]
      print the project graph (svg needs Graphviz's dot)

KIND is anthropic, openai, openaiCompatible or ollama. The key is read from
ANTHROPIC_API_KEY (anthropic), OPENAI_API_KEY (openai, and openaiCompatible when
TASK_X_API_KEY is unset) or TASK_X_API_KEY. TASK_X_RUNTIME names the runtime
binary (default: task-x-runtime next to this program, else on PATH).
`

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "open":
		return cmdOpen(args[1:])
	case "run":
		return cmdRun(args[1:])
	case "retrieve":
		return cmdRetrieve(args[1:])
	case "graph":
		return cmdGraph(args[1:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "task-x: unknown command %q\n%s", args[0], usage)
	return 2
}
