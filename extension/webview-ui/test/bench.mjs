// Speed of the chat webview in headless Chromium (not a test: figures only).
// Usage: npm run bench   (or node test/bench.mjs [stream|replay|typing] after npm run build)
//
// 1. 10 000 text deltas, each its own host message: a burst (all posted at
//    once) and a paced stream (about one per millisecond). Reports the
//    delta-to-DOM latency (post → the frame that shows it), long tasks
//    (> 50 ms, PerformanceObserver "longtask") and the longest gap between
//    animation frames.
// 2. Replay of a 2 000-event task in batches of 500: time to rendered; then ten
//    reopenings, with JS heap and DOM node counts after a forced GC.
// 3. Typing with a 1 MB paste: collapsed (the normal path) and, as a worst
//    case, 1 MB put straight into the text box. Reports keydown → next frame.
import { loadavg, cpus } from "node:os";
import { pathToFileURL } from "node:url";
import { readdirSync, readFileSync } from "node:fs";
import { launch, openPage, send } from "./harness.mjs";

const T = "t-bench";

/**
 * CPU time (ms) used so far by this process's Chromium renderers, from
 * /proc: unlike wall-clock times it hardly grows when other work shares the
 * cores, so it tells the page's own cost on a loaded machine.
 */
function rendererCpuMs() {
  const procs = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
      procs.set(Number(d), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // gone meanwhile
    }
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, p] of procs) if (!mine.has(pid) && mine.has(p.ppid)) (mine.add(pid), (grew = true));
  }
  let ticks = 0;
  for (const pid of mine) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer")) ticks += procs.get(pid).ticks;
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}
const fmt = (n) => (Math.round(n * 10) / 10).toFixed(1);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};

/** In the page: watch long tasks and frame gaps until stop() is called. */
const WATCH = () => {
  window.__long = [];
  window.__gaps = [];
  const po = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) window.__long.push(e.duration);
  });
  po.observe({ type: "longtask", buffered: false });
  let last = performance.now();
  let on = true;
  const tick = (t) => {
    window.__gaps.push(t - last);
    last = t;
    if (on) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__stopWatch = () => {
    on = false;
    po.disconnect();
    return { long: window.__long, maxGap: Math.max(0, ...window.__gaps.slice(1)) };
  };
};

// Times every animation-frame callback (the webview paints in them).
const FRAME_TIMER = () => {
  const raf = window.requestAnimationFrame.bind(window);
  window.__frames = [];
  window.requestAnimationFrame = (cb) =>
    raf((t) => {
      const s = performance.now();
      cb(t);
      window.__frames.push(performance.now() - s);
    });
};

// The host, simulated in a worker: each message reaches the page as its own
// task, as VS Code's IPC delivers them. (The bench page has no CSP: a blob
// worker needs one; the tests cover the CSP.)
function hostWorker() {
  onmessage = async (e) => {
    const { N, paced } = e.data;
    const now = () => performance.timeOrigin + performance.now();
    const fence = "```";
    for (let i = 0; i < N; i++) {
      // Sampled deltas carry a marker no other text contains ("m199m").
      let d = i % 100 === 99 ? `m${i}m ` : `w${i} `;
      if (i % 17 === 16) d += "\n";
      if (i % 97 === 96) d += "\n";
      if (i % 1000 === 500) d += `\n${fence}go\nfunc f() int {\n\treturn 1\n}\n${fence}\n\n`;
      if (i % 250 === 100) d += "**bold** and `code` ";
      postMessage({ i, t0: now(), msg: { type: "events", taskId: "t-bench", events: [{ type: "textDelta", text: d }] } });
      if (paced && i % 4 === 3) await new Promise((r) => setTimeout(r, 4));
    }
    postMessage({ end: true, t0: now() });
  };
}
const HOST_WORKER = `(${hostWorker.toString()})()`;

