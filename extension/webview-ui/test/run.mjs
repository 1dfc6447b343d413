// The webview's tests: parseWebviewMessage in Node, then the built bundle in
// headless Chromium under the host's CSP (and once without it, to show the
// sanitizing alone stops script). Ends with "N passed, N failed".
// Usage: node test/run.mjs [filter]
import { build } from "esbuild";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { launch, openPage, send, posted, clearPosted } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? "";
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// ---------------------------------------------------------------------------
// Fixtures

const T = "t-1";
const ev = (...events) => ({ type: "events", taskId: T, events });
const XSS_IMG = `<img src=x onerror="window.__xss.push('img')">`;
const XSS_SCRIPT = `<script>window.__xss.push('script')</script>`;
const XSS_SVG = `<svg onload="window.__xss.push('svg')"></svg>`;
const XSS_ALL = `${XSS_IMG} ${XSS_SCRIPT} ${XSS_SVG}`;

async function open(ctx, opts) {
  const p = await openPage(ctx.browser, opts);
  ctx.open.push(p);
  await p.page.evaluate(() => (window.__xss = []));
  return p;
}

/** Nothing ran, no element of the payload exists, no page error. */
async function assertInert({ page, errors }) {
  const xss = await page.evaluate(() => window.__xss);
  assert.deepEqual(xss, [], "a payload ran");
  const bad = await page.evaluate(() => document.querySelectorAll("#root img:not(.image-chip img), #root script, #root svg, #root iframe, [onerror], [onload]").length);
  assert.equal(bad, 0, "a payload element exists");
  assert.deepEqual(errors, []);
}

const text = (page, sel) => page.locator(sel).first().innerText();

// ---------------------------------------------------------------------------
// parseWebviewMessage (Node)

let parse;
test("parse: accepts well-formed messages and drops unknown fields", async () => {
  assert.deepEqual(parse({ type: "ready", extra: 1 }), { type: "ready" });
  assert.deepEqual(parse({ type: "approvalAnswer", id: "a1", decision: "allowTask", x: 1 }), { type: "approvalAnswer", id: "a1", decision: "allowTask" });
  assert.deepEqual(parse({ type: "approvalAnswer", id: "a1", decision: "deny", message: " no " }), { type: "approvalAnswer", id: "a1", decision: "deny", message: " no " });
  assert.deepEqual(parse({ type: "approvalAnswer", id: "a1", decision: "allowOnce", message: "ignored" }), { type: "approvalAnswer", id: "a1", decision: "allowOnce" });
  assert.deepEqual(parse({ type: "approvalReason", id: "a1", message: "use pnpm", x: 1 }), { type: "approvalReason", id: "a1", message: "use pnpm" });
  assert.equal(parse({ type: "approvalReason", id: "a1", message: "x".repeat(8193) }), undefined);
  assert.equal(parse({ type: "approvalReason", id: "a1" }), undefined);
  const send = {
    type: "send", taskId: null, text: "hi", mode: "agent", model: "m", includeEditorContext: true,
    mentions: [{ kind: "file", path: "a.ts", junk: 1 }, { kind: "selection", path: "b.ts", startLine: 2, endLine: 4 }],
    images: [{ mediaType: "image/png", data: "iVBORw0KGgo=" }],
  };
  assert.deepEqual(parse(send).mentions, [{ kind: "file", path: "a.ts" }, { kind: "selection", path: "b.ts", startLine: 2, endLine: 4 }]);
  assert.deepEqual(parse({ type: "askUserAnswer", id: "q", answers: null }), { type: "askUserAnswer", id: "q", answers: null });
  assert.deepEqual(parse({ type: "openFile", path: "a.ts", line: 3 }), { type: "openFile", path: "a.ts", line: 3 });
  assert.deepEqual(parse({ type: "openWorktree", path: "/tmp/wt/x", y: 2 }), { type: "openWorktree", path: "/tmp/wt/x" });
});

test("parse: refuses malformed and forged messages", async () => {
  const bad = [
    null, 1, "ready", [], { type: 1 }, { type: "nope" },
    { type: "approvalAnswer", id: "a", decision: "allow" }, // protocol word, not ours
    { type: "approvalAnswer", decision: "allowOnce" },
    { type: "approvalAnswer", id: "x".repeat(201), decision: "deny" },
    { type: "send", taskId: null, text: "x", mode: "yolo", model: null, mentions: [], images: [], includeEditorContext: true },
    { type: "send", taskId: null, text: "x", mode: "ask", model: null, mentions: [], images: [{ mediaType: "image/svg+xml", data: "AA==" }], includeEditorContext: true },
    { type: "send", taskId: null, text: "x", mode: "ask", model: null, mentions: [], images: [{ mediaType: "image/png", data: "not base64!" }], includeEditorContext: true },
    { type: "send", taskId: null, text: "x", mode: "ask", model: null, mentions: Array(11).fill({ kind: "file", path: "a" }), images: [], includeEditorContext: true },
    { type: "send", taskId: null, text: "x", mode: "ask", model: null, mentions: [{ kind: "selection", path: "a", startLine: 5, endLine: 2 }], images: [], includeEditorContext: true },
    { type: "send", taskId: null, text: "x", mode: "ask", model: null, mentions: [], images: [], includeEditorContext: "yes" },
    { type: "askUserAnswer", id: "q", answers: { a: "one" } },
    { type: "askUserAnswer", id: "q", answers: [] },
    { type: "openFile", path: "" },
    { type: "openFile", path: "a", line: 0 },
    { type: "cancelTool", taskId: "t" },
    { type: "mentionQuery", requestId: 1.5, query: "" },
    { type: "setModel", model: "" },
  ];
  for (const b of bad) assert.equal(parse(b), undefined, JSON.stringify(b)?.slice(0, 120));
});

// ---------------------------------------------------------------------------
// The page

test("loads under the CSP with no violation and posts ready", async (ctx) => {
  const p = await open(ctx);
  const ps = await posted(p.page);
  assert.deepEqual(ps[0], { type: "ready" });
  assert.deepEqual(await p.page.evaluate(() => window.__violations), []);
  // Custom elements are defined and codicons load from the CSP source.
  assert.equal(await p.page.evaluate(() => !!customElements.get("vscode-button")), true);
  assert.deepEqual(p.errors, []);
});

test("streams markdown deltas, highlights code when the block ends", async (ctx) => {
  const { page, errors } = await open(ctx);
  const parts = ["# Ti", "tle\n\nHello **wor", "ld**\n\n```ts\nconst a", " = 1;\n```\n\nDone."];
  await send(page, ev({ type: "started", taskId: T, chatMode: "agent", model: "m1" }, { type: "iteration", n: 1 }, { type: "textDelta", text: parts[0] }));
  assert.equal(await text(page, ".answer"), "Ti");
  await send(page, ev({ type: "textDelta", text: parts[1] }));
  assert.equal(await page.locator(".answer h1").innerText(), "Title");
  await send(page, ev({ type: "textDelta", text: parts[2] }, { type: "textDelta", text: parts[3] }));
  assert.equal(await page.locator(".answer strong").innerText(), "world");
  assert.equal(await page.locator(".answer .hljs-keyword").first().innerText(), "const");
  await send(page, ev({ type: "assistantMessage", text: parts.join(""), toolCalls: [] }));
  assert.equal(await page.locator(".answer").count(), 1);
  assert.match(await text(page, ".answer"), /Done\.$/);
  assert.deepEqual(errors, []);
});

test("an answer ending in a code block is highlighted when the message ends, and is no longer busy", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, ev({ type: "iteration", n: 1 }, { type: "textDelta", text: "Here:\n\n```go\nfunc main() {}\n```" }));
  assert.equal(await page.locator(".answer .hljs-keyword").count(), 0);
  assert.equal(await page.locator(".answer").getAttribute("aria-busy"), "true");
  await send(page, ev({ type: "assistantMessage", text: "Here:\n\n```go\nfunc main() {}\n```", toolCalls: [] }));
  assert.equal(await page.locator(".answer .hljs-keyword").innerText(), "func");
  assert.equal(await page.locator(".answer").getAttribute("aria-busy"), null);
});

