#!/usr/bin/env python3
"""lat.py ROOT BIN_A BIN_B [ROUNDS]: context/retrieve latency of two runtime binaries on one
tree, both open at once, queries alternated A/B so load hits both alike. Three kinds of
query: 20 single terms, 10 questions, 20 commit messages (commits.txt beside this script).
Prints p50/p95 ms per binary and kind, the load average before and after, and the load
average sampled during each kind (min-max)."""
import os, sys, time, statistics
sys.path.insert(0, os.environ.get("LOCALIZE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/bench/localize")))
sys.dont_write_bytecode = True
import run
TERMS = ["buffer", "parse", "timeout", "config", "socket", "encode", "hash", "thread", "format", "cache",
         "request", "signal", "path", "lock", "json", "token", "iterator", "compress", "checksum", "deadline"]
QUESTIONS = ["how does the garbage collector mark roots", "where are TLS certificates verified",
             "where is the HTTP/2 frame parsed", "json decoder token", "how does the scheduler steal work",
             "parse a URL query string", "net/http: fix a race when the client closes an idle connection",
             "runtime: reduce lock contention in the memory allocator",
             "cmd/go: module cache is not cleaned when the download fails",
             "encoding/json: Unmarshal into an embedded pointer to an unexported struct"]
def commits():
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "commits.txt")).read()
    blocks = text.split("\n----\n")[1:]  # the part before the first separator is comments
    return [b.strip("\n") for b in blocks if b.strip()]
COMMITS = commits()
KINDS = (("terms", TERMS), ("questions", QUESTIONS), ("commits", COMMITS))
def load1():
    return float(open("/proc/loadavg").read().split()[0])
root, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
env = dict(os.environ, TASK_X_LOG="warn")
rts = {}
print("load before:", open("/proc/loadavg").read().strip())
for name, binp in (("A", a), ("B", b)):
    rt = run.Runtime([binp], env)
    rt.request("initialize", {"protocolVersion": 1, "clientInfo": {"name": "lat", "version": "0"}, "sandbox": False}, timeout=30)
    t0 = time.monotonic()
    rt.request("workspace/open", {"root": root}, timeout=900)
    print(name, binp, "open", round(time.monotonic() - t0, 1), "s")
    rts[name] = rt
lat = {n: {k: [] for k, _ in KINDS} for n in ("A", "B")}
loads = {k: [] for k, _ in KINDS}
for r in range(rounds + 1):
    for kind, qs in KINDS:
        if r > 0:
            loads[kind].append(load1())
        for q in qs:
            for name in (("A", "B") if r % 2 == 0 else ("B", "A")):
                t0 = time.monotonic()
                rts[name].request("context/retrieve", {"query": q, "budgetTokens": 8000}, timeout=120)
                if r > 0:  # round 0 warms up
                    lat[name][kind].append((time.monotonic() - t0) * 1000)
for name in ("A", "B"):
    for kind, _ in KINDS:
        xs = sorted(lat[name][kind])
        print(name, kind, "n", len(xs), "p50 %.1f ms" % statistics.median(xs), "p95 %.1f ms" % xs[int(0.95 * (len(xs) - 1))],
              "load %.2f-%.2f" % (min(loads[kind]), max(loads[kind])))
    rts[name].close()
print("load after:", open("/proc/loadavg").read().strip())
