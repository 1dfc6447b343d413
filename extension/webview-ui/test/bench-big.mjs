// The longest tasks while a 1.7 MB answer (mixed markdown, one code block, lines without a
// blank line) is streamed and replayed into the chat page (docs/webview.md "Huge answers").
// Not a test: prints figures. Usage: npm run build && node test/bench-big.mjs
import { launch, openPage, send } from "./harness.mjs";
const T = "t-1";
function bigAnswer(kind, size = 1_700_000) {
  const parts = [];
  let n = 0, i = 0;
  while (n < size) {
    let p;
    if (kind === "mixed") p = i % 10 === 5 ? "```go\nfunc f" + i + "() int {\n\treturn " + i + "\n}\n```\n\n" : `Paragraph ${i} with **bold**, \`code\` and a [link](https://example.com/${i}). ` + "lorem ipsum dolor sit amet ".repeat(6) + "\n\n";
    else if (kind === "code") p = (i === 0 ? "```go\n" : "") + `\tx${i} := compute(${i}, "value") // comment ${i}\n`;
    else p = `line ${i} of output without blank lines ` + "abc ".repeat(10) + "\n";
    parts.push(p); n += p.length; i++;
  }
  return parts.join("");
}
const WATCH = () => {
  window.__long = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(Math.round(e.duration)); }).observe({ type: "longtask", buffered: false });
};
const FRAME_TIMER = () => {
  const raf = window.requestAnimationFrame.bind(window);
  window.__frames = [];
  window.requestAnimationFrame = (cb) => raf((t) => { const s = performance.now(); cb(t); window.__frames.push(performance.now() - s); });
};
const browser = await launch();
for (const kind of ["mixed", "code", "plain"]) {
  for (const mode of ["stream", "replay"]) {
    const { page, context } = await openPage(browser, { csp: false, init: FRAME_TIMER });
    await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: T, running: true } });
    const text = bigAnswer(kind);
    await page.evaluate(WATCH);
    const t0 = Date.now();
    if (mode === "stream") {
      const deltas = [];
      const step = 17_000;
      for (let i = 0; i < text.length; i += step) deltas.push({ type: "textDelta", text: text.slice(i, i + step) });
      await send(page, { type: "events", taskId: T, events: [{ type: "iteration", n: 1 }, ...deltas.slice(0, 50)] });
      await send(page, { type: "events", taskId: T, events: deltas.slice(50) });
      await send(page, { type: "events", taskId: T, events: [{ type: "assistantMessage", text }] });
    } else {
      await send(page, { type: "replay", replayId: "r1", taskId: T, events: [{ type: "iteration", n: 1 }, { type: "assistantMessage", text }], last: true });

    }
    await page.waitForTimeout(300);
    const long = await page.evaluate(() => window.__long);
    const fr = await page.evaluate(() => { const f = window.__frames; window.__frames = []; return { n: f.length, max: Math.round(Math.max(0, ...f)), over50: f.filter((x) => x > 50).length }; });
    console.log(`${kind} ${mode}: wall ${Date.now() - t0} ms, long tasks ${long.length}, max ${Math.max(0, ...long)} ms, sum ${long.reduce((a, b) => a + b, 0)} ms; frames ${fr.n}, max frame ${fr.max} ms, frames over 50 ms ${fr.over50}`);
    await context.close();
  }
}
await browser.close();
