// Command sessprobe runs indexbench's working session through a
// task-x-runtime binary — a cold open with a data folder, graph/project,
// the first retrieve, a pause where indexbench runs ctags, 7 unchanged
// refreshes and 20 retrieves, with pauses where indexbench runs git status
// and rg — and prints the runtime's VmHWM, VmRSS, RssAnon and RssFile
// after each step, so the step that raises the peak shows. Arguments after
// TREE go to the runtime (e.g. --memprofile FILE); set GODEBUG=gctrace=1
// to see its GCs on stderr.
//
//	sessprobe -runtime PATH [-idle 2s] [-v] [-hold D] TREE [RUNTIME ARGS...]
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/bench/internal/rtclient"
)

var terms = []string{"buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
	"request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline"}

func main() {
	bin := flag.String("runtime", "", "task-x-runtime binary")
	idle := flag.Duration("idle", 2*time.Second, "pause after the first retrieve (indexbench runs ctags there)")
	refreshGap := flag.Duration("refreshgap", 35*time.Millisecond, "pause after each refresh (git status)")
	retrieveGap := flag.Duration("retrievegap", 80*time.Millisecond, "pause after each retrieve (rg)")
	verbose := flag.Bool("v", false, "print every step")
	hold := flag.Duration("hold", 0, "keep the runtime running this long after the session (to read its /proc files; its PID is printed)")
	flag.Parse()
	if *bin == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: sessprobe -runtime PATH TREE [ARGS...]")
		os.Exit(2)
	}
	data, err := os.MkdirTemp("", "sessprobe-data")
	check(err)
	defer os.RemoveAll(data)
	r, err := rtclient.Start(*bin, flag.Args()[1:], os.Stderr)
	check(err)
	_, err = r.Call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "sessprobe"}, "dataDir": data})
	check(err)
	pid := r.Cmd.Process.Pid
	start := time.Now()
	last := int64(0)
	show := func(step string, d time.Duration) {
		s := status(pid)
		if *verbose || s["VmHWM"] > last {
			fmt.Printf("@%6.3fs %-22s %7.1f ms  HWM %6.1f  RSS %6.1f  anon %6.1f  file %5.1f MB\n", time.Since(start).Seconds(), step, float64(d.Microseconds())/1e3,
				mb(s["VmHWM"]), mb(s["VmRSS"]), mb(s["RssAnon"]), mb(s["RssFile"]))
		}
		last = s["VmHWM"]
	}
	var durs []time.Duration
	call := func(step, method string, params any) {
		t := time.Now()
		_, err := r.Call(method, params)
		check(err)
		durs = append(durs, time.Since(t))
		show(step, time.Since(t))
	}
	call("open", "workspace/open", map[string]any{"root": flag.Arg(0)})
	call("graph/project", "graph/project", map[string]any{})
	call("retrieve "+terms[0], "context/retrieve", map[string]any{"query": terms[0]})
	coldHWM, coldCPU := status(pid)["VmHWM"], cpu(pid)
	fmt.Printf("cold HWM %.1f MB\n", mb(coldHWM))
	for i := 0; i < 10; i++ {
		time.Sleep(*idle / 10)
		show(fmt.Sprintf("idle %d", i), 0)
	}
	durs = nil
	refreshCPU := cpu(pid)
	for i := range 7 {
		call(fmt.Sprintf("refresh %d", i), "workspace/refresh", map[string]any{})
		time.Sleep(*refreshGap)
	}
	refreshes := p50(durs)
	refreshCPU = cpu(pid) - refreshCPU
	retrieveCPU := cpu(pid)
	durs = nil
	for _, t := range terms {
		call("retrieve "+t, "context/retrieve", map[string]any{"query": t})
		time.Sleep(*retrieveGap)
	}
	retrieveCPU = cpu(pid) - retrieveCPU
	s := status(pid)
	fmt.Printf("SUMMARY cold HWM %.1f MB, session HWM %.1f MB, refresh p50 %.1f ms, retrieve p50 %.1f ms, session CPU %.2f s (refreshes %.2f, retrieves %.2f)\n",
		mb(coldHWM), mb(s["VmHWM"]), ms(refreshes), ms(p50(durs)), cpu(pid)-coldCPU, refreshCPU, retrieveCPU)
	fmt.Printf("session HWM %.1f MB (anon now %.1f, file now %.1f)\n", mb(s["VmHWM"]), mb(s["RssAnon"]), mb(s["RssFile"]))
	if *hold > 0 {
		fmt.Printf("holding PID %d for %v\n", pid, *hold)
		time.Sleep(*hold)
	}
	r.Stop(false)
}

func p50(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// cpu is the process's user + system CPU seconds.
func cpu(pid int) float64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var u, s float64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return (u + s) / 100
}

func mb(kb int64) float64 { return float64(kb) * 1024 / 1e6 }

// status reads /proc/PID/status's kB fields.
func status(pid int) map[string]int64 {
	m := map[string]int64{}
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		var n int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &n); err == nil {
			m[k] = n
		}
	}
	return m
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sessprobe:", err)
		os.Exit(1)
	}
}