test("streamed markdown in random pieces ends the same as rendered whole; fences with blank lines stay one block", async (ctx) => {
  const { page } = await open(ctx);
  const md = [
    "# Plan", "", "Some *text* with `code` and a [link](https://x.test).", "",
    "1. first", "2. second", "", "- a", "- b", "",
    "```python", "def f():", "", "    return 1", "", "", "x = f()", "```", "",
    "| a | b |", "|---|---|", "| 1 | 2 |", "",
    "~~~", "tilde fence", "", "```", "still inside", "~~~", "",
    "> quoted", "", "Last line.",
  ].join("\n").repeat(40);
  // Deterministic pieces of 1 to 40 characters.
  const pieces = [];
  let seed = 7;
  for (let i = 0; i < md.length; ) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const n = 1 + (seed % 40);
    pieces.push(md.slice(i, i + n));
    i += n;
  }
  await send(page, ev({ type: "iteration", n: 1 }));
  for (let i = 0; i < pieces.length; i += 50) {
    await send(page, ev(...pieces.slice(i, i + 50).map((text) => ({ type: "textDelta", text }))));
  }
  await send(page, ev({ type: "assistantMessage", text: md, toolCalls: [] }), ev({ type: "assistantMessage", text: md, toolCalls: [] }));
  // The second one was not streamed: plain text until it comes near the screen.
  await page.locator(".answer").nth(1).scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll(".answer.lazy").length === 0);
  const [streamed, whole] = await page.locator(".answer").evaluateAll((els) => els.map((e) => e.textContent.replace(/\s+/g, " ").trim()));
  assert.equal(streamed, whole);
  const counts = await page.locator(".answer").evaluateAll((els) => els.map((e) => [e.querySelectorAll("pre").length, e.querySelectorAll("table").length, e.querySelectorAll("ol").length]));
  assert.deepEqual(counts[0], [80, 40, 40]);
  assert.deepEqual(counts[0], counts[1]);
});

test("a long open code block streams as plain text and is highlighted when it closes", async (ctx) => {
  const { page } = await open(ctx);
  const body = "let x = 1;\n".repeat(2000);
  await send(page, ev({ type: "iteration", n: 1 }, { type: "textDelta", text: "```js\n" + body }));
  assert.equal(await page.locator(".answer .md-plain").count(), 1);
  await send(page, ev({ type: "textDelta", text: "```\n\nend" }));
  assert.equal(await page.locator(".answer .md-plain").count(), 0);
  assert.equal(await page.locator(".answer pre code .hljs-keyword").count(), 2000);
});

// Counts the page's animation frames until it is idle after the messages.
async function framesUntilIdle(page, ...messages) {
  return page.evaluate(async (ms) => {
    let frames = 0;
    let on = true;
    const tick = () => {
      frames++;
      if (on) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const target = window.taskxHandled().handled + ms.length;
    for (const m of ms) window.postMessage(m, "*");
    await new Promise((resolve) => {
      const check = () => {
        const st = window.taskxHandled();
        if (st.handled >= target && st.idle) resolve();
        else setTimeout(check, 5);
      };
      check();
    });
    on = false;
    return frames;
  }, messages);
}

test("a 1.7 MB answer is painted in pieces over many frames, never in one: a block too long for markdown as plain text", async (ctx) => {
  const { page, errors } = await open(ctx);
  const lines = [];
  for (let n = 0, i = 0; n < 1_700_000; i++) {
    const l = `\tx${i} := compute(${i}, "value") // <b>${i}</b>\n`;
    lines.push(l);
    n += l.length;
  }
  const body = lines.join("");
  const text = "Intro **here**.\n\n```go\n" + body;
  const deltas = [];
  for (let i = 0; i < text.length; i += 100_000) deltas.push({ type: "textDelta", text: text.slice(i, i + 100_000) });
  await send(page, ev({ type: "iteration", n: 1 }, deltas[0]));
  // The rest and the end of the message: painted over many frames (a frame commits at
  // most 32 KB), where the final paint used to render all of it in one task.
  const frames = await framesUntilIdle(page, ev(...deltas.slice(1)), ev({ type: "assistantMessage", text, toolCalls: [] }));
  assert.ok(frames >= 10, `painted in ${frames} frames`);
  const pieces = await page.locator(".answer .md-frozen > .md-chunk").evaluateAll((els) => els.map((e) => e.textContent.length));
  assert.ok(pieces.length > 50 && Math.max(...pieces) <= 17_000, `${pieces.length} pieces, the longest ${Math.max(...pieces)}`);
  assert.equal(await page.locator(".answer strong").textContent(), "here", "the short blocks are markdown");
  assert.ok((await page.locator(".answer .md-plain").count()) > 50, "the huge block is plain text");
  const shown = await page.locator(".answer").evaluate((e) => e.textContent);
  assert.ok(shown.includes(body.slice(-200)) && shown.length >= body.length, "all of the text is there");
  assert.equal(await page.locator(".answer").getAttribute("aria-busy"), null);
  assert.equal(await page.locator(".answer b").count(), 0, "markup in it stays text");
  assert.deepEqual(errors, []);
});

test("a replayed 600 KB answer is rendered as markdown over several frames once near the screen", async (ctx) => {
  const { page } = await open(ctx);
  const para = (i) => `Paragraph ${i} with **bold** and \`code\`. ${"lorem ipsum ".repeat(20)}\n\n`;
  let text = "";
  for (let i = 0; text.length < 600_000; i++) text += para(i);
  const frames = await framesUntilIdle(page, { type: "replay", replayId: 1, taskId: T, events: [{ type: "iteration", n: 1 }, { type: "assistantMessage", text, toolCalls: [] }], last: true });
  await page.waitForFunction(() => document.querySelectorAll(".answer.lazy").length === 0);
  await page.waitForFunction(() => window.taskxHandled().idle);
  assert.ok(frames >= 1);
  const n = await page.locator(".answer strong").count();
  assert.equal(n, (text.match(/\*\*bold\*\*/g) ?? []).length, "every paragraph rendered");
  const chunks = await page.locator(".answer .md-chunk").count();
  assert.ok(chunks > 100, `${chunks} chunks of about 4 KB`);
});

for (const csp of [true, false]) {
  const label = csp ? "under the CSP" : "without a CSP (sanitizing alone)";
  test(`XSS in a model answer renders as text and runs nothing, ${label}`, async (ctx) => {
    const p = await open(ctx, { csp });
    const answer = `Look: ${XSS_ALL}\n\n[click](javascript:window.__xss.push('link'))\n\n![pic](x" onerror="window.__xss.push('attr'))\n\n<a href="javascript:alert(1)">raw</a>`;
    await send(p.page, ev({ type: "started", taskId: T }, { type: "textDelta", text: answer.slice(0, 30) }, { type: "textDelta", text: answer.slice(30) }));
    await send(p.page, ev({ type: "assistantMessage", text: answer, toolCalls: [] }));
    const shown = await text(p.page, ".answer");
    assert.ok(shown.includes("<img src=x onerror="), shown);
    assert.ok(shown.includes("<script>"), shown);
    assert.equal(await p.page.locator('.answer a[href^="javascript"]').count(), 0);
    // Whatever links exist are inert: clicking posts to the host and runs nothing.
    for (const a of await p.page.locator(".answer a").all()) await a.click();
    await assertInert(p);
  });

  test(`XSS in tool output, file paths, approvals, questions and notices runs nothing, ${label}`, async (ctx) => {
    const p = await open(ctx, { csp });
    await send(
      p.page,
      { type: "userPrompt", taskId: T, text: `fix ${XSS_ALL}`, images: 0, mentions: [XSS_IMG] },
      ev(
        { type: "started", taskId: T },
        { type: "toolStarted", callId: "c1", tool: XSS_SCRIPT, input: { path: XSS_IMG }, permission: "read" },
        { type: "toolOutput", callId: "c1", stream: "stdout", text: XSS_ALL },
      ),
    );
    await send(
      p.page,
      ev(
        { type: "fileChanged", callId: "c1", path: XSS_IMG, kind: "modified", added: 1, removed: 0 },
        { type: "toolFinished", callId: "c1", tool: "read_file", ok: false, result: { html: XSS_ALL }, error: XSS_ALL, durationMs: 3 },
        { type: "warning", message: XSS_ALL },
        { type: "error", message: XSS_ALL, kind: "server", status: 500, retryable: true },
        { type: "retry", attempt: 1, maxAttempts: 3, delayMs: 500, kind: XSS_IMG, status: 0, message: XSS_SCRIPT },
        { type: "steered", text: XSS_ALL },
        { type: "thinkingDelta", text: XSS_ALL },
        { type: "plan", explanation: XSS_ALL, steps: [{ step: XSS_IMG, status: "pending" }] },
        { type: "done", status: "failed", error: XSS_ALL, text: "", changedFiles: [{ path: XSS_IMG, kind: "modified", added: 1, removed: 1 }], usage: {}, model: XSS_IMG, iterations: 1, toolCalls: 1 },
      ),
      { type: "approval", id: "a1", params: { taskId: T, callId: "c2", tool: XSS_IMG, permission: "edit", input: { path: XSS_SCRIPT }, preview: `--- a/x\n+++ b/x\n+${XSS_ALL}\n` } },
      { type: "askUser", id: "q1", params: { taskId: T, callId: "c3", questions: [{ id: "q", text: XSS_ALL, kind: "radio", options: [XSS_IMG, XSS_SCRIPT] }] } },
      { type: "error", message: XSS_ALL, detail: XSS_IMG },
      { type: "notice", message: XSS_SCRIPT },
      { type: "state", state: { title: XSS_IMG, editor: { activeFile: XSS_IMG, selection: null, openFiles: 1, diagnostics: 0 } } },
    );
    await p.page.locator(".tool-toggle").first().click();
    const body = await text(p.page, ".tool-body");
    assert.ok(body.includes("<script>window.__xss.push('script')</script>"), body);
    assert.ok((await text(p.page, ".approval .diff")).includes("<img src=x"));
    await assertInert(p);
  });
}

test("links are posted to the host, never followed", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, ev({ type: "assistantMessage", text: "See [docs](https://example.com/a) and [file](src/app.ts#L3) and https://example.org", toolCalls: [] }));
  await clearPosted(page);
  const before = page.url();
  for (const a of await page.locator(".answer a").all()) await a.click();
  await page.locator(".answer a").first().click({ button: "middle" });
  assert.equal(page.url(), before);
  const urls = (await posted(page)).filter((m) => m.type === "openLink").map((m) => m.url);
  assert.deepEqual(urls.slice(0, 3), ["https://example.com/a", "src/app.ts#L3", "https://example.org"]);
});

