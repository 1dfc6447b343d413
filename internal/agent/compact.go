package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// Context compression constants (protocol.md Context compression).
const (
	compressedMarker = "[context compressed]"
	keepRecent       = 6    // messages never pruned or folded
	longOutput       = 2000 // characters above which an old output is cut
	keepHead         = 1200
	keepTail         = 400
	imageTokens      = 1600 // the estimate of one image
	charsPerToken    = 4
)

// window returns the context window of p: limits.contextWindowTokens, else
// the provider lookup through Options.Windows (5-minute cache), else the
// built-in estimate.
func (r *run) lookupWindow(ctx context.Context, p provider.Provider) int {
	if w := r.p.Limits.ContextWindowTokens; w > 0 {
		return w
	}
	if r.opts.Windows != nil {
		w, _ := r.opts.Windows.Lookup(ctx, p)
		return w
	}
	cfg := p.Config()
	return provider.EstimateWindow(cfg.Kind, cfg.Model)
}

// rawEstimate is the uncalibrated size of the next request in tokens:
// characters / 4 of the system prompt, tool specs and messages, plus 1600
// per image.
func (r *run) rawEstimate() int {
	chars := utf8.RuneCountInString(r.system()) + r.specChars
	images := 0
	for _, m := range r.messages {
		for _, p := range m.Content {
			switch p.Type {
			case provider.PartImage:
				images++
			default:
				chars += len(p.Text) + len(p.Input) + len(p.Content) + len(p.Name) + len(p.ID) + len(p.ToolUseID)
			}
		}
	}
	return chars/charsPerToken + images*imageTokens
}

// estimate calibrates rawEstimate by the ratio of the last response's real
// inputTokens to the raw estimate of the request it answered.
func (r *run) estimate() int {
	raw := r.rawEstimate()
	if r.calibRaw > 0 && r.calibInput > 0 {
		return int(float64(raw) * float64(r.calibInput) / float64(r.calibRaw))
	}
	return raw
}

// A reported prompt below truncatedRatio of the raw estimate, and at least
// truncatedGap tokens below it, is taken for a prompt the provider cut (Ollama
// truncates silently at a small num_ctx), not for a better tokenizer: chars/4
// is never off by half on a prompt that size.
const (
	truncatedRatio = 0.5
	truncatedGap   = 2048
)

// calibrate takes the real prompt size of the last response (inputTokens)
// as the ratio for the next estimates, unless it is far below the estimate:
// one truncated count would shrink the estimate and stop compaction while
// the provider keeps cutting. That case is warned about once per task.
func (r *run) calibrate(inputTokens int) {
	if inputTokens <= 0 || r.lastRaw <= 0 {
		return
	}
	if float64(inputTokens) < truncatedRatio*float64(r.lastRaw) && r.lastRaw-inputTokens >= truncatedGap {
		r.log.Warn("reported prompt size far below the estimate; not calibrating with it",
			"inputTokens", inputTokens, "estimate", r.lastRaw, "window", r.window)
		if !r.warnedTruncated {
			r.warnedTruncated = true
			r.emit(protocol.WarningEvent{Message: fmt.Sprintf("the provider reported a prompt of %d tokens, far below the "+
				"estimated %d: it may have cut the prompt (for Ollama, a context window (num_ctx) smaller than the conversation). "+
				"Set limits.contextWindowTokens to the model's real window", inputTokens, r.lastRaw)})
		}
		return
	}
	r.calibRaw, r.calibInput = r.lastRaw, inputTokens
}

// warnOverWindow warns once, until the prompt fits again, when the prompt is
// still above the window after compression: the provider will reject or cut it.
func (r *run) warnOverWindow(est int) {
	if r.window <= 0 || est <= r.window {
		r.overWindow = false
		return
	}
	if r.overWindow {
		return
	}
	r.overWindow = true
	r.emit(protocol.WarningEvent{Message: fmt.Sprintf("the conversation is still about %d tokens after compression, above the "+
		"model's context window of %d: the provider may reject or cut it", est, r.window)})
}

