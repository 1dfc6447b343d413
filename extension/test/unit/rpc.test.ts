import * as assert from 'node:assert';
import { PassThrough } from 'node:stream';
import { ConnectionClosedError, ErrorCodes, LineDecoder, RpcConnection, RpcError } from '../../src/runtime/rpc';

/** A connection whose other side is this test: `sent` holds what the client wrote, `reply` feeds it lines. */
function pair(maxBytes?: number) {
  const toClient = new PassThrough();
  const fromClient = new PassThrough();
  const conn = new RpcConnection(toClient, fromClient, maxBytes);
  const sent: Record<string, unknown>[] = [];
  let buf = '';
  const waiters: (() => void)[] = [];
  fromClient.on('data', (c: Buffer) => {
    buf += c.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      sent.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
    for (const w of waiters.splice(0)) w();
  });
  const nextSent = async (n: number) => {
    while (sent.length < n) await new Promise<void>((r) => waiters.push(r));
    return sent[n - 1];
  };
  const reply = (obj: unknown) => toClient.write(JSON.stringify(obj) + '\n');
  return { conn, sent, nextSent, reply, toClient };
}

describe('LineDecoder', () => {
  it('joins lines split across chunks, also inside a multi-byte character', () => {
    const d = new LineDecoder();
    const bytes = Buffer.from('{"a":"é€"}\n{"b":1}\n', 'utf8');
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...d.push(bytes.subarray(i, i + 1)));
    assert.deepStrictEqual(out, ['{"a":"é€"}', '{"b":1}']);
  });

  it('refuses a line over the cap, also when it arrives in pieces', () => {
    const d = new LineDecoder(10);
    d.push(Buffer.from('12345'));
    assert.throws(() => d.push(Buffer.from('678901')), /larger than 10 bytes/);
    const d2 = new LineDecoder(10);
    assert.deepStrictEqual(d2.push(Buffer.from('1234567890\n')), ['1234567890']);
  });
});

describe('RpcConnection', () => {
  it('numbers requests and matches replies by id, out of order', async () => {
    const { conn, nextSent, reply } = pair();
    const a = conn.request('a', { x: 1 });
    const b = conn.request('b');
    const ma = await nextSent(1);
    const mb = await nextSent(2);
    assert.deepStrictEqual(ma, { jsonrpc: '2.0', id: 1, method: 'a', params: { x: 1 } });
    assert.deepStrictEqual(mb, { jsonrpc: '2.0', id: 2, method: 'b' });
    reply({ jsonrpc: '2.0', id: 2, result: 'B' });
    reply({ jsonrpc: '2.0', id: 1, result: 'A' });
    assert.strictEqual(await a, 'A');
    assert.strictEqual(await b, 'B');
  });

  it('keeps 1 and "1" apart: a reply with a string id does not settle request 1', async () => {
    const { conn, nextSent, reply } = pair();
    const a = conn.request('a');
    await nextSent(1);
    let settled = false;
    void a.then(() => (settled = true));
    reply({ jsonrpc: '2.0', id: '1', result: 'wrong' });
    reply({ jsonrpc: '2.0', id: 1, result: 'right' });
    assert.strictEqual(await a, 'right');
    assert.ok(settled);
  });

  it('turns an error reply into an RpcError with code and data', async () => {
    const { conn, nextSent, reply } = pair();
    const a = conn.request('a');
    await nextSent(1);
    reply({ jsonrpc: '2.0', id: 1, error: { code: -32004, message: 'no workspace', data: { x: 1 } } });
    await assert.rejects(a, (e: unknown) => e instanceof RpcError && e.code === ErrorCodes.NoWorkspace && (e.data as { x: number }).x === 1);
  });

  it('cancels with $/cancelRequest, rejects at once with -32800 and ignores the late reply', async () => {
    const { conn, nextSent, reply } = pair();
    const ac = new AbortController();
    const a = conn.request('agent/run', {}, ac.signal);
    await nextSent(1);
    ac.abort();
    await assert.rejects(a, (e: unknown) => e instanceof RpcError && e.code === ErrorCodes.RequestCancelled);
    assert.deepStrictEqual(await nextSent(2), { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 1 } });
    reply({ jsonrpc: '2.0', id: 1, error: { code: -32800, message: 'cancelled' } });
    const b = conn.request('b');
    await nextSent(3);
    reply({ jsonrpc: '2.0', id: 2, result: 'ok' });
    assert.strictEqual(await b, 'ok');
  });

  it('answers runtime→client requests, keeping the id and its type', async () => {
    const { conn, nextSent, reply } = pair();
    conn.onRequest('agent/requestApproval', async (params) => {
      assert.deepStrictEqual(params, { callId: 'c1' });
      return { decision: 'deny' };
    });
    reply({ jsonrpc: '2.0', id: '7', method: 'agent/requestApproval', params: { callId: 'c1' } });
    assert.deepStrictEqual(await nextSent(1), { jsonrpc: '2.0', id: '7', result: { decision: 'deny' } });
    reply({ jsonrpc: '2.0', id: 8, method: 'no/such' });
    const m = await nextSent(2);
    assert.strictEqual(m.id, 8);
    assert.strictEqual((m.error as { code: number }).code, ErrorCodes.MethodNotFound);
  });

  it('aborts a runtime→client request when the runtime cancels it and answers it with -32800', async () => {
    const { conn, reply, nextSent } = pair();
    let aborted!: () => void;
    const wasAborted = new Promise<void>((r) => (aborted = r));
    conn.onRequest('agent/askUser', (_p, signal) => new Promise((resolve) => {
      signal.addEventListener('abort', () => {
        aborted();
        resolve(null);
      });
    }));
    reply({ jsonrpc: '2.0', id: 3, method: 'agent/askUser', params: {} });
    reply({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 3 } });
    await wasAborted;
    const m = await nextSent(1);
    assert.strictEqual(m.id, 3);
    assert.strictEqual((m.error as { code: number }).code, ErrorCodes.RequestCancelled);
  });

  it('delivers notifications in order and survives a bad line', async () => {
    const { conn, reply } = pair();
    const got: unknown[] = [];
    const errors: string[] = [];
    conn.onProtocolError = (m) => errors.push(m);
    const done = new Promise<void>((r) => conn.onNotification('agent/event', (p) => {
      got.push(p);
      if (got.length === 2) r();
    }));
    reply({ jsonrpc: '2.0', method: 'agent/event', params: { n: 1 } });
    (conn as unknown as { handleLine(l: string): void }).handleLine('not json');
    reply({ jsonrpc: '2.0', method: 'agent/event', params: { n: 2 } });
    await done;
    assert.deepStrictEqual(got, [{ n: 1 }, { n: 2 }]);
    assert.strictEqual(errors.length, 1);
  });

  it('fails waiting requests when the stream ends, and new ones at once', async () => {
    const { conn, nextSent, toClient } = pair();
    const a = conn.request('a');
    await nextSent(1);
    toClient.end();
    await assert.rejects(a, ConnectionClosedError);
    await assert.rejects(conn.request('b'), ConnectionClosedError);
  });

  it('closes the connection when the runtime sends a line over the cap', async () => {
    const { conn, nextSent, toClient } = pair(64);
    const a = conn.request('a');
    await nextSent(1);
    toClient.write('x'.repeat(100));
    await assert.rejects(a, /larger than 64 bytes/);
    assert.ok(conn.closed);
  });
});
