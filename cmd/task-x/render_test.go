package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/huh"
	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// transcript renders a fixed event sequence, an approval body and a
// summary the way a session shows them.
func transcript(color bool) string {
	var out, errb bytes.Buffer
	p := &printer{w: &out, ew: &errb, st: newStyles(color), format: "text", width: 60,
		waiting: map[string]time.Time{}, waited: map[string]time.Duration{}}
	for _, ev := range []string{
		`{"taskId":"t1","event":{"type":"textDelta","text":"Looking at the "}}`,
		`{"taskId":"t1","event":{"type":"textDelta","text":"heading."}}`,
		`{"taskId":"t1","event":{"type":"toolStarted","tool":"run_command","callId":"c1","input":{"command":"go test ./... && echo ünïcödé 日本語 ok"}}}`,
		`{"taskId":"t1","event":{"type":"toolFinished","tool":"run_command","callId":"c1","ok":true,"durationMs":1500,"result":{"exitCode":1,"output":"l1\nl2\nl3\nl4\nl5\nl6\nl7 日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語\n"}}}`,
		`{"taskId":"t1","event":{"type":"fileChanged","kind":"modified","path":"README.md"}}`,
		`{"taskId":"t1","event":{"type":"warning","message":"context is 80% full"}}`,
	} {
		p.event(json.RawMessage(ev))
	}
	errb.WriteString(approvalBody(p.st, "replace_text", nil, "--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,2 @@\n-# demo\n+# demo, renamed\n \n"))
	var sum taskSummary
	json.Unmarshal([]byte(`{"taskId":"t1","status":"completed","iterations":2,"toolCalls":1,"usage":{"inputTokens":120,"outputTokens":30},
		"changedFiles":[{"path":"README.md","kind":"modified","added":1,"removed":1}],"validations":[{"name":"test","passed":false}]}`), &sum)
	p.printSummary(&sum, 4200*time.Millisecond)
	return "stdout:\n" + out.String() + "stderr:\n" + errb.String()
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		color bool
	}{{"transcript-plain.golden", false}, {"transcript-color.golden", true}} {
		got := transcript(tc.color)
		path := filepath.Join("testdata", tc.name)
		if *update {
			os.WriteFile(path, []byte(got), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test ./cmd/task-x -run Golden -update):\n%s", tc.name, got)
		}
		hasESC := strings.Contains(got, "\x1b[")
		if hasESC != tc.color {
			t.Errorf("%s: escape sequences present = %v, want %v", tc.name, hasESC, tc.color)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"hello world", 20, "hello world"},
		{"hello\n  world", 20, "hello world"},
		{"日本語のテキスト", 7, "日本語…"},
		{"ünïcödé text", 5, "ünïc…"},
	} {
		if got := truncate(tc.in, tc.width); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine("indexing", 500, 420, 1000, 2500*time.Millisecond)
	want := "[████████████░░░░░░░░░░░░]  50% indexing: 500 files seen of ~1000, 420 parsed (2.5s)"
	if got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
	if got := progressLine("indexing", 10, 3, 0, time.Second); got != "indexing: 10 files seen, 3 parsed (1.0s)" {
		t.Errorf("without a total: %q", got)
	}
	if got := progressLine("graph", 10, 10, 10, time.Second); !strings.Contains(got, "building the graph") {
		t.Errorf("graph phase: %q", got)
	}
}

func TestModuleCycles(t *testing.T) {
	var g graphResult
	json.Unmarshal([]byte(`{"nodes":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"}],
		"edges":[{"from":0,"to":1,"kind":"import"},{"from":1,"to":0,"kind":"import"},{"from":2,"to":3,"kind":"import"},{"from":3,"to":2,"kind":"reference"}]}`), &g)
	if n := moduleCycles(&g); n != 1 {
		t.Errorf("moduleCycles = %d, want 1 (a<->b; c->d is closed only by a reference)", n)
	}
}

