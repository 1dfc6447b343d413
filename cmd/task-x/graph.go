package main

import (
	"github.com/task-x/task-x-runtime/internal/protocol"

	"bytes"
	"context"
	"fmt"
	"github.com/spf13/cobra"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

// graphResult is graph/project's result.
type graphResult = protocol.GraphProjectResult

const graphvizHint = "Graphviz's dot program is not installed; install it (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz) or use --format dot and render the file elsewhere"

func newGraphCmd() *cobra.Command {
	var o graphOpts
	c := &cobra.Command{
		Use:   "graph [DIR]",
		Short: "Print the project's import/reference graph (text, Graphviz dot or svg)",
		Example: `  task-x graph .
  task-x graph --level module
  task-x graph --focus internal/agent --depth 2 --format svg > agent.svg`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			return exitCode(runGraph(dir, o))
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.focus, "focus", "", "file or folder to center on (relative to DIR)")
	fl.StringVar(&o.level, "level", "file", "file or module (files rolled up into folders)")
	fl.StringVar(&o.format, "format", "text", "text, dot (Graphviz source) or svg (through Graphviz dot)")
	fl.IntVar(&o.depth, "depth", 0, "steps from --focus, both directions (default 1, at most 4)")
	fl.IntVar(&o.maxNodes, "max-nodes", 0, "most nodes shown (default 250, at most 600)")
	fl.BoolVar(&o.importsOnly, "imports-only", false, "import edges only")
	return c
}

type graphOpts struct {
	focus, level, format string
	depth, maxNodes      int
	importsOnly          bool
}

func runGraph(dir string, o graphOpts) int {
	focus, level, format, depth, maxNodes, importsOnly := &o.focus, &o.level, &o.format, &o.depth, &o.maxNodes, &o.importsOnly
	if *level != "file" && *level != "module" {
		fmt.Fprintf(os.Stderr, "task-x graph: --level must be file or module, not %q (see task-x graph --help)\n", *level)
		return 2
	}
	switch *format {
	case "text", "dot":
	case "svg":
		if _, err := exec.LookPath("dot"); err != nil {
			fmt.Fprintln(os.Stderr, "task-x graph:", graphvizHint)
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "task-x graph: --format must be text, dot or svg, not %q\n", *format)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, code := openWorkspace(ctx, dir, openOpts{})
	if c == nil {
		return code
	}
	defer c.close()
	params := map[string]any{"level": *level, "importsOnly": *importsOnly}
	if *focus != "" {
		params["focus"] = *focus
	}
	if *depth != 0 {
		params["depth"] = *depth
	}
	if *maxNodes != 0 {
		params["maxNodes"] = *maxNodes
	}
	var g graphResult
	if err := c.call(ctx, "graph/project", params, &g); err != nil {
		fmt.Fprintln(os.Stderr, "task-x:", friendly(err))
		return 1
	}
	switch *format {
	case "text":
		writeGraphText(os.Stdout, &g, *level)
	case "dot":
		writeGraphDot(os.Stdout, &g)
	case "svg":
		// Graphviz's layout grows much faster than linearly: a few thousand
		// edges already take minutes. Say so instead of hanging.
		if len(g.Edges) > maxSVGEdges {
			fmt.Fprintf(os.Stderr, "task-x graph: %d edges is too many to lay out as svg (at most %d); narrow it with --focus PATH, --max-nodes N, --imports-only or --level module, or use --format dot\n", len(g.Edges), maxSVGEdges)
			return 1
		}
		var src bytes.Buffer
		writeGraphDot(&src, &g)
		ctx, cancel := context.WithTimeout(ctx, svgTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "dot", "-Tsvg")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = &src, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				fmt.Fprintf(os.Stderr, "task-x graph: dot did not finish within %v; narrow the graph with --focus or --max-nodes\n", svgTimeout)
				return 1
			}
			fmt.Fprintln(os.Stderr, "task-x graph: dot:", err)
			return 1
		}
	}
	return 0
}

// Limits of --format svg: Graphviz's dot lays out a few hundred edges in
// seconds but a few thousand in minutes.
const (
	maxSVGEdges = 2000
	svgTimeout  = 2 * time.Minute
)

