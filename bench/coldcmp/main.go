// Command coldcmp runs one cold workspace/open of DIR with a data folder
// through a task-x-runtime binary and writes what it answers, so two builds
// of the runtime can be compared with cmp: the open's reply, graph/project,
// graph/file of every 50th node and context/retrieve for a fixed set of
// queries at three budgets, one JSON line each, with every elapsed-time
// field ("…Ms", "elapsed…") removed. The runtime exits (saving its index
// in the data folder); with -reopen a second runtime then opens DIR again
// from that data folder and its answers are written after a "reopen" line.
// -sum prints a SHA-256 of every file in the data folder after the cold
// runtime exited (the saved index bytes). Extra arguments after DIR go to
// the runtime (e.g. -cpuprofile FILE). The runtime's peak RSS (VmHWM) is
// printed at the open's reply, after the first retrieve and after the
// answers.
//
//	coldcmp -runtime PATH -data DIR -out FILE [-reopen] [-sum] TREE [RUNTIME ARGS...]
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/bench/internal/rtclient"
)

var queries = []string{"buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
	"request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline",
	"parse config file", "http request timeout", "ReadFile", "sync.Mutex lock", "bufio scanner token",
	"where is the schema validated", "how are hooks run before a build", "serialize a model to json", "32004", "fn new"}

func main() {
	bin := flag.String("runtime", "", "task-x-runtime binary")
	data := flag.String("data", "", "data folder (created; must not hold an index of another tree)")
	out := flag.String("out", "", "answers file (empty: answers are not asked)")
	reopen := flag.Bool("reopen", false, "open again from the data folder and write its answers too")
	sum := flag.Bool("sum", false, "print a SHA-256 of every file in the data folder")
	flag.Parse()
	if *bin == "" || *data == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: coldcmp -runtime PATH -data DIR [-out FILE] [-reopen] [-sum] TREE [ARGS...]")
		os.Exit(2)
	}
	tree, args := flag.Arg(0), flag.Args()[1:]
	var w io.Writer = io.Discard
	if *out != "" {
		f, err := os.Create(*out)
		check(err)
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		w = bw
	}
	start := time.Now()
	r := start1(*bin, *data, args)
	res, err := r.Call("workspace/open", map[string]any{"root": tree})
	check(err)
	fmt.Fprintf(os.Stderr, "cold open %v, VmHWM %s at its reply\n", time.Since(start).Round(time.Millisecond), hwm(r))
	if *out != "" {
		answers(r, w, res)
		fmt.Fprintf(os.Stderr, "VmHWM %s after the answers\n", hwm(r))
	}
	r.Stop(false)
	fmt.Fprintf(os.Stderr, "cold run with save %v\n", time.Since(start).Round(time.Millisecond))
	if *sum {
		var names []string
		filepath.WalkDir(*data, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				names = append(names, p)
			}
			return nil
		})
		sort.Strings(names)
		for _, p := range names {
			b, err := os.ReadFile(p)
			check(err)
			rel, _ := filepath.Rel(*data, p)
			fmt.Printf("%x %10d %s\n", sha256.Sum256(b), len(b), rel)
		}
	}
	if *reopen {
		start = time.Now()
		r := start1(*bin, *data, nil)
		res, err := r.Call("workspace/open", map[string]any{"root": tree})
		check(err)
		fmt.Fprintf(os.Stderr, "reopen %v\n", time.Since(start).Round(time.Millisecond))
		fmt.Fprintln(w, `"reopen"`)
		answers(r, w, res)
		r.Stop(false)
	}
}

func answers(r *rt, w io.Writer, open json.RawMessage) {
	line(w, open)
	g, err := r.Call("graph/project", map[string]any{})
	check(err)
	line(w, g)
	g2, err := r.Call("graph/project", map[string]any{"level": "module"})
	if err == nil {
		line(w, g2)
	}
	var pr struct {
		Nodes []struct {
			ID string `json:"id"`
		} `json:"nodes"`
	}
	json.Unmarshal(g, &pr)
	for i, n := range pr.Nodes {
		if i%50 == 0 {
			f, err := r.Call("graph/file", map[string]any{"path": n.ID})
			if err == nil {
				line(w, f)
			}
		}
	}
	first := true
	for _, q := range queries {
		for _, budget := range []int{0, 500, 6000} {
			p := map[string]any{"query": q}
			if budget > 0 {
				p["budgetTokens"] = budget
			}
			res, err := r.Call("context/retrieve", p)
			check(err)
			line(w, res)
			if first {
				fmt.Fprintf(os.Stderr, "VmHWM %s after graph/project, graph/file and the first retrieve\n", hwm(r))
				first = false
			}
		}
	}
}

// line writes v with elapsed-time fields removed.
func line(w io.Writer, raw json.RawMessage) {
	var v any
	check(json.Unmarshal(raw, &v))
	b, _ := json.Marshal(strip(v))
	w.Write(append(b, '\n'))
}

func strip(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			lk := strings.ToLower(k)
			if strings.HasSuffix(k, "Ms") || strings.HasPrefix(lk, "elapsed") || strings.HasSuffix(lk, "duration") {
				delete(t, k)
				continue
			}
			t[k] = strip(x)
		}
	case []any:
		for i := range t {
			t[i] = strip(t[i])
		}
	}
	return v
}

type rt = rtclient.Runtime

// hwm is the runtime's peak RSS (VmHWM of /proc/PID/status), or "?".
func hwm(r *rt) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.Cmd.Process.Pid))
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func start1(bin, data string, args []string) *rt {
	r, err := rtclient.Start(bin, args, os.Stderr)
	check(err)
	_, err = r.Call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "coldcmp"}, "dataDir": data})
	check(err)
	return r
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldcmp:", err)
		os.Exit(1)
	}
}