// sessionTranscript drives the session's model with a fixed sequence (a
// prompt, an approval with its diff answered with y, a streamed answer, a
// command with a long output collapsed and then expanded in place, an
// interrupted turn) and returns the transcript as the viewport shows it.
func sessionTranscript(t *testing.T, color bool) string {
	st := newStyles(color)
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "openaiCompatible", Model: "fake", Mode: "agent"}}
	m := newTUIModel(r, st)
	m.update(tea.WindowSizeMsg{Width: 72, Height: 30})
	m.add(&item{kind: itemUser, text: "rename the heading"})
	m.turnFiles = map[string]bool{}
	ev := func(s string) {
		e, err := parseEvent([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		m.update(eventMsg{e})
	}
	ev(`{"taskId":"t1","event":{"type":"toolStarted","tool":"replace_text","callId":"c1","input":{"path":"README.md","oldText":"# demo\n","newText":"# demo, renamed\n"}}}`)
	ev(`{"taskId":"t1","event":{"type":"approvalRequested","callId":"c1"}}`)
	reply := make(chan approval, 1)
	m.update(approvalMsg{params: json.RawMessage(`{"taskId":"t1","callId":"c1","tool":"replace_text","permission":"edit","input":{},"preview":"--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n-# demo\n+# demo, renamed\n \n some text\n"}`), reply: reply})
	if m.ask == nil || !strings.Contains(m.ask.form.View(), "Yes, for the rest of this task (a)") {
		t.Fatalf("no approval form open")
	}
	m.update(approvalArmMsg{m.ask}) // its guard ends (approvalGuard)
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'y'}})
	if a := <-reply; a.decision != "allow" {
		t.Fatalf("y answered %+v", a)
	}
	ev(`{"taskId":"t1","event":{"type":"toolFinished","tool":"replace_text","callId":"c1","ok":true,"durationMs":40,"result":{}}}`)
	ev(`{"taskId":"t1","event":{"type":"fileChanged","kind":"modified","path":"README.md"}}`)
	ev(`{"taskId":"t1","event":{"type":"textDelta","text":"Renamed the **heading**; "}}`)
	ev(`{"taskId":"t1","event":{"type":"textDelta","text":"now the tests:"}}`)
	ev(`{"taskId":"t1","event":{"type":"toolStarted","tool":"run_command","callId":"c2","input":{"command":"go test ./... && echo ünïcödé 日本語 ok"}}}`)
	ev(`{"taskId":"t1","event":{"type":"toolFinished","tool":"run_command","callId":"c2","ok":true,"durationMs":1500,"result":{"exitCode":1,"output":"l1\nl2\nl3\nl4\nl5\nl6\nl7 日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語日本語\n"}}}`)
	collapsed := renderTranscript(st, m.items, m.width)
	m.update(tea.KeyMsg{Type: tea.KeyCtrlO})
	expanded := renderItem(st, lastTool(m), m.width)
	m.note("%s", interruptedSummary(st, 3200*time.Millisecond, 2, 1234, m.turnFiles))
	return "collapsed:\n" + collapsed + "expanded after ctrl+o:\n" + expanded +
		"interrupted:\n" + m.items[len(m.items)-1].text + "\n"
}

func lastTool(m *tuiModel) *item {
	for i := len(m.items) - 1; i >= 0; i-- {
		if m.items[i].kind == itemTool {
			return m.items[i]
		}
	}
	return nil
}

func TestSessionGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		color bool
	}{{"session-plain.golden", false}, {"session-color.golden", true}} {
		got := sessionTranscript(t, tc.color)
		path := filepath.Join("testdata", tc.name)
		if *update {
			os.WriteFile(path, []byte(got), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test ./cmd/task-x -run Golden -update):\n%s", tc.name, got)
		}
		if hasESC := strings.Contains(got, "\x1b["); hasESC != tc.color {
			t.Errorf("%s: escape sequences present = %v, want %v", tc.name, hasESC, tc.color)
		}
		for _, w := range []string{"allowed once", "… 2 earlier lines (ctrl+o expands)", "(ctrl+o collapses)", "interrupted", "the task is kept"} {
			if !strings.Contains(ansiStrip(got), w) {
				t.Errorf("%s: %q missing", tc.name, w)
			}
		}
	}
}

func ansiStrip(s string) string {
	return regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]").ReplaceAllString(s, "")
}

