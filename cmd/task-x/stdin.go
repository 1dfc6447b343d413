package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// Piped stdin in one-shot mode (issue 38 item 13): `cat log | task-x -p
// "explain"` sends the text with the prompt, as `claude -p` does; `echo
// "fix it" | task-x run` makes it the prompt. Stdin also answers approvals
// in one-shot mode (`yes a | task-x run -p ...`), so a stdin whose first
// line is an answer word (y, yes, a, always, n, no) or a question's option
// numbers ("2", "1, 3") is left for the approvals and questions; anything else is read whole as the text, and approvals then
// have no one to ask (exit 3 with the advice).

// stdinMax bounds the piped text: a larger input is a usage error naming
// a way to send a part of it.
const stdinMax = 4 << 20

// stdinWait is how long a run with a prompt waits for the first line of
// a stdin that is not a terminal.
const stdinWait = 2 * time.Second

// answerWords are the first lines that mark stdin as approval answers.
var answerWords = map[string]bool{"y": true, "yes": true, "a": true, "always": true, "n": true, "no": true}

// isAnswerLine: an approval's answer word, or a question's option numbers
// ("2", "1, 3").
func isAnswerLine(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	if answerWords[s] {
		return true
	}
	return s != "" && strings.Trim(s, "0123456789, ") == ""
}

// pipedText reads the piped text from br. answers is true when stdin holds
// approval answers (left unread but for the first line, which is put back
// by returning a reader that starts with it; text is then that line).
func pipedText(br *bufio.Reader, wait time.Duration) (text string, rest *bufio.Reader, isAnswers bool, err error) {
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := br.ReadString('\n')
		ch <- line{s, err}
	}()
	var l line
	if wait > 0 {
		select {
		case l = <-ch:
		case <-time.After(wait):
			// Nothing came (an open stdin no one writes to, as under
			// ssh): no text; a line that comes later answers approvals.
			pr, pw := io.Pipe()
			go func() {
				l := <-ch
				io.WriteString(pw, l.s)
				if l.err == nil {
					io.Copy(pw, br)
				}
				pw.Close()
			}()
			return "", bufio.NewReader(pr), true, nil
		}
	} else {
		l = <-ch
	}
	first, ferr := l.s, l.err
	if isAnswerLine(first) {
		// text is that first line, for the note run prints.
		return first, bufio.NewReader(io.MultiReader(strings.NewReader(first), br)), true, nil
	}
	if ferr != nil {
		if ferr == io.EOF {
			return first, nil, false, nil
		}
		return "", nil, false, ferr
	}
	b, err := io.ReadAll(io.LimitReader(br, stdinMax+1-int64(len(first))))
	if err != nil {
		return "", nil, false, err
	}
	text = first + string(b)
	if len(text) > stdinMax {
		return "", nil, false, fmt.Errorf("stdin holds more than %d MiB; pipe a part of it (e.g. tail -c 1000000 FILE | task-x run -p ...)", stdinMax>>20)
	}
	return text, nil, false, nil
}

// withPiped is the prompt with the piped text after it.
func withPiped(prompt, text string) string {
	text = strings.TrimRight(text, "\n")
	if prompt == "" {
		return text
	}
	return prompt + "\n\n<stdin>\n" + text + "\n</stdin>"
}
