package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// The interactive session is a bubbletea program on the alternate screen:
// the transcript in a viewport (prompts, answers rendered as markdown, tool
// calls with their status and collapsed command output, approvals with
// their diff, summaries), below it a spinner line while a turn runs, the
// prompt (a bubbles textarea) or the open approval/question (a huh form),
// and a footer. When the session ends the transcript is printed on the
// normal screen so it stays in the terminal's scroll-back.

// itemKind is what one transcript entry shows.
type itemKind int

const (
	itemNote   itemKind = iota // pre-rendered lines (notes, slash command output, summaries)
	itemUser                   // a prompt the user sent
	itemAnswer                 // the model's answer (markdown)
	itemTool                   // a tool call or a check, its status and output
)

// item is one transcript entry; cache holds its rendering at cacheW.
type item struct {
	kind     itemKind
	text     string
	done     bool // an answer that is complete: rendered as markdown
	callID   string
	head     string // tool: "● tool input"
	approval string // tool: the approval asked for it (diff, decision)
	status   string // tool: "" while it runs, else the styled status line
	output   string // run_command output, whole
	expanded bool
	tag      string // user: "queued", "joined", …

	cache  string
	cacheW int
}

func (it *item) changed() { it.cacheW = 0 }

// addDecision notes how an approval or question was answered.
func (it *item) addDecision(line string) {
	if it.kind == itemTool {
		it.approval += "\n" + line
	} else {
		it.text += "\n" + line
	}
	it.changed()
}

// renderItem renders one entry for a transcript width cells wide.
func renderItem(st styles, it *item, width int) string {
	if it.cacheW == width && width > 0 {
		return it.cache
	}
	var s string
	switch it.kind {
	case itemNote:
		s = wrapLines(strings.TrimRight(it.text, "\n"), width) + "\n"
	case itemUser:
		s = "\n" + st.prompt.Render("› ") + strings.ReplaceAll(strings.TrimRight(it.text, "\n"), "\n", "\n  ")
		if it.tag != "" {
			s += " " + st.dim.Render("("+it.tag+")")
		}
		s = wrapLines(s, width) + "\n"
	case itemAnswer:
		if it.done {
			s = strings.TrimRight(renderMarkdown(it.text, st.color, width), "\n") + "\n"
		} else {
			s = "\n" + lipgloss.NewStyle().Width(max(10, width-2)).PaddingLeft(2).Render(it.text) + "\n"
		}
	case itemTool:
		var b strings.Builder
		b.WriteString(truncate(it.head, max(20, width)) + "\n")
		if it.approval != "" {
			b.WriteString(strings.TrimRight(it.approval, "\n") + "\n")
		}
		if it.status == "" {
			b.WriteString("  ⎿ " + st.dim.Render("running…") + "\n")
		} else {
			b.WriteString("  ⎿ " + it.status + "\n")
		}
		if it.output != "" {
			lines, hidden := lastLines(it.output, commandLines)
			if it.expanded {
				lines, _ = lastLines(it.output, 1<<30)
			}
			if hidden > 0 && !it.expanded {
				b.WriteString("    " + st.dim.Render(fmt.Sprintf("… %d earlier lines (ctrl+o expands)", hidden)) + "\n")
			}
			for _, l := range lines {
				b.WriteString("    " + st.dim.Render(truncateLine(l, max(20, width-6))) + "\n")
			}
			if hidden > 0 && it.expanded {
				b.WriteString("    " + st.dim.Render("(ctrl+o collapses)") + "\n")
			}
		}
		s = b.String()
	}
	it.cache, it.cacheW = s, width
	return s
}

// renderTranscript is the whole transcript.
func renderTranscript(st styles, items []*item, width int) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(renderItem(st, it, width))
	}
	return b.String()
}

// Messages into the program.
type (
	eventMsg    struct{ ev agentEvent }
	approvalMsg struct {
		params json.RawMessage
		reply  chan approval
		gone   <-chan struct{} // the runtime stopped waiting
	}
	questionMsg struct {
		params json.RawMessage
		reply  chan map[string][]string
		gone   <-chan struct{}
	}
	turnDoneMsg struct {
		sum     *taskSummary
		err     error
		elapsed time.Duration
	}
	slashDoneMsg struct {
		text  string
		leave bool
	}
	goneCheckMsg struct{}
	// resumeListMsg: this folder's tasks, for /resume.
	resumeListMsg struct {
		tasks []taskMeta
		err   error
	}
	// replayDoneMsg: agent/replay answered (its events came before).
	replayDoneMsg struct {
		taskID string
		res    protocol.ReplayResult
		err    error
	}
	// modelsMsg: provider/models answered for /model (want: the id asked
	// for, "" to pick one).
	modelsMsg struct {
		want   string
		models []protocol.ModelInfo
		err    error
	}
	// approvalArmMsg ends an approval's guard.
	approvalArmMsg struct{ a *asking }
	// skillsMsg: skills/list answered (custom slash commands).
	skillsMsg struct{ skills []protocol.Skill }
	// compactDoneMsg: /compact's summary turn ended.
	compactDoneMsg struct {
		from string
		sum  *taskSummary
		err  error
	}
	// shellDoneMsg: a !command ran (tools/call run_command).
	shellDoneMsg struct {
		it      *item
		command string
		res     protocol.ToolsCallResult
		err     error
		elapsed time.Duration
	}
	// steerDoneMsg: agent/steer answered for a queued message.
	steerDoneMsg struct {
		q      *queuedMsg
		queued bool
	}
	// revertAskMsg: the files /revert would revert, to confirm.
	revertAskMsg struct {
		paths []string
		err   error
	}
)

// queuedMsg is a message typed while a turn ran: sent with agent/steer,
// shown "queued" until its `steered` event ("joined"); one the turn did not
// take is sent as the next prompt when it ends.
type queuedMsg struct {
	it   *item
	sent string
}

// sentEntry is a prompt sent in this session, as typed with its pastes.
type sentEntry struct {
	line   string
	pastes []pasted
}

// picker is a choice from a list (a huh Select) open in place of the
// prompt; done acts on the value picked.
type picker struct {
	form  *huh.Form
	value *string
	done  func(v string) tea.Cmd
}

// asking is the approval or question open below the transcript.
type asking struct {
	form     *huh.Form
	approval *approvalMsg
	question *questionMsg
	item     *item  // the approval's entry in the transcript
	choice   string // the approval's select
	instead  bool   // the second step: what should it do instead
	guard    bool   // opened while the user typed: keys are held back
	guarded  bool   // it was held back (the line under it says it takes keys now)
	typed    bool   // it opened while the prompt held text
	message  string
	single   map[string]*string
	multi    map[string]*[]string
	order    []string
}

type tuiModel struct {
	r     *runner
	st    styles
	items []*item
	// stream is the answer the model is streaming (textDelta), until its
	// model call ends; a message queued meanwhile goes under it without
	// ending it (it split the answer mid-word).
	stream *item
	vp     viewport.Model
	ta     textarea.Model
	spin   spinner.Model

	width, height int
	ready         bool
	follow        bool // the next refresh shows the end even when scrolled up (a prompt sent, an approval or question opened)

	busy, stopping bool
	turnStart      time.Time
	turnTools      int
	turnFiles      map[string]bool
	tokens         int
	cancel         context.CancelFunc
	waitFrom       map[string]time.Time
	waited         map[string]time.Duration
	errShown       bool // an error event was shown in this turn

	ask     *asking
	pending []tea.Msg // approvals and questions waiting for the open one

	// opening: a /model or /resume list was asked for and its picker is
	// not open yet; the keys typed meanwhile are held for it. dropLists
	// counts the lists whose picker Esc cancelled before they came.
	opening   bool
	held      []tea.KeyMsg
	dropLists int

	pastes []pasted    // large pastes shown as their tag in the prompt
	store  *pasteStore // the texts of the pastes pasteFilter took out

	confirmRevert []string // /revert asked: y reverts these files

	queued      []*queuedMsg // typed while the turn ran, not joined yet
	replaying   bool         // agent/replay's events are coming
	shellCtx    []string     // !command outputs that go with the next prompt
	carry       string       // /compact's summary, sent with the next prompt (a new task)
	compactMode string       // the chat mode to go back to after /compact's turn
	skills      []protocol.Skill
	costUSD     float64 // the task's cost so far (usage events)
	ctxUsed     int     // the last model call's context use (context events)
	ctxWindow   int
	hist        *history      // the folder's prompt history (Up / Ctrl-P)
	shown       *shownPrompts // prompts sent other than as typed, for a replay
	sentLog     []sentEntry   // this session's prompts, for Esc Esc
	escArmed    bool          // Esc was pressed at the idle prompt: Esc again edits an earlier message
	pick        *picker       // a choice open below the transcript (Esc Esc, /resume, /model)

	interrupts int
	hint       string
	exitCode   int
	quitting   bool
}