// TestProgressBarTotal: the runtime's total wins over the count this client
// saved at the folder's last open; later phases are shown; ready clears.
func TestProgressBarTotal(t *testing.T) {
	var b bytes.Buffer
	p := &progressBar{w: &b, enabled: true, total: 50, width: 200}
	p.update(json.RawMessage(`{"phase":"indexing","files":10,"parsed":5,"total":100,"elapsedMs":1200}`))
	if !strings.Contains(b.String(), "10% indexing: 10 files seen of ~100, 5 parsed (1.2s)") {
		t.Errorf("with the runtime's total: %q", b.String())
	}
	b.Reset()
	p.update(json.RawMessage(`{"phase":"indexing","files":10,"parsed":5,"elapsedMs":1200}`))
	if !strings.Contains(b.String(), "20% indexing: 10 files seen of ~50") {
		t.Errorf("with the saved total: %q", b.String())
	}
	b.Reset()
	p.update(json.RawMessage(`{"phase":"graph","stage":"retrieval","files":50,"elapsedMs":3000}`))
	if !strings.Contains(b.String(), "building the search index: 50 files (3.0s)") {
		t.Errorf("retrieval stage: %q", b.String())
	}
	b.Reset()
	p.update(json.RawMessage(`{"phase":"indexing","stage":"loading","files":40,"parsed":0,"elapsedMs":300}`))
	if !strings.Contains(b.String(), "loading the saved index: 40 files (300ms)") {
		t.Errorf("loading stage: %q", b.String())
	}
	b.Reset()
	p.update(json.RawMessage(`{"phase":"ready","elapsedMs":3100}`))
	if b.String() != "\r\x1b[K" {
		t.Errorf("ready: %q, want the line cleared", b.String())
	}
}

// TestSessionWithdraw: an approval the runtime withdraws is closed (open or
// queued), answered deny, and the next queued one opens.
func TestSessionWithdraw(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	first, second := make(chan approval, 1), make(chan approval, 1)
	m.update(approvalMsg{params: json.RawMessage(`{"callId":"c1","tool":"write_file","permission":"edit","preview":"x"}`), reply: first})
	m.update(approvalMsg{params: json.RawMessage(`{"callId":"c2","tool":"run_command","permission":"command","input":{"command":"make"}}`), reply: second})
	if m.ask == nil || callOf(m.ask.approval.params) != "c1" || len(m.pending) != 1 {
		t.Fatalf("c1 should be open and c2 queued")
	}
	withdrawn, _ := parseEvent([]byte(`{"taskId":"t1","event":{"type":"approvalWithdrawn","callId":"c1"}}`))
	m.update(eventMsg{withdrawn})
	select {
	case a := <-first:
		if a.decision != "deny" {
			t.Errorf("withdrawn approval answered %q", a.decision)
		}
	default:
		t.Fatal("the withdrawn approval was not answered")
	}
	if m.ask == nil || callOf(m.ask.approval.params) != "c2" {
		t.Fatal("the queued approval did not open")
	}
	if got := renderTranscript(m.st, m.items, 80); !strings.Contains(got, "no longer asked") || !strings.Contains(got, "$ make") {
		t.Errorf("transcript:\n%s", got)
	}
}

// TestUseColor: colour on a terminal unless NO_COLOR, TERM=dumb or
// --no-color; never on a file.
func TestUseColor(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("NO_COLOR", "")
	if !useColor(tty) {
		t.Error("no colour on a terminal")
	}
	t.Setenv("NO_COLOR", "1")
	if useColor(tty) {
		t.Error("colour with NO_COLOR set")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "dumb")
	if useColor(tty) {
		t.Error("colour with TERM=dumb")
	}
	t.Setenv("TERM", "xterm-256color")
	g.noColor = true
	if useColor(tty) {
		t.Error("colour with --no-color")
	}
	g.noColor = false
	f, _ := os.Create(filepath.Join(t.TempDir(), "out"))
	defer f.Close()
	if useColor(f) {
		t.Error("colour on a file")
	}
}

// TestScrolledUpFollowsAnApproval: after PgUp the view stays where the user
// put it while output comes, but an approval that opens brings the end
// (its diff) into view.
func TestScrolledUpFollowsAnApproval(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}}
	m := newTUIModel(r, newStyles(false))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 12})
	for i := 0; i < 60; i++ {
		m.add(&item{kind: itemNote, text: "line " + strconv.Itoa(i)})
	}
	m.refresh()
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	m.add(&item{kind: itemNote, text: "more output"})
	m.refresh()
	if m.vp.AtBottom() {
		t.Fatal("output moved a view the user scrolled up")
	}
	m.Update(approvalMsg{params: json.RawMessage(`{"callId":"c1","tool":"write_file","permission":"edit","preview":"x"}`), reply: make(chan approval, 1)})
	if !m.vp.AtBottom() {
		t.Fatal("the approval opened out of view")
	}
}

