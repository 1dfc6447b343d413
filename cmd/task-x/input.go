package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"golang.org/x/sys/unix"
)

// Keys the session reacts to.
const (
	keyCtrlC = 0x03
	keyCtrlD = 0x04
	keyEsc   = 0x1b
	keyBS    = 0x7f
	keyCtrlH = 0x08
	keyEnter = '\r'
)

// keyboard reads the terminal byte by byte (no canonical mode, no echo, no
// signals: Ctrl-C arrives as a byte) and hands bytes to whoever owns the
// input at the moment: the prompt, an approval, or the running turn.
type keyboard struct {
	in    *os.File
	saved *unix.Termios
	keys  chan byte
	eof   chan struct{}
}

func newKeyboard(in *os.File) (*keyboard, error) {
	fd := int(in.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	saved := *t
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG | unix.IEXTEN
	t.Iflag &^= unix.ICRNL | unix.IXON
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return nil, err
	}
	k := &keyboard{in: in, saved: &saved, keys: make(chan byte, 256), eof: make(chan struct{})}
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := in.Read(buf)
			for _, b := range dropEscapeSequences(buf[:n]) {
				k.keys <- b
			}
			if err != nil {
				close(k.eof)
				return
			}
		}
	}()
	return k, nil
}

// restore puts the terminal back as it was.
func (k *keyboard) restore() {
	unix.IoctlSetTermios(int(k.in.Fd()), unix.TCSETS, k.saved)
}

// next returns the next byte, or false at end of input.
func (k *keyboard) next() (byte, bool) {
	select {
	case b := <-k.keys:
		return b, true
	case <-k.eof:
		select {
		case b := <-k.keys:
			return b, true
		default:
			return 0, false
		}
	}
}

// lineResult is how a line edit ended.
type lineResult int

const (
	lineOK lineResult = iota
	lineInterrupt
	lineEOF
	lineEsc
)

// readLine edits one line on w after prompt: printable runes, Backspace,
// Ctrl-U, Enter; Ctrl-C, Esc and Ctrl-D (on an empty line) end it.
// Escape sequences (arrows) are skipped.
func readLine(w io.Writer, prompt string, next func() (byte, bool)) (string, lineResult) {
	fmt.Fprint(w, prompt)
	var line []rune
	var pending []byte
	for {
		b, ok := next()
		if !ok {
			fmt.Fprint(w, "\r\n")
			return string(line), lineEOF
		}
		switch {
		case b == keyEnter || b == '\n':
			fmt.Fprint(w, "\r\n")
			return string(line), lineOK
		case b == keyCtrlC:
			fmt.Fprint(w, "^C\r\n")
			return string(line), lineInterrupt
		case b == keyCtrlD && len(line) == 0:
			fmt.Fprint(w, "\r\n")
			return "", lineEOF
		case b == keyEsc:
			fmt.Fprint(w, "\r\n")
			return string(line), lineEsc
		case b == keyBS || b == keyCtrlH:
			if len(line) > 0 {
				r := line[len(line)-1]
				line = line[:len(line)-1]
				n := runewidth.RuneWidth(r)
				fmt.Fprint(w, strings.Repeat("\b", n)+strings.Repeat(" ", n)+strings.Repeat("\b", n))
			}
		case b == 0x15: // Ctrl-U
			for _, r := range line {
				n := runewidth.RuneWidth(r)
				fmt.Fprint(w, strings.Repeat("\b", n)+strings.Repeat(" ", n)+strings.Repeat("\b", n))
			}
			line = line[:0]
		case b < 0x20:
		default:
			pending = append(pending, b)
			if utf8.FullRune(pending) {
				r, _ := utf8.DecodeRune(pending)
				pending = pending[:0]
				line = append(line, r)
				fmt.Fprint(w, string(r))
			}
		}
	}
}