// writeGraphText prints the stats, the nodes by degree with their outgoing
// edges, the import cycles and the hubs.
func writeGraphText(w io.Writer, g *graphResult, level string) {
	st := g.Stats
	cycles, what := st.Cycles, "import cycles"
	if level == "module" {
		// The runtime counts file-level cycles; modules are in a cycle
		// when their import edges close one among the modules shown.
		cycles, what = moduleCycles(g), "module import cycles"
	}
	fmt.Fprintf(w, "%d files, %d modules, %d edges (%d import, %d reference), %d %s, %d orphans; built in %d ms (graph v%s)\n",
		st.Files, st.Modules, st.Edges, st.ImportEdges, st.ReferenceEdges, cycles, what, st.Orphans, st.BuildMs, st.Version)
	fmt.Fprintln(w, "legend: A -> B  A imports B;  A ~> B  A references B's symbols;  xN  N links;  [import cycle]  on an import cycle")
	if g.Total > len(g.Nodes) {
		fmt.Fprintf(w, "showing %d of %d nodes, most connected first\n", len(g.Nodes), g.Total)
	}
	out := make([][]int, len(g.Nodes))
	for i, e := range g.Edges {
		out[e.From] = append(out[e.From], i)
	}
	fmt.Fprintln(w)
	for i, n := range g.Nodes {
		mark := ""
		if n.InCycle {
			mark = "  [import cycle]"
		}
		extra := ""
		if n.Files > 1 {
			extra = fmt.Sprintf(", %d files", n.Files)
		}
		fmt.Fprintf(w, "%s  (%s, degree %d, %d symbols%s)%s\n", n.ID, n.Language, n.Degree, n.Symbols, extra, mark)
		for _, ei := range out[i] {
			e := g.Edges[ei]
			arrow := "->"
			if e.Kind == "reference" {
				arrow = "~>"
			}
			fmt.Fprintf(w, "    %s %s  %s", arrow, g.Nodes[e.To].ID, e.Kind)
			if e.Weight > 1 {
				fmt.Fprintf(w, " x%d", e.Weight)
			}
			fmt.Fprintln(w)
		}
	}
	if len(st.ImportCycles) > 0 {
		fmt.Fprintln(w, "\nimport cycles:")
		for _, c := range st.ImportCycles {
			fmt.Fprintf(w, "  %s\n", strings.Join(c, ", "))
		}
	}
	if len(st.Hubs) > 0 {
		fmt.Fprintln(w, "\nhubs (files most others depend on):")
		for _, h := range st.Hubs {
			fmt.Fprintf(w, "  %-50s %d dependents\n", h.Path, h.Dependents)
		}
	}
}

// writeGraphDot prints Graphviz source: import edges solid, reference
// edges dashed, nodes in an import cycle filled.
func writeGraphDot(w io.Writer, g *graphResult) {
	fmt.Fprintln(w, "digraph project {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, `  node [shape=box, fontname="Helvetica", fontsize=10];`)
	for i, n := range g.Nodes {
		attrs := fmt.Sprintf("label=%s", strconv.Quote(n.ID))
		if n.InCycle {
			attrs += `, style=filled, fillcolor="#f4cccc"`
		}
		fmt.Fprintf(w, "  n%d [%s];\n", i, attrs)
	}
	for _, e := range g.Edges {
		style := "solid"
		if e.Kind == "reference" {
			style = "dashed"
		}
		fmt.Fprintf(w, "  n%d -> n%d [style=%s, penwidth=%.1f];\n", e.From, e.To, style, 1+min(float64(e.Weight), 8)/4)
	}
	fmt.Fprintln(w, "}")
}

// moduleCycles counts the strongly connected components of more than one
// node (or a self-import) in the import edges among g's nodes (Tarjan).
func moduleCycles(g *graphResult) int {
	n := len(g.Nodes)
	adj := make([][]int, n)
	self := make([]bool, n)
	for _, e := range g.Edges {
		if e.Kind == "reference" || e.From < 0 || e.From >= n || e.To < 0 || e.To >= n {
			continue
		}
		if e.From == e.To {
			self[e.From] = true
		}
		adj[e.From] = append(adj[e.From], e.To)
	}
	index, low := make([]int, n), make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next, count := 0, 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, u := range adj[v] {
			if index[u] < 0 {
				visit(u)
				low[v] = min(low[v], low[u])
			} else if on[u] {
				low[v] = min(low[v], index[u])
			}
		}
		if low[v] == index[v] {
			size := 0
			for {
				u := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[u] = false
				size++
				if u == v {
					break
				}
			}
			if size > 1 || self[v] {
				count++
			}
		}
	}
	for v := 0; v < n; v++ {
		if index[v] < 0 {
			visit(v)
		}
	}
	return count
}
