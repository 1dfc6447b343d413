import * as assert from 'node:assert';
import { PendingRequests } from '../../src/approvals';

describe('PendingRequests (approvals and askUser held under issued ids)', () => {
  it('accepts the answer to an issued id once, then refuses a replay of it', async () => {
    const p = new PendingRequests();
    const { id, answer } = p.issue<object, string>('approval', 't1', 'c1', {});
    assert.match(id, /^approval-[0-9a-f]{32}$/);
    assert.strictEqual(p.answer(id, 'approval', 'allow'), 'accepted');
    assert.strictEqual(await answer, 'allow');
    assert.strictEqual(p.answer(id, 'approval', 'allow'), 'unknown');
    assert.strictEqual(p.refused.length, 1);
  });

  it('refuses a forged id and an answer of the wrong kind, leaving the request open', async () => {
    const p = new PendingRequests();
    const { id, answer } = p.issue<object, string>('approval', 't1', 'c1', {});
    assert.strictEqual(p.answer('approval-0000', 'approval', 'allow'), 'unknown');
    assert.strictEqual(p.answer(id, 'askUser', { q: ['a'] }), 'wrongKind');
    assert.ok(p.get(id), 'still open');
    assert.strictEqual(p.answer(id, 'approval', 'deny'), 'accepted');
    assert.strictEqual(await answer, 'deny');
  });

  it('closes a request when the runtime withdraws the call or cancels the request', async () => {
    const p = new PendingRequests();
    const a = p.issue<object, string>('approval', 't1', 'c1', {});
    assert.deepStrictEqual(p.closeCall('t1', 'c1', 'deny'), [a.id]);
    assert.strictEqual(await a.answer, 'deny');
    const ac = new AbortController();
    const closed: string[] = [];
    const b = p.issue<object, string>('askUser', 't1', 'c2', {}, ac.signal, (id) => closed.push(id));
    ac.abort();
    assert.strictEqual(await b.answer, undefined);
    assert.deepStrictEqual(closed, [b.id]);
    assert.strictEqual(p.answer(b.id, 'askUser', null), 'unknown');
  });

  it('closes all requests of a task and only those', async () => {
    const p = new PendingRequests();
    const a = p.issue<object, string>('approval', 't1', 'c1', {});
    const b = p.issue<object, string>('approval', 't2', 'c1', {});
    assert.deepStrictEqual(p.closeTask('t1', 'deny'), [a.id]);
    assert.strictEqual(await a.answer, 'deny');
    assert.strictEqual(p.forTask('t2').length, 1);
    assert.strictEqual(p.answer(b.id, 'approval', 'allow'), 'accepted');
  });
});