// compact compresses the conversation when the estimate is above
// compactPercent of the window: prune, then fold, then (above 90%) drop the
// repository excerpts, stopping as soon as it fits. It emits `compacted`
// when it changed anything.
func (r *run) compact() {
	limit := r.window * r.p.Limits.compactPercent() / 100
	before := r.estimate()
	if r.window <= 0 || before <= limit {
		r.overWindow = false
		return
	}
	ev := protocol.CompactedEvent{BeforeTokens: before, WindowTokens: r.window}
	ev.Pruned = r.prune()
	if r.estimate() > limit {
		ev.Folded = r.fold()
	}
	if est := r.estimate(); est > limit && est > r.window*dropExcerptsPercent/100 && r.p.Excerpts != "" && !r.excerptsDropped {
		r.excerptsDropped = true
		ev.DroppedRetrieval = true
	}
	ev.AfterTokens = r.estimate()
	if ev.Pruned == 0 && ev.Folded == 0 && !ev.DroppedRetrieval {
		r.log.Info("context above the compaction limit but nothing left to compress", "estimate", before, "window", r.window)
		r.warnOverWindow(before)
		return
	}
	r.log.Info("context compressed", "pruned", ev.Pruned, "folded", ev.Folded, "droppedRetrieval", ev.DroppedRetrieval,
		"beforeTokens", ev.BeforeTokens, "afterTokens", ev.AfterTokens, "windowTokens", r.window)
	r.emit(ev)
	r.warnOverWindow(ev.AfterTokens)
}

type callInfo struct {
	name  string
	input json.RawMessage
	msg   int // index of the assistant message
}

func (r *run) callsByID() map[string]callInfo {
	out := map[string]callInfo{}
	for i, m := range r.messages {
		if m.Role != provider.RoleAssistant {
			continue
		}
		for _, p := range m.Content {
			if p.Type == provider.PartToolUse {
				out[p.ID] = callInfo{name: p.Name, input: p.Input, msg: i}
			}
		}
	}
	return out
}

// touchedPath is the file a read or edit call works on ("" for others).
func touchedPath(name string, input json.RawMessage) string {
	var in struct {
		Path string `json:"path"`
		From string `json:"from"`
	}
	_ = json.Unmarshal(input, &in)
	switch name {
	case "read_file", "write_file", "replace_text", "delete_path":
		return in.Path
	case "move_path":
		return in.From
	}
	return ""
}

// prune turns old tool results (outside the last 6 messages; errors kept)
// into stubs or cuts them, and returns how many it changed.
func (r *run) prune() int {
	end := len(r.messages) - keepRecent
	if end <= 0 {
		return 0
	}
	calls := r.callsByID()
	// Later uses of each path and later contents, by message index.
	lastTouch := map[string]int{}
	lastContent := map[string]int{}
	for i, m := range r.messages {
		for _, p := range m.Content {
			switch p.Type {
			case provider.PartToolUse:
				if path := touchedPath(p.Name, p.Input); path != "" {
					lastTouch[path] = i
				}
			case provider.PartToolResult:
				if len(p.Content) > 200 {
					lastContent[p.Content] = i
				}
			}
		}
	}
	n := 0
	for i := 0; i < end; i++ {
		m := r.messages[i]
		for j, p := range m.Content {
			if p.Type != provider.PartToolResult || p.IsError || strings.HasPrefix(p.Content, compressedMarker) {
				continue
			}
			c := calls[p.ToolUseID]
			var stub string
			switch {
			case c.name == "read_file" && touchedPath(c.name, c.input) != "" && lastTouch[touchedPath(c.name, c.input)] > c.msg:
				stub = fmt.Sprintf("%s An older read of %s; a later read or edit of the file replaced it.", compressedMarker, touchedPath(c.name, c.input))
			case len(p.Content) > 200 && lastContent[p.Content] > i:
				stub = compressedMarker + " The same output appears again later in the conversation."
			case utf8.RuneCountInString(p.Content) > longOutput:
				stub = cutMiddle(p.Content)
			default:
				continue
			}
			m.Content[j].Content = stub
			n++
		}
	}
	return n
}

