package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/fsx"
)

// Prompt history (issue 38 item 9): what was typed at the session's
// prompt, per folder, in DATA/history/<hash of the folder>.jsonl (one JSON
// string a line, appended as sent). Up / Ctrl-P at the first line of the
// prompt goes back, Down / Ctrl-N forward, past the newest back to what was
// being typed. Never a key: it holds what the user typed, as the
// transcript does.

// historyMax is how many entries are kept per folder.
const historyMax = 1000

// historyEntryMax: a longer prompt (a large paste sent whole) is kept as
// typed, with its paste tag, not as sent.
const historyEntryMax = 4 * pasteMaxChars

type history struct {
	path    string
	entries []string
	pos     int    // len(entries) when not browsing
	draft   string // what was typed before browsing
}

// historyPath is the history file of the folder root.
func historyPath(dataDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dataDir, "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// loadHistory reads the folder's history; a missing or damaged file is an
// empty history (a damaged line is skipped).
func loadHistory(dataDir, root string) *history {
	h := &history{}
	if dataDir == "" {
		return h
	}
	h.path = historyPath(dataDir, root)
	f, err := os.Open(h.path)
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			var s string
			if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
				h.entries = append(h.entries, s)
			}
		}
	}
	if len(h.entries) > historyMax {
		h.entries = h.entries[len(h.entries)-historyMax:]
		h.rewrite()
	}
	h.pos = len(h.entries)
	return h
}

// add records a sent prompt (typed is the prompt as typed, sent as sent)
// and stops browsing.
func (h *history) add(typed, sent string) {
	s := sent
	if len(s) > historyEntryMax || strings.Count(s, "\n") > pasteMaxLines*4 {
		s = typed
	}
	if s != "" && (len(h.entries) == 0 || h.entries[len(h.entries)-1] != s) {
		h.entries = append(h.entries, s)
		if h.path != "" {
			os.MkdirAll(filepath.Dir(h.path), 0o700)
			if f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				b, _ := json.Marshal(s)
				f.Write(append(b, '\n'))
				f.Close()
			}
		}
	}
	h.pos, h.draft = len(h.entries), ""
}

// rewrite writes the kept entries (after trimming to historyMax).
func (h *history) rewrite() { rewriteJSONLines(h.path, h.entries) }

// rewriteJSONLines replaces the file at path with one JSON object a line,
// atomically (a session writing the same file at once never leaves half
// of it); it is best effort, as the files it keeps are.
func rewriteJSONLines[T any](path string, entries []T) {
	var b bytes.Buffer
	for _, e := range entries {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	fsx.WriteFileAtomic(path, b.Bytes(), 0o600)
}

// prev is the entry before the one shown (current is the prompt's text,
// kept as the draft when browsing starts); false at the oldest.
func (h *history) prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// next is the entry after the one shown, the draft past the newest; false
// when not browsing.
func (h *history) next() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}

// Prompts as shown (QA: a resumed task showed a large paste in full): the
// runtime records a prompt as sent, its pastes' text in it, so a replay
// cannot tell them from what was typed. A prompt sent other than as typed
// (a large paste shown as its "[pasted 480 lines]" tag, /init, a !command's
// output or /compact's summary in front of it) is kept here by the sha256
// of what was sent, in DATA/prompts/<hash of the folder>.jsonl (one
// {"sent": hex, "typed": …} a line, 0600, the last shownMax kept), and a
// replay shows it as typed.

// shownMax is how many prompts are kept per folder.
const shownMax = 200

// shownTypedMax: a longer prompt as typed is not kept (it holds no tag
// worth the space: a tag is short).
const shownTypedMax = 64 << 10

type shownPrompt struct {
	Sent  string `json:"sent"`
	Typed string `json:"typed"`
}

type shownPrompts struct {
	path    string
	entries []shownPrompt
}

// shownPath is next to the history: DATA/prompts/<hash of the folder>.jsonl
// (DATA/history holds one file per folder).
func shownPath(dataDir, root string) string {
	return filepath.Join(dataDir, "prompts", filepath.Base(historyPath(dataDir, root)))
}

// loadShown reads the folder's prompts as shown; a missing or damaged file
// holds none (a damaged line is skipped).
func loadShown(dataDir, root string) *shownPrompts {
	s := &shownPrompts{}
	if dataDir == "" {
		return s
	}
	s.path = shownPath(dataDir, root)
	if f, err := os.Open(s.path); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 2*shownTypedMax)
		for sc.Scan() {
			var e shownPrompt
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Sent != "" {
				s.entries = append(s.entries, e)
			}
		}
	}
	return s
}

func sentKey(sent string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(sent)))
	return hex.EncodeToString(sum[:])
}

// add keeps typed as the way to show sent, when they differ.
func (s *shownPrompts) add(typed, sent string) {
	if typed == sent || len(typed) > shownTypedMax {
		return
	}
	e := shownPrompt{Sent: sentKey(sent), Typed: typed}
	s.entries = append(s.entries, e)
	if s.path == "" {
		return
	}
	os.MkdirAll(filepath.Dir(s.path), 0o700)
	if len(s.entries) > shownMax {
		s.entries = s.entries[len(s.entries)-shownMax:]
		rewriteJSONLines(s.path, s.entries)
		return
	}
	if f, err := os.OpenFile(s.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		j, _ := json.Marshal(e)
		f.Write(append(j, '\n'))
		f.Close()
	}
}

// typed is how sent was shown when it was sent, if it was kept.
func (s *shownPrompts) typed(sent string) (string, bool) {
	k := sentKey(sent)
	for i := len(s.entries) - 1; i >= 0; i-- {
		if s.entries[i].Sent == k {
			return s.entries[i].Typed, true
		}
	}
	return "", false
}

// collapsed is a prompt sent elsewhere (another client, one-shot mode with
// piped stdin, a data folder without the record) that is longer than a
// paste shown whole: its first line and the size of the rest, as the
// session shows a large paste.
func collapsed(text string) string {
	text = strings.TrimRight(text, "\n")
	lines := strings.Count(text, "\n") + 1
	if lines <= pasteMaxLines && len(text) <= pasteMaxChars {
		return text
	}
	first, rest, _ := strings.Cut(text, "\n")
	if r := []rune(first); len(r) > 200 {
		first, rest = string(r[:200]), string(r[200:])+"\n"+rest
		rest = strings.TrimSuffix(rest, "\n")
	}
	switch {
	case rest == "":
		return first
	case lines > 1:
		return fmt.Sprintf("%s [%d more lines]", first, strings.Count(rest, "\n")+1)
	}
	return fmt.Sprintf("%s [%d more characters]", first, len([]rune(rest)))
}