func newTUIModel(r *runner, st styles) *tuiModel {
	ta := textarea.New()
	ta.Placeholder = "Type a prompt · /help for commands"
	ta.Prompt = "› "
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetHeight(1)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("ctrl+j", "alt+enter"))
	ta.FocusedStyle.CursorLine = lipgloss.NewStyle()
	ta.FocusedStyle.Prompt = st.prompt
	ta.BlurredStyle.Prompt = st.dim
	ta.Focus()
	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(st.prompt))
	m := &tuiModel{r: r, st: st, ta: ta, spin: sp, vp: viewport.New(80, 20),
		waitFrom: map[string]time.Time{}, waited: map[string]time.Duration{}}
	m.vp.KeyMap = viewport.KeyMap{} // keys go to the prompt; PgUp/PgDn/Home/End are handled here
	if r.s != nil {
		m.hist = loadHistory(r.s.dataDir, r.s.root)
		m.shown = loadShown(r.s.dataDir, r.s.root)
	} else {
		m.hist, m.shown = &history{}, &shownPrompts{}
	}
	m.add(m.header())
	return m
}

// header is the transcript's first line: the folder and the provider,
// model and mode of now (/clear draws it again).
func (m *tuiModel) header() *item {
	r := m.r
	return &item{kind: itemNote, text: fmt.Sprintf("%s %s · %s/%s · %s mode · /help for commands",
		m.st.prompt.Render("task-x"), r.s.root, r.prov.Provider, r.prov.Model, r.prov.Mode)}
}

func (m *tuiModel) Init() tea.Cmd {
	cmds := []tea.Cmd{textarea.Blink, m.listSkills()}
	if m.r.taskID != "" {
		// task-x resume: the earlier transcript first.
		cmds = append(cmds, m.replay(m.r.taskID))
	}
	return tea.Batch(cmds...)
}

// listSkills asks for the skills: each is a slash command of the session
// (the runtime activates a skill for a prompt that starts with /name).
func (m *tuiModel) listSkills() tea.Cmd {
	r := m.r
	return func() tea.Msg {
		var res protocol.SkillsListResult
		if r.s == nil || r.s.call(context.Background(), protocol.MethodSkillsList, nil, &res) != nil {
			return nil
		}
		return skillsMsg{skills: res.Skills}
	}
}

// skillNamed is the skill a /name invokes.
func (m *tuiModel) skillNamed(cmd string) *protocol.Skill {
	for i, sk := range m.skills {
		if strings.EqualFold("/"+sk.Name, cmd) {
			return &m.skills[i]
		}
	}
	return nil
}

// commandNames are the slash commands and the skills, for Tab.
func (m *tuiModel) commandNames() []string {
	names := append([]string(nil), slashCommands...)
	for _, sk := range m.skills {
		names = append(names, "/"+sk.Name)
	}
	return names
}

// replay asks the runtime for the task's recorded events (agent/replay);
// they arrive as agent/event notifications marked replay and are shown as
// the live ones were.
func (m *tuiModel) replay(taskID string) tea.Cmd {
	m.replaying = true
	m.note("%s", m.st.dim.Render("── the earlier transcript of "+taskID+" ──"))
	r := m.r
	return func() tea.Msg {
		var res protocol.ReplayResult
		err := r.s.call(context.Background(), protocol.MethodAgentReplay, protocol.TaskIDParams{TaskID: taskID}, &res)
		return replayDoneMsg{taskID: taskID, res: res, err: err}
	}
}

// add appends an entry and ends a streamed answer before it.
func (m *tuiModel) add(it *item) *item {
	m.endAnswer()
	m.items = append(m.items, it)
	return it
}

// addAside appends an entry that is not the model's (a message queued
// while it streams): the streamed answer goes on above it.
func (m *tuiModel) addAside(it *item) *item {
	m.items = append(m.items, it)
	return it
}

func (m *tuiModel) note(format string, a ...any) {
	m.add(&item{kind: itemNote, text: fmt.Sprintf(format, a...)})
}

func (m *tuiModel) endAnswer() {
	if m.stream != nil {
		m.stream.done = true
		m.stream.changed()
		m.stream = nil
	}
}

// refresh lays out the screen and puts the transcript in the viewport,
// following the end when it was shown.
func (m *tuiModel) refresh() {
	if !m.ready {
		return
	}
	m.ta.SetWidth(max(10, m.width-1))
	m.ta.SetHeight(min(max(m.ta.LineCount(), 1), 6))
	bottom := lipgloss.Height(m.bottomView())
	atBottom := m.vp.AtBottom() || m.vp.TotalLineCount() <= m.vp.Height
	m.vp.Width = m.width
	m.vp.Height = max(1, m.height-bottom)
	m.vp.SetContent(renderTranscript(m.st, m.items, m.width))
	if atBottom || m.follow {
		m.vp.GotoBottom()
		m.follow = false
	}
}

// bottomView is what is under the transcript: the spinner line, the prompt
// or the open form, and the footer.
func (m *tuiModel) bottomView() string {
	var b strings.Builder
	switch {
	case m.stopping:
		b.WriteString(m.st.warn.Render("■ interrupting…"))
	case m.busy:
		fmt.Fprintf(&b, "%s working %s · %d tokens%s · esc to interrupt", m.spin.View(), formatDuration(time.Since(m.turnStart)), m.tokens, m.usage())
	case m.hint != "":
		b.WriteString(m.st.dim.Render(m.hint))
	default:
		b.WriteString(m.st.dim.Render(strings.TrimPrefix(m.usage(), " · ")))
	}
	b.WriteString("\n")
	rule := m.st.dim.Render(strings.Repeat("─", max(10, m.width)))
	if m.ask != nil {
		b.WriteString(rule + "\n" + strings.TrimRight(m.ask.form.View(), "\n") + "\n")
		switch {
		case m.ask.guard && m.ask.typed:
			b.WriteString(m.st.warn.Render("⏸ an approval opened while you typed: its keys work in a moment") + "\n")
		case m.ask.guard:
			b.WriteString(m.st.warn.Render("⏸ an approval opened: its keys work in a moment") + "\n")
		case m.ask.guarded && m.ask.typed:
			b.WriteString(m.st.dim.Render("▶ the approval takes keys now (what you typed stays in the prompt)") + "\n")
		case m.ask.guarded:
			b.WriteString(m.st.dim.Render("▶ the approval takes keys now") + "\n")
		}
	} else if m.pick != nil {
		b.WriteString(rule + "\n" + strings.TrimRight(m.pick.form.View(), "\n") + "\n" + m.st.dim.Render("enter picks · esc closes") + "\n")
	} else {
		b.WriteString(rule + "\n" + m.ta.View() + "\n")
	}
	b.WriteString(rule + "\n")
	b.WriteString(m.st.dim.Render(truncate(fmt.Sprintf("%s mode · %s/%s · ctrl+o expands output · pgup/pgdn/home/end scroll · /help",
		m.r.prov.Mode, m.r.prov.Provider, m.r.prov.Model), max(20, m.width))))
	return b.String()
}

// usage is " · context 23% of 200k · $0.0123" for the status line: the
// last call's context use and the task's cost, each when known.
func (m *tuiModel) usage() string {
	s := ""
	if m.ctxWindow > 0 {
		s += fmt.Sprintf(" · context %d%% of %s", m.ctxUsed*100/m.ctxWindow, kTokens(m.ctxWindow))
	}
	if m.costUSD > 0 {
		s += " · " + formatCost(m.costUSD)
	}
	return s
}

func (m *tuiModel) View() string {
	if m.quitting {
		return ""
	}
	if !m.ready {
		return "task-x: starting…"
	}
	return unpadRows(m.vp.View() + "\n" + m.bottomView())
}