test("approval: shows the real diff and posts allow once with the host's id", async (ctx) => {
  const { page } = await open(ctx);
  const preview = "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -9,6 +9,6 @@\n app.use(x)\n-app.listen(3000)\n+app.listen(8080)\n";
  await send(
    page,
    ev({ type: "toolStarted", callId: "toolu_2", tool: "replace_text", input: { path: "src/app.ts" }, permission: "edit" }),
    ev({ type: "approvalRequested", callId: "toolu_2", tool: "replace_text", permission: "edit", input: { path: "src/app.ts" }, preview }),
    { type: "approval", id: "ap-7", params: { taskId: T, callId: "toolu_2", tool: "replace_text", permission: "edit", input: { path: "src/app.ts" }, preview } },
  );
  assert.equal(await page.locator(".approval").count(), 1, "one card for event + request");
  assert.equal(await page.locator(".approval .d-add").textContent(), "+app.listen(8080)\n");
  assert.equal(await page.locator(".approval .d-del").textContent(), "-app.listen(3000)\n");
  await clearPosted(page);
  await page.locator('.approval vscode-button[data-action="open-approval-diff"]').click();
  await page.locator('.approval vscode-button[data-decision="allowOnce"]').click();
  assert.deepEqual(await posted(page), [
    { type: "openApprovalDiff", id: "ap-7" },
    { type: "approvalAnswer", id: "ap-7", decision: "allowOnce" },
  ]);
  assert.equal(await page.locator('.approval vscode-button[data-action="approve"]').count(), 0, "buttons gone after answering");
  await send(page, ev({ type: "approvalResolved", callId: "toolu_2", tool: "replace_text", decision: "allow" }));
  assert.match(await text(page, ".approval .settled-note"), /allowed this once/);
});

test("approval: allow for this task, deny with a message, keyboard, closed by the host", async (ctx) => {
  const { page } = await open(ctx);
  const params = (callId) => ({ taskId: T, callId, tool: "run_command", permission: "command", input: { command: "npm test" }, preview: "$ npm test" });
  await send(page, { type: "approval", id: "a1", params: params("c1") }, { type: "approval", id: "a2", params: params("c2") }, { type: "approval", id: "a3", params: params("c3") });
  await clearPosted(page);
  await page.locator('[data-request="a1"] vscode-button[data-decision="allowTask"]').click();
  await page.locator('[data-request="a2"] .deny-reason').fill("use pnpm instead");
  // Keyboard: focus the Deny button and press Enter.
  await page.locator('[data-request="a2"] vscode-button[data-decision="deny"]').focus();
  await page.keyboard.press("Enter");
  // Answered by keyboard, the focus moves on to the next open request.
  assert.equal(await page.evaluate(() => document.activeElement?.closest("[data-request]")?.dataset.request), "a3");
  await send(page, { type: "requestClosed", id: "a3" });
  assert.deepEqual((await posted(page)).filter((m) => m.type !== "approvalReason"), [
    { type: "approvalAnswer", id: "a1", decision: "allowTask" },
    { type: "approvalAnswer", id: "a2", decision: "deny", message: "use pnpm instead" },
  ]);
  assert.equal(await page.locator('[data-request="a3"] vscode-button').count(), 0);
  assert.match(await text(page, '[data-request="a3"] .settled-note'), /No longer needed/);
});

test("approval: the reason box reports what it holds; answered in the diff editor, the card says so", async (ctx) => {
  const { page } = await open(ctx);
  const params = { taskId: T, callId: "c1", tool: "write_file", permission: "edit", input: { path: "a.txt" }, preview: "" };
  await send(page, { type: "approval", id: "d1", params }, { type: "approval", id: "d2", params: { ...params, callId: "c2" } });
  await clearPosted(page);
  await page.locator('[data-request="d1"] .deny-reason').fill("not there");
  assert.deepEqual((await posted(page)).at(-1), { type: "approvalReason", id: "d1", message: "not there" });
  await send(page, { type: "requestClosed", id: "d1", decision: "deny", message: "not there" }, { type: "requestClosed", id: "d2", decision: "allow" });
  assert.match(await text(page, '[data-request="d1"] .settled-note'), /You denied this in the diff editor: not there/);
  assert.match(await text(page, '[data-request="d2"] .settled-note'), /You allowed this once, in the diff editor/);
});

test("askUser: radio and checkbox answers, and dismiss", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, {
    type: "askUser",
    id: "q1",
    params: {
      taskId: T,
      callId: "c1",
      questions: [
        { id: "db", text: "Which database?", kind: "radio", options: ["Postgres", "SQLite"] },
        { id: "feat", text: "Which features?", kind: "checkbox", options: ["auth", "search", "billing"] },
      ],
    },
  }, { type: "askUser", id: "q2", params: { taskId: T, callId: "c2", questions: [{ id: "x", text: "Go on?", kind: "radio", options: ["yes", "no"] }] } });
  await clearPosted(page);
  await page.locator('[data-request="q1"] vscode-radio[value="SQLite"]').click();
  await page.locator('[data-request="q1"] vscode-checkbox[value="auth"]').click();
  await page.locator('[data-request="q1"] vscode-checkbox[value="billing"]').click();
  await page.locator('[data-request="q1"] vscode-button[data-action="ask-submit"]').click();
  await page.locator('[data-request="q2"] vscode-button[data-action="ask-dismiss"]').click();
  assert.deepEqual(await posted(page), [
    { type: "askUserAnswer", id: "q1", answers: { db: ["SQLite"], feat: ["auth", "billing"] } },
    { type: "askUserAnswer", id: "q2", answers: null },
  ]);
  assert.match(await text(page, '[data-request="q1"] .settled-note'), /SQLite, auth, billing/);
});

