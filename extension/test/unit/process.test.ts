import * as assert from 'node:assert';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConnectionClosedError } from '../../src/runtime/rpc';
import { ProtocolMismatchError, RuntimeProcess, type CrashInfo, type RuntimeOptions } from '../../src/runtime/process';

// The real binary npm test builds (scripts/runtime.mjs).
const binary = resolve(__dirname, '../../../bin/task-x-runtime');

function once<T>(register: (cb: (v: T) => void) => void): Promise<T> {
  return new Promise((r) => register(r));
}

/** A stand-in runtime written in Node for behaviour the real one never shows (another protocol version). */
function fakeRuntime(dir: string, body: string): string {
  const p = join(dir, 'fake-runtime');
  writeFileSync(p, `#!${process.execPath}\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

describe('RuntimeProcess (the real task-x-runtime)', function () {
  let dir: string;
  let rt: RuntimeProcess | undefined;
  const opts = (o: Partial<RuntimeOptions> = {}): RuntimeOptions => ({
    binary,
    dataDir: join(dir, 'data'),
    clientName: 'task-x-vscode-test',
    clientVersion: '0.0.0',
    logLevel: 'warn',
    ...o,
  });

  before(() => assert.ok(existsSync(binary), `${binary} is built by npm test (scripts/runtime.mjs)`));
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'task-x-proc-'));
  });
  afterEach(async () => {
    await rt?.stop();
    rt = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('initializes with the data folder and ends with shutdown and exit (exit code 0)', async () => {
    rt = new RuntimeProcess(opts());
    await rt.start();
    assert.strictEqual(rt.state, 'ready');
    const init = rt.initializeResult as { protocolVersion: number; serverInfo: { name: string } };
    assert.strictEqual(init.protocolVersion, 1);
    assert.strictEqual(init.serverInfo.name, 'task-x-runtime');
    const child = (rt as unknown as { child: { once(e: string, cb: (c: number | null) => void): void } }).child;
    const exitCode = new Promise<number | null>((r) => child.once('exit', r));
    await rt.stop();
    assert.strictEqual(await exitCode, 0);
    assert.strictEqual(rt.state, 'stopped');
  });

  it('restarts after a crash, fails the request in flight, and answers again', async () => {
    rt = new RuntimeProcess(opts());
    await rt.start();
    const firstPid = rt.pid!;
    // A request the runtime holds open: agent/tasks returns at once, so use a
    // workspace/open of a folder and kill before the reply is read.
    const crashed = once<CrashInfo>((cb) => rt!.onCrash(cb));
    const readyAgain = once<unknown>((cb) => rt!.onReady(cb));
    const inflight = rt.request('context/inspect').then(() => undefined, (e: unknown) => e);
    process.kill(firstPid, 'SIGKILL');
    const info = await crashed;
    assert.strictEqual(info.reason, 'signal SIGKILL');
    assert.ok(info.restarting);
    const e = await inflight; // undefined when the reply won the race with the kill: also fine
    if (e !== undefined) assert.ok(e instanceof ConnectionClosedError || (e as { code?: number }).code === -32004, String(e));
    await readyAgain;
    assert.notStrictEqual(rt.pid, firstPid);
    const tasks = (await rt.request('agent/tasks')) as { tasks: unknown[] };
    assert.ok(Array.isArray(tasks.tasks));
  });

  it('gives up after too many crashes in the window and says how to restart', async () => {
    rt = new RuntimeProcess(opts({ maxRestarts: 1 }));
    await rt.start();
    let info = once<CrashInfo>((cb) => rt!.onCrash(cb));
    const ready = once<unknown>((cb) => rt!.onReady(cb));
    process.kill(rt.pid!, 'SIGKILL');
    assert.ok((await info).restarting);
    await ready;
    info = once<CrashInfo>((cb) => rt!.onCrash(cb));
    process.kill(rt.pid!, 'SIGKILL');
    assert.strictEqual((await info).restarting, false);
    assert.strictEqual(rt.state, 'failed');
    assert.match(rt.failure!.message, /Restart Runtime/);
    await rt.restart();
    assert.strictEqual(rt.state, 'ready');
  });

  it('explains a protocol-version mismatch in one sentence and does not restart', async () => {
    const fake = fakeRuntime(dir, `
      const rl = require('node:readline').createInterface({ input: process.stdin });
      rl.on('line', (l) => {
        const m = JSON.parse(l);
        if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id,
          error: { code: -32002, message: 'protocol version mismatch', data: { serverProtocolVersion: 2 } } }) + '\\n');
      });`);
    rt = new RuntimeProcess(opts({ binary: fake }));
    await assert.rejects(rt.start(), (e: unknown) => e instanceof ProtocolMismatchError);
    assert.strictEqual(rt.state, 'failed');
    const msg = rt.failure!.message;
    assert.match(msg, /speaks protocol version 2 but this extension speaks version 1/);
    assert.strictEqual(msg.split(/[.;] [A-Z]/).length, 1, 'one sentence');
  });

  it('says plainly when the binary is missing', async () => {
    rt = new RuntimeProcess(opts({ binary: join(dir, 'nope') }));
    await assert.rejects(rt.start(), /could not be started from .*nope: there is no file there/);
    assert.strictEqual(rt.state, 'failed');
  });

  it('passes the log level as TASK_X_LOG and hands stderr over line by line', async () => {
    const fake = fakeRuntime(dir, `
      process.stderr.write('level=' + process.env.TASK_X_LOG + '\\nsecond line\\n');
      const rl = require('node:readline').createInterface({ input: process.stdin });
      rl.on('line', (l) => {
        const m = JSON.parse(l);
        if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: 1 } }) + '\\n');
        if (m.method === 'shutdown') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: null }) + '\\n');
        if (m.method === 'exit') process.exit(0);
      });`);
    const lines: string[] = [];
    const two = new Promise<void>((r) => {
      rt = new RuntimeProcess(opts({ binary: fake, logLevel: 'debug', onStderr: (l) => {
        lines.push(l);
        if (lines.length === 2) r();
      } }));
    });
    await rt!.start();
    await two;
    assert.deepStrictEqual(lines, ['level=debug', 'second line']);
  });
});
