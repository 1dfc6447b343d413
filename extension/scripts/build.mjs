#!/usr/bin/env node
// Builds the extension: the bundle VS Code loads (dist/extension.js), the tests
// transpiled one file each into out/ (unit tests in Node, the e2e suite in the
// extension host), and the chat webview's own bundle (webview-ui/ → media/) when
// that package is present.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');

function tsFiles(dir) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const webviewUi = join(root, 'webview-ui');
if (existsSync(join(webviewUi, 'scripts', 'build.mjs')) && !process.argv.includes('--no-webview')) {
  // npm ci when webview-ui's packages are missing or older than its lock
  // file (a pull that adds a package must not leave a stale tree behind;
  // npm writes node_modules/.package-lock.json on every install).
  const installed = join(webviewUi, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(join(webviewUi, 'package-lock.json')).mtimeMs) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: webviewUi, stdio: 'inherit' });
  }
  execFileSync('npm', ['run', 'build'], { cwd: webviewUi, stdio: 'inherit' });
}

await build({
  entryPoints: [join(root, 'src/extension.ts')],
  outfile: join(root, 'dist/extension.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
});

rmSync(join(root, 'out'), { recursive: true, force: true });
await build({
  entryPoints: [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'test'))],
  outdir: join(root, 'out'),
  outbase: root,
  bundle: false,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  logLevel: 'warning',
});