test("tool activity: running, live output, stop one call, finished with duration and collapsible output", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, ev({ type: "toolStarted", callId: "c9", tool: "run_command", input: { command: "go test ./..." }, permission: "command" }));
  assert.equal(await page.locator(".tool").getAttribute("data-state"), "running");
  assert.match(await text(page, ".tool .tool-arg"), /go test/);
  await send(page, ev({ type: "toolOutput", callId: "c9", stream: "stdout", text: "ok  pkg/a\n" }, { type: "toolOutput", callId: "c9", stream: "stderr", text: "FAIL pkg/b\n" }));
  assert.equal(await page.locator(".tool-live").textContent(), "ok  pkg/a\nFAIL pkg/b\n");
  await clearPosted(page);
  await page.locator(".tool-stop").click();
  assert.deepEqual(await posted(page), [{ type: "cancelTool", taskId: T, callId: "c9" }]);
  await send(page, ev({ type: "toolFinished", callId: "c9", tool: "run_command", ok: false, result: null, error: "Task has been stopped by user.", durationMs: 2350 }));
  assert.equal(await page.locator(".tool").getAttribute("data-state"), "failed");
  assert.match(await text(page, ".tool-status"), /2\.4 s/);
  assert.equal(await page.locator(".tool-stop").count(), 0);
  assert.equal(await page.locator(".tool-live").count(), 0);
  assert.equal(await page.locator(".tool-body").isVisible(), false);
  await page.locator(".tool-toggle").click();
  assert.equal(await page.locator(".tool-toggle").getAttribute("aria-expanded"), "true");
  assert.match(await text(page, ".tool-body"), /FAIL pkg\/b[\s\S]*stopped by user/);
  // Keyboard: the toggle is a button.
  await page.locator(".tool-toggle").focus();
  await page.keyboard.press("Enter");
  assert.equal(await page.locator(".tool-body").isVisible(), false);
});

test("compaction, retries, model switches, warnings and usage in plain words", async (ctx) => {
  const { page } = await open(ctx);
  await send(
    page,
    ev(
      { type: "started", taskId: T, chatMode: "agent", model: "claude-x" },
      { type: "compacted", folded: 12, pruned: 5, droppedRetrieval: false, beforeTokens: 170000, afterTokens: 61000, windowTokens: 200000 },
      { type: "retry", attempt: 1, maxAttempts: 4, delayMs: 2000, kind: "rateLimited", status: 429, message: "slow down" },
      { type: "modelSwitched", from: "anthropic/claude-x", to: "openai/gpt-y", reason: "overloaded: busy" },
      { type: "warning", message: "The answer was cut at the output token limit." },
      { type: "usage", inputTokens: 1830, outputTokens: 42, totalInputTokens: 6340, totalOutputTokens: 121, costUsd: 0.0412 },
      { type: "context", usedTokens: 68000, windowTokens: 200000 },
    ),
  );
  const notices = await page.locator(".notice").allInnerTexts();
  assert.match(notices[0], /compressed: 12 earlier messages summarized, 5 old tool results shortened\. About 170k → 61k tokens of a 200k window/);
  assert.match(notices[1], /rateLimited 429: slow down\)\. Trying again in 2\.0 s \(attempt 1 of 4\)/);
  assert.match(notices[2], /Switched from anthropic\/claude-x to openai\/gpt-y/);
  assert.match(notices[3], /cut at the output token limit/);
  const status = await text(page, ".status-line");
  assert.match(status, /gpt-y · 6\.3k in · 121 out · \$0\.04 · context 34% of 200k/);
});

test("final summary with changed files, validations from the run result, open a file's diff", async (ctx) => {
  const { page } = await open(ctx);
  await send(
    page,
    ev(
      { type: "validationStarted", name: "build", command: "go build ./..." },
      { type: "validationFinished", name: "build", command: "go build ./...", passed: true, exitCode: 0, timedOut: false, durationMs: 3200 },
      {
        type: "done", status: "completed", error: null, text: "ok",
        changedFiles: [{ path: "src/app.ts", kind: "modified", added: 1, removed: 1 }, { path: "src/new.ts", kind: "created", added: 20, removed: 0 }],
        usage: { inputTokens: 6340, outputTokens: 121 }, model: "m", iterations: 3, toolCalls: 2,
      },
    ),
    {
      type: "runResult", taskId: T,
      summary: {
        taskId: T, status: "completed", changedFiles: [{}], validationRan: true,
        validations: [{ name: "test", command: "go test ./...", passed: false, exitCode: 1, timedOut: false, durationMs: 9000, output: "--- FAIL: TestX" }],
        skippedChecks: [{ name: "lint", reason: "no such command for this project" }],
        metrics: { costUsd: 0.12, unpricedTokens: 0 },
      },
    },
  );
  const summary = await text(page, ".summary");
  assert.match(summary, /Done/);
  assert.match(summary, /Changed 2 files/);
  assert.match(summary, /3 turns · 2 tool calls · 6\.3k in \/ 121 out tokens/);
  assert.match(summary, /test go test \.\/\.\.\. failed \(exit 1\) in 9\.0 s/);
  assert.match(summary, /lint skipped: no such command/);
  assert.match(summary, /Cost \$0\.12/);
  assert.match(await text(page, ".validations"), /build go build \.\/\.\.\. passed in 3\.2 s/);
  await clearPosted(page);
  await page.locator('.summary [data-path="src/new.ts"]').click();
  assert.deepEqual(await posted(page), [{ type: "openFileDiff", path: "src/new.ts" }]);
  // A failed check opens in an editor; a passed one has no button.
  await clearPosted(page);
  await page.locator('.summary [data-testid="check"] summary').first().click();
  await page.locator('[data-testid="open-check"]').click();
  assert.deepEqual(await posted(page), [{ type: "openCheckOutput", taskId: T, name: "test" }]);
  assert.equal(await page.locator('[data-testid="open-check"]').count(), 1);
});

test("send: mode, model, @ mention completion, @selection, editor-context switch", async (ctx) => {
  const { page } = await open(ctx);
  await send(
    page,
    { type: "state", state: { runtime: { state: "ready" }, taskId: null, running: false, mode: "agent", includeEditorContext: true, editor: { activeFile: "src/app.ts", selection: { path: "src/app.ts", startLine: 3, endLine: 9 }, openFiles: 2, diagnostics: 0 } } },
    { type: "models", models: [{ id: "m-small", capabilities: [] }, { id: "m-big", contextWindow: 200000, capabilities: ["tools", "vision"] }], selected: "m-small" },
  );
  await clearPosted(page);
  const input = page.locator("textarea.prompt");
  await input.click();
  await page.keyboard.type("explain @src");
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "mentionQuery" && m.query === "src"));
  const q = (await posted(page)).filter((m) => m.type === "mentionQuery").pop();
  await send(page, { type: "mentionResults", requestId: q.requestId, items: [{ kind: "file", path: "src/app.ts" }, { kind: "folder", path: "src/lib" }] });
  assert.deepEqual(await page.locator(".mention-list li").allInnerTexts().then((t) => t.map((x) => x.split("\n")[0].trim())), ["src/app.ts", "src/lib/"]);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.keyboard.type("and @sel");
  await page.waitForSelector(".mention-list li");
  await page.keyboard.press("Tab");
  assert.equal(await input.inputValue(), "explain @src/lib and @src/app.ts:3-9 ");
  // Mode and model switch, editor context off.
  await page.evaluate(() => {
    const s = document.querySelector(".mode-select");
    s.value = "plan";
    s.dispatchEvent(new Event("change"));
    const m = document.querySelector(".model-select");
    m.value = "m-big";
    m.dispatchEvent(new Event("change"));
  });
  await page.locator(".context-toggle").click();
  assert.equal(await page.locator(".context-toggle").getAttribute("aria-pressed"), "false");
  await input.press("Enter");
  const ps = await posted(page);
  assert.deepEqual(ps.filter((m) => m.type.startsWith("set")), [
    { type: "setMode", mode: "plan" },
    { type: "setModel", model: "m-big" },
    { type: "setIncludeEditorContext", enabled: false },
  ]);
  assert.deepEqual(ps.find((m) => m.type === "send"), {
    type: "send", taskId: null, text: "explain @src/lib and @src/app.ts:3-9", mode: "plan", model: "m-big",
    mentions: [{ kind: "folder", path: "src/lib" }, { kind: "selection", path: "src/app.ts", startLine: 3, endLine: 9 }],
    images: [], includeEditorContext: false,
  });
  assert.equal(await input.inputValue(), "");
});