// dropEscapeSequences removes the escape sequences of one read (an arrow
// key arrives as ESC [ A in a single read); a lone Esc stays.
func dropEscapeSequences(b []byte) []byte {
	out := b[:0:0]
	for i := 0; i < len(b); i++ {
		if b[i] == keyEsc && i+1 < len(b) && (b[i+1] == '[' || b[i+1] == 'O') {
			j := i + 2
			for j < len(b) && !(b[j] >= 0x40 && b[j] <= 0x7e) {
				j++
			}
			i = j
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// answers is where approvals and questions are answered: the keyboard of
// an interactive session, else lines of stdin (scripts), else nothing.
type answers struct {
	mu    sync.Mutex
	kb    *keyboard      // interactive
	r     *bufio.Reader  // stdin lines
	eof   bool           // stdin ended: nothing more can be asked
	owner chan chan byte // the turn watcher forwards keys here while asked
}

// line reads one answer; ok is false when no answer can be had.
func (a *answers) line(w io.Writer, prompt string) (string, lineResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kb != nil {
		ch := make(chan byte, 64)
		a.owner <- ch
		defer func() { a.owner <- nil }()
		return readLine(w, prompt, func() (byte, bool) { b, ok := <-ch; return b, ok })
	}
	if a.r == nil || a.eof {
		return "", lineEOF
	}
	fmt.Fprint(w, prompt)
	s, err := a.r.ReadString('\n')
	if err != nil && s == "" {
		a.eof = true
		fmt.Fprintln(w)
		return "", lineEOF
	}
	return strings.TrimRight(s, "\r\n"), lineOK
}

// approval is the decision for one agent/requestApproval and an optional
// message for the model.
type approval struct {
	decision string
	message  string
	unasked  bool // no one could be asked
	stop     bool // the user interrupted the turn
}

// approve shows the request with its preview (a coloured diff for edits)
// and asks allow once / allow for the session / deny.
func (p *printer) approve(params json.RawMessage, a *answers) approval {
	var req struct {
		Tool       string          `json:"tool"`
		Permission string          `json:"permission"`
		Input      json.RawMessage `json:"input"`
		Preview    string          `json:"preview"`
	}
	json.Unmarshal(params, &req)
	p.spin.setPaused(true)
	defer p.spin.setPaused(false)
	p.mu.Lock()
	p.flushText()
	fmt.Fprint(p.ew, "\n"+p.st.warn.Render(fmt.Sprintf("%s wants to run %s", req.Permission, req.Tool))+"\n")
	fmt.Fprint(p.ew, p.approvalBody(req.Tool, req.Input, req.Preview))
	p.mu.Unlock()
	for {
		ans, res := a.line(p.ew, "allow? [y] once / [a] for this session / [n] no, tell it what to do instead: ")
		switch res {
		case lineEOF:
			return approval{decision: "deny", unasked: true}
		case lineInterrupt, lineEsc:
			return approval{decision: "deny", stop: true}
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			return approval{decision: "allow"}
		case "a", "always":
			return approval{decision: "allowSession"}
		case "n", "no", "":
			msg, res := a.line(p.ew, "what should it do instead? (Enter to just deny) ")
			if res != lineOK {
				msg = ""
			}
			return approval{decision: "deny", message: strings.TrimSpace(msg)}
		}
	}
}

// approvalBody is the preview: a diff coloured line by line, else the
// command or the input.
func (p *printer) approvalBody(tool string, input json.RawMessage, preview string) string {
	if preview != "" {
		if strings.Contains(preview, "\n@@") || strings.HasPrefix(preview, "---") || strings.HasPrefix(preview, "@@") {
			return renderDiff(p.st, preview, 60)
		}
		return indent(preview) + "\n"
	}
	var cmd struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(input, &cmd) == nil && cmd.Command != "" {
		return "    $ " + cmd.Command + "\n"
	}
	return indent(plainJSON(input)) + "\n"
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("… %d more lines", len(lines)-40))
	}
	return "    " + strings.Join(lines, "\n    ")
}

// askUser asks agent/askUser's questions: a number per option (several,
// separated by spaces or commas, for a checkbox question). An empty answer
// to every question dismisses them (answers: null).
func (p *printer) askUser(params json.RawMessage, a *answers) map[string][]string {
	var req struct {
		Questions []struct {
			ID      string   `json:"id"`
			Text    string   `json:"text"`
			Kind    string   `json:"kind"`
			Options []string `json:"options"`
		} `json:"questions"`
	}
	if json.Unmarshal(params, &req) != nil {
		return nil
	}
	p.spin.setPaused(true)
	defer p.spin.setPaused(false)
	answers := map[string][]string{}
	answered := false
	for _, q := range req.Questions {
		p.mu.Lock()
		p.flushText()
		fmt.Fprintf(p.ew, "\n%s\n", q.Text)
		for i, o := range q.Options {
			fmt.Fprintf(p.ew, "  %d) %s\n", i+1, o)
		}
		p.mu.Unlock()
		prompt := "choose one, empty to skip: "
		if q.Kind == "checkbox" {
			prompt = "choose any (e.g. 1 3), empty to skip: "
		}
		line, _ := a.line(p.ew, prompt)
		picked := []string{}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
			var n int
			if _, err := fmt.Sscan(f, &n); err == nil && n >= 1 && n <= len(q.Options) {
				picked = append(picked, q.Options[n-1])
			}
		}
		if len(picked) > 0 {
			answered = true
		}
		answers[q.ID] = picked
	}
	if !answered {
		return nil
	}
	return answers
}