async function streamBench(browser, paced) {
  const { page, context } = await openPage(browser, { csp: false, init: FRAME_TIMER });
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: T, running: true } }, {
    type: "events",
    taskId: T,
    events: [{ type: "started", taskId: T, chatMode: "agent", model: "m" }, { type: "iteration", n: 1 }],
  });
  await page.evaluate(WATCH);
  await page.evaluate(() => (window.__frames.length = 0));
  const cpu0 = rendererCpuMs();
  const r = await page.evaluate(
    async ({ paced, src }) => {
      const N = 10_000;
      const abs = () => performance.timeOrigin + performance.now();
      const sample = new Map(); // marker → post time
      const lat = [];
      let answer = null;
      let seenChunks = 0;
      const mo = new MutationObserver(() => {
        answer ??= document.querySelector(".answer");
        if (!answer || sample.size === 0) return;
        // New text shows in the open tail or the last committed chunks: read
        // only those (reading the whole answer would cost the page more than it does).
        const chunks = answer.querySelectorAll(".md-chunk");
        let text = answer.querySelector(".md-tail")?.textContent ?? "";
        for (let i = Math.max(0, seenChunks - 1); i < chunks.length; i++) text += chunks[i].textContent;
        seenChunks = chunks.length;
        const now = abs();
        for (const [marker, t0] of sample) {
          if (text.includes(marker)) {
            lat.push(now - t0);
            sample.delete(marker);
          }
        }
      });
      mo.observe(document.querySelector(".transcript"), { subtree: true, childList: true, characterData: true });
      const worker = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
      const t0 = abs();
      const busy0 = window.taskxHandled().busyMs;
      let postedAt = 0;
      await new Promise((resolve) => {
        worker.onmessage = (e) => {
          if (e.data.end) {
            postedAt = e.data.t0;
            resolve();
            return;
          }
          if (e.data.i % 100 === 99) sample.set(`m${e.data.i}m`, e.data.t0);
          window.dispatchEvent(new MessageEvent("message", { data: e.data.msg }));
        };
        worker.postMessage({ N, paced });
      });
      await new Promise((resolve, reject) => {
        const give = setTimeout(() => reject(new Error(`not all shown: ${[...sample.keys()].slice(0, 5)}`)), 120_000);
        const wait = () => (sample.size === 0 && window.taskxHandled().idle ? (clearTimeout(give), resolve()) : requestAnimationFrame(wait));
        wait();
      });
      mo.disconnect();
      worker.terminate();
      return { posted: postedAt - t0, total: abs() - t0, lat, chars: document.querySelector(".answer").textContent.length, busy: window.taskxHandled().busyMs - busy0 };
    },
    { paced, src: HOST_WORKER },
  );
  const cpu = rendererCpuMs() - cpu0;
  const frames = await page.evaluate(() => window.__frames);
  const w = await page.evaluate(() => window.__stopWatch());
  await context.close();
  return { ...r, long: w.long, maxGap: w.maxGap, frames, cpu };
}