test("/ completes skills at the start of a prompt; Claude Code is a mode only when its CLI was found", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: null, running: false, mode: "agent", includeEditorContext: false } });
  const modes = () => page.locator(".mode-select vscode-option").evaluateAll((els) => els.map((e) => e.getAttribute("value")));
  assert.deepEqual(await modes(), ["ask", "plan", "agent", "team"]);
  await send(page, { type: "state", state: { claudeCode: true, skills: [{ name: "deploy", description: "Deploy the app" }, { name: "docs", description: "Write the docs" }, { name: "review", description: "Review" }] } });
  assert.deepEqual(await modes(), ["ask", "plan", "agent", "team", "claudeCode"]);
  await clearPosted(page);
  const input = page.locator("textarea.prompt");
  await input.click();
  await page.keyboard.type("/d");
  await page.waitForSelector(".mention-list li");
  assert.deepEqual(await page.locator(".mention-list li .mention-label").allInnerTexts(), ["/deploy", "/docs"]);
  await page.keyboard.type("o");
  assert.deepEqual(await page.locator(".mention-list li .mention-label").allInnerTexts(), ["/docs"]);
  await page.keyboard.press("Enter");
  await page.keyboard.type("for the API");
  assert.equal(await input.inputValue(), "/docs for the API");
  assert.equal((await posted(page)).filter((m) => m.type === "mentionQuery").length, 0, "skills complete without the host");
  await page.evaluate(() => {
    const s = document.querySelector(".mode-select");
    s.value = "claudeCode";
    s.dispatchEvent(new Event("change"));
  });
  await input.press("Enter");
  const sent = (await posted(page)).find((m) => m.type === "send");
  assert.equal(sent.mode, "claudeCode");
  assert.equal(sent.text, "/docs for the API");
});

test("refine: the prompt goes to the host, the rewritten one replaces it, Undo puts it back", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: null, running: false, mode: "agent", includeEditorContext: false } });
  const input = page.locator("textarea.prompt");
  await input.fill("fix the port thing");
  await clearPosted(page);
  await page.locator('[data-testid="refine"]').click();
  const req = (await posted(page)).find((m) => m.type === "refine");
  assert.deepEqual(req, { type: "refine", requestId: req.requestId, text: "fix the port thing" });
  await send(page, { type: "refined", requestId: req.requestId + 1, text: "stale", note: "old" });
  assert.equal(await input.inputValue(), "fix the port thing", "an answer to another request is ignored");
  await send(page, { type: "refined", requestId: req.requestId, text: "Change the port in src/app.ts from 3000 to 8080.", note: "Rewritten by m as a codeModification task." });
  assert.equal(await input.inputValue(), "Change the port in src/app.ts from 3000 to 8080.");
  assert.match(await text(page, ".hint"), /Rewritten by m/);
  await page.locator('[data-testid="undo-refine"]').click();
  assert.equal(await input.inputValue(), "fix the port thing");
});

test("while a task runs: Enter steers it, Stop stops it", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: T, running: true } });
  await clearPosted(page);
  assert.equal(await page.locator(".stop").isVisible(), true);
  await page.locator("textarea.prompt").fill("use the v2 API instead");
  await page.locator("textarea.prompt").press("Enter");
  await page.locator(".stop").click();
  assert.deepEqual(await posted(page), [
    { type: "steer", taskId: T, text: "use the v2 API instead" },
    { type: "stop", taskId: T },
  ]);
  await send(page, ev({ type: "steered", text: "use the v2 API instead" }), { type: "state", state: { running: false } });
  assert.equal(await page.locator(".stop").isVisible(), false);
  assert.match(await text(page, ".steer"), /use the v2 API instead/);
});

test("a 1 MB paste is kept out of the box as a token and sent whole", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: null, running: false } });
  await clearPosted(page);
  await page.locator("textarea.prompt").fill("summarize: ");
  await page.evaluate(() => {
    const big = "0123456789abcdef ".repeat(61681).slice(0, 1 << 20).replace(/(.{99}) /g, "$1\n");
    window.__big = big;
    const dt = new DataTransfer();
    dt.setData("text/plain", big);
    const ta = document.querySelector("textarea.prompt");
    ta.setSelectionRange(ta.value.length, ta.value.length);
    ta.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  const value = await page.locator("textarea.prompt").inputValue();
  assert.ok(value.length < 100, value);
  assert.match(value, /^summarize: \[Pasted text #1 · [\d,]+ lines · 1\.0 MB\]$/);
  await page.locator("textarea.prompt").press("End");
  await page.keyboard.type(" thanks");
  await page.locator("textarea.prompt").press("Enter");
  const sent = (await posted(page)).find((m) => m.type === "send");
  const big = await page.evaluate(() => window.__big);
  assert.equal(sent.text, `summarize: ${big} thanks`.trim());
});

test("images pasted and dropped join the prompt", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, { type: "state", state: { runtime: { state: "ready" }, taskId: null, running: false } });
  await clearPosted(page);
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
  await page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const file = (name) => new File([bytes], name, { type: "image/png" });
    const dt = new DataTransfer();
    dt.items.add(file("shot.png"));
    document.querySelector("textarea.prompt").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    const dt2 = new DataTransfer();
    dt2.items.add(file("drop.png"));
    dt2.items.add(new File(["x"], "notes.txt", { type: "text/plain" }));
    document.querySelector(".scroller").dispatchEvent(new DragEvent("drop", { dataTransfer: dt2, bubbles: true, cancelable: true }));
  }, png);
  await page.waitForFunction(() => document.querySelectorAll(".image-chip").length === 2);
  assert.match(await text(page, ".hint"), /notes\.txt is not a PNG/);
  await page.locator("textarea.prompt").fill("what is this?");
  await page.locator("textarea.prompt").press("Enter");
  const sent = (await posted(page)).find((m) => m.type === "send");
  assert.deepEqual(sent.images, [{ mediaType: "image/png", data: png }, { mediaType: "image/png", data: png }]);
});

test("replay: batches rebuild the transcript; a new replay replaces the old one", async (ctx) => {
  const { page } = await open(ctx);
  const events = [{ type: "userMessage", text: "first task", images: 0 }];
  for (let i = 0; i < 50; i++) {
    events.push(
      { type: "toolStarted", callId: `c${i}`, tool: "read_file", input: { path: `f${i}.ts` }, permission: "read" },
      { type: "toolFinished", callId: `c${i}`, tool: "read_file", ok: true, result: "x", error: null, durationMs: 1 },
    );
  }
  events.push({ type: "assistantMessage", text: "All **read**.", toolCalls: [] });
  await send(page, { type: "replay", replayId: 1, taskId: "t-a", title: "Task A", events: events.slice(0, 60), last: false });
  await send(page, { type: "replay", replayId: 1, taskId: "t-a", title: "Task A", events: events.slice(60), last: true });
  assert.equal(await page.locator(".tool").count(), 50);
  assert.equal(await text(page, ".title"), "Task A");
  assert.equal(await page.locator(".answer strong").innerText(), "read");
  await send(page, { type: "replay", replayId: 2, taskId: "t-b", title: "Task B", events: [{ type: "userMessage", text: "second", images: 1 }], last: true });
  assert.equal(await page.locator(".tool").count(), 0);
  assert.equal(await page.locator(".user").count(), 1);
  assert.match(await text(page, ".user"), /second[\s\S]*1 image/);
  await send(page, { type: "clear" });
  assert.equal(await page.locator(".transcript > *").count(), 0);
  assert.equal(await page.locator(".empty").isVisible(), true);
});