// TestFastRunesWhilePickerOpen: text that arrives in one read while a
// picker is open goes to the picker, not into the hidden prompt (CI: the
// "/provider" of "/provider bogus" went into the prompt while its space
// went to the closing /model picker).
func TestFastRunesWhilePickerOpen(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	var picked string
	m.openPicker("Pick", []huh.Option[string]{huh.NewOption("one", "one"), huh.NewOption("two", "two")}, func(v string) tea.Cmd {
		picked = v
		return nil
	})
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/provider")})
	if got := m.ta.Value(); got != "" {
		t.Errorf("the prompt behind an open picker took %q", got)
	}
	m.update(tea.KeyMsg{Type: tea.KeyEsc})
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/provider")})
	if got := m.ta.Value(); got != "/provider" || m.pick != nil || picked != "" {
		t.Errorf("after Esc closed the picker the prompt holds %q (picker open %v, picked %q)", got, m.pick != nil, picked)
	}
}

// submitLine types line at the prompt and presses Enter.
func submitLine(m *tuiModel, line string) tea.Cmd {
	m.ta.SetValue(line)
	return m.update(tea.KeyMsg{Type: tea.KeyEnter})
}

// TestClearHeaderModel: after /model and /clear the header names the model
// of now, not the one the session started with (QA: a stale model).
func TestClearHeaderModel(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "old-model", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 100, Height: 24})
	m.update(modelsMsg{want: "new-model"}) // /model new-model, the provider listing nothing
	submitLine(m, "/clear")
	got := renderTranscript(m.st, m.items, 100)
	if !strings.Contains(got, "ollama/new-model") || strings.Contains(got, "old-model") {
		t.Errorf("after /model new-model and /clear the transcript shows:\n%s", got)
	}
}

// TestSessionErrorsNameCommands: in the session a provider error names
// /model and /provider, which can be typed there, not --model, --provider
// or --base-url (QA); one-shot mode keeps the flags.
func TestSessionErrorsNameCommands(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "openaiCompatible", Model: "nope", BaseURL: "http://127.0.0.1:9/v1", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 200, Height: 24})
	for _, ev := range []string{
		`{"taskId":"t1","event":{"type":"error","kind":"notFound","status":404,"message":"model not found"}}`,
		`{"taskId":"t1","event":{"type":"error","kind":"network","message":"dial tcp: connection refused"}}`,
		`{"taskId":"t1","event":{"type":"error","kind":"invalidConfig","message":"bad"}}`,
		`{"taskId":"t1","event":{"type":"error","kind":"invalidRequest","status":400,"message":"bad"}}`,
	} {
		e, err := parseEvent([]byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		m.update(eventMsg{e})
	}
	m.update(turnDoneMsg{err: &jsonrpc.Error{Code: -32602, Message: "invalid provider config", Data: map[string]any{"kind": "invalidConfig", "field": "provider.baseUrl"}}})
	m.update(turnDoneMsg{err: &jsonrpc.Error{Code: -32603, Message: "x", Data: map[string]any{"kind": "notFound"}}})
	got := renderTranscript(m.st, m.items, 200)
	for _, flag := range []string{"--model", "--provider", "--base-url"} {
		if strings.Contains(got, flag) {
			t.Errorf("the session names %s:\n%s", flag, got)
		}
	}
	for _, cmd := range []string{"/model", "/provider"} {
		if !strings.Contains(got, cmd) {
			t.Errorf("the session's errors do not name %s:\n%s", cmd, got)
		}
	}
	if s := providerSentence(protocol.ErrKindNotFound, 404, "", r.prov, flagWords); !strings.Contains(s, "--model MODEL") {
		t.Errorf("one-shot: %s", s)
	}
}