// cutMiddle keeps the first 1200 and last 400 characters of s.
func cutMiddle(s string) string {
	rs := []rune(s)
	omitted := len(rs) - keepHead - keepTail
	return fmt.Sprintf("%s The output was cut: its first %d and last %d characters are kept, %d are left out.\n%s\n[…]\n%s",
		compressedMarker, keepHead, keepTail, omitted, string(rs[:keepHead]), string(rs[len(rs)-keepTail:]))
}

// progress is what folding keeps of the folded messages.
type progress struct {
	folded int
	users  []string
	counts map[string]int
	order  []string
	recent []string
	files  []string
	notes  []string
	errors []string
	images int
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func keepLast(list []string, n int) []string {
	if len(list) > n {
		return list[len(list)-n:]
	}
	return list
}

func (g *progress) add(msgs []provider.Message) {
	if g.counts == nil {
		g.counts = map[string]int{}
	}
	g.folded += len(msgs)
	for _, m := range msgs {
		for _, p := range m.Content {
			switch {
			case p.Type == provider.PartImage:
				g.images++
			case p.Type == provider.PartText && m.Role == provider.RoleUser:
				if !strings.HasPrefix(p.Text, compressedMarker) {
					g.users = append(g.users, clip(p.Text, 4000))
				}
			case p.Type == provider.PartText:
				g.notes = keepLast(append(g.notes, clip(p.Text, 400)), 8)
			case p.Type == provider.PartToolUse:
				if g.counts[p.Name] == 0 {
					g.order = append(g.order, p.Name)
				}
				g.counts[p.Name]++
				g.recent = keepLast(append(g.recent, p.Name+" "+clip(string(p.Input), 200)), 15)
				if path := touchedPath(p.Name, p.Input); path != "" && p.Name != "read_file" && !contains(g.files, path) {
					g.files = append(g.files, path)
				}
			case p.Type == provider.PartToolResult && p.IsError:
				g.errors = keepLast(append(g.errors, p.ToolName+": "+clip(p.Content, 300)), 5)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (g *progress) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Earlier turns of this task (%d messages) were folded into this progress summary.\n", compressedMarker, g.folded)
	if len(g.users) > 0 {
		b.WriteString("\nUser messages, in order:\n")
		for _, u := range g.users {
			b.WriteString("- " + u + "\n")
		}
	}
	if len(g.order) > 0 {
		b.WriteString("\nTool calls:")
		for i, name := range g.order {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s ×%d", name, g.counts[name])
		}
		b.WriteString("\nMost recent calls:\n")
		for _, c := range g.recent {
			b.WriteString("- " + c + "\n")
		}
	}
	if len(g.files) > 0 {
		b.WriteString("\nFiles changed: " + strings.Join(g.files, ", ") + "\n")
	}
	if len(g.notes) > 0 {
		b.WriteString("\nNotes (your earlier messages):\n")
		for _, n := range g.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if len(g.errors) > 0 {
		b.WriteString("\nRecent errors:\n")
		for _, e := range g.errors {
			b.WriteString("- " + e + "\n")
		}
	}
	if g.images > 0 {
		fmt.Fprintf(&b, "\n%d image(s) were attached in the folded turns.\n", g.images)
	}
	return strings.TrimRight(b.String(), "\n")
}

// fold replaces the middle of the history (after the first message, before
// the last 6) with a progress summary joined to the first user message, and
// returns how many messages it folded. The cut falls before an assistant
// message, so every kept toolUse keeps its result and no result is orphaned.
func (r *run) fold() int {
	cut := -1
	for i := len(r.messages) - keepRecent; i >= 2; i-- {
		if r.messages[i].Role == provider.RoleAssistant {
			cut = i
			break
		}
	}
	if cut < 0 {
		return 0
	}
	folded := r.messages[1:cut]
	r.progress.add(folded)
	first := r.messages[0]
	var parts []provider.Part
	for _, p := range first.Content {
		if p.Type == provider.PartText && strings.HasPrefix(p.Text, compressedMarker) {
			continue
		}
		parts = append(parts, p)
	}
	parts = append(parts, provider.Part{Type: provider.PartText, Text: r.progress.render()})
	first.Content = parts
	rest := append([]provider.Message{first}, r.messages[cut:]...)
	r.messages = rest
	return len(folded)
}