test("a replayed answer far above the screen stays plain text until scrolled to", async (ctx) => {
  const { page } = await open(ctx);
  const answer = (i) => `Answer ${i} with **bold**\n\n` + "- a line of a long list\n".repeat(100);
  const events = Array.from({ length: 20 }, (_, i) => ({ type: "assistantMessage", text: answer(i), toolCalls: [] }));
  await send(page, { type: "replay", replayId: 1, taskId: T, events, last: true });
  await page.waitForFunction(() => document.querySelector(".answer:last-child strong")?.textContent === "bold");
  assert.equal(await page.locator(".answer").first().evaluate((e) => e.classList.contains("lazy")), true);
  assert.match(await page.locator(".answer").first().textContent(), /^Answer 0 with \*\*bold\*\*/);
  // The user scrolls up with the wheel (a scroll by script would not unstick the view).
  await page.locator(".scroller").hover();
  for (let i = 0; i < 20 && (await page.locator(".scroller").evaluate((e) => e.scrollTop)) > 0; i++) await page.mouse.wheel(0, -5000);
  // The answer is drawn in pieces over frames once it is no longer lazy:
  // wait for its markdown, not only for the class.
  await page.waitForFunction(() => {
    const a = document.querySelector(".answer");
    return !a.classList.contains("lazy") && a.querySelector("strong")?.textContent === "bold";
  });
  // textContent, as the wait above: innerText reads layout, and an answer the view has
  // just left can be skipped by content-visibility (innerText '' in a full run at load).
  assert.equal(await page.locator(".answer").first().locator("strong").textContent(), "bold");
  assert.equal(await page.locator(".answer").first().evaluate((e) => e.classList.contains("lazy")), false);
});

test("team mode: subagents nest their events and can be stopped", async (ctx) => {
  const { page } = await open(ctx);
  await send(
    page,
    ev(
      { type: "planStarted", callId: "p1", maxParallel: 2, steps: [{ id: "s1", role: "research", objective: "find the API", dependsOn: [] }] },
      { type: "subagentStarted", name: "wt-1", taskId: "sub-1", role: "research", objective: "find the API", kind: "ollama", model: "qwen", dir: null, step: "s1" },
      { type: "subagent", name: "wt-1", taskId: "sub-1", event: { type: "toolStarted", callId: "x1", tool: "search_text", input: { query: "api" }, permission: "read" } },
      { type: "subagent", name: "wt-1", taskId: "sub-1", event: { type: "textDelta", text: "Found it" } },
    ),
  );
  assert.equal(await page.locator(".subagent .tool").count(), 1);
  await clearPosted(page);
  await page.locator(".subagent > .tool-head .tool-stop").click();
  await page.locator('.subagent [data-action="toggle-sub"]').click();
  assert.equal(await page.locator('.subagent [data-action="toggle-sub"]').getAttribute("aria-expanded"), "true");
  await page.locator(".subagent .tool .tool-stop").click();
  assert.deepEqual(await posted(page), [
    { type: "cancelSubagent", taskId: "sub-1" },
    { type: "cancelTool", taskId: "sub-1", callId: "x1" },
  ]);
  await send(page, ev({ type: "subagentFinished", name: "wt-1", taskId: "sub-1", role: "research", status: "completed", error: null, costUsd: 0, unpricedTokens: 0, tokens: 1200, files: 0, added: 0, removed: 0, worktree: null }));
  assert.match(await text(page, ".sub-status"), /completed · 1\.2k tokens/);
});

test("best of N: a candidate's card keeps its title clear of its status in a narrow chat, the end counts the candidates ready", async (ctx) => {
  const { page, errors } = await open(ctx, { viewport: { width: 300, height: 700 } });
  const started = (i) => ({ type: "subagentStarted", name: `implementation-${i}`, taskId: `sub-${i}`, role: "implementation", objective: "Say something long", kind: "openaiCompatible", model: "fake-model", dir: `/tmp/wt/implementation-${i}`, candidate: i });
  const finished = (i, status) => ({ type: "subagentFinished", name: `implementation-${i}`, taskId: `sub-${i}`, role: "implementation", status, error: status === "failed" ? "invalidRequest (400)" : null, costUsd: 0, unpricedTokens: 0, tokens: 3978, files: 0, added: 0, removed: 0, worktree: null });
  await send(page, ev(started(0), started(1), finished(0, "failed"), finished(1, "completed")));
  for (const n of ["1", "2"]) {
    const card = page.locator(`[data-candidate="${n}"]`);
    const name = await card.locator(".tool-toggle").boundingBox();
    const status = await card.locator(".sub-status").boundingBox();
    const apart = status.y >= name.y + name.height - 1 || status.x >= name.x + name.width - 1;
    assert.ok(apart, `candidate ${n}: the status ${JSON.stringify(status)} is drawn over the title ${JSON.stringify(name)}`);
    const nameText = await card.locator(".tool-name").boundingBox();
    assert.ok(nameText.x + nameText.width <= name.x + name.width + 1, `candidate ${n}: the name runs out of its button`);
  }
  await send(page, ev({ type: "bestOfDone", taskId: T, costUsd: 0, candidates: [
    { name: null, kind: "openaiCompatible", model: "fake-model", status: "failed" },
    { name: "implementation-1", kind: "openaiCompatible", model: "fake-model", status: "completed" },
  ] }));
  const done = page.locator(".card", { hasText: "ready" }).last();
  assert.match(await done.locator(".card-title").innerText(), /1 of 2 candidates ready/);
  assert.deepEqual(await done.locator("li").allInnerTexts(), ["candidate 1: openaiCompatible/fake-model, failed", "candidate 2: openaiCompatible/fake-model, completed"]);
  assert.deepEqual(errors, []);
});

test("best of N: candidate cards carry the provider names the host gave, as the comparison panel does", async (ctx) => {
  const { page, errors } = await open(ctx);
  const started = (i) => ({ type: "subagentStarted", name: `implementation-${i}`, taskId: `sub-${i}`, role: "implementation", objective: "Do it", kind: "openaiCompatible", model: "fake-model", dir: `/tmp/wt/implementation-${i}`, candidate: i });
  await send(page, { type: "userPrompt", taskId: T, text: "Do it", images: 0, mentions: ["best of 2: local-a, local-b"] }, { type: "bestOfProviders", taskId: T, providers: ["local-a", "local-b"] });
  await send(page, ev(started(1), started(0)));
  assert.equal(await page.locator('[data-candidate="1"] .tool-name').innerText(), "local-a (candidate 1)");
  assert.equal(await page.locator('[data-candidate="2"] .tool-name').innerText(), "local-b (candidate 2)");
  await send(page, ev({ type: "bestOfDone", taskId: T, costUsd: 0, candidates: [
    { name: "implementation-0", kind: "openaiCompatible", model: "fake-model", status: "completed" },
    { name: "implementation-1", kind: "openaiCompatible", model: "fake-model", status: "completed" },
  ] }));
  const done = page.locator(".card", { hasText: "ready" }).last();
  assert.deepEqual(await done.locator("li").allInnerTexts(), ["local-a (candidate 1): openaiCompatible/fake-model, completed", "local-b (candidate 2): openaiCompatible/fake-model, completed"]);
  assert.deepEqual(errors, []);
});

test("approval: Enter in the reason denies with it; Enter in an empty reason does nothing", async (ctx) => {
  const { page } = await open(ctx);
  const params = (callId) => ({ taskId: T, callId, tool: "write_file", permission: "edit", input: { path: "notes/todo.md" }, preview: "" });
  await send(page, { type: "approval", id: "e1", params: params("c1") }, { type: "approval", id: "e2", params: params("c2") });
  await clearPosted(page);
  await page.locator('[data-request="e1"] .deny-reason').press("Enter");
  assert.deepEqual(await posted(page), [], "an empty reason and Enter answer nothing");
  await page.locator('[data-request="e1"] .deny-reason').fill("put it in docs/ instead");
  await page.locator('[data-request="e1"] .deny-reason').press("Enter");
  assert.deepEqual((await posted(page)).filter((m) => m.type !== "approvalReason"), [{ type: "approvalAnswer", id: "e1", decision: "deny", message: "put it in docs/ instead" }]);
  assert.match(await text(page, '[data-request="e1"] .settled-note'), /You denied this: put it in docs\/ instead/);
  // The focus moves on to the next open request, as after a click.
  assert.equal(await page.evaluate(() => document.activeElement?.closest("[data-request]")?.dataset.request), "e2");
});