// TestHomeEndScroll: End shows the end of the transcript and Home its
// start (there was no way back to the end but PgDn, half a screen at a
// time); with text in the prompt they move its cursor and Ctrl-Home /
// Ctrl-End scroll.
func TestHomeEndScroll(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}}
	m := newTUIModel(r, newStyles(false))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 12})
	for i := 0; i < 80; i++ {
		m.add(&item{kind: itemNote, text: "line " + strconv.Itoa(i)})
	}
	m.refresh()
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	m.Update(tea.KeyMsg{Type: tea.KeyEnd})
	if !m.vp.AtBottom() {
		t.Fatal("End did not show the end")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyHome})
	if !m.vp.AtTop() || !strings.Contains(m.vp.View(), "task-x /src/demo") {
		t.Fatalf("Home did not show the start:\n%s", m.vp.View())
	}
	if !strings.Contains(m.bottomView(), "home/end") || !strings.Contains(sessionHelp, "Home/End") {
		t.Error("the footer or /help does not name Home/End")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("abc")})
	m.Update(tea.KeyMsg{Type: tea.KeyHome})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'x'}})
	if got := m.ta.Value(); got != "xabc" {
		t.Errorf("Home in a prompt with text: %q, want the cursor at its start", got)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlEnd})
	if !m.vp.AtBottom() {
		t.Fatal("Ctrl-End did not show the end")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlHome})
	if !m.vp.AtTop() {
		t.Fatal("Ctrl-Home did not show the start")
	}
}

// TestQueuedMidStream: a message queued while the answer streams goes
// under the answer, which goes on whole above it (it ended the answer and
// the rest of the word came after the message: "tes", "› …", "ts now");
// the next model call's answer comes after it.
func TestQueuedMidStream(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.busy, m.turnFiles = true, map[string]bool{}
	ev := func(s string) {
		e, err := parseEvent([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		m.update(eventMsg{e})
	}
	ev(`{"taskId":"t1","event":{"type":"iteration","iteration":1}}`)
	ev(`{"taskId":"t1","event":{"type":"textDelta","text":"Looking at the tes"}}`)
	submitLine(m, "also check the docs")
	ev(`{"taskId":"t1","event":{"type":"textDelta","text":"ts now."}}`)
	ev(`{"taskId":"t1","event":{"type":"steered","text":"also check the docs"}}`)
	ev(`{"taskId":"t1","event":{"type":"iteration","iteration":2}}`)
	ev(`{"taskId":"t1","event":{"type":"textDelta","text":"The docs are fine."}}`)
	got := renderTranscript(m.st, m.items, 80)
	a, q, b := strings.Index(got, "Looking at the tests now."), strings.Index(got, "› also check the docs (joined)"), strings.Index(got, "The docs are fine.")
	if a < 0 || q < a || b < q {
		t.Errorf("the answer, the joined message and the next answer are not whole and in order:\n%s", got)
	}
}

// TestDenyMessageTooLong: a "what should it do instead" longer than the
// approval's answer carries (protocol.MaxDenyMessage) is refused in the
// input, which stays open, and nothing says it was sent (QA: over 100 000
// characters was shown "told it" and never sent); a shorter one goes in
// the answer with the denial.
func TestDenyMessageTooLong(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	reply := make(chan approval, 1)
	m.update(approvalMsg{params: json.RawMessage(`{"taskId":"t1","callId":"c1","tool":"delete_path","permission":"destructive","input":{"path":"README.md"}}`), reply: reply})
	m.update(approvalArmMsg{m.ask})
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'n'}})
	if m.ask == nil || !m.ask.instead {
		t.Fatal("n did not ask what to do instead")
	}
	for _, n := range []int{protocol.MaxDenyMessage + 1, 100001} {
		m.update(tea.KeyMsg{Type: tea.KeyCtrlU})
		m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.Repeat("x", n)), Paste: true})
		m.update(tea.KeyMsg{Type: tea.KeyEnter})
		select {
		case a := <-reply:
			t.Fatalf("a message of %d bytes answered the approval (the runtime cuts it at %d): %.80v", n, protocol.MaxDenyMessage, a)
		default:
		}
		if m.ask == nil || !strings.Contains(m.ask.form.View(), fmt.Sprintf("%d bytes: at most %d can be sent", n, protocol.MaxDenyMessage)) {
			t.Fatalf("the input did not stay open saying a message of %d bytes is too long", n)
		}
		if got := renderTranscript(m.st, m.items, 100); strings.Contains(got, "told it") {
			t.Fatalf("the transcript says it was told:\n%.300s", got)
		}
	}
	// Shortened: in the answer, with the denial.
	m.update(tea.KeyMsg{Type: tea.KeyCtrlU})
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("keep it"), Paste: true})
	m.update(tea.KeyMsg{Type: tea.KeyEnter})
	select {
	case a := <-reply:
		if a.decision != "deny" || a.message != "keep it" {
			t.Errorf("answered %+v", a)
		}
	default:
		t.Fatal("a message of 7 characters was refused")
	}
	if got := renderTranscript(m.st, m.items, 100); !strings.Contains(got, "denied; told it: keep it") {
		t.Errorf("the decision line:\n%s", got)
	}
}

