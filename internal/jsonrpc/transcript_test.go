package jsonrpc

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

var update = flag.Bool("update", false, "rewrite the expected lines of testdata/transcripts")

// TestTranscripts replays testdata/transcripts/*.txt against a Conn under
// testing/synctest (fake time, so drain timeouts and sleeps are instant).
//
// Script lines:
//
//	option preempt=M | drain=DUR | max=N | parseid=on   before the first step
//	-> LINE       send LINE to the runtime
//	->q "..."     send a Go-quoted line (for invalid UTF-8, U+2028, '\r')
//	sleep DUR     advance the fake clock
//	eof           close the runtime's stdin
//	<- LINE       an expected output line of the step above; the lines of one step
//	              are compared as a multiset, since concurrent handlers race
//	running | returned ERR   whether Run has returned, and with what ("nil")
//	# ...         comment
//
// After every step the bubble settles and the output so far must equal the "<-"
// lines that follow it. Run with -update to rewrite the "<-" lines.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runTranscript(t, file) })
		})
	}
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	opts := &ConnOptions{}
	var p *pipeConn
	h := &testHandler{}
	start := func() {
		if p == nil {
			p = newPipeConn(t, h, opts)
			h.conn = p.conn
		}
	}
	var rewritten []string
	var eofSent bool
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		where := fmt.Sprintf("%s:%d", file, i+1)
		verb, arg, _ := strings.Cut(line, " ")
		if verb != "<-" {
			rewritten = append(rewritten, line)
		}
		isStep := true
		switch verb {
		case "", "#":
			isStep = false
		case "option":
			isStep = false
			if p != nil {
				t.Fatalf("%s: option after the first step", where)
			}
			k, v, _ := strings.Cut(arg, "=")
			switch k {
			case "preempt":
				if opts.Preempt == nil {
					opts.Preempt = map[string]bool{}
				}
				opts.Preempt[v] = true
			case "drain":
				d, err := time.ParseDuration(v)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				opts.DrainTimeout = d
			case "parseid":
				opts.ParseErrorKeepsID = v == "on"
			case "max":
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				opts.MaxMessageBytes = n
			default:
				t.Fatalf("%s: unknown option %q", where, k)
			}
		case "->":
			start()
			p.send(arg)
		case "->q":
			start()
			s, err := strconv.Unquote(arg)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			p.send(s)
		case "->nowait": // the runtime may never read it
			start()
			p.sendAsync(arg)
		case "sleep":
			start()
			d, err := time.ParseDuration(arg)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			time.Sleep(d)
		case "eof":
			start()
			eofSent = true
			p.toConn.Close()
		case "running", "returned":
			isStep = false
			start()
			done, err := p.returned()
			switch {
			case verb == "running" && done:
				t.Errorf("%s: Run returned %v, want still running", where, err)
			case verb == "returned" && !done:
				t.Errorf("%s: Run still running, want it returned", where)
			case verb == "returned" && fmt.Sprint(err) != arg && !(arg == "nil" && err == nil):
				t.Errorf("%s: Run returned %v, want %s", where, err, arg)
			}
		case "<-":
			t.Fatalf("%s: expected output with no step before it", where)
		default:
			t.Fatalf("%s: unknown directive %q", where, verb)
		}
		if !isStep {
			continue
		}
		var want []string
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "<- ") {
			i++
			want = append(want, strings.TrimPrefix(lines[i], "<- "))
		}
		got := p.settle()
		for _, g := range got {
			rewritten = append(rewritten, "<- "+g)
		}
		if !*update && !sameMultiset(got, want) {
			t.Errorf("%s: after %q\n got: %s\nwant: %s", where, line, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
	}
	if p == nil {
		t.Fatal("empty transcript")
	}
	if *update {
		if err := os.WriteFile(file, []byte(strings.Join(rewritten, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !eofSent {
		p.toConn.Close()
	}
	if rest := p.finish(); len(rest) > 0 && !*update {
		t.Errorf("%s: unexpected output at the end: %q", file, rest)
	}
}

func sameMultiset(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
