import * as assert from 'node:assert';
import { answers, fake, panels, reset, secrets, shown } from './fakeVscode';
import { BestOf } from '../../src/bestOf';
import { Providers } from '../../src/providers';
import { PendingRequests } from '../../src/approvals';
import type { RuntimeClient } from '../../src/runtimeClient';
import type { TaskService } from '../../src/taskService';
import type { BestOfResult } from '../../src/protocol';

/** A TaskService stand-in: the events BestOf listens to, fired by the test; startBestOf resolves when told. */
function taskService() {
  const events = new fake.EventEmitter<{ taskId: string; event: unknown; replay: boolean }>();
  const requests = new fake.EventEmitter<{ id: string; kind: string; taskId: string }>();
  const closed = new fake.EventEmitter<string>();
  const answered = new fake.EventEmitter<string>();
  const pending = new PendingRequests();
  let finish: (r: BestOfResult) => void = () => {};
  const started: unknown[][] = [];
  const svc = {
    labels: new Map<string, string>(),
    pending,
    onEvent: events.event,
    onRequest: requests.event,
    onRequestClosed: closed.event,
    onDidAnswer: answered.event,
    startBestOf: (prompt: string, wired: unknown[]) => {
      started.push([prompt, wired]);
      return { taskId: 'task-best', done: new Promise<BestOfResult>((r) => (finish = r)) };
    },
    stop() {},
  };
  return { svc: svc as unknown as TaskService & typeof svc, events, requests, closed, answered, started, finish: (r: BestOfResult) => finish(r) };
}

