// Loads the built webview (../media/webview) in headless Chromium the way VS
// Code would: an HTML page with the host's Content-Security-Policy and a
// nonce, codicon.css with the id @vscode-elements looks for, and a stub of
// acquireVsCodeApi that records what the page posts. Files are served by
// request interception from a fake origin, so nothing touches the network.
import { chromium } from "playwright-core";
import { readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const mediaDir = join(here, "..", "..", "media", "webview");
export const ORIGIN = "https://webview.test";
const NONCE = "dGFzay14LXRlc3Qtbm9uY2U";

const STUB = `
window.__posted = [];
window.__state = undefined;
window.acquireVsCodeApi = () => ({
  postMessage: (m) => { window.__posted.push(JSON.parse(JSON.stringify(m))); },
  getState: () => window.__state,
  setState: (s) => { window.__state = s; },
});
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
`;

function html(csp, entry = "chat") {
  const policy =
    // The extension's policy: no nonce for styles (ext-to-extui.md).
    `default-src 'none'; script-src 'nonce-${NONCE}'; style-src ${ORIGIN}; ` +
    `img-src ${ORIGIN} data:; font-src ${ORIGIN}` +
    (entry === "graph" ? `; worker-src blob:; connect-src ${ORIGIN}` : "");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
${csp ? `<meta http-equiv="Content-Security-Policy" content="${policy}">` : ""}
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${ORIGIN}/codicon.css" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${ORIGIN}/${entry}.css">
<script nonce="${NONCE}" src="${ORIGIN}/stub.js"></script>
</head><body><div id="root" data-layout="${ORIGIN}/graph-layout.js"></div>
<script type="module" nonce="${NONCE}" src="${ORIGIN}/${entry}.js"></script>
</body></html>`;
}

const types = { js: "text/javascript", css: "text/css", ttf: "font/ttf", html: "text/html" };

export async function launch() {
  if (!existsSync(join(mediaDir, "chat.js"))) throw new Error("build first: npm run build");
  const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--js-flags=--expose-gc",
      "--enable-precise-memory-info",
    ],
  });
}

/** Opens the webview page; resolves once it posted "ready". */
export async function openPage(browser, { csp = true, init, entry = "chat", viewport = { width: 420, height: 800 } } = {}) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  if (init) await page.addInitScript(init);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push("console: " + m.text());
  });
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== ORIGIN) return route.abort();
    const name = url.pathname.slice(1) || "index.html";
    if (name === "index.html") return route.fulfill({ contentType: types.html, body: html(csp, entry) });
    if (name === "stub.js") return route.fulfill({ contentType: types.js, body: STUB });
    const file = join(mediaDir, name);
    if (!/^[\w.-]+$/.test(name) || !existsSync(file)) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ contentType: types[name.split(".").pop()] ?? "application/octet-stream", body: readFileSync(file) });
  });
  await page.goto(`${ORIGIN}/index.html`);
  await page.waitForFunction(() => window.__posted?.some((m) => m.type === "ready"));
  return { page, context, errors };
}

/** Posts host→webview messages and waits until the page has handled and painted them. */
export async function send(page, ...messages) {
  await page.evaluate(async (ms) => {
    const target = window.taskxHandled().handled + ms.length;
    for (const m of ms) window.postMessage(m, "*");
    await new Promise((resolve) => {
      const tick = () => {
        const s = window.taskxHandled();
        if (s.handled >= target && s.idle) resolve();
        else requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  }, messages);
}

export const posted = (page) => page.evaluate(() => window.__posted);
export const clearPosted = (page) => page.evaluate(() => (window.__posted.length = 0));