test("team mode: the plan is a live view of each step (running, done, skipped, merged, conflict) with worktrees to open", async (ctx) => {
  const { page, errors } = await open(ctx);
  const steps = [
    { id: "research", role: "research", objective: "find the API", dependsOn: [] },
    { id: "impl", role: "implementation", objective: "change it", dependsOn: [] },
    { id: "test", role: "testing", objective: "test it", dependsOn: ["research"] },
    { id: "docs", role: "documentation", objective: "document it", dependsOn: [] },
  ];
  await send(page, ev({ type: "planStarted", callId: "p1", maxParallel: 3, steps }));
  const status = async () => Object.fromEntries(await page.locator('[data-testid="plan-step"]').evaluateAll((els) => els.map((e) => [e.dataset.step, `${e.className.replace("plan-step ", "")}|${e.querySelector(".step-status").textContent}`])));
  assert.deepEqual(Object.values(await status()).map((s) => s.split("|")[1]), ["waiting", "waiting", "waiting", "waiting"]);
  assert.match(await text(page, '[data-step="test"]'), /after research/);
  await send(page, ev(
    { type: "subagentStarted", name: "wt-r", taskId: "sub-r", role: "research", objective: "find the API", kind: "openaiCompatible", model: "m-r", dir: null, step: "research" },
    { type: "subagentStarted", name: "wt-i", taskId: "sub-i", role: "implementation", objective: "change it", kind: "openaiCompatible", model: "m-i", dir: "/tmp/wt/wt-i", step: "impl" },
    { type: "subagentStarted", name: "wt-d", taskId: "sub-d", role: "documentation", objective: "document it", kind: "openaiCompatible", model: "m-d", dir: "/tmp/wt/wt-d", step: "docs" },
  ));
  let s = await status();
  assert.equal(s.research, "step-running|running · m-r");
  assert.equal(s.impl, "step-running|running · m-i");
  await send(page, ev(
    { type: "subagentFinished", name: "wt-r", taskId: "sub-r", role: "research", status: "cancelled", error: "stopped by the user", costUsd: 0, unpricedTokens: 0, tokens: 100, files: 0, added: 0, removed: 0, worktree: null },
    { type: "stepSkipped", step: "test", reason: "research did not complete" },
    { type: "subagentFinished", name: "wt-i", taskId: "sub-i", role: "implementation", status: "completed", error: null, costUsd: 0.01, unpricedTokens: 0, tokens: 2000, files: 1, added: 3, removed: 1, worktree: "/tmp/wt/wt-i" },
    { type: "subagentFinished", name: "wt-d", taskId: "sub-d", role: "documentation", status: "completed", error: null, costUsd: 0, unpricedTokens: 0, tokens: 900, files: 1, added: 1, removed: 0, worktree: "/tmp/wt/wt-d" },
    { type: "merged", step: "impl", name: "wt-i", ok: true, files: ["src/a.ts"], error: null },
    { type: "merged", step: "docs", name: "wt-d", ok: false, files: [], error: "README.md changed in the working tree" },
  ));
  s = await status();
  assert.equal(s.research.split("|")[0], "step-cancelled");
  assert.equal(s.test, "step-skipped|skipped: research did not complete");
  assert.equal(s.impl, "step-merged|merged: 1 file");
  assert.equal(s.docs, "step-conflict|not merged: README.md changed in the working tree");
  assert.match(await page.locator('[data-testid="error"]').last().innerText(), /kept in its worktree/);
  await clearPosted(page);
  await page.locator('.subagent[data-task="sub-d"] [data-testid="open-worktree"]').click();
  assert.deepEqual(await posted(page), [{ type: "openWorktree", path: "/tmp/wt/wt-d" }]);
  assert.equal(await page.locator('.subagent[data-task="sub-r"] [data-testid="open-worktree"]').count(), 0, "a read-only step has no worktree");
  assert.deepEqual(errors, []);
});

/** A GOROOT-sized graph/project answer: 600 files (the runtime's cap) in 60 packages, import and reference edges, a cycle, hubs. */
function bigGraph() {
  const nodes = [];
  for (let p = 0; p < 60; p++) for (let f = 0; f < 10; f++) nodes.push({ id: `src/pkg${p}/file${f}.go`, language: "go", symbols: 20, files: 1, degree: 0, inCycle: p === 7 });
  const edges = [];
  let seed = 7;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  for (let i = 0; i < nodes.length; i++) {
    for (let k = 0; k < 3; k++) edges.push({ from: i, to: rnd(40), weight: 1 + rnd(5), kind: "import" });
    for (let k = 0; k < 2; k++) edges.push({ from: i, to: rnd(nodes.length), weight: 1, kind: "reference" });
  }
  edges.push({ from: 70, to: 71, weight: 1, kind: "import" }, { from: 71, to: 70, weight: 1, kind: "import" });
  for (const e of edges) { nodes[e.from].degree++; nodes[e.to].degree++; }
  return {
    nodes, edges, total: 9300,
    stats: { files: 9300, edges: 40000, importEdges: 30000, referenceEdges: 10000, modules: 600, cycles: 1, orphans: 12, hubs: [{ path: "src/pkg0/file0.go", dependents: 400 }], importCycles: [["src/pkg7/file0.go", "src/pkg7/file1.go"]], buildMs: 900, version: "1", unresolvedImports: 0 },
  };
}

test("graph: draws a GOROOT-sized graph (600 files, 3 000 edges), cycles, hubs and edge kinds marked, a click opens the file", async (ctx) => {
  const p = await open(ctx, { entry: "graph", viewport: { width: 1200, height: 800 } });
  const { page } = p;
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "query"));
  assert.deepEqual((await posted(page)).find((m) => m.type === "query"), { type: "query", level: "file", focus: null, depth: 1, importsOnly: false });
  const longTasks = await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => window.__long.push(...l.getEntries().map((e) => Math.round(e.duration)))).observe({ type: "longtask", buffered: false });
  });
  void longTasks;
  const t0 = Date.now();
  await page.evaluate((result) => window.postMessage({ type: "graph", result, query: { type: "query", level: "file", focus: null, depth: 1, importsOnly: false } }, "*"), bigGraph());
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "rendered"), null, { timeout: 120000 });
  const wall = Date.now() - t0;
  const r = (await posted(page)).find((m) => m.type === "rendered");
  assert.equal(r.nodes, 600);
  assert.ok(r.edges > 2900, `edges ${r.edges}`);
  const long = await page.evaluate(() => window.__long);
  console.log(`      [graph] ${JSON.stringify(r)}, wall ${wall} ms; long tasks ${JSON.stringify(long)}`);
  assert.match(await text(page, '[data-testid="graph-stats"]'), /600 of 9300 files · \d+ edges · 1 import cycles · 1 hubs/);
  assert.match(await text(page, '[data-testid="graph-cycles"]'), /src\/pkg7\/file0\.go → src\/pkg7\/file1\.go/);
  assert.deepEqual(await page.evaluate(() => window.taskxGraph.classes("src/pkg7/file0.go")), ["cycle"]);
  assert.deepEqual(await page.evaluate(() => window.taskxGraph.classes("src/pkg0/file0.go")), ["hub"]);
  assert.deepEqual(await page.evaluate(() => window.taskxGraph.edgeClasses()), ["import", "reference"]);
  await clearPosted(page);
  const at = await page.evaluate(() => window.taskxGraph.nodePosition("src/pkg0/file0.go"));
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "openNode"));
  assert.deepEqual((await posted(page)).find((m) => m.type === "openNode"), { type: "openNode", id: "src/pkg0/file0.go", level: "file" });
  assert.match(await text(page, '[data-testid="graph-picked"]'), /src\/pkg0\/file0\.go/);
  // Module level and focus with depth ask the host again.
  await page.evaluate(() => window.postMessage({ type: "activeFile", path: "src/pkg3/file1.go" }, "*"));
  await page.locator('[data-testid="graph-focus"]').check();
  await page.locator('[data-testid="graph-depth"]').selectOption("2");
  await page.locator('[data-testid="graph-level"]').selectOption("module");
  const qs = (await posted(page)).filter((m) => m.type === "query");
  assert.deepEqual(qs.at(-1), { type: "query", level: "module", focus: "src/pkg3/file1.go", depth: 2, importsOnly: false });
  assert.deepEqual(p.errors, []);
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
});

