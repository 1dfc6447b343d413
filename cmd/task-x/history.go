package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
func (h *history) rewrite() {
	var b strings.Builder
	for _, e := range h.entries {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	tmp := h.path + ".tmp"
	if os.WriteFile(tmp, []byte(b.String()), 0o600) == nil {
		os.Rename(tmp, h.path)
	}
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