// unpadRows drops the spaces that pad each row to the width (bubbletea
// erases the rest of a shorter row itself). A grapheme the terminal draws
// wider than lipgloss measures it (an emoji with a skin tone: two cells to
// lipgloss, four to tmux and xterm, which count code points) then makes
// its row longer only by that much, instead of pushing a full row past the
// edge: the row wrapped, and the screen drew rows twice and lost the
// prompt until a resize (QA).
func unpadRows(s string) string {
	rows := strings.Split(s, "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return strings.Join(rows, "\n")
}

func (m *tuiModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	m.refresh()
	return m, cmd
}

func (m *tuiModel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.ready = msg.Width, msg.Height, true
		if m.ask != nil {
			m.ask.form.WithWidth(m.width)
		}
		return nil
	case spinner.TickMsg:
		if !m.busy {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case eventMsg:
		return m.event(msg.ev)
	case approvalMsg:
		return m.queue(msg)
	case questionMsg:
		return m.queue(msg)
	case goneCheckMsg:
		return m.checkGone()
	case turnDoneMsg:
		return m.turnDone(msg)
	case resumeListMsg:
		if m.dropLists > 0 {
			m.dropLists--
			return nil
		}
		return m.opened(m.pickTask(msg))
	case replayDoneMsg:
		m.replaying = false
		m.endAnswer()
		if msg.err != nil {
			m.note("%s %s", m.st.bad.Render("error:"), friendlyIn(msg.err, sessionWords))
			return nil
		}
		return nil // the replayed marker event ends the transcript
	case modelsMsg:
		if msg.want == "" && m.dropLists > 0 {
			m.dropLists--
			return nil
		}
		return m.opened(m.modelsListed(msg))
	case approvalArmMsg:
		msg.a.guard = false
		return nil
	case skillsMsg:
		m.skills = msg.skills
		return nil
	case compactDoneMsg:
		return m.compacted(msg)
	case shellDoneMsg:
		return m.shellDone(msg)
	case steerDoneMsg:
		if !msg.queued && msg.q.it.tag == "queued" {
			msg.q.it.tag = "queued: sent when this turn ends"
			msg.q.it.changed()
		}
		return nil
	case revertAskMsg:
		switch {
		case msg.err != nil:
			m.note("%s %s", m.st.bad.Render("error:"), friendlyIn(msg.err, sessionWords))
		case len(msg.paths) == 0:
			m.note("nothing to revert: no pending changes")
		default:
			m.confirmRevert = msg.paths
			m.note("%s (%s)? %s", m.st.warn.Render("revert "+plural(len(msg.paths), "file")), strings.Join(msg.paths, ", "),
				m.st.dim.Render("y reverts, any other key keeps"))
			m.hint = "y to revert, any other key to keep"
		}
		return nil
	case slashDoneMsg:
		if msg.text != "" {
			m.note("%s", strings.TrimRight(msg.text, "\n"))
		}
		if msg.leave {
			m.quitting = true
			return tea.Quit
		}
		return nil
	case tea.KeyMsg:
		if m.opening {
			// For the picker about to open, in order (they went to the
			// prompt: "/model", Enter, "j", Enter typed quickly sent "j"
			// to the model). Esc or Ctrl-C cancels it.
			if s := msg.String(); msg.Type == tea.KeyEsc || s == "ctrl+c" {
				m.opening, m.held, m.hint = false, nil, "not opened"
				m.dropLists++
				return nil
			}
			m.held = append(m.held, msg)
			return nil
		}
		if msg.Paste {
			return m.paste(msg)
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && m.ask == nil && m.pick == nil {
			// Text typed faster than one read goes into the prompt at once
			// (an open picker or form takes it one key at a time, below).
			m.typed()
			m.ta.InsertString(string(msg.Runes))
			return nil
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 {
			// Runes typed faster than one read come as one message whose
			// String() may spell a key name ("delete", "enter"): one rune
			// at a time, as typed.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt, Paste: msg.Paste}))
			}
			return tea.Batch(cmds...)
		}
		return m.key(msg)
	}
	if m.ask != nil {
		return m.formUpdate(msg)
	}
	if m.pick != nil {
		return m.pickUpdate(msg)
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	return cmd
}

// key handles a key press: the session's keys first, then the open form or
// the prompt.
func (m *tuiModel) key(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyEsc && k.Alt {
		// Two Escs in one read (pressed quickly, or over a slow link)
		// come as one alt+esc: each is an Esc, as typed.
		esc := tea.KeyMsg{Type: tea.KeyEsc}
		return tea.Batch(m.key(esc), m.key(esc))
	}
	switch k.String() {
	case "pgup":
		m.vp.HalfViewUp()
		return nil
	case "pgdown":
		m.vp.HalfViewDown()
		return nil
	case "ctrl+home":
		m.vp.GotoTop()
		return nil
	case "ctrl+end":
		m.vp.GotoBottom()
		return nil
	case "home", "end":
		// The start and the end of the transcript, unless they move the
		// cursor in a prompt that holds text (or in an open form).
		if m.ask == nil && m.pick == nil && m.ta.Value() == "" {
			if k.String() == "home" {
				m.vp.GotoTop()
			} else {
				m.vp.GotoBottom()
			}
			return nil
		}
	case "ctrl+o":
		m.toggleOutput()
		return nil
	}
	if k.String() != "ctrl+c" {
		m.typed()
	}
	if m.ask != nil {
		return m.askKey(k)
	}
	if m.pick != nil {
		return m.pickKey(k)
	}
	if k.String() == "esc" && !m.busy {
		if m.escArmed {
			m.escArmed, m.hint = false, ""
			return m.pickEarlier()
		}
		m.escArmed, m.hint = true, escHint
		return nil
	}
	m.escArmed = false
	if m.hint == escHint {
		m.hint = ""
	}
	switch k.String() {
	case "tab":
		m.tabComplete()
		return nil
	case "up", "ctrl+p":
		if m.ta.Line() == 0 {
			if s, ok := m.hist.prev(m.ta.Value()); ok {
				m.setPrompt(s)
			}
			return nil
		}
	case "down", "ctrl+n":
		if m.ta.Line() >= m.ta.LineCount()-1 {
			if s, ok := m.hist.next(); ok {
				m.setPrompt(s)
			}
			return nil
		}
	}
	if paths := m.confirmRevert; paths != nil {
		m.confirmRevert, m.hint = nil, ""
		if k.String() != "y" && k.String() != "Y" {
			m.note("%s", m.st.dim.Render("kept: nothing reverted"))
			return nil
		}
		r, st := m.r, m.st
		return func() tea.Msg {
			var b bytes.Buffer
			revertFiles(r, paths, &b, st)
			return slashDoneMsg{text: b.String()}
		}
	}
	switch k.String() {
	case "ctrl+c":
		if m.busy {
			m.interrupt()
			return nil
		}
		if m.ta.Value() != "" {
			m.clearPrompt()
			return nil
		}
		m.interrupts++
		if m.interrupts >= 2 {
			m.exitCode = exitCancelled
			m.quitting = true
			return tea.Quit
		}
		m.hint = ctrlCHint
		return nil
	case "esc":
		if m.busy {
			m.interrupt()
		}
		return nil
	case "ctrl+d":
		if m.ta.Value() == "" && !m.busy {
			m.quitting = true
			return tea.Quit
		}
	case "enter":
		return m.submit()
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(k)
	return cmd
}

const ctrlCHint = "(Ctrl-C again to leave)"

// approvalGuard: an approval ignores keys for this long after it opens, so
// that a letter typed for the prompt (the "a" of "and"), or a key pressed
// right after sending a prompt (a second Enter), does not answer it.
const approvalGuard = 700 * time.Millisecond

const escHint = "(Esc again to edit and resend an earlier message)"

// tabComplete completes the word at the end of the prompt: a slash
// command, an @mention or a path; several candidates are listed in the
// hint.
func (m *tuiModel) tabComplete() {
	v := m.ta.Value()
	if m.ta.Line() != m.ta.LineCount()-1 {
		return
	}
	done, cands := complete(m.r.s.root, v, m.commandNames())
	if done != v {
		m.ta.SetValue(done)
		m.ta.CursorEnd()
	}
	switch {
	case len(cands) > 1:
		m.hint = truncate(strings.Join(cands, "  "), max(20, m.width))
	case done == v:
		m.hint = "nothing to complete"
	default:
		m.hint = ""
	}
}

// setPrompt replaces the prompt's text (a history entry), the cursor at
// its end. A line sent in this session gets its large pastes back, so its
// "[pasted N lines]" tags are sent as the text again.
func (m *tuiModel) setPrompt(s string) {
	m.ta.Reset()
	m.pastes = nil
	m.ta.SetValue(s)
	m.ta.CursorEnd()
	for i := len(m.sentLog) - 1; i >= 0; i-- {
		if e := m.sentLog[i]; e.line == s && len(e.pastes) > 0 {
			m.pastes = append([]pasted(nil), e.pastes...)
			break
		}
	}
}

// pickEarlier opens the list of this session's prompts, newest first: the
// one picked goes into the prompt with its pastes, to edit and send again.
func (m *tuiModel) pickEarlier() tea.Cmd {
	if len(m.sentLog) == 0 {
		m.hint = "no earlier message in this session yet (Up recalls the folder's history)"
		return nil
	}
	var opts []huh.Option[string]
	for i := len(m.sentLog) - 1; i >= 0; i-- {
		opts = append(opts, huh.NewOption(truncate(m.sentLog[i].line, max(20, m.width-8)), fmt.Sprint(i)))
	}
	return m.openPicker("Edit and resend an earlier message", opts, func(v string) tea.Cmd {
		var i int
		fmt.Sscan(v, &i)
		if i < 0 || i >= len(m.sentLog) {
			return nil
		}
		e := m.sentLog[i]
		m.setPrompt(e.line)
		m.pastes = append([]pasted(nil), e.pastes...)
		m.hint = "edit it and press Enter to send it again (as a follow-up in this task)"
		return nil
	})
}

// modelsListed acts on /model: with an id, sets it when the provider
// lists it (or lists nothing); without, opens the list to pick from.
func (m *tuiModel) modelsListed(msg modelsMsg) tea.Cmd {
	ids := make([]string, 0, len(msg.models))
	for _, x := range msg.models {
		ids = append(ids, x.ID)
	}
	unlisted := msg.err != nil || len(ids) == 0
	why := "the provider lists no models"
	if msg.err != nil {
		why = "the provider's models could not be listed: " + friendlyIn(msg.err, sessionWords)
	}
	if msg.want != "" {
		switch {
		case unlisted:
			m.setModel(msg.want)
			m.note("model: %s/%s %s", m.r.prov.Provider, msg.want, m.st.dim.Render("(not checked: "+why+")"))
		case slices.Contains(ids, msg.want):
			m.setModel(msg.want)
			m.note("model: %s/%s", m.r.prov.Provider, msg.want)
		default:
			var near []string
			for _, id := range ids {
				if strings.Contains(strings.ToLower(id), strings.ToLower(msg.want)) && len(near) < 8 {
					near = append(near, id)
				}
			}
			s := fmt.Sprintf("%s %s has no model %q; the model stays %s", m.st.warn.Render("not changed:"), m.r.prov.Provider, msg.want, m.r.prov.Model)
			if len(near) > 0 {
				s += "; did you mean " + strings.Join(near, ", ") + "?"
			}
			m.note("%s (/model lists them)", s)
		}
		return nil
	}
	if unlisted {
		m.note("model: %s/%s (%s; /model ID sets one)", m.r.prov.Provider, m.r.prov.Model, why)
		return nil
	}
	var opts []huh.Option[string]
	for _, x := range msg.models {
		label := x.ID
		if x.ContextWindow > 0 {
			label += fmt.Sprintf("  %dk", x.ContextWindow/1000)
		}
		if x.Details != "" {
			label += "  " + x.Details
		}
		if x.ID == m.r.prov.Model {
			label += "  (current)"
		}
		opts = append(opts, huh.NewOption(label, x.ID))
	}
	return m.openPicker(fmt.Sprintf("Model of %s", m.r.prov.Provider), opts, func(id string) tea.Cmd {
		m.setModel(id)
		m.note("model: %s/%s", m.r.prov.Provider, id)
		return nil
	})
}

// setModel changes the model of the following turns; it is remembered
// once a turn reached it.
func (m *tuiModel) setModel(id string) {
	m.r.prov.Model = id
}

// setProvider is /provider [KIND [BASE-URL]]: the provider of the
// following turns, checked as the flags are.
func (m *tuiModel) setProvider(args []string) {
	p := m.r.prov
	if len(args) == 0 {
		s := fmt.Sprintf("provider: %s, model %s", p.Provider, p.Model)
		if p.BaseURL != "" {
			s += ", base URL " + p.BaseURL
		}
		m.note("%s (/provider KIND [BASE-URL] changes it)", s)
		return
	}
	kind := args[0]
	if !slices.Contains(providerKinds, kind) {
		m.note("%s %q is not a provider kind: anthropic, openai, openaiCompatible or ollama", m.st.warn.Render("not changed:"), kind)
		return
	}
	if kind != p.Provider {
		p.BaseURL = ""
	}
	p.Provider = kind
	if len(args) > 1 {
		p.BaseURL = args[1]
	}
	switch {
	case kind == "openaiCompatible" && p.BaseURL == "":
		m.note("%s openaiCompatible needs a base URL: /provider openaiCompatible http://127.0.0.1:8000/v1", m.st.warn.Render("not changed:"))
		return
	case (kind == "anthropic" || kind == "openai") && apiKey(kind) == "":
		m.note("%s no API key for %s: set %s before starting task-x", m.st.warn.Render("not changed:"), kind, keyVar(kind))
		return
	}
	m.r.prov = p
	s := fmt.Sprintf("provider: %s, model %s", p.Provider, p.Model)
	if p.BaseURL != "" {
		s += ", base URL " + p.BaseURL
	}
	m.note("%s; /model lists this provider's models", s)
}

// pickTask opens the /resume list of this folder's tasks, newest first;
// the one picked becomes the session's task and its transcript is shown.
func (m *tuiModel) pickTask(msg resumeListMsg) tea.Cmd {
	if msg.err != nil {
		m.note("%s %s", m.st.bad.Render("error:"), friendlyIn(msg.err, sessionWords))
		return nil
	}
	if len(msg.tasks) == 0 {
		m.note("no saved task in this folder yet")
		return nil
	}
	var opts []huh.Option[string]
	for _, t := range msg.tasks {
		label := fmt.Sprintf("%s  %-9s %s  %s", t.TaskID, t.Status, t.UpdatedAt.Local().Format("01-02 15:04"), t.Title)
		opts = append(opts, huh.NewOption(truncate(label, max(20, m.width-8)), t.TaskID))
	}
	return m.openPicker("Resume a task of this folder", opts, func(id string) tea.Cmd {
		if m.busy {
			return nil
		}
		m.r.taskID = id
		m.r.undoSkipped = nil
		m.r.p.mu.Lock()
		m.r.p.task = id
		m.r.p.mu.Unlock()
		return m.replay(id)
	})
}

// openPicker shows a choice in place of the prompt.
func (m *tuiModel) openPicker(title string, opts []huh.Option[string], done func(string) tea.Cmd) tea.Cmd {
	v := new(string)
	m.ta.Blur()
	m.pick = &picker{value: v, done: done,
		form: m.newForm(huh.NewSelect[string]().Title(title).Options(opts...).Height(min(len(opts)+2, 12)).Value(v))}
	return m.pick.form.Init()
}

// pickKey passes a key to the open picker; Esc or Ctrl-C closes it.
func (m *tuiModel) pickKey(k tea.KeyMsg) tea.Cmd {
	if s := k.String(); s == "esc" || s == "ctrl+c" {
		m.pick = nil
		return m.ta.Focus()
	}
	return m.pickUpdate(k)
}

// pickUpdate passes msg to the open picker and acts when it is complete.
func (m *tuiModel) pickUpdate(msg tea.Msg) tea.Cmd {
	p := m.pick
	model, cmd := p.form.Update(msg)
	if f, ok := model.(*huh.Form); ok {
		p.form = f
	}
	if p.form.State != huh.StateCompleted {
		return cmd
	}
	m.pick = nil
	return tea.Batch(m.ta.Focus(), p.done(*p.value))
}

// typed forgets a first Ctrl-C: a key other than Ctrl-C was pressed.
func (m *tuiModel) typed() {
	m.interrupts = 0
	if m.hint == ctrlCHint {
		m.hint = ""
	}
}

// A paste of more lines or characters than these is shown in the prompt as
// one tag ("[pasted 480 lines]") and sent whole: the prompt's editor redraws
// its whole text on every key, so a long text there makes typing crawl.
const pasteMaxLines, pasteMaxChars = 10, 1000

// pasted is a large paste kept out of the prompt's editor.
type pasted struct{ tag, text string }

// paste puts a bracketed paste into the prompt (or the open form), a large
// one as its tag.
func (m *tuiModel) paste(k tea.KeyMsg) tea.Cmd {
	m.typed()
	if m.ask != nil {
		k.Runes = []rune(m.store.take(string(k.Runes)))
		return m.formUpdate(k)
	}
	text := strings.ReplaceAll(strings.ReplaceAll(m.store.take(string(k.Runes)), "\r\n", "\n"), "\r", "\n")
	lines := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	if lines <= pasteMaxLines && len(text) <= pasteMaxChars {
		m.ta.InsertString(text)
		return nil
	}
	tag := fmt.Sprintf("[pasted %d lines]", lines)
	if lines == 1 {
		tag = fmt.Sprintf("[pasted %d characters]", utf8.RuneCountInString(text))
	}
	n := 1
	for _, p := range m.pastes {
		if strings.HasPrefix(p.tag, strings.TrimSuffix(tag, "]")) {
			n++
		}
	}
	if n > 1 {
		tag = strings.TrimSuffix(tag, "]") + fmt.Sprintf(" #%d]", n)
	}
	m.pastes = append(m.pastes, pasted{tag: tag, text: text})
	m.ta.InsertString(tag)
	return nil
}

// expandPastes is line with the tags of the large pastes it still holds
// replaced by their text.
func expandPastes(line string, pastes []pasted) string {
	if len(pastes) == 0 {
		return line
	}
	var pairs []string
	for _, p := range pastes {
		pairs = append(pairs, p.tag, p.text)
	}
	return strings.NewReplacer(pairs...).Replace(line)
}

// clearPrompt empties the prompt and forgets its pastes.
func (m *tuiModel) clearPrompt() {
	m.ta.Reset()
	m.pastes = nil
}

// toggleOutput expands or collapses the newest command output.
func (m *tuiModel) toggleOutput() {
	for i := len(m.items) - 1; i >= 0; i-- {
		if it := m.items[i]; it.kind == itemTool && it.output != "" {
			it.expanded = !it.expanded
			it.changed()
			return
		}
	}
	m.hint = "no command output yet"
}

// submit sends the prompt: a slash command, or a turn of the task.
func (m *tuiModel) submit() tea.Cmd {
	line := strings.TrimSpace(m.ta.Value())
	if line == "" {
		return nil
	}
	if m.busy && (strings.HasPrefix(line, "/") || strings.HasPrefix(line, "!")) {
		m.hint = "a turn is running: slash and ! commands wait for it (Esc interrupts it)"
		return nil
	}
	if strings.HasPrefix(line, "!") {
		m.hist.add(line, line)
		m.clearPrompt()
		return m.shell(strings.TrimSpace(line[1:]))
	}
	m.follow = true // the prompt and its answer are at the end
	sent := expandPastes(line, m.pastes)
	if m.busy {
		// Queued: the running task takes it before its next model call.
		m.hist.add(line, sent)
		m.shown.add(line, sent)
		m.sentLog = append(m.sentLog, sentEntry{line: line, pastes: m.pastes})
		m.clearPrompt()
		// Under the answer being streamed, which goes on above it.
		q := &queuedMsg{it: m.addAside(&item{kind: itemUser, text: line, tag: "queued"}), sent: sent}
		m.queued = append(m.queued, q)
		r := m.r
		return func() tea.Msg {
			id := r.taskID
			if id == "" {
				id = r.p.currentTask()
			}
			ok := false
			if id != "" {
				r.s.call(context.Background(), protocol.MethodAgentSteer, protocol.SteerParams{TaskID: id, Text: q.sent}, &ok)
			}
			return steerDoneMsg{q: q, queued: ok}
		}
	}
	m.hist.add(line, sent)
	if !strings.HasPrefix(line, "/") {
		m.sentLog = append(m.sentLog, sentEntry{line: line, pastes: m.pastes})
	}
	m.clearPrompt()
	m.hint = ""
	if strings.HasPrefix(line, "/") && m.skillNamed(strings.Fields(line)[0]) == nil {
		m.add(&item{kind: itemUser, text: line})
		r, st, width := m.r, m.st, m.width
		switch strings.Fields(line)[0] {
		case "/new":
			m.newTask()
			m.note("the next prompt starts a new task")
			return nil
		case "/clear":
			// The header again, with the model and mode of now (it
			// kept the one the session started with).
			m.items = []*item{m.header()}
			m.newTask()
			m.note("%s", m.st.dim.Render("cleared: the next prompt starts a new task (task-x resume or /resume brings the earlier one back)"))
			return nil
		case "/compact":
			return m.compact()
		case "/init":
			line = "/init"
			sent = initPrompt
			m.shown.add(line, sent)
			m.add(&item{kind: itemNote, text: m.st.dim.Render("writing AGENTS.md from the project summary…")})
			return m.startTurn(sent)
		case "/model":
			if m.busy {
				break
			}
			want := ""
			if f := strings.Fields(line); len(f) > 1 {
				want = f[1]
			}
			cfg := r.providerConfig()
			if want == "" {
				m.listing()
			}
			return func() tea.Msg {
				var res protocol.ModelsResult
				err := r.s.call(context.Background(), protocol.MethodModels, map[string]any{"provider": cfg}, &res)
				return modelsMsg{want: want, models: res.Models, err: err}
			}
		case "/provider":
			m.setProvider(strings.Fields(line)[1:])
			return nil
		case "/mode", "/help", "/?", "/exit", "/quit":
			// These change the runner's settings, which the view reads:
			// run here, on the program's goroutine.
			var b bytes.Buffer
			leave := slashCommand(r, line, &b, st, width)
			return func() tea.Msg { return slashDoneMsg{text: b.String(), leave: leave} }
		}
		if line == "/resume" {
			m.listing()
			return func() tea.Msg {
				tasks, err := listTasks(r.s)
				return resumeListMsg{tasks: tasks, err: err}
			}
		}
		if line == "/revert" {
			// Asked first: the files it would revert, then y.
			return func() tea.Msg {
				paths, err := pendingPaths(r)
				return revertAskMsg{paths: paths, err: err}
			}
		}
		// The others are calls to the runtime: off the program's goroutine.
		return func() tea.Msg {
			var b bytes.Buffer
			leave := slashCommand(r, line, &b, st, width)
			return slashDoneMsg{text: b.String(), leave: leave}
		}
	}
	m.add(&item{kind: itemUser, text: line})
	if m.carry != "" {
		sent = m.carry + "\n\n" + sent
		m.carry = ""
	}
	if len(m.shellCtx) > 0 {
		// The !commands run since the last prompt go with this one.
		sent = strings.Join(m.shellCtx, "\n\n") + "\n\n" + sent
		m.shellCtx = nil
	}
	m.shown.add(line, sent) // a replay shows it as typed, its pastes as their tags
	return m.startTurn(sent)
}

// initPrompt is what /init asks: an instructions file from the project
// summary the runtime gives the model.
const initPrompt = `Write AGENTS.md at the root of this project: the instructions a coding agent needs to work here. ` +
	`Use the project summary and the files: what the project is, its layout, the exact build, test and lint commands, ` +
	`the conventions the code follows, and what to avoid. If AGENTS.md exists, improve it instead. Keep it under 80 lines.`

// compactPrompt asks for the summary /compact carries into a new task.
const compactPrompt = `Summarize this task so far so that work can go on in a fresh conversation: the goal, ` +
	`what was done (files changed and why), decisions made, what is left, and anything the next step needs. ` +
	`Be concise; do not call tools.`

// newTask makes the next prompt start a new task.
func (m *tuiModel) newTask() {
	m.r.taskID = ""
	m.r.undoSkipped = nil
	m.r.p.mu.Lock()
	m.r.p.task = ""
	m.r.p.mu.Unlock()
	m.costUSD, m.ctxUsed, m.ctxWindow = 0, 0, 0
}

// compact asks the task for a summary of itself (a turn in ask mode) and
// starts a new task that gets it with the next prompt: the protocol has no
// call that compresses a task on demand (the runtime compresses by itself
// near the window).
func (m *tuiModel) compact() tea.Cmd {
	r := m.r
	from := r.taskID
	if from == "" {
		from = r.p.currentTask()
	}
	if from == "" {
		m.note("nothing to compact: this session has no task yet")
		return nil
	}
	m.note("%s", m.st.dim.Render("compacting "+from+": asking it for a summary…"))
	ctx, cancel := context.WithCancel(context.Background())
	m.busy, m.stopping, m.cancel = true, false, cancel
	m.turnStart, m.turnTools, m.turnFiles, m.tokens = time.Now(), 0, map[string]bool{}, 0
	m.compactMode = r.prov.Mode
	r.prov.Mode = "ask" // the summary turn calls no tools; compacted puts the mode back
	return tea.Batch(func() tea.Msg {
		sum, err := r.turn(ctx, compactPrompt)
		return compactDoneMsg{from: from, sum: sum, err: err}
	}, m.spin.Tick)
}

// compacted starts the new task with the summary.
func (m *tuiModel) compacted(d compactDoneMsg) tea.Cmd {
	m.busy, m.stopping = false, false
	m.r.prov.Mode = m.compactMode
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.endAnswer()
	m.closeAsk(approval{decision: "deny"})
	switch {
	case d.err != nil && errors.Is(d.err, context.Canceled):
		m.note("%s", m.st.warn.Render("■ /compact interrupted: the task goes on as it was"))
		return nil
	case d.err != nil:
		m.note("%s %s", m.st.bad.Render("error:"), friendlyIn(d.err, sessionWords))
		return nil
	case d.sum == nil || d.sum.Status != "completed" || strings.TrimSpace(d.sum.Text) == "":
		m.note("%s", m.st.warn.Render("/compact got no summary: the task goes on as it was"))
		return nil
	}
	m.newTask()
	m.carry = fmt.Sprintf("This continues the earlier task %s. Its summary:\n\n%s", d.from, strings.TrimSpace(d.sum.Text))
	m.note("%s", m.st.dim.Render(fmt.Sprintf("── compacted %s: the next prompt starts a new task with its summary (%d characters) ──", d.from, len(m.carry))))
	return nil
}

// shell runs a !command with run_command through tools/call: in the
// runtime's sandbox, in the folder, as the agent's commands run.
func (m *tuiModel) shell(command string) tea.Cmd {
	if command == "" {
		m.hint = "!command runs a shell command in the sandbox, e.g. !git status"
		return nil
	}
	it := m.add(&item{kind: itemTool, head: m.st.tool.Render("● !") + " " + command})
	r := m.r
	return func() tea.Msg {
		start := time.Now()
		input, _ := json.Marshal(map[string]any{"command": command})
		var res protocol.ToolsCallResult
		err := r.s.call(context.Background(), protocol.MethodToolsCall, protocol.ToolsCallParams{Name: "run_command", Input: input}, &res)
		return shellDoneMsg{it: it, command: command, res: res, err: err, elapsed: time.Since(start)}
	}
}

// shellDone shows a !command's outcome and keeps it for the next prompt.
func (m *tuiModel) shellDone(d shellDoneMsg) tea.Cmd {
	if d.err != nil {
		d.it.status = m.st.bad.Render("failed: " + friendlyIn(d.err, sessionWords))
		d.it.changed()
		return nil
	}
	raw, _ := json.Marshal(d.res.Data)
	var out struct {
		Output   string `json:"output"`
		ExitCode int    `json:"exitCode"`
		TimedOut bool   `json:"timedOut"`
	}
	json.Unmarshal(raw, &out)
	d.it.status = toolStatus(m.st, true, "", raw, d.elapsed, m.width)
	d.it.output = out.Output
	d.it.changed()
	outcome := fmt.Sprintf("exit code %d", out.ExitCode)
	if out.TimedOut {
		outcome = "timed out"
	}
	m.shellCtx = append(m.shellCtx, fmt.Sprintf("I ran `%s` in the workspace (%s); its output:\n```\n%s\n```", d.command, outcome, strings.TrimRight(out.Output, "\n")))
	m.hint = "the output goes with your next prompt"
	return nil
}

// startTurn runs a turn of the task with the prompt sent.
func (m *tuiModel) startTurn(sent string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	m.busy, m.stopping, m.cancel = true, false, cancel
	m.turnStart, m.turnTools, m.turnFiles, m.tokens = time.Now(), 0, map[string]bool{}, 0
	m.errShown = false
	r := m.r
	run := func() tea.Msg {
		start := time.Now()
		sum, err := r.turn(ctx, sent)
		return turnDoneMsg{sum: sum, err: err, elapsed: time.Since(start)}
	}
	return tea.Batch(run, m.spin.Tick)
}

// interrupt cancels the running turn; turnDone reports it.
func (m *tuiModel) interrupt() {
	if m.cancel != nil && !m.stopping {
		m.stopping = true
		m.cancel()
	}
}

func (m *tuiModel) turnDone(d turnDoneMsg) tea.Cmd {
	m.busy, m.stopping = false, false
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.endAnswer()
	m.closeAsk(approval{decision: "deny"})
	interrupted := d.err != nil && errors.Is(d.err, context.Canceled)
	switch {
	case interrupted:
		m.note("%s", interruptedSummary(m.st, d.elapsed, m.turnTools, m.tokens, m.turnFiles))
	case d.err != nil:
		m.note("%s %s", m.st.bad.Render("error:"), friendlyIn(d.err, sessionWords))
	default:
		m.note("\n%s", strings.TrimRight(formatSummary(m.st, d.sum, d.elapsed, m.r.prov, m.errShown, 0, sessionWords), "\n"))
	}
	return m.flushQueued(interrupted)
}

// flushQueued deals with the messages typed during the turn that it did
// not take: after an interrupt they go back into the prompt, else they are
// sent together as the next prompt.
func (m *tuiModel) flushQueued(interrupted bool) tea.Cmd {
	q := m.queued
	m.queued = nil
	if len(q) == 0 {
		return nil
	}
	var lines, sent []string
	for _, x := range q {
		lines = append(lines, x.it.text)
		sent = append(sent, x.sent)
		x.it.tag = "not sent: the turn was interrupted"
		if !interrupted {
			x.it.tag = "sent as the next prompt"
		}
		x.it.changed()
	}
	if interrupted {
		m.setPrompt(strings.Join(lines, "\n"))
		m.hint = "the messages typed during the turn are back in the prompt"
		return nil
	}
	m.shown.add(strings.Join(lines, "\n"), strings.Join(sent, "\n\n"))
	return m.startTurn(strings.Join(sent, "\n\n"))
}

// interruptedSummary is what an interrupted turn did before it stopped.
func interruptedSummary(st styles, elapsed time.Duration, tools, tokens int, files map[string]bool) string {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	s := fmt.Sprintf("\n%s after %s: %s, %d tokens", st.warn.Render("■ interrupted"), formatDuration(elapsed), plural(tools, "tool call"), tokens)
	if len(paths) > 0 {
		s += ", changed " + strings.Join(paths, ", ")
	}
	return s + "\n" + st.dim.Render("  the task is kept: type a follow-up, or /undo")
}

// event shows one agent/event in the transcript.
func (m *tuiModel) event(ev agentEvent) tea.Cmd {
	if ev.Replay {
		return m.replayed(ev)
	}
	switch e := ev.E.(type) {
	case protocol.UsageEvent:
		m.tokens = e.TotalInputTokens + e.TotalOutputTokens
		m.costUSD = e.CostUSD
	case protocol.ContextEvent:
		m.ctxUsed, m.ctxWindow = e.UsedTokens, e.WindowTokens
	case protocol.ApprovalRequestedEvent:
		m.waitFrom[e.CallID] = time.Now()
	case protocol.ApprovalWithdrawnEvent:
		// The runtime stopped waiting (the turn was cancelled, or the
		// approval timed out): close it if it is open or queued.
		return m.withdraw(e.CallID)
	case protocol.ApprovalResolvedEvent:
		if t, ok := m.waitFrom[e.CallID]; ok {
			m.waited[e.CallID] += time.Since(t)
			delete(m.waitFrom, e.CallID)
		}
	case protocol.TextDeltaEvent:
		if m.stream != nil {
			m.stream.text += e.Text
			m.stream.changed()
			return nil
		}
		m.stream = m.add(&item{kind: itemAnswer, text: e.Text})
	case protocol.IterationEvent:
		// A model call starts: the last one's answer is whole. (Not at
		// assistantMessage: the answer is re-rendered as markdown with the
		// turn's summary, in one frame, or when something comes after it.)
		m.endAnswer()
	case protocol.ToolStartedEvent:
		m.add(&item{kind: itemTool, callID: e.CallID, head: m.st.tool.Render("● "+e.Tool) + " " + plainJSON(e.Input)})
	case protocol.ToolFinishedEvent:
		m.turnTools++
		it := m.toolItem(e.CallID)
		if it == nil {
			it = m.add(&item{kind: itemTool, callID: e.CallID, head: m.st.tool.Render("● " + e.Tool)})
		}
		d := time.Duration(e.DurationMs)*time.Millisecond - m.waited[e.CallID]
		delete(m.waited, e.CallID)
		result := rawJSON(e.Result)
		it.status = toolStatus(m.st, e.OK, deref(e.Error), result, max(0, d), m.width)
		var r struct {
			Output *string `json:"output"`
		}
		if e.Tool == "run_command" && json.Unmarshal(result, &r) == nil && r.Output != nil {
			it.output = *r.Output
		}
		it.changed()
	case protocol.SteeredEvent:
		m.endAnswer() // the model reads it in its next call: a new answer
		for i, q := range m.queued {
			if strings.TrimSpace(q.sent) == e.Text {
				q.it.tag = "joined"
				q.it.changed()
				m.queued = append(m.queued[:i], m.queued[i+1:]...)
				break
			}
		}
	case protocol.FileChangedEvent:
		m.turnFiles[e.Path] = true
		m.note("  %s %s", m.st.dim.Render(string(e.Kind)), e.Path)
	case protocol.WarningEvent:
		m.note("%s %s", m.st.warn.Render("warning:"), warningText(e.Message, sessionWords))
	case protocol.ErrorEvent:
		m.errShown = true
		m.note("%s %s", m.st.bad.Render("error:"), errorLine(e, m.r.prov, sessionWords))
	case protocol.ValidationStartedEvent:
		m.add(&item{kind: itemTool, callID: "check:" + e.Name, head: m.st.tool.Render("● check "+e.Name+":") + " " + e.Command})
	case protocol.ValidationFinishedEvent:
		it := m.toolItem("check:" + e.Name)
		if it == nil {
			it = m.add(&item{kind: itemTool, head: m.st.tool.Render("● check " + e.Name)})
		}
		it.status = checkOutcome(m.st, e) + " " + m.st.dim.Render("("+formatDuration(time.Duration(e.DurationMs)*time.Millisecond)+")")
		it.callID = ""
		it.changed()
	}
	return nil
}

// replayed shows an event of agent/replay: the prompts, answers, tool
// calls and each turn's outcome; approvals were answered long ago.
func (m *tuiModel) replayed(ev agentEvent) tea.Cmd {
	switch e := ev.E.(type) {
	case protocol.UserMessageEvent:
		// As it was shown when sent: a large paste as its tag, not whole.
		m.add(&item{kind: itemUser, text: m.asShown(e.Text)})
	case protocol.SteeredEvent:
		// A message typed during the turn, as the live session left it
		// (the live handler only marks a queued entry, which a replay has
		// not: the message was dropped).
		m.endAnswer()
		m.add(&item{kind: itemUser, text: m.asShown(e.Text), tag: "joined"})
	case protocol.DoneEvent:
		sum := &taskSummary{TaskID: ev.TaskID, Status: e.Status, Error: e.Error, ChangedFiles: e.ChangedFiles,
			Usage: &e.Usage, Model: e.Model, Iterations: e.Iterations, ToolCalls: e.ToolCalls}
		m.note("\n%s", strings.TrimRight(formatSummary(m.st, sum, -1, m.r.prov, true, 0, sessionWords), "\n"))
	case protocol.AssistantMessageEvent:
		// textDelta is not recorded: the whole turn's text is.
		if strings.TrimSpace(e.Text) != "" {
			m.add(&item{kind: itemAnswer, text: e.Text, done: true})
		}
	case protocol.ReplayedEvent:
		m.replaying = false
		m.endAnswer()
		m.note("%s", m.st.dim.Render(fmt.Sprintf("── resumed %s (%s, %d events): type a follow-up ──", ev.TaskID, e.Status, e.Events)))
	case protocol.ToolStartedEvent, protocol.ToolFinishedEvent, protocol.FileChangedEvent, protocol.WarningEvent,
		protocol.ErrorEvent, protocol.ValidationStartedEvent, protocol.ValidationFinishedEvent:
		// Shown as live, leaving the running turn's counters alone.
		ev.Replay = false
		tools, files, tokens, errShown := m.turnTools, m.turnFiles, m.tokens, m.errShown
		m.turnFiles = map[string]bool{}
		m.event(ev)
		m.turnTools, m.turnFiles, m.tokens, m.errShown = tools, files, tokens, errShown
	}
	return nil
}

// listing holds the keys typed until the picker of the list asked for
// opens (or the list turns out empty or failed).
func (m *tuiModel) listing() {
	m.opening, m.held, m.hint = true, nil, "opening the list… (Esc cancels)"
}

// opened gives the keys held while the list was asked for to the picker
// it opened, or to the prompt when it opened none.
func (m *tuiModel) opened(cmd tea.Cmd) tea.Cmd {
	if !m.opening {
		return cmd
	}
	held := m.held
	m.opening, m.held = false, nil
	if m.hint == "opening the list… (Esc cancels)" {
		m.hint = ""
	}
	cmds := []tea.Cmd{cmd}
	for _, k := range held {
		cmds = append(cmds, m.update(k))
	}
	return tea.Batch(cmds...)
}

// asShown is a recorded prompt as the session showed it when it was sent:
// a large paste as its tag, not whole.
func (m *tuiModel) asShown(sent string) string {
	if text, ok := m.shown.typed(sent); ok {
		return text
	}
	return collapsed(sent)
}

func (m *tuiModel) toolItem(callID string) *item {
	for i := len(m.items) - 1; i >= 0; i-- {
		if it := m.items[i]; it.kind == itemTool && it.callID == callID && callID != "" {
			return it
		}
	}
	return nil
}

// toolStatus is "ok (1.2s)", an exit code, or the failure, styled.
func toolStatus(st styles, ok bool, errText string, result json.RawMessage, d time.Duration, width int) string {
	status := st.ok.Render(commandStatus(result))
	if !ok {
		status = st.bad.Render("failed: " + truncate(errText, max(20, width-20)))
	} else if s := commandStatus(result); s != "ok" {
		status = st.warn.Render(s)
	}
	return status + " " + st.dim.Render("("+formatDuration(d)+")")
}

// queue opens an approval or question, or keeps it for after the open one.
func (m *tuiModel) queue(msg tea.Msg) tea.Cmd {
	if m.ask != nil {
		m.pending = append(m.pending, msg)
		return nil
	}
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case approvalMsg:
		cmd = m.openApproval(&msg)
	case questionMsg:
		cmd = m.openQuestion(&msg)
	}
	return tea.Batch(cmd, watchGone(msg))
}

// watchGone wakes the program when the runtime stops waiting for msg.
func watchGone(msg tea.Msg) tea.Cmd {
	var gone <-chan struct{}
	switch msg := msg.(type) {
	case approvalMsg:
		gone = msg.gone
	case questionMsg:
		gone = msg.gone
	}
	if gone == nil {
		return nil
	}
	return func() tea.Msg { <-gone; return goneCheckMsg{} }
}

// checkGone closes the open form when the runtime no longer waits for it
// and drops queued ones that are gone.
func (m *tuiModel) checkGone() tea.Cmd {
	isGone := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	keep := m.pending[:0]
	for _, p := range m.pending {
		switch p := p.(type) {
		case approvalMsg:
			if isGone(p.gone) {
				continue
			}
		case questionMsg:
			if isGone(p.gone) {
				continue
			}
		}
		keep = append(keep, p)
	}
	m.pending = keep
	if m.ask != nil {
		if (m.ask.approval != nil && isGone(m.ask.approval.gone)) || (m.ask.question != nil && isGone(m.ask.question.gone)) {
			if m.ask.item != nil {
				m.ask.item.addDecision("  ⎿ " + m.st.dim.Render("no longer asked"))
			}
			m.ask = nil
			return m.next()
		}
	}
	return nil
}

// withdraw closes the approval or question of callID, open or queued.
func (m *tuiModel) withdraw(callID string) tea.Cmd {
	if callID == "" {
		return nil
	}
	keep := m.pending[:0]
	for _, p := range m.pending {
		if a, ok := p.(approvalMsg); ok && callOf(a.params) == callID {
			a.reply <- approval{decision: "deny"}
			continue
		}
		if q, ok := p.(questionMsg); ok && callOf(q.params) == callID {
			q.reply <- nil
			continue
		}
		keep = append(keep, p)
	}
	m.pending = keep
	a := m.ask
	if a == nil {
		return nil
	}
	switch {
	case a.approval != nil && callOf(a.approval.params) == callID:
		a.approval.reply <- approval{decision: "deny"}
	case a.question != nil && callOf(a.question.params) == callID:
		a.question.reply <- nil
	default:
		return nil
	}
	a.item.addDecision("  ⎿ " + m.st.dim.Render("no longer asked"))
	m.ask = nil
	return m.next()
}

// callOf is the callId of an approval or question request.
func callOf(params json.RawMessage) string {
	var r protocol.RequestApprovalParams // an askUser's callId is at the same place
	json.Unmarshal(params, &r)
	return r.CallID
}

func (m *tuiModel) formTheme() *huh.Theme {
	if m.st.color {
		return huh.ThemeCharm()
	}
	return huh.ThemeBase()
}

func (m *tuiModel) newForm(fields ...huh.Field) *huh.Form {
	f := huh.NewForm(huh.NewGroup(fields...)).WithShowHelp(false).WithTheme(m.formTheme()).WithWidth(max(20, m.width))
	f.SubmitCmd, f.CancelCmd = nil, nil
	return f
}

func (m *tuiModel) openApproval(msg *approvalMsg) tea.Cmd {
	var req protocol.RequestApprovalParams
	json.Unmarshal(msg.params, &req)
	m.ta.Blur()
	text := m.st.warn.Render(approvalTitle(req)) + "\n" +
		strings.TrimRight(approvalBody(m.st, req.Tool, req.Input, req.Preview), "\n")
	// Shown under its tool call when that is in the transcript.
	it := m.toolItem(req.CallID)
	if it != nil && it.approval == "" {
		it.approval = "  " + text
		it.changed()
	} else {
		it = m.add(&item{kind: itemNote, text: "\n" + text})
	}
	a := &asking{approval: msg, item: it, choice: "allow"}
	a.form = m.newForm(huh.NewSelect[string]().Title("Allow this?").Options(
		huh.NewOption("Yes, once (y)", "allow"),
		huh.NewOption("Yes, for the rest of this task (a)", "allowSession"),
		huh.NewOption("No, and tell it what to do instead (n)", "deny"),
	).Value(&a.choice))
	m.ask = a
	m.follow = true // what it asks about is at the end
	// Keys pressed as it opens were meant for something else: for the
	// prompt the user is typing, or a second Enter or a letter right after
	// sending one (a fast model asks within 200 ms). Nobody has read the
	// approval yet, so they are held back for a moment.
	a.guard, a.guarded, a.typed = true, true, m.ta.Value() != ""
	return tea.Batch(a.form.Init(), tea.Tick(approvalGuard, func(time.Time) tea.Msg { return approvalArmMsg{a} }))
}

func (m *tuiModel) openQuestion(msg *questionMsg) tea.Cmd {
	var req protocol.AskUserParams
	json.Unmarshal(msg.params, &req)
	m.ta.Blur()
	a := &asking{question: msg, single: map[string]*string{}, multi: map[string]*[]string{}}
	var fields []huh.Field
	var shown []string
	for _, q := range req.Questions {
		a.order = append(a.order, q.ID)
		shown = append(shown, q.Text)
		if q.Kind == protocol.QuestionCheckbox {
			v := &[]string{}
			a.multi[q.ID] = v
			fields = append(fields, huh.NewMultiSelect[string]().Title(q.Text).Options(huh.NewOptions(q.Options...)...).Value(v))
			continue
		}
		v := new(string)
		a.single[q.ID] = v
		fields = append(fields, huh.NewSelect[string]().Title(q.Text).Options(huh.NewOptions(q.Options...)...).Value(v))
	}
	if len(fields) == 0 {
		msg.reply <- nil
		return nil
	}
	a.item = m.add(&item{kind: itemNote, text: "\n" + m.st.warn.Render("the agent asks:") + " " + strings.Join(shown, " · ")})
	a.form = m.newForm(fields...)
	m.ask = a
	m.follow = true // what it asks about is at the end
	return a.form.Init()
}

// askKey handles a key while an approval or a question is open: Esc and
// Ctrl-C deny (an approval) or dismiss (a question) and interrupt the
// turn; y/a/n pick an approval's choice at once.
func (m *tuiModel) askKey(k tea.KeyMsg) tea.Cmd {
	a := m.ask
	if a.guard && k.String() != "esc" && k.String() != "ctrl+c" {
		return nil // typed for the prompt, not an answer
	}
	switch k.String() {
	case "esc", "ctrl+c":
		if a.approval != nil {
			m.finishApproval(approval{decision: "deny", stop: true}, "denied; interrupting the turn")
		} else {
			m.finishQuestion(nil)
		}
		m.interrupt()
		return m.next()
	}
	if a.approval != nil && a.instead && k.String() == "enter" && denyText(a.message) == nil {
		return m.insteadDone() // at once (huh would complete the form a message later)
	}
	if a.approval != nil && !a.instead {
		switch k.String() {
		case "y":
			a.choice = "allow"
			return m.approvalChosen()
		case "a":
			a.choice = "allowSession"
			return m.approvalChosen()
		case "n":
			a.choice = "deny"
			return m.approvalChosen()
		}
	}
	return m.formUpdate(k)
}

// formUpdate passes msg to the open form and acts when it is complete.
func (m *tuiModel) formUpdate(msg tea.Msg) tea.Cmd {
	a := m.ask
	model, cmd := a.form.Update(msg)
	if f, ok := model.(*huh.Form); ok {
		a.form = f
	}
	if a.form.State != huh.StateCompleted {
		return cmd
	}
	switch {
	case a.approval != nil && !a.instead:
		return tea.Batch(cmd, m.approvalChosen())
	case a.approval != nil:
		return tea.Batch(cmd, m.insteadDone())
	default:
		answers := map[string][]string{}
		answered := false
		for _, id := range a.order {
			var picked []string
			if v := a.single[id]; v != nil && *v != "" {
				picked = []string{*v}
			}
			if v := a.multi[id]; v != nil {
				picked = append(picked, *v...)
			}
			if picked == nil {
				picked = []string{}
			}
			answered = answered || len(picked) > 0
			answers[id] = picked
		}
		if !answered {
			answers = nil
		}
		m.finishQuestion(answers)
		return tea.Batch(cmd, m.next())
	}
}

// approvalChosen acts on the approval's select: allow replies at once,
// deny asks what to do instead.
func (m *tuiModel) approvalChosen() tea.Cmd {
	a := m.ask
	switch a.choice {
	case "allow":
		m.finishApproval(approval{decision: "allow"}, "allowed once")
		return m.next()
	case "allowSession":
		m.finishApproval(approval{decision: "allowSession"}, "allowed for the rest of this task")
		return m.next()
	}
	a.instead = true
	a.form = m.newForm(huh.NewInput().Title("What should it do instead? (Enter to just deny)").Value(&a.message).Validate(denyText))
	return a.form.Init()
}

// denyText refuses a "what should it do instead" longer than the approval's
// answer carries (protocol.MaxDenyMessage; the runtime would cut it), so
// the input stays open to shorten it (QA: a message over 100 000
// characters was shown "told it" and never sent).
func denyText(s string) error {
	if n := len(strings.TrimSpace(s)); n > protocol.MaxDenyMessage {
		return fmt.Errorf("%d bytes: at most %d can be sent; shorten it, or empty it to just deny", n, protocol.MaxDenyMessage)
	}
	return nil
}

// insteadDone denies the open approval with what it should do instead, if
// anything.
func (m *tuiModel) insteadDone() tea.Cmd {
	msg := strings.TrimSpace(m.ask.message)
	shown := "denied"
	if msg != "" {
		// In the answer: the model reads it in the denied call's result.
		shown = "denied; told it: " + msg
	}
	m.finishApproval(approval{decision: "deny", message: msg}, shown)
	return m.next()
}

func (m *tuiModel) finishApproval(res approval, shown string) {
	a := m.ask
	a.approval.reply <- res
	st := m.st.ok
	if res.decision == "deny" {
		st = m.st.bad
	}
	a.item.addDecision("  ⎿ " + st.Render(shown))
	m.ask = nil
}

func (m *tuiModel) finishQuestion(answers map[string][]string) {
	a := m.ask
	a.question.reply <- answers
	shown := "dismissed"
	if answers != nil {
		var parts []string
		for _, id := range a.order {
			parts = append(parts, strings.Join(answers[id], ", "))
		}
		shown = "answered: " + strings.Join(parts, " · ")
	}
	a.item.addDecision("  ⎿ " + m.st.dim.Render(shown))
	m.ask = nil
}

// closeAsk answers the open form and the queued ones when the turn ended.
func (m *tuiModel) closeAsk(res approval) {
	if m.ask != nil {
		if m.ask.approval != nil {
			m.finishApproval(res, "not answered: the turn ended")
		} else {
			m.finishQuestion(nil)
		}
	}
	for _, p := range m.pending {
		switch p := p.(type) {
		case approvalMsg:
			p.reply <- res
		case questionMsg:
			p.reply <- nil
		}
	}
	m.pending = nil
	m.ta.Focus()
}

// next opens the next queued approval or question, else gives the keys
// back to the prompt.
func (m *tuiModel) next() tea.Cmd {
	if len(m.pending) == 0 {
		return m.ta.Focus()
	}
	msg := m.pending[0]
	m.pending = m.pending[1:]
	return m.queue(msg)
}

// tuiSession runs the interactive session; it returns the exit code (0,
// or 130 after Ctrl-C twice at the prompt or a SIGINT).
func tuiSession(r *runner, st styles, prog *atomic.Pointer[tea.Program]) int {
	if !st.color {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
	// Fixed, so no one queries the terminal's background while bubbletea
	// reads the keyboard.
	lipgloss.SetHasDarkBackground(true)
	out := os.Stdout
	if !isTerminal(out) {
		out = os.Stderr
	}
	m := newTUIModel(r, st)
	input, restore, err := filteredInput(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "task-x: the terminal session failed:", err)
		return exitFailed
	}
	defer restore()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithOutput(out), tea.WithInput(input))
	prog.Store(p)
	_, err = p.Run()
	prog.Store(nil)
	// The terminal leaves raw mode before the transcript is printed: in raw
	// mode a newline does not return the carriage, and the scroll-back
	// would be a staircase.
	restore()
	if m.cancel != nil {
		m.cancel()
	}
	m.closeAsk(approval{decision: "deny"})
	// The transcript stays in the scroll-back of the normal screen.
	width := m.width
	if width == 0 {
		width = termWidth()
	}
	fmt.Fprint(out, renderTranscript(st, m.items, width))
	if errors.Is(err, tea.ErrInterrupted) {
		return exitCancelled
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		fmt.Fprintln(os.Stderr, "task-x: the terminal session failed:", err)
		return exitFailed
	}
	return m.exitCode
}

// filteredInput puts the terminal in raw mode and returns what bubbletea
// reads: the keyboard's bytes through pasteFilter, whose pastes m takes
// from its store. bubbletea does not touch the modes of an input that is
// not a terminal, so raw mode is set here and restore undoes it.
func filteredInput(m *tuiModel) (*os.File, func(), error) {
	fd := int(os.Stdin.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		term.Restore(fd, state)
		return nil, nil, err
	}
	m.store = &pasteStore{}
	go func() {
		// Ends with the process: a read of the terminal cannot be
		// interrupted, and nothing reads it after the session.
		pasteFilter(os.Stdin, pw, m.store)
		pw.Close()
	}()
	var once sync.Once
	return pr, func() { once.Do(func() { term.Restore(fd, state); pr.Close() }) }, nil
}