export function replayEvents(n) {
  const code = "```ts\n" + Array.from({ length: 20 }, (_, i) => `export function f${i}(a: number): number { return a * ${i}; }`).join("\n") + "\n```";
  const out = [{ type: "userMessage", text: "Refactor the handlers and add tests for each of them.", images: 0 }, { type: "started", taskId: T, chatMode: "agent", model: "m" }];
  let turn = 0;
  while (out.length < n - 1) {
    turn++;
    const id = `c${turn}`;
    const tool = ["read_file", "replace_text", "run_command", "search_text"][turn % 4];
    const input = tool === "run_command" ? { command: "npm test" } : tool === "search_text" ? { query: "handler" } : { path: `src/h${turn}.ts`, oldText: "a", newText: "b" };
    out.push(
      { type: "iteration", n: turn },
      {
        type: "assistantMessage",
        text: `Step ${turn}: I will look at **src/h${turn}.ts** next, then:\n\n- check the callers\n- update the tests\n\n${turn % 3 === 0 ? code : "The handler is small; one change is enough."}`,
        toolCalls: [{ id, name: tool, input }],
      },
      { type: "usage", inputTokens: 1000 + turn, outputTokens: 50, totalInputTokens: 1000 * turn, totalOutputTokens: 50 * turn, costUsd: 0.001 * turn },
      { type: "context", usedTokens: 1000 * turn, windowTokens: 200000 },
      { type: "toolStarted", callId: id, tool, input, permission: tool === "replace_text" ? "edit" : tool === "run_command" ? "command" : "read" },
    );
    if (tool === "replace_text") {
      out.push(
        { type: "approvalRequested", callId: id, tool, permission: "edit", input, preview: `--- a/src/h${turn}.ts\n+++ b/src/h${turn}.ts\n@@ -1,3 +1,3 @@\n x\n-a\n+b\n y\n` },
        { type: "approvalResolved", callId: id, tool, decision: "allow" },
        { type: "fileChanged", callId: id, path: `src/h${turn}.ts`, kind: "modified", added: 1, removed: 1 },
      );
    }
    out.push({ type: "toolFinished", callId: id, tool, ok: true, result: "line\n".repeat(400), error: null, durationMs: 12 });
  }
  out.length = n - 1;
  out.push({ type: "done", status: "completed", error: null, text: "ok", changedFiles: [{ path: "src/h1.ts", kind: "modified", added: 1, removed: 1 }], usage: { inputTokens: 1, outputTokens: 1 }, model: "m", iterations: turn, toolCalls: turn });
  return out;
}

async function replayBench(browser) {
  const { page, context } = await openPage(browser);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const events = replayEvents(2000);
  const metrics = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    const m = Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((x) => [x.name, x.value]));
    return { heapMB: m.JSHeapUsedSize / 1024 / 1024, nodes: m.Nodes, listeners: m.JSEventListeners };
  };
  const base = await metrics();
  const runs = [];
  await page.evaluate(WATCH);
  for (let r = 1; r <= 11; r++) {
    const cpu0 = rendererCpuMs();
    const ms = await page.evaluate(
      async ({ events, r }) => {
        const t0 = performance.now();
        const busy0 = window.taskxHandled().busyMs;
        const target = window.taskxHandled().handled + Math.ceil(events.length / 500);
        for (let i = 0; i < events.length; i += 500) {
          window.postMessage({ type: "replay", replayId: r, taskId: "t-bench", title: "Bench", events: events.slice(i, i + 500), last: i + 500 >= events.length }, "*");
        }
        await new Promise((resolve) => {
          const wait = () => {
            const s = window.taskxHandled();
            if (s.handled >= target && s.idle) requestAnimationFrame(() => resolve());
            else requestAnimationFrame(wait);
          };
          wait();
        });
        return [performance.now() - t0, window.taskxHandled().busyMs - busy0];
      },
      { events, r },
    );
    const cpu = rendererCpuMs() - cpu0;
    runs.push({ ms: ms[0], busy: ms[1], cpu, ...(await metrics()) });
  }
  const w = await page.evaluate(() => window.__stopWatch());
  const dom = await page.evaluate(() => document.querySelectorAll(".item").length);
  await context.close();
  return { base, runs, long: w.long, maxGap: w.maxGap, items: dom };
}

async function typingBench(browser, collapsed) {
  const { page, context } = await openPage(browser);
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: null, running: false } });
  await page.evaluate((collapsed) => {
    const big = "0123456789abcdef ".repeat(61681).slice(0, 1 << 20).replace(/(.{99}) /g, "$1\n");
    const ta = document.querySelector("textarea.prompt");
    ta.focus();
    if (collapsed) {
      const dt = new DataTransfer();
      dt.setData("text/plain", big);
      ta.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    } else {
      ta.value = big;
      ta.dispatchEvent(new Event("input", { bubbles: true }));
    }
    ta.setSelectionRange(ta.value.length, ta.value.length);
    window.__keys = [];
    ta.addEventListener("keydown", () => {
      const t0 = performance.now();
      requestAnimationFrame(() => setTimeout(() => window.__keys.push(performance.now() - t0), 0));
    }, { capture: true });
  }, collapsed);
  await page.evaluate(WATCH);
  await page.keyboard.type("please review this carefully and tell me what is wrong ".repeat(2), { delay: 20 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50))));
  const keys = await page.evaluate(() => window.__keys);
  const len = await page.evaluate(() => document.querySelector("textarea.prompt").value.length);
  const w = await page.evaluate(() => window.__stopWatch());
  await context.close();
  return { keys, len, long: w.long, maxGap: w.maxGap };
}