test("graph: fits its panel when split narrow, and again when the panel is resized", async (ctx) => {
  const p = await open(ctx, { entry: "graph", viewport: { width: 1000, height: 600 } });
  const { page } = p;
  const nodes = [];
  for (let i = 0; i < 80; i++) nodes.push({ id: `src/p${i % 8}/f${i}.go`, language: "go", symbols: 3, files: 1, degree: 2, inCycle: false });
  const edges = nodes.slice(1).map((_, i) => ({ from: i, to: i + 1, weight: 1, kind: "import" }));
  await page.evaluate((r) => window.postMessage({ type: "graph", result: r, query: { type: "query", level: "file", focus: null, depth: 1, importsOnly: false } }, "*"), { nodes, edges, total: 80, stats: { hubs: [], importCycles: [], cycles: 0 } });
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "rendered"));
  // Every node inside the canvas, and cytoscape's idea of its size the canvas's.
  const fits = () =>
    page.waitForFunction(() => {
      const b = window.taskxGraph.box();
      return b && b.cyWidth === b.width && b.cyHeight === b.height && b.x1 >= -1 && b.y1 >= -1 && b.x2 <= b.width + 1 && b.y2 <= b.height + 1;
    }, null, { timeout: 10000 }).then(() => page.evaluate(() => window.taskxGraph.box()));
  await fits();
  for (const size of [{ width: 300, height: 600 }, { width: 220, height: 420 }, { width: 1200, height: 700 }]) {
    await page.setViewportSize(size);
    const b = await fits().catch(async () => assert.fail(`not fitted at ${size.width}x${size.height}: ${JSON.stringify(await page.evaluate(() => window.taskxGraph.box()))}`));
    assert.ok(b.width >= size.width * (size.width <= 560 ? 0.9 : 0.7), `the graph gets the panel's width at ${size.width}: ${b.width}`);
    assert.ok(b.x2 - b.x1 > b.width * 0.5 || b.y2 - b.y1 > b.height * 0.5, `fitted to use the space at ${size.width}: ${JSON.stringify(b)}`);
  }
  assert.deepEqual(p.errors, []);
});

test("graph: node names are drawn as text, never markup", async (ctx) => {
  const p = await open(ctx, { entry: "graph", viewport: { width: 800, height: 600 } });
  const { page } = p;
  await page.evaluate(() => (window.__xss = []));
  const evil = `<img src=x onerror="window.__xss.push(1)">.go`;
  const result = { nodes: [{ id: evil, language: "go", symbols: 1, files: 1, degree: 1, inCycle: true }, { id: "a.go", language: "go", symbols: 1, files: 1, degree: 1, inCycle: true }], edges: [{ from: 0, to: 1, weight: 1, kind: "import" }], total: 2, stats: { hubs: [{ path: evil, dependents: 1 }], importCycles: [[evil, "a.go"]], cycles: 1 } };
  await page.evaluate((r) => window.postMessage({ type: "graph", result: r, query: { type: "query", level: "file", focus: null, depth: 1, importsOnly: false } }, "*"), result);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "rendered"));
  assert.deepEqual(await page.evaluate(() => window.__xss), []);
  assert.equal(await page.locator("#root img").count(), 0);
  assert.match(await text(page, '[data-testid="graph-cycles"]'), /<img src=x/);
  assert.deepEqual(p.errors, []);
});

test("graph: empty hub and cycle lists say none instead of a bare heading", async (ctx) => {
  const p = await open(ctx, { entry: "graph", viewport: { width: 800, height: 600 } });
  const { page } = p;
  const result = { nodes: [{ id: "a.go", language: "go", symbols: 1, files: 1, degree: 1, inCycle: false }, { id: "b.go", language: "go", symbols: 1, files: 1, degree: 1, inCycle: false }], edges: [{ from: 0, to: 1, weight: 1, kind: "import" }], total: 2, stats: { hubs: [], importCycles: [], cycles: 0 } };
  await page.evaluate((r) => window.postMessage({ type: "graph", result: r, query: { type: "query", level: "file", focus: null, depth: 1, importsOnly: false } }, "*"), result);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === "rendered"));
  assert.match(await text(page, '[data-testid="graph-cycles"]'), /^None: no files import each other in a loop\.$/);
  assert.match(await text(page, '[data-testid="graph-hubs"]'), /^None: no file is imported by many others\.$/);
  assert.deepEqual(p.errors, []);
});

test("a run stopped before the provider counted its tokens does not say 0 tokens", async (ctx) => {
  const { page } = await open(ctx);
  await send(page, ev({ type: "done", status: "cancelled", error: "stopped by the user", text: "", changedFiles: [], usage: { inputTokens: 0, outputTokens: 0 }, model: "m", iterations: 1, toolCalls: 0 }));
  const summary = await text(page, ".summary");
  assert.match(summary, /Stopped/);
  assert.match(summary, /1 turn · 0 tool calls · tokens not counted \(the provider counts them when an answer ends\)/);
  assert.doesNotMatch(summary, /0 in \/ 0 out/);
});

test("malformed and unknown events are ignored without errors", async (ctx) => {
  const p = await open(ctx);
  await send(
    p.page,
    ev(
      null, 5, "x", [], { type: 7 }, { type: "noSuchEvent", text: "zzz" },
      { type: "textDelta", text: 42 }, { type: "toolFinished" }, { type: "toolStarted", input: "not an object" },
      { type: "usage", totalInputTokens: "many" }, { type: "done", changedFiles: "none" },
      { type: "subagent", taskId: "unknown", event: null }, { type: "approvalRequested" },
    ),
    { type: "events", taskId: T, events: "not a list" },
    { type: "approval", id: "x", params: {} },
    { type: "askUser", id: "y", params: { questions: "?" } },
    { type: "bogus" },
  );
  assert.deepEqual(p.errors, []);
  assert.ok(!(await p.page.locator("#root").innerText()).includes("zzz"));
});

// ---------------------------------------------------------------------------

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "webview-ui-test-"));
  let passed = 0;
  let failed = 0;
  let browser;
  try {
    await build({ entryPoints: [join(here, "..", "src", "messages.ts")], outfile: join(dir, "messages.mjs"), bundle: true, format: "esm", platform: "node", logLevel: "error" });
    ({ parseWebviewMessage: parse } = await import(pathToFileURL(join(dir, "messages.mjs")).href));
    browser = await launch();
    for (const t of tests) {
      if (filter && !t.name.includes(filter)) continue;
      const ctx = { browser, open: [] };
      const t0 = Date.now();
      try {
        await t.fn(ctx);
        // Every test also checks that nothing the page did broke the CSP.
        for (const p of ctx.open) {
          assert.deepEqual(await p.page.evaluate(() => window.__violations), [], "CSP violations");
          assert.deepEqual(p.errors, [], "page errors");
        }
        passed++;
        console.log(`ok   ${t.name} (${Date.now() - t0} ms)`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${t.name}\n     ${String(e?.stack ?? e).split("\n").slice(0, 6).join("\n     ")}`);
      } finally {
        for (const p of ctx.open) await p.context.close();
      }
    }
  } catch (e) {
    failed++;
    console.log(`FAIL setup: ${e?.stack ?? e}`);
  } finally {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

await main();