// TestReplayShowsPasteTag: a resumed task shows a prompt with a large paste
// as the session showed it, "[pasted N lines]", not the pasted text (QA);
// a large prompt sent elsewhere is shown collapsed.
func TestReplayShowsPasteTag(t *testing.T) {
	data := t.TempDir()
	r := &runner{s: &session{root: "/src/demo", dataDir: data}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	var lines []string
	for i := 0; i < 40; i++ {
		lines = append(lines, "log line "+strconv.Itoa(i))
	}
	paste := strings.Join(lines, "\n")
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("explain ")})
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(paste), Paste: true})
	if got := m.ta.Value(); got != "explain [pasted 40 lines]" {
		t.Fatalf("the prompt holds %q", got)
	}
	m.update(tea.KeyMsg{Type: tea.KeyEnter}) // its turn is not run here: the runtime records what was sent
	sent := "explain " + paste

	// Another session of the folder (task-x resume) replays the task.
	m2 := newTUIModel(r, newStyles(false))
	m2.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	replay := func(text string) string {
		b, _ := json.Marshal(map[string]any{"taskId": "t1", "replay": true, "event": map[string]any{"type": "userMessage", "text": text, "images": 0}})
		e, err := parseEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		m2.update(eventMsg{e})
		return m2.items[len(m2.items)-1].text
	}
	if got := replay(sent); got != "explain [pasted 40 lines]" {
		t.Errorf("the replayed prompt shows %q, want its tag", got)
	}
	if got := replay("summarize\n\n" + paste); got != "summarize [41 more lines]" {
		t.Errorf("a large prompt sent elsewhere shows %q", got)
	}
	if got := replay("a short\nprompt"); got != "a short\nprompt" {
		t.Errorf("a short prompt shows %q", got)
	}
}

// TestReplayShowsSteered: a message typed while a turn ran (steered into
// it) is shown by a resumed task under the answer it was typed during, as
// the live session showed it (the replay dropped it: the model's reply
// to it came with no message above it).
func TestReplayShowsSteered(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo", dataDir: t.TempDir()}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, s := range []string{
		`{"type":"userMessage","text":"look at the tests","images":0}`,
		`{"type":"assistantMessage","text":"Looking at the tests now."}`,
		`{"type":"steered","text":"also check the docs"}`,
		`{"type":"assistantMessage","text":"The docs are fine."}`,
	} {
		e, err := parseEvent([]byte(`{"taskId":"t1","replay":true,"event":` + s + `}`))
		if err != nil {
			t.Fatal(err)
		}
		m.update(eventMsg{e})
	}
	got := renderTranscript(m.st, m.items, 100)
	a, q, b := strings.Index(got, "Looking at the tests now."), strings.Index(got, "› also check the docs (joined)"), strings.Index(got, "The docs are fine.")
	if a < 0 || q < a || b < q {
		t.Errorf("the replay does not show the steered message between the answers:\n%s", got)
	}
}

// TestEscEscInOneRead: two Escs that arrive in one read come from
// bubbletea as one alt+esc; they interrupt a running turn as Esc does (they
// did nothing: pressing Esc twice quickly, or over a slow ssh link, did
// not stop the agent) and open the earlier messages at the idle prompt.
func TestEscEscInOneRead(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo", dataDir: t.TempDir()}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 100, Height: 30})
	submitLine(m, "first")
	m.busy = false
	m.update(tea.KeyMsg{Type: tea.KeyEsc, Alt: true})
	if m.pick == nil {
		t.Fatal("Esc Esc in one read did not open the earlier messages")
	}
	m.update(tea.KeyMsg{Type: tea.KeyEsc})
	if m.pick != nil {
		t.Fatal("Esc did not close the list")
	}
	cancelled := false
	m.busy, m.stopping, m.cancel = true, false, func() { cancelled = true }
	m.update(tea.KeyMsg{Type: tea.KeyEsc, Alt: true})
	if !cancelled {
		t.Error("Esc Esc in one read did not interrupt the turn")
	}
}