async function main() {
  const browser = await launch();
  const load0 = loadavg();
  console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${load0.map((x) => x.toFixed(2)).join(" ")}`);
  try {
    const only = process.argv[2] ?? ""; // stream, replay or typing: run only that part
    for (const paced of only && only !== "stream" ? [] : [false, true]) {
      const r = await streamBench(browser, paced);
      console.log(
        `10 000 deltas, ${paced ? "paced (~1/ms)" : "burst"}: posted in ${fmt(r.posted)} ms, all shown after ${fmt(r.total)} ms; ` +
          `delta→DOM p50 ${fmt(pct(r.lat, 50))} ms, p95 ${fmt(pct(r.lat, 95))} ms, max ${fmt(Math.max(...r.lat))} ms (${r.lat.length} samples); ` +
          `renderer CPU ${r.cpu} ms, the page's own handling and painting ${fmt(r.busy)} ms; frame callbacks p95 ${fmt(pct(r.frames, 95))} ms, max ${fmt(Math.max(...r.frames))} ms (${r.frames.length}); ` +
          `long tasks ${r.long.length}${r.long.length ? ` (max ${fmt(Math.max(...r.long))} ms)` : ""}; longest frame gap ${fmt(r.maxGap)} ms; ${r.chars} chars`,
      );
    }
    const rp = only && only !== "replay" ? null : await replayBench(browser);
    if (rp) {
      const first = rp.runs[0];
      const reopen = rp.runs.slice(1);
      console.log(
        `replay of 2 000 events (4 batches of 500): first ${fmt(first.ms)} ms (renderer CPU ${first.cpu} ms); ten reopenings ${reopen.map((x) => fmt(x.ms)).join(", ")} ms ` +
          `(renderer CPU ${reopen.map((x) => x.cpu).join(", ")} ms; the page's own handling and painting ${rp.runs.map((x) => fmt(x.busy)).join(", ")} ms); ` +
          `long tasks ${rp.long.length}${rp.long.length ? ` (max ${fmt(Math.max(...rp.long))} ms)` : ""}; longest frame gap ${fmt(rp.maxGap)} ms`,
      );
      console.log(
        `  heap after GC: empty ${fmt(rp.base.heapMB)} MB; after each opening ${rp.runs.map((x) => fmt(x.heapMB)).join(", ")} MB; ` +
          `DOM nodes ${rp.runs.map((x) => x.nodes).join(", ")}; listeners ${rp.runs.map((x) => x.listeners).join(", ")}; ${rp.items} items shown`,
      );
    }
    for (const collapsed of only && only !== "typing" ? [] : [true, false]) {
      const r = await typingBench(browser, collapsed);
      console.log(
        `typing with a 1 MB paste ${collapsed ? "(collapsed to a token, the normal path)" : "(1 MB in the text box, worst case)"}: ` +
          `keydown→frame p50 ${fmt(pct(r.keys, 50))} ms, p95 ${fmt(pct(r.keys, 95))} ms, max ${fmt(Math.max(...r.keys))} ms over ${r.keys.length} keys; ` +
          `long tasks ${r.long.length}${r.long.length ? ` (max ${fmt(Math.max(...r.long))} ms)` : ""}; box holds ${r.len} chars`,
      );
    }
  } finally {
    await browser.close();
  }
  const load1 = loadavg();
  console.log(`load average after: ${load1.map((x) => x.toFixed(2)).join(" ")}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
