#!/usr/bin/env node
// npm test: builds the runtime and the extension, type-checks, runs the unit tests
// in Node and the end-to-end suite in a real VS Code (test/e2e/run.mjs), and ends
// with one `N passed, N failed` line for both.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const only = process.argv[2]; // "unit" or "e2e" to run one half
const started = Date.now();

function step(name, cmd, args) {
  const t = Date.now();
  execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });
  console.log(`[test] ${name} in ${Date.now() - t} ms`);
}

if (only !== 'unit') step('runtime build', process.execPath, [join(root, 'scripts/runtime.mjs')]);
step('build', process.execPath, [join(root, 'scripts/build.mjs')]);
step('typecheck', process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', root, '--noEmit']);

let passed = 0;
let failed = 0;

if (only !== 'e2e') {
  const Mocha = require('mocha').default;
  const mocha = new Mocha({ ui: 'bdd', timeout: 30000, reporter: 'spec' });
  const dir = join(root, 'out/test/unit');
  for (const f of readdirSync(dir).sort()) if (f.endsWith('.test.js')) mocha.addFile(join(dir, f));
  const t = Date.now();
  await new Promise((done) => {
    const runner = mocha.run(() => done());
    runner.on('pass', () => passed++);
    runner.on('fail', () => failed++);
  });
  console.log(`[test] unit: ${passed} passed, ${failed} failed in ${Date.now() - t} ms`);
}

// The chat page's own tests (extension/webview-ui, headless Chromium without VS Code).
if (only !== 'e2e' && existsSync(join(root, 'webview-ui/test/run.mjs'))) {
  const t = Date.now();
  const r = spawnSync('npm', ['test'], { cwd: join(root, 'webview-ui'), stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  process.stdout.write(r.stdout);
  const m = /(\d+) passed, (\d+) failed\s*$/.exec(r.stdout.trim());
  if (m) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
  if (!m || (r.status !== 0 && Number(m[2]) === 0)) failed++;
  console.log(`[test] webview-ui in ${Date.now() - t} ms`);
}

if (only !== 'unit') {
  const t = Date.now();
  const r = spawnSync(process.execPath, [join(root, 'test/e2e/run.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  process.stdout.write(r.stdout);
  const m = /(\d+) passed, (\d+) failed\s*$/.exec(r.stdout.trim());
  if (m) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  } else {
    failed++;
  }
  if (m && r.status !== 0 && Number(m[2]) === 0) failed++;
  console.log(`[test] e2e in ${Date.now() - t} ms`);
}

// The same harness with workspace trust on and the folder untrusted (test/e2e/suite/*.untrusted.ts).
if (only !== 'unit') {
  const t = Date.now();
  const r = spawnSync(process.execPath, [join(root, 'test/e2e/run.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', env: { ...process.env, TASK_X_E2E_SUITE: 'untrusted' } });
  process.stdout.write(r.stdout);
  const m = /(\d+) passed, (\d+) failed\s*$/.exec(r.stdout.trim());
  if (m) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  } else failed++;
  if (m && r.status !== 0 && Number(m[2]) === 0) failed++;
  console.log(`[test] e2e untrusted in ${Date.now() - t} ms`);
}

// A new user's first task from the .vsix, through the UI only (test/e2e/fresh.mjs).
if (only !== 'unit') {
  const t = Date.now();
  step('package', process.execPath, [join(root, 'scripts/package.mjs'), '--dev']);
  const r = spawnSync(process.execPath, [join(root, 'test/e2e/fresh.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  process.stdout.write(r.stdout);
  const m = /(\d+) passed, (\d+) failed\s*$/.exec(r.stdout.trim());
  if (m) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  } else failed++;
  console.log(`[test] fresh install in ${Date.now() - t} ms`);
}

console.log(`[test] total ${Date.now() - started} ms`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