async function setup(keys: Record<string, string>) {
  const s = secrets();
  for (const [n, k] of Object.entries(keys)) await s.store(`taskX.apiKey.${n}`, k);
  await fake.workspace.getConfiguration('taskX').update('providers', [
    { name: 'local-a', kind: 'openaiCompatible', model: 'fake-model', baseUrl: 'http://127.0.0.1:1/v1' },
    { name: 'local-b', kind: 'openaiCompatible', model: 'fake-model', baseUrl: 'http://127.0.0.1:2/v1' },
  ]);
  const providers = new Providers(s as never, {} as RuntimeClient);
  const t = taskService();
  const best = new BestOf({} as RuntimeClient, t.svc, providers, {} as never, {} as never, () => '/tmp');
  return { best, t, s };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('best of N (host)', () => {
  beforeEach(reset);

  for (const [git, why] of [[null, /this folder is not a git repository/], [{ branch: 'main', head: '', dirty: 0 }, /has no commit yet/]] as const) {
    it(`refuses at once, before asking anything, when ${git ? 'the repository has no commit' : 'the folder is no git repository'}`, async () => {
      const { t, s } = await setup({ 'local-a': 'k1', 'local-b': 'k2' });
      const providers = new Providers(s as never, {} as RuntimeClient);
      const best = new BestOf({} as RuntimeClient, t.svc, providers, {} as never, {} as never, () => '/tmp', () => git);
      assert.strictEqual(await best.command(), undefined);
      assert.strictEqual(await best.run('Do it', ['local-a', 'local-b']), undefined);
      assert.strictEqual(t.started.length, 0);
      const errs = shown.filter((x) => x.kind === 'error');
      assert.strictEqual(errs.length, 2);
      assert.match(String(errs[0].message), why);
      assert.doesNotMatch(String(errs[0].message), /agent\/bestOf/);
      assert.ok(!shown.some((x) => x.kind === 'quickPick' || x.kind === 'inputBox'), 'nothing is asked first');
    });
  }

  it('starts in a repository with a commit', async () => {
    const { t, s } = await setup({ 'local-a': 'k1', 'local-b': 'k2' });
    const providers = new Providers(s as never, {} as RuntimeClient);
    const best = new BestOf({} as RuntimeClient, t.svc, providers, {} as never, {} as never, () => '/tmp', () => ({ branch: 'main', head: 'abc123', dirty: 0 }));
    void best.run('Do it', ['local-a', 'local-b']);
    await tick();
    assert.strictEqual(t.started.length, 1);
  });

  it('keeps two providers of the same kind and model apart, by name, while running and after', async () => {
    const { best, t } = await setup({ 'local-a': 'k1', 'local-b': 'k2' });
    const run = best.run('Do it', ['local-a', 'local-b']);
    await tick();
    assert.strictEqual(t.started.length, 1);
    const ev = (event: object) => t.events.fire({ taskId: 'task-best', event, replay: false });
    // The second provider's subagent starts first: its `candidate` puts it on its own row.
    ev({ type: 'subagentStarted', taskId: 'sub-2', kind: 'openaiCompatible', model: 'fake-model', name: 'w2', candidate: 1 });
    ev({ type: 'subagentStarted', taskId: 'sub-1', kind: 'openaiCompatible', model: 'fake-model', name: 'w1', candidate: 0 });
    ev({ type: 'subagentFinished', taskId: 'sub-2', status: 'completed' });
    assert.deepStrictEqual(best.state?.progress, { 0: 'running', 1: 'completed' });
    assert.strictEqual(t.svc.labels.get('sub-2'), 'Best of N candidate 2 (local-b, fake-model)');
    const html = panels.at(-1)!.webview.html;
    assert.match(html, /<strong>local-a<\/strong> <span class="muted">fake-model · openaiCompatible<\/span>: running/);
    assert.match(html, /<strong>local-b<\/strong> <span class="muted">fake-model · openaiCompatible<\/span>: completed/);
    const cand = { kind: 'openaiCompatible', model: 'fake-model', status: 'completed' as const, files: 0, added: 0, removed: 0, validations: [], costUsd: 0, tokens: 1, dir: '/tmp/w', patch: '' };
    t.finish({ taskId: 'task-best', costUsd: 0, candidates: [{ ...cand, name: 'w1' }, { ...cand, name: 'w2' }] });
    await run;
    const done = panels.at(-1)!.webview.html;
    assert.match(done, /data-index="0" data-name="w1">\s*<div class="head" data-testid="candidate-provider"><strong>local-a<\/strong>/);
    assert.match(done, /data-index="1" data-name="w2">\s*<div class="head" data-testid="candidate-provider"><strong>local-b<\/strong>/);
  });

  it('shows which candidate waits for an approval, opens it from the panel, and names it for the toast', async () => {
    const { best, t } = await setup({ 'local-a': 'k1', 'local-b': 'k2' });
    const opened: string[] = [];
    best.showTask = async (id) => void opened.push(id);
    void best.run('Do it', ['local-a', 'local-b']);
    await tick();
    const ev = (event: object) => t.events.fire({ taskId: 'task-best', event, replay: false });
    ev({ type: 'subagentStarted', taskId: 'sub-1', kind: 'openaiCompatible', model: 'fake-model' });
    ev({ type: 'subagentStarted', taskId: 'sub-2', kind: 'openaiCompatible', model: 'fake-model' });
    assert.strictEqual(t.svc.labels.get('sub-2'), 'Best of N candidate 2 (local-b, fake-model)');
    const { id } = t.svc.pending.issue('approval', 'sub-2', 'c1', {});
    t.requests.fire({ id, kind: 'approval', taskId: 'sub-2' });
    const html = panels.at(-1)!.webview.html;
    assert.match(html, /local-b<\/strong>[^]*waits for your approval[^]*data-action="showRequest" data-index="1"/);
    assert.ok(!/data-index="0"[^<]*data-testid="bestof-show-request"/.test(html));
    await best.receive({ type: 'showRequest', index: 0 });
    assert.deepStrictEqual(opened, [], 'no request at index 0');
    await best.receive({ type: 'showRequest', index: 1 });
    assert.deepStrictEqual(opened, ['sub-2']);
    t.svc.pending.answer(id, 'approval', { decision: 'allow' });
    t.answered.fire(id);
    assert.deepStrictEqual(best.state?.waiting, {});
    assert.ok(!/bestof-show-request/.test(panels.at(-1)!.webview.html));
  });

  it('names a provider without a key before starting, and offers to set it', async () => {
    const { best, t, s } = await setup({ 'local-a': 'k1' });
    answers.push(undefined); // the error's "Set API Key" dismissed
    assert.strictEqual(await best.run('Do it', ['local-a', 'local-b']), undefined);
    assert.strictEqual(t.started.length, 0, 'nothing started');
    const err = shown.find((x) => x.kind === 'error')!;
    assert.match(err.message!, /Best of N did not start\. The provider "local-b" has no API key/);
    assert.deepStrictEqual(err.buttons, ['Set API Key']);
    reset();
    const again = await setup({ 'local-a': 'k1' });
    answers.push('Set API Key', 'sk-b');
    void again.best.run('Do it', ['local-a', 'local-b']);
    await tick();
    await tick();
    assert.strictEqual(again.t.started.length, 1, 'started once the key is set');
    assert.deepStrictEqual((again.t.started[0][1] as { apiKey: string }[]).map((w) => w.apiKey), ['k1', 'sk-b']);
    void s;
  });
});