// TestScreenFitsCodePointWidths: an emoji with a skin tone (one grapheme
// two cells wide to lipgloss, four to tmux and xterm, which count each code
// point) in the transcript or the prompt does not push a screen row past
// the terminal's width (QA: in tmux every row was padded to the width with
// spaces, so that row wrapped and the screen drew duplicated rows and lost
// the prompt until a resize).
func TestScreenFitsCodePointWidths(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo"}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(true))
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 16})
	m.add(&item{kind: itemUser, text: "thumbs 👍🏽 ok"})
	m.add(&item{kind: itemAnswer, text: "family 👨‍👩‍👧 and 👍🏽", done: true})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("thumbs 👍🏽 ok")})
	for i, line := range strings.Split(m.View(), "\n") {
		w := 0
		for _, c := range ansi.Strip(line) {
			w += runewidth.RuneWidth(c)
		}
		if w > 60 {
			t.Errorf("row %d is %d cells wide counted by code point, the terminal 60: %q", i, w, ansi.Strip(line))
		}
	}
}

// TestKeysBeforePickerOpens: keys typed after /model or /resume but before
// the list came (the provider or the runtime answering) go to the picker
// once it opens, in order (QA: "/model", Enter, "j", Enter typed quickly
// sent "j" to the model as a prompt, then the picker opened); Esc before
// it opens cancels it.
func TestKeysBeforePickerOpens(t *testing.T) {
	r := &runner{s: &session{root: "/src/demo", dataDir: t.TempDir()}, prov: defaults{Provider: "ollama", Model: "m", Mode: "agent"}, p: &printer{}}
	m := newTUIModel(r, newStyles(false))
	m.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	submitLine(m, "/model")
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'j'}})
	m.update(tea.KeyMsg{Type: tea.KeyEnter})
	if m.busy || m.ta.Value() != "" {
		t.Fatalf("keys typed before the picker opened went to the prompt (busy %v, prompt %q)", m.busy, m.ta.Value())
	}
	m.update(modelsMsg{models: []protocol.ModelInfo{{ID: "m"}, {ID: "m2"}, {ID: "m3"}}})
	// huh completes the Select with a message of its own, after Enter.
	if m.pick == nil || *m.pick.value != "m2" {
		t.Fatalf("j and Enter before the picker opened: picker open %v, m2 not chosen", m.pick != nil)
	}
	m.pick = nil
	submitLine(m, "/model")
	m.update(tea.KeyMsg{Type: tea.KeyEsc})
	m.update(modelsMsg{models: []protocol.ModelInfo{{ID: "m"}, {ID: "m2"}}})
	if m.pick != nil {
		t.Error("Esc before the picker opened did not cancel it")
	}
	m.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("hi")})
	if m.ta.Value() != "hi" {
		t.Errorf("after the cancelled picker the prompt holds %q", m.ta.Value())
	}
}

// TestDiffCreatedAndCut: /diff names /dev/null for a file the agent
// created or deleted, as the approval's preview does (it showed
// "--- a/notes.txt" over "@@ -0,0"), and says when the runtime cut a file
// to fit its reply or the file changed after the agent's edit (the cut
// showed as lines changed with nothing saying so).
func TestDiffCreatedAndCut(t *testing.T) {
	s := func(v string) *string { return &v }
	var b bytes.Buffer
	n := pendingDiffs(&b, newStyles(false), []protocol.PendingFile{
		{Path: "new.txt", Current: s("hello\n"), Added: 1},
		{Path: "old.txt", Original: s("bye\n"), Removed: 1},
		{Path: "big.log", Original: s("a\n[task-x: cut here, 10 more bytes not shown; the file on disk is whole]"), Current: s("b\n[task-x: cut here, 12 more bytes not shown; the file on disk is whole]"), Added: 3, Removed: 1, Truncated: true},
		{Path: "same.txt", Original: s("x\n"), Current: s("x\n")},
		{Path: "touched.go", Original: s("x\n"), Current: s("y\n"), ChangedOutside: true},
	})
	got := b.String()
	for _, want := range []string{"--- /dev/null\n", "+++ b/new.txt", "--- a/old.txt", "+++ /dev/null\n",
		"big.log was cut to fit the reply: this diff shows part of it; the agent's edits are +3 -1 lines",
		"touched.go changed outside the agent after its edit"} {
		if !strings.Contains(got, want) {
			t.Errorf("/diff does not show %q:\n%s", want, got)
		}
	}
	if n != 4 || strings.Contains(got, "same.txt") {
		t.Errorf("%d diffs shown, want 4 (a file back as it was has none):\n%s", n, got)
	}
}
