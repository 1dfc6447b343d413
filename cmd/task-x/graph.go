package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

// graphResult is graph/project's result as this client reads it.
type graphResult struct {
	Nodes []struct {
		ID       string `json:"id"`
		Language string `json:"language"`
		Symbols  int    `json:"symbols"`
		Files    int    `json:"files"`
		Degree   int    `json:"degree"`
		InCycle  bool   `json:"inCycle"`
	} `json:"nodes"`
	Edges []struct {
		From   int    `json:"from"`
		To     int    `json:"to"`
		Weight int    `json:"weight"`
		Kind   string `json:"kind"`
	} `json:"edges"`
	Total int `json:"total"`
	Stats struct {
		Files          int `json:"files"`
		Edges          int `json:"edges"`
		ImportEdges    int `json:"importEdges"`
		ReferenceEdges int `json:"referenceEdges"`
		Modules        int `json:"modules"`
		Cycles         int `json:"cycles"`
		Orphans        int `json:"orphans"`
		Hubs           []struct {
			Path       string `json:"path"`
			Dependents int    `json:"dependents"`
		} `json:"hubs"`
		ImportCycles [][]string `json:"importCycles"`
		BuildMs      int64      `json:"buildMs"`
		Version      string     `json:"version"`
	} `json:"stats"`
}

const graphvizHint = "Graphviz's dot program is not installed; install it (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz) or use --format dot and render the file elsewhere"

// cmdGraph: task-x graph [DIR] [--focus PATH] [--level file|module]
// [--format text|dot|svg] [--depth N] [--max-nodes N] [--imports-only].
// Flags may come before or after DIR.
func cmdGraph(args []string) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	focus := fs.String("focus", "", "file or folder to center on (relative to DIR)")
	level := fs.String("level", "file", "file or module (files rolled up into folders)")
	format := fs.String("format", "text", "text, dot (Graphviz source) or svg (through Graphviz dot)")
	depth := fs.Int("depth", 0, "steps from --focus, both directions (default 1, at most 4)")
	maxNodes := fs.Int("max-nodes", 0, "most nodes shown (default 250, at most 600)")
	importsOnly := fs.Bool("imports-only", false, "import edges only")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) > 1 {
		fmt.Fprintln(os.Stderr, "task-x graph: at most one folder")
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
	dir := strings.Join(pos, "")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, _, code := openWorkspace(ctx, dir, nil, nil, nil)
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
		fmt.Fprintln(os.Stderr, "task-x: graph/project:", rpcMessage(err))
		return 1
	}
	switch *format {
	case "text":
		writeGraphText(os.Stdout, &g)
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
func writeGraphText(w io.Writer, g *graphResult) {
	st := g.Stats
	fmt.Fprintf(w, "%d files, %d modules, %d edges (%d import, %d reference), %d import cycles, %d orphans; built in %d ms (graph v%s)\n",
		st.Files, st.Modules, st.Edges, st.ImportEdges, st.ReferenceEdges, st.Cycles, st.Orphans, st.BuildMs, st.Version)
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
