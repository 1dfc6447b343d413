package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-runewidth"
	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// useColor: a terminal, no NO_COLOR, no --no-color.
func useColor(f *os.File) bool {
	if g.noColor || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(f)
}

// styles are the colours of one output; the zero-colour set renders plain
// text.
type styles struct {
	color                       bool
	add, del, hunk, file, dim   lipgloss.Style
	tool, ok, bad, warn, prompt lipgloss.Style
}

func newStyles(color bool) styles {
	r := lipgloss.NewRenderer(io.Discard)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	s := func() lipgloss.Style { return r.NewStyle() }
	return styles{
		color:  color,
		add:    s().Foreground(lipgloss.Color("2")),
		del:    s().Foreground(lipgloss.Color("1")),
		hunk:   s().Foreground(lipgloss.Color("6")),
		file:   s().Bold(true),
		dim:    s().Foreground(lipgloss.Color("8")),
		tool:   s().Foreground(lipgloss.Color("5")).Bold(true),
		ok:     s().Foreground(lipgloss.Color("2")),
		bad:    s().Foreground(lipgloss.Color("1")).Bold(true),
		warn:   s().Foreground(lipgloss.Color("3")),
		prompt: s().Foreground(lipgloss.Color("4")).Bold(true),
	}
}

// renderDiff colours a unified diff line by line: additions green, removals
// red, hunk headers cyan, file headers bold; at most maxLines lines.
func renderDiff(st styles, diff string, maxLines int) string {
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	more := 0
	if maxLines > 0 && len(lines) > maxLines {
		more = len(lines) - maxLines
		lines = lines[:maxLines]
	}
	var b strings.Builder
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			l = st.file.Render(l)
		case strings.HasPrefix(l, "@@"):
			l = st.hunk.Render(l)
		case strings.HasPrefix(l, "+"):
			l = st.add.Render(l)
		case strings.HasPrefix(l, "-"):
			l = st.del.Render(l)
		}
		b.WriteString("    " + l + "\n")
	}
	if more > 0 {
		b.WriteString(st.dim.Render(fmt.Sprintf("    … %d more lines", more)) + "\n")
	}
	return b.String()
}

// truncate cuts s to at most width terminal cells, whole runes only, with
// "…" when cut. Newlines and runs of spaces become one space.
func truncate(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if runewidth.StringWidth(s) <= width {
		return s
	}
	return runewidth.Truncate(s, width, "…")
}

// lastLines is the last n lines of s and how many were left out.
func lastLines(s string, n int) ([]string, int) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, 0
	}
	if len(lines) <= n {
		return lines, 0
	}
	return lines[len(lines)-n:], len(lines) - n
}

// renderMarkdown renders text for a terminal of the given width; plain
// (no ANSI) without colour.
func renderMarkdown(text string, color bool, width int) string {
	style := "notty"
	if color {
		style = "dark"
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(width))
	if err != nil {
		return text
	}
	out, err := r.Render(text)
	if err != nil {
		return text
	}
	return out
}

// termWidth is stdout's width, 100 when unknown.
func termWidth() int {
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 20 {
		return w
	}
	return 100
}

// formatDuration: "850ms", "4.2s", "2m05s".
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// progressBar renders workspace/progress on stderr when it is a terminal:
// a bar of files seen against the total (the runtime's additive `total`,
// else the folder's count at its last open by this client), parsed, the
// phase and the elapsed time.
type progressBar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	shown   bool
	total   int // the folder's file count at its last open here, 0 when unknown
	width   int
}

func newProgressBar(total int) *progressBar {
	w := 100
	if cols, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && cols > 20 {
		w = cols - 1
	}
	return &progressBar{w: os.Stderr, enabled: isTerminal(os.Stderr), total: total, width: w}
}

// progressLine is the bar's text for one workspace/progress.
func progressLine(phase string, files, parsed, total int, elapsed time.Duration) string {
	const width = 24
	bar := ""
	if total > 0 {
		f := min(float64(files)/float64(total), 1)
		n := int(f * width)
		bar = fmt.Sprintf("[%s%s] %3.0f%% ", strings.Repeat("█", n), strings.Repeat("░", width-n), f*100)
	}
	of := ""
	if total > 0 {
		of = fmt.Sprintf(" of ~%d", total)
	}
	switch phase {
	case "indexing":
		return fmt.Sprintf("%sindexing: %d files seen%s, %d parsed (%s)", bar, files, of, parsed, formatDuration(elapsed))
	case "graph":
		return fmt.Sprintf("%sbuilding the graph: %d files (%s)", bar, files, formatDuration(elapsed))
	case "retrieval":
		return fmt.Sprintf("%sbuilding the search index: %d files (%s)", bar, files, formatDuration(elapsed))
	case "loading":
		return fmt.Sprintf("loading the saved index: %d files (%s)", files, formatDuration(elapsed))
	}
	return fmt.Sprintf("%s%s: %d files (%s)", bar, phase, files, formatDuration(elapsed))
}

func (p *progressBar) update(params json.RawMessage) {
	if !p.enabled {
		return
	}
	var pr struct {
		Phase     string `json:"phase"`
		Stage     string `json:"stage"` // additive: loading (in indexing), retrieval (in graph)
		Files     int    `json:"files"`
		Parsed    int    `json:"parsed"`
		Total     int    `json:"total"` // additive: the previous scan's count
		ElapsedMs int64  `json:"elapsedMs"`
	}
	if json.Unmarshal(params, &pr) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch pr.Phase {
	case "ready", "failed", "updated":
		p.clearLocked()
	default:
		total := p.total
		if pr.Total > 0 {
			total = pr.Total
		}
		name := pr.Phase
		if pr.Stage != "" {
			name = pr.Stage
		}
		fmt.Fprintf(p.w, "\r\033[K%s", runewidth.Truncate(progressLine(name, pr.Files, pr.Parsed, total, time.Duration(pr.ElapsedMs)*time.Millisecond), p.width, "…"))
		p.shown = true
	}
}

func (p *progressBar) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

func (p *progressBar) clearLocked() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// truncateLine cuts one line of output to width cells, whole runes only,
// keeping its spacing (tabs become four spaces).
func truncateLine(s string, width int) string {
	s = strings.ReplaceAll(strings.TrimRight(s, "\r"), "\t", "    ")
	if runewidth.StringWidth(s) <= width {
		return s
	}
	return runewidth.Truncate(s, width, "…")
}

// wrapText wraps s (ANSI-aware, at spaces, else anywhere) to fit width
// cells after a short label, continuation lines indented; width 0 leaves it.
func wrapText(s string, width int, indent string) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(ansi.Wrap(s, max(20, width-len(indent)-8), " "), "\n")
	return strings.Join(lines, "\n"+indent)
}

// wrapLines wraps every line of s to width cells (the viewport cuts lines
// longer than its width).
func wrapLines(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Wrap(l, width, " ")
		}
	}
	return strings.Join(lines, "\n")
}
