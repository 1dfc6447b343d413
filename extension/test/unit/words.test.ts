import * as assert from 'node:assert';
import { isCancelled } from '../../src/errors';
import { ErrorCodes, RpcError } from '../../src/runtime/rpc';
import { operationLabel, plural } from '../../src/words';

describe('wording', () => {
  it('counts in the right number ("1 file", not "1 files")', () => {
    assert.strictEqual(plural(1, 'file'), '1 file');
    assert.strictEqual(plural(0, 'file'), '0 files');
    assert.strictEqual(plural(2, 'symbol'), '2 symbols');
  });

  it('labels an edit operation by what it did and when, not by its id', () => {
    const time = '2026-12-07T20:41:07.123Z';
    const d = new Date(time);
    const hhmmss = [d.getHours(), d.getMinutes(), d.getSeconds()].map((x) => String(x).padStart(2, '0')).join(':');
    const label = operationLabel(2, { tool: 'replace_text', time });
    assert.strictEqual(label, `2. Replaced text · ${hhmmss}`);
    assert.ok(!/op-|replace_text/.test(label));
    assert.strictEqual(operationLabel(1, { tool: 'some_new_tool', time: 'not a time' }), '1. Some new tool');
    assert.strictEqual(operationLabel(3, undefined), '3. Edit');
  });

  it('tells a cancelled request (the user stopped it) from a failure', () => {
    assert.strictEqual(isCancelled(new RpcError(ErrorCodes.RequestCancelled, 'agent/run was cancelled', { kind: 'cancelled' })), true);
    assert.strictEqual(isCancelled(new RpcError(-32000, 'boom')), false);
    assert.strictEqual(isCancelled(new Error('cancelled')), false);
  });
});
