package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// @ mentions and Tab completion (issue 38 item 10). A word "@path" of a
// prompt naming a file or folder of the workspace is sent in agent/run's
// editor.mentions (at most 10, relative to the folder), so the runtime
// reads it into the context under the read policy; the text keeps the
// word. Tab completes the word before the cursor: a slash command's name
// at the start of the prompt, else "@path" or a path (a word with a "/").

// maxMentions is protocol.md's bound of editor.mentions.
const maxMentions = 10

var mentionRE = regexp.MustCompile(`(?:^|\s)@([^\s@]+)`)

// mentions are the @paths of prompt that exist in root, relative to it.
func mentions(root, prompt string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(prompt, -1) {
		p := strings.TrimRight(m[1], ",.;:!?)]}'\"")
		rel, ok := inRoot(root, p)
		if !ok || seen[rel] {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			continue
		}
		seen[rel] = true
		out = append(out, rel)
		if len(out) == maxMentions {
			break
		}
	}
	return out
}

// inRoot is p relative to root when it names something inside it.
func inRoot(root, p string) (string, bool) {
	if p == "" || root == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	rel, err := filepath.Rel(root, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// slashCommands are the session's commands, for completion.
var slashCommands = []string{"/undo", "/diff", "/keep", "/revert", "/tasks", "/resume", "/mode", "/model", "/provider",
	"/new", "/clear", "/compact", "/init", "/help", "/exit"}

// complete completes the last word of line: it returns the line completed
// as far as the candidates agree, and the candidates when more than one fit.
func complete(root, line string, commands []string) (string, []string) {
	start := strings.LastIndexAny(line, " \t\n") + 1
	word := line[start:]
	var cands []string
	prefix := ""
	switch {
	case start == 0 && strings.HasPrefix(word, "/"):
		for _, c := range commands {
			if strings.HasPrefix(c, word) {
				cands = append(cands, c)
			}
		}
	case strings.HasPrefix(word, "@"):
		prefix = "@"
		cands = completePath(root, word[1:])
	case strings.Contains(word, "/") || strings.HasPrefix(word, "."):
		cands = completePath(root, word)
	default:
		return line, nil
	}
	if len(cands) == 0 {
		return line, nil
	}
	common := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, common) {
			common = common[:len(common)-1]
		}
	}
	done := line[:start] + prefix + common
	if len(cands) == 1 && !strings.HasSuffix(common, "/") {
		done += " "
	}
	if len(cands) == 1 {
		return done, nil
	}
	return done, cands
}

// completePath lists the entries of the workspace that start with p
// (relative to root); folders end with "/". Hidden entries only when p's
// last part starts with ".".
func completePath(root, p string) []string {
	dir, base := "", p
	if i := strings.LastIndex(p, "/"); i >= 0 {
		dir, base = p[:i+1], p[i+1:]
	}
	abs := filepath.Join(root, filepath.FromSlash(dir))
	if _, ok := inRoot(root, abs); !ok {
		return nil
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, base) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		if e.IsDir() {
			n += "/"
		}
		out = append(out, dir+n)
	}
	sort.Strings(out)
	if len(out) > 200 {
		out = out[:200]
	}
	return out
}
