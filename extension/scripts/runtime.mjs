#!/usr/bin/env node
// Builds the runtime binary the extension carries (bin/task-x-runtime) from this
// repository's Go sources. The tests and the .vsix use it; a user may point the
// taskX.runtime.path setting at another binary.
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(root, '..');
const started = Date.now();
// --release (npm run package): no symbol table or paths of this machine in the binary.
const release = process.argv.includes('--release') ? ['-trimpath', '-ldflags=-s -w'] : [];
execFileSync('go', ['build', '-buildvcs=false', ...release, '-o', join(root, 'bin', 'task-x-runtime'), './cmd/task-x-runtime'], {
  cwd: repo,
  stdio: 'inherit',
  env: { ...process.env, CGO_ENABLED: '1' },
});
console.log(`runtime built in ${Date.now() - started} ms`);
